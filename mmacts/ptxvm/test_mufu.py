"""rcp.approx from a recorded table (:mod:`mmacts.ptxvm.mufu`): until an H100's recording is committed
these tests use a small synthetic table (the correctly rounded reciprocal with planted differences) and
the refusal without one. Expected bits are worked out by hand: 1/1.5 rounds to 0x3F2AAAAB, 1/1.25 to
0x3F4CCCCD."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from mmacts.ptxvm import api as vm_api
from mmacts.ptxvm import load_module, mufu

ROOT = Path(__file__).resolve().parents[2]

HEAD = ".version 8.4\n.target sm_90a\n.address_size 64\n"
RULES = {"ftz": {"normal": "scale", "tiny": "flush", "subnormal": "flush", "zero": "inf", "inf": "zero",
                 "nan": "canonical"},
         "full": {"normal": "scale", "tiny": "rn", "subnormal": "scale", "zero": "inf", "inf": "zero",
                  "nan": "quiet"}}


def _kernel(op: str) -> str:
    return (HEAD + ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
            "  .reg .f32 %f<4>;\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<8>;\n"
            "  ld.param.u64 %rd0, [pin];\n  cvta.to.global.u64 %rd0, %rd0;\n"
            "  ld.param.u64 %rd1, [pout];\n  cvta.to.global.u64 %rd1, %rd1;\n  mov.u32 %r0, %tid.x;\n"
            "  mul.wide.u32 %rd2, %r0, 4;\n  add.u64 %rd3, %rd0, %rd2;\n  add.u64 %rd4, %rd1, %rd2;\n"
            f"  ld.global.f32 %f1, [%rd3];\n  {op} %f2, %f1;\n  st.global.f32 [%rd4], %f2;\n  ret;\n}}\n")


def run(op: str, inputs: list[int]):
    mod = load_module(_kernel(op))
    din = mod.rt.to_device(np.array(inputs, dtype=np.uint32))
    dout = mod.rt.empty((len(inputs),), np.uint32)
    res = mod.launch("k", (1,), (len(inputs),), [din, dout])
    return res, mod.rt.to_host(dout).tolist()


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> str:
    hw = mufu.correct_rcp_bits(np.arange(mufu.N_MANT))
    hw[0x400000] -= 1  # rcp(1.5): 0x3F2AAAAA, one below the correctly rounded 0x3F2AAAAB
    hw[0x200000] += 3  # rcp(1.25): 0x3F4CCCD0 (an escape: more than one ulp)
    complete = {v: {c: True for c in mufu.CLASSES} for v in mufu.VARIANTS}
    complete["full"]["subnormal"] = False
    exc = {"ftz": (np.array([0x40400000], np.uint32), np.array([0x12345678], np.uint32)),
           "full": (np.array([0x00000003], np.uint32), np.array([0x7E000000], np.uint32))}
    path = tmp_path_factory.mktemp("rcp") / "rcp.npz"
    mufu.write_table(path, hw, RULES, exc, complete, {"device": "synthetic"})
    return str(path)


@pytest.fixture
def use(table, monkeypatch) -> None:
    monkeypatch.setenv("MMACTS_RCP_TABLE", table)


def test_correctly_rounded_reference() -> None:
    assert mufu.correct_rcp_bits(np.array([0, 0x400000, 0x200000])).tolist() == [0x3F800000, 0x3F2AAAAB, 0x3F4CCCCD]


def test_ftz_from_the_table(use) -> None:
    inputs = [0x40000000, 0xC0C00000, 0x41200000, 0x40400000,  # 2, -6, 10, 3 (a recorded exception)
              0x00000000, 0xFF800000, 0x7FC00001, 0x7F000000, 0x7E800000, 0x00000001]
    res, out = run("rcp.approx.ftz.f32", inputs)
    assert res.status == "ok", res.message
    assert out == [0x3F000000, 0xBE2AAAAA, 0x3DCCCCD0, 0x12345678,
                   0x7F800000, 0x80000000, 0x7FFFFFFF,  # +0 -> +inf, -inf -> -0, NaN -> canonical
                   0x00000000, 0x00800000,  # 1/2^127 flushed, 1/2^126 = 2^-126 normal
                   0x7F800000]  # a subnormal input is flushed: +inf


def test_full_range_rules(use) -> None:
    # 1/(1.5 * 2^127): 0xAAAAAA * 2^-2 on the subnormal grid is a tie, even 0x2AAAAA; NaN keeps its payload
    res, out = run("rcp.approx.f32", [0x7F400000, 0x7FA00001, 0x00000003])
    assert res.status == "ok", res.message
    assert out == [0x002AAAAA, 0x7FE00001, 0x7E000000]
    res, _ = run("rcp.approx.f32", [0x00000005])  # a subnormal input the recording did not keep
    assert res.status == "error" and "PTX VM unsupported" in res.message and "subnormal" in res.message


def test_without_a_table_it_is_refused_by_name(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("MMACTS_RCP_TABLE", str(tmp_path / "none.npz"))
    res, _ = run("rcp.approx.ftz.f32", [0x40000000])
    assert res.status == "error" and "rcp.approx needs the recorded table" in res.message
    res, _ = run("rcp.rn.f32", [0x40000000])
    assert res.status == "error" and "not implemented" in res.message


def test_a_recorded_table_stays_small(tmp_path) -> None:
    """A real recording differs from the correctly rounded reciprocal by -1/0/+1 almost everywhere: random
    trits are the worst case for compression, and must still fit in 2 MB."""
    rng = np.random.default_rng(1)
    hw = (mufu.correct_rcp_bits(np.arange(mufu.N_MANT)).astype(np.int64) + rng.integers(-1, 2, mufu.N_MANT))
    path = tmp_path / "t.npz"
    mufu.write_table(path, hw.astype(np.uint32), RULES, {}, {v: {c: True for c in mufu.CLASSES}
                                                             for v in mufu.VARIANTS}, {})
    assert path.stat().st_size < 2_000_000
    t = mufu.load_table(path)
    idx = rng.integers(0, mufu.N_MANT, 1000)
    assert np.array_equal(t.rcp_mantissa(idx), hw[idx].astype(np.uint32))


class _VmAsCupy:
    """The VM standing in for CuPy under the recording script: its CUDA source compiled by nvcc to PTX; the
    2^23-thread ``table`` kernel is too large for a test, so this stand-in fills the table from ``hw``."""

    def __init__(self, ptx: str, hw: np.ndarray) -> None:
        self.ptx, self.hw = ptx, hw
        self.zeros, self.asarray, self.asnumpy = vm_api.zeros, vm_api.asarray, vm_api.asnumpy
        self.cuda = SimpleNamespace(Device=lambda: SimpleNamespace(synchronize=lambda: None))

    def RawModule(self, code: str, options: tuple = ()):  # noqa: N802 -- CuPy's name
        mod = vm_api.RawModule(code=self.ptx)

        def fill_table(grid, block, args) -> None:
            for a in args:
                a.host[:] = self.hw

        return SimpleNamespace(get_function=lambda name: fill_table if name == "table" else mod.get_function(name))


def test_the_recording_script_on_the_vm(tmp_path, monkeypatch) -> None:
    """The script's kernels (nvcc's PTX of its CUDA source) run on the VM, whose rcp.approx answers from a
    synthetic table: the script must find that table's rules and exactly its planted exceptions, and its
    file must give the VM the same answers back. Plant: a wrong rule in the script's CUDA (e.g. rz for rn)
    makes the rules differ."""
    from mmacts.ptxvm.test_cutlass_spellings import _ptx

    spec = importlib.util.spec_from_file_location("record_rcp", ROOT / "validation/silicon/mufu/record_rcp.py")
    rec = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rec)
    ptx = _ptx(rec.SOURCE, "sm_90a")
    hw = mufu.correct_rcp_bits(np.arange(mufu.N_MANT))
    hw[0x400000] -= 1
    exc = {"ftz": (np.array([0x3F800007], np.uint32), np.array([0x12345678], np.uint32)),
           "full": (np.array([0x00000003], np.uint32), np.array([0x7E000000], np.uint32))}
    complete = {v: {c: True for c in mufu.CLASSES} for v in mufu.VARIANTS}
    mufu.write_table(tmp_path / "syn.npz", hw, RULES, exc, complete, {})
    monkeypatch.setenv("MMACTS_RCP_TABLE", str(tmp_path / "syn.npz"))
    chunks = [(b, 1024) for b in (0x3F800000, 0x7F000000, 0x7F400000, 0x00000000, 0x007FFC00, 0x7F7FFE00,
                                  0x80000000, 0xFF7FFE00)]
    r = rec.record(_VmAsCupy(ptx, hw), chunks)
    assert r["rules"] == RULES
    assert {v: (a.tolist(), b.tolist()) for v, (a, b) in r["exceptions"].items()} == {
        v: (a.tolist(), b.tolist()) for v, (a, b) in exc.items()}
    mufu.write_table(tmp_path / "rec.npz", r["table"], r["rules"], r["exceptions"], r["complete"], {})
    probe = np.array([b + i for b, _ in chunks for i in range(0, 1024, 37)], dtype=np.uint32)
    for ftz in (True, False):
        assert np.array_equal(mufu.rcp_approx(probe, ftz, tmp_path / "rec.npz"),
                              mufu.rcp_approx(probe, ftz, tmp_path / "syn.npz"))


def test_the_committed_h100_table_is_complete_and_within_the_isa_bound() -> None:
    """The table recorded on an H100 (validation/silicon/mufu): every class complete and ruled, and every one of
    the 2^23 mantissas within the ISA's bound for rcp.approx.f32 (1 ulp of the correctly rounded reciprocal) -- a
    check of the recording against the ISA, independent of the GPU that made it."""
    t = mufu.load_table(mufu.TABLE_PATH)
    assert t.meta["device"].startswith("NVIDIA H100")
    assert all(all(v.values()) for v in t.complete.values())
    mant = np.arange(mufu.N_MANT, dtype=np.int64)
    ones = (np.uint32(0x3F800000) | mant.astype(np.uint32)).view(np.float32)
    got = mufu.rcp_approx(ones.view(np.uint32), ftz=True, path=mufu.TABLE_PATH)
    diff = got.astype(np.int64) - mufu.correct_rcp_bits(mant).astype(np.int64)
    assert np.abs(diff).max() <= 1
    assert 0.05 < np.mean(diff != 0) < 0.95, "the MUFU differs from correct rounding in a fair share of inputs"
