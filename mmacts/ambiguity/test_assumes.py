"""What a verdict assumes: derived by code from the case and the register, never written per case."""

from __future__ import annotations

import pandas as pd

from mmacts.ambiguity.assumes import assumes, hardware_fail_note, is_open
from mmacts.ambiguity.observe import record_observations
from mmacts.ambiguity.register import load_register
from suites.descriptors.driver import DRIVER as DS
from suites.mma_sync_blockscale.driver import DRIVER as MS
from suites.tcgen05_blockscale.driver import DRIVER as TC


def _one(drv, pred):
    return next(c for c in drv.cases("standard") if pred(c))


def test_form_readings_are_named() -> None:
    k96 = _one(TC, lambda c: c.runtime.get("k96") and c.recipe == "exact")
    assert "AMB-SF-FIGURES-K96" in assumes(k96)
    lay_b = _one(TC, lambda c: c.form["cta_group"] == 2 and c.runtime["m"] == 128 and c.recipe == "exact")
    assert "AMB-SF-LAYOUT-B-QUADRANT" in assumes(lay_b)
    fp6 = _one(MS, lambda c: c.form["kind"] == "mxf8f6f4" and c.form["atype"] == "e3m2")
    assert "AMB-MMASYNC-FP6-CONTAINER" in assumes(fp6)
    quad = _one(TC, lambda c: c.recipe == "probe:sf_quadrant")
    assert "AMB-SF-QUADRANT" in assumes(quad)
    m_field = _one(TC, lambda c: c.recipe == "exact")
    assert "AMB-IDESC-M-FIELD" in assumes(m_field)  # T43.15 / T44.16 link A08


def test_only_open_entries_and_some_rest_on_the_text_alone() -> None:
    cases = DS.cases("standard") + TC.cases("smoke") + MS.cases("smoke")
    got = [assumes(c) for c in cases]
    assert all(is_open(i) for ids in got for i in ids)
    assert any(not ids for ids in got), "some verdicts rest on the spec text alone"
    assert "AMB-DATAPATH-LAYOUT-E" not in {i for ids in got for i in ids}  # layouts C/E/G are not used


def test_a_hardware_fail_of_an_assumed_reading_is_evidence() -> None:
    reg = load_register()
    row = {"case_id": "tcgen05_blockscale.x", "suite": "tcgen05_blockscale", "status": "fail", "device": "B200",
           "backend": "cuda", "assumes": "AMB-SF-FIGURES-K96",
           "message": hardware_fail_note(["AMB-SF-FIGURES-K96"]) + "; 12 mismatches"}
    new = record_observations(reg, pd.DataFrame([row]), {"driver": "d", "run": "r", "date": "2026-01-01"})
    entry = next(e for e in new.entries if e.id == "AMB-SF-FIGURES-K96")
    assert entry.observations and entry.observations[-1].answer.startswith("assumed reading contradicted")
    assert "not as a hardware defect" in row["message"]
    other = next(e for e in new.entries if e.id == "AMB-SF-QUADRANT")
    assert len(other.observations) == len(next(e for e in reg.entries if e.id == "AMB-SF-QUADRANT").observations)


def test_records_carry_assumes_and_html_separates_them() -> None:
    from mmacts.backends.execute import Executor
    from mmacts.report.coverage import assumes_split, html_sections

    case = DS.cases("standard")[0]
    rec = Executor("model").execute(DS, case)
    assert rec["assumes"] == " ".join(assumes(case))
    df = pd.DataFrame([{"case_id": "a", "status": "pass", "assumes": "", "spec_rows": "T43.2"},
                       {"case_id": "b", "status": "fail", "assumes": "AMB-SF-QUADRANT", "spec_rows": "T43.2"}])
    split = assumes_split(df)
    assert set(split["verdict rests on"]) == {"assumed reading", "spec text alone"}
    page = "\n".join(html_sections(df))
    assert "What the verdicts rest on" in page and "Coverage by what can fail" in page
