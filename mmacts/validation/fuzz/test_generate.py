"""The fuzz generators: deterministic, valid PTX, and drawing from every instruction the VM implements."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import numpy as np
import pytest

from mmacts.validation.fuzz import forms as F
from mmacts.validation.fuzz.generate import catalog_kernel, kernel
from mmacts.validation.fuzz.inputs import kernel_inputs
from mmacts.validation.fuzz.unit import unit_kernels


def _digest(seed: int) -> str:
    return hashlib.sha256(kernel(seed).ptx.encode()).hexdigest()[:12]


def test_same_seed_same_kernel_in_another_process() -> None:
    """Records store PTX, but a seed must name one kernel on any machine (no hash-order draws)."""
    code = "from mmacts.validation.fuzz.generate import kernel; import hashlib; " \
           "print(hashlib.sha256(kernel(7).ptx.encode()).hexdigest()[:12])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "123", "PATH": "/usr/bin:/bin",
                              "PYTHONPATH": ":".join(p for p in sys.path if p)})
    assert out.stdout.strip() == _digest(7)
    assert np.array_equal(kernel_inputs(7, 32), kernel_inputs(7, 32))
    assert _digest(7) != _digest(8)


def test_every_vm_handler_is_fuzzed_or_excused() -> None:
    """The generator reads the VM's handler table: a handler that lands without a form here (or a
    reason in NOT_FUZZED) fails this test, so new instructions are fuzzed the day they land."""
    from mmacts.ptxvm import runtime  # noqa: F401 - importing the runtime registers every family
    from mmacts.ptxvm.handlers import HANDLERS

    drawn = {f.handler for f in F.all_forms()}
    missing = sorted(h for h in HANDLERS if h not in drawn and h not in F.NOT_FUZZED and h not in F.STRUCTURAL
                     and not F.blackwell_only(h))
    assert not missing, f"VM handlers with no fuzz form and no reason in forms.NOT_FUZZED: {missing}"
    assert not (drawn - set(HANDLERS)), f"forms name handlers the VM lacks: {sorted(drawn - set(HANDLERS))}"


def test_a_handler_without_a_form_is_caught(monkeypatch) -> None:
    """Plant: a new VM handler nobody fuzzes."""
    from mmacts.ptxvm import handlers

    monkeypatch.setitem(handlers.HANDLERS, "newop", lambda m, ins, act: None)
    with pytest.raises(AssertionError, match="newop"):
        test_every_vm_handler_is_fuzzed_or_excused()


def test_every_form_assembles() -> None:
    from mmacts.toolchain.assemble import assemble
    from mmacts.toolchain.locate import find_tool

    if find_tool("ptxas") is None:
        pytest.skip("no ptxas")
    res = assemble(catalog_kernel(), "sm_90a")
    assert res.ok, res.first_error_line


def test_kernels_store_every_result_and_stay_bounded() -> None:
    for seed in range(1, 40):
        k = kernel(seed)
        assert 20 <= len(k.forms) <= 70
        assert k.n_out == len(k.slots) >= len(k.forms) - 1
        assert k.ptx.count("st.global") >= k.n_out
        assert "$Lloop" not in k.ptx or "setp.lt.u32 %tl" in k.ptx  # every loop has its bound


def test_unit_grids_leave_out_only_undecidable_rows() -> None:
    units = {k.form.opcode: k for k in unit_kernels()}
    assert len(units) > 1000
    neg = units["neg.f32"].combos[:, 0].astype(np.uint32).view(np.float32)
    assert not np.isnan(neg).any() and len(neg) > 50
    add = units["add.f64"].combos.view(np.float64)
    both = np.isnan(add[:, 0]) & np.isnan(add[:, 1])
    quiet = units["add.f64"].combos | np.uint64(1 << 51)
    assert (quiet[both, 0] == quiet[both, 1]).all() and both.any()


def test_sm100_only_spellings_are_listed_not_drawn() -> None:
    """The sm_100a conversions are excused in NOT_FUZZED_FORMS because an H100 rejects them: a drawn one
    would make every record of its seed fail to assemble."""
    narrow = ("e2m1x2", "e2m3x2", "e3m2x2", "ue8m0x2", "e4m3x2.bf16x2", "e5m2x2.bf16x2")
    assert not [f.opcode for f in F.all_forms() if any(t in f.opcode for t in narrow)]
    assert all(any(t in k for t in (*narrow, "}.bf16x2")) for k in F.NOT_FUZZED_FORMS)
