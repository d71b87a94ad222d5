"""Observations come from run results: matching, de-duplication, what is left out."""

from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd
import pytest

from mmacts.ambiguity import (
    RegisterError,
    decided_by_regex,
    load_register,
    observations_frame,
    pattern_matches,
    record_observations,
)


def _fresh():
    """The packaged register with its recorded observations removed (tests start from none)."""
    reg = load_register()
    return replace(reg, entries=tuple(replace(e, observations=()) for e in reg.entries))


def _row(case_id, status="pass", device="NVIDIA H100", backend="cuda", obs=None, message=""):
    return {"case_id": case_id, "suite": case_id.split(".")[0], "status": status, "device": device,
            "message": message, "backend": backend, "ptxas_version": "13.0.88",
            "observation": json.dumps(obs) if obs is not None else None}


def test_pattern_matching():
    assert pattern_matches("probes.neab", "probes.neab.mma_sync.sm_90a")
    assert pattern_matches("probes.neab", "probes.neab")
    assert not pattern_matches("probes.neab", "probes.neab_other.x")
    assert pattern_matches("tcgen05_*zcm*", "tcgen05_blockscale.zcm.skip2")
    assert not pattern_matches("tcgen05_*zcm*", "mma_sync.zcm")


def test_one_regex_per_entry_matches_as_pattern_matches_does():
    """The report's compiled form of an entry's ``decided_by`` selects the same cases as
    the item-by-item rule, on the packaged register and on glob and regex edge cases."""
    odd = ("probes.a+b", "x[ab].?", "x[!a]*", "a.b", "a*b", "(y)", "dot.", "")
    ids = ["probes.a+b", "probes.a+b.c", "probes.aab", "xa.q", "xb.", "xc.z", "xq7", "a.b", "a.b.c", "axb",
           "a.bc", "aXYb", "(y)", "(y).1", "y", "dot.", "dot..x", "dot", "", "a.b\nz", "a.b.\nz"]
    reg = load_register()
    ids += [f"{p}.extra" for e in reg.entries for p in e.decided_by] + [p for e in reg.entries for p in e.decided_by]
    pattern_sets = [tuple(e.decided_by) for e in reg.entries] + [(p,) for p in odd] + [odd, ()]
    for patterns in pattern_sets:
        names = decided_by_regex(patterns)
        for case_id in ids:
            assert bool(names.match(case_id)) == any(pattern_matches(p, case_id) for p in patterns), (
                patterns, case_id)


def test_probe_answers_land_in_the_entries_that_name_the_probe():
    reg = _fresh()
    df = pd.DataFrame([
        _row("probes.c_placement.mma_sync.sm_90a", obs={"answer": "c_placement=last"}),
        _row("probes.c_placement.wgmma.sm_90a", obs={"answer": "c_placement=aligned"}),
        _row("unrelated.case", obs={"answer": "x"}),
    ])
    out = record_observations(reg, df, {"driver": "580.1", "run": "r1", "date": "2026-11-22"})
    e = out.get("AMB-C-PLACEMENT")
    assert sorted(o.answer for o in e.observations) == ["c_placement=aligned", "c_placement=last"]
    assert {o.driver for o in e.observations} == {"580.1"} and {o.ptxas for o in e.observations} == {"13.0.88"}
    assert {o.run for o in e.observations} == {"r1"}
    # an entry nobody decided keeps no observations, and the input register is unchanged
    assert out.get("AMB-ZCM-SPAN").observations == ()
    assert reg.get("AMB-C-PLACEMENT").observations == ()
    # recording the same run again adds nothing
    again = record_observations(out, df, {"driver": "580.1", "run": "r1", "date": "2026-11-22"})
    assert len(again.get("AMB-C-PLACEMENT").observations) == 2
    frame = observations_frame(again)
    assert set(frame["id"]) >= {"AMB-C-PLACEMENT"} and "answer" in frame.columns


def test_skips_and_model_rows_are_not_evidence_unless_asked():
    reg = _fresh()
    df = pd.DataFrame([
        _row("probes.signed_zero.mma_sync.sm_90a", status="skip", obs={"answer": "plus"}),
        _row("probes.signed_zero.tcgen05.sm_100a", status="not-supported", message="needs an sm_100-family GPU"),
        _row("probes.signed_zero.wgmma.sm_90a", backend="model", device="cpu", obs={"answer": "plus"}),
    ])
    assert record_observations(reg, df).get("AMB-SIGNED-ZERO").observations == ()
    got = record_observations(reg, df, include_model=True).get("AMB-SIGNED-ZERO").observations
    assert [o.backend for o in got] == ["model"]


def test_non_probe_cases_answer_with_their_status():
    reg = _fresh()
    df = pd.DataFrame([_row("compile.tcgen05.mma.cta_group1.kind_mxf8f6f4.block_scale/sm_100a/accept", status="fail",
                              message="ptxas refused")])
    obs = record_observations(reg, df).get("AMB-SCALEVEC-DEFAULT-MXF8F6F4").observations
    assert [o.answer for o in obs] == ["fail: ptxas refused"]


def test_bad_tables_are_refused():
    reg = _fresh()
    with pytest.raises(RegisterError, match="lacks column"):
        record_observations(reg, pd.DataFrame([{"case_id": "x"}]))
    bad = pd.DataFrame([_row("probes.neab.x")])
    bad.loc[0, "observation"] = "{not json"
    with pytest.raises(RegisterError, match="not JSON"):
        record_observations(reg, bad)


def test_an_mmacts_run_json_names_driver_and_run():
    reg = _fresh()
    df = pd.DataFrame([_row("probes.c_placement.wgmma.sm_90a", obs={"answer": "c_placement=aligned"})])
    meta = {"schema": "mmacts-run/1", "git_sha": "cf18e9d1327d603abe", "start": "2026-11-22T02:25:39+00:00",
            "gpu": {"kernel_driver": "580.159.04", "driver": "13.0"}}
    (o,) = record_observations(reg, df, meta).get("AMB-C-PLACEMENT").observations
    assert o.driver == "580.159.04 (CUDA 13.0)"
    assert o.run == "cf18e9d1327d@2026-11-22T02:25:39+00:00"


def test_one_line_per_answer_not_per_case():
    """A run in which many cases answer the same thing adds one observation with a count."""
    from mmacts.ambiguity.observe import compact

    reg = _fresh()
    df = pd.DataFrame([_row(f"probes.c_placement.wgmma.sm_90a.{i}", obs={"answer": "c_placement=aligned"})
                       for i in range(5)] + [_row("probes.c_placement.mma_sync.sm_90a", obs={"answer": "last"})])
    meta = {"driver": "580.1", "run": "r1", "date": "2026-11-22"}
    out = record_observations(reg, df, meta)
    obs = sorted(out.get("AMB-C-PLACEMENT").observations, key=lambda o: o.answer)
    assert [(o.answer, o.cases) for o in obs] == [("c_placement=aligned", 5), ("last", 1)]
    assert obs[0].case_id == "probes.c_placement.wgmma.sm_90a.0"
    assert record_observations(out, df, meta) == out  # the same run again adds nothing
    # older per-case lines of one run and answer are merged by compact()
    e = out.get("AMB-C-PLACEMENT")
    split = replace(out, entries=tuple(replace(x, observations=x.observations + (replace(obs[1], case_id="y"),))
                                       if x.id == e.id else x for x in out.entries))
    merged = sorted(compact(split).get("AMB-C-PLACEMENT").observations, key=lambda o: o.answer)
    assert [(o.answer, o.cases) for o in merged] == [("c_placement=aligned", 5), ("last", 2)]
