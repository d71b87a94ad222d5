"""The probes suite as cases, and the operand packing the GPU path uses (checked on the CPU)."""

from __future__ import annotations

import json

import numpy as np

from mmacts.core.driver import Driver
from suites.probes.catalog import PROBES
from suites.probes.driver import DRIVER, INSTRUCTIONS, case_id
from suites.probes.hardware import mma_sync_operands, wgmma_operands
from suites.probes.vectors import K, e4m3_codes, stack


def test_cases_are_observations_with_stable_ids():
    assert isinstance(DRIVER, Driver)
    cases = [c for c in DRIVER.cases("full") if c.form["path"] in INSTRUCTIONS]  # the E4M3 probes
    ids = [c.case_id for c in cases]
    assert len(ids) == len(set(ids)) == 4 * (len(PROBES) + 1)
    assert all(c.recipe == f"probe:{c.runtime['probe']}" for c in cases)
    assert {c.case_id for c in DRIVER.cases("smoke")} == {case_id("recover", p) for p in
                                                           ("mma_sync.sm_90a", "wgmma.sm_90a", "mma_sync.sm_120a",
                                                            "tcgen05.sm_100a")}
    c = next(c for c in cases if c.case_id == case_id("c_placement", "wgmma.sm_90a"))
    exp = DRIVER.expected(c, DRIVER.make_inputs(c))
    assert exp.mode == "observe"


def test_model_run_reports_an_answer():
    c = next(c for c in DRIVER.cases("full") if c.case_id == case_id("c_placement", "mma_sync.sm_90a"))
    inputs = DRIVER.make_inputs(c)
    res = DRIVER.run_record_model(c, inputs)
    obs = json.loads(res.extra["observation"])
    assert obs["answer"] == "c_placement=last"
    assert np.array_equal(res.got, DRIVER.expected(c, inputs).want)


def test_device_support():
    assert DRIVER.device_supported((9, 0)) is None
    assert "sm_80" in DRIVER.device_supported((8, 0))


def test_mma_sync_packing_puts_the_vector_in_row0_col0():
    from reference.mma_sync import fragments as fr

    vs = [v for p in PROBES[:3] for v in p.vectors()][:40]
    ops = mma_sync_operands(vs)
    a, b, c = stack(vs)
    A = fr.decode(ops["a"], fr.a_layout(32), 8)
    B = fr.decode(ops["b"], fr.b_layout(32), 8)
    assert np.array_equal(A[:, 0, :], e4m3_codes(a)) and not A[:, 1:, :].any()
    assert np.array_equal(B[:, :, 0], e4m3_codes(b)) and not B[:, :, 1:].any()
    C = fr.decode_f32(ops["c"])
    assert np.array_equal(C[:, 0, 0], c.astype(np.float32)) and np.count_nonzero(C) <= len(vs)


def test_wgmma_packing_reads_back_through_the_descriptors():
    from suites.hopper_validation import wgmma_layout as wl

    vs = [v for p in PROBES[:2] for v in p.vectors()][:70]
    ops = wgmma_operands(vs)
    a, b, c = stack(vs)
    w = ops["img"].shape[0]
    assert w == 2
    got_a = np.concatenate([wl.read_operand(ops["img"][i], int(ops["desc"][i, 0, 0]), 64, K, "K", 1)
                            for i in range(w)])[: len(vs)]
    got_b = np.concatenate([wl.read_operand(ops["img"][i], int(ops["desc"][i, 0, 1]), 64, K, "K", 1)
                            for i in range(w)])[: len(vs)]
    assert np.array_equal(got_a, e4m3_codes(a)) and np.array_equal(got_b, e4m3_codes(b))
    C = wl.decode_d(ops["c"], 64)
    idx = np.arange(64)
    assert np.array_equal(C[:, idx, idx].reshape(-1)[: len(vs)], c.astype(np.float32))


def test_probes_and_register_name_each_other():
    from mmacts.ambiguity import load_register

    reg = load_register()
    ids = set(reg.ids())
    names = {p.name for p in PROBES}
    for p in PROBES:
        assert set(p.register) <= ids, p.name
        # every register entry a probe informs lists that probe as (one of) its deciders
        for rid in p.register:
            assert f"probes.{p.name}" in reg.get(rid).decided_by, (p.name, rid)
    referenced = {d.split(".")[1] for e in reg.entries for d in e.decided_by if d.startswith("probes.")}
    planned = referenced - names
    # the planned ones are Blackwell probes (block scales, tcgen05 descriptors) or other output formats
    assert all(n.startswith(("tc05_", "bs_", "sm120_")) or n in ("overflow_fp16", "longk_chaining")
               for n in planned), planned
