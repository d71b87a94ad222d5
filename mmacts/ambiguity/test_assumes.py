"""What a verdict assumes: derived by code from the case and the register, never written per case."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from mmacts.ambiguity.assumes import RANDOM_RULE, assumes, hardware_fail_note, is_open
from mmacts.ambiguity.observe import record_observations
from mmacts.ambiguity.register import load_register
from mmacts.cases.model import Case
from suites.descriptors.driver import DRIVER as DS
from suites.mma_sync_blockscale import readings as MS_READINGS
from suites.mma_sync_blockscale.driver import DRIVER as MS
from suites.tcgen05_blockscale import readings as TC_READINGS
from suites.tcgen05_blockscale.driver import DRIVER as TC


def _one(drv, pred):
    return next(c for c in drv.cases("standard") if pred(c))


def test_form_readings_are_named() -> None:
    k96 = _one(TC, lambda c: c.runtime.k96 and c.recipe == "exact")
    assert "AMB-SF-FIGURES-K96" in assumes(k96)
    lay_b = _one(TC, lambda c: c.form.cta_group == 2 and c.runtime.m == 128 and c.recipe == "exact")
    assert "AMB-SF-LAYOUT-B-QUADRANT" in assumes(lay_b)
    fp6 = _one(MS, lambda c: c.form.kind == "mxf8f6f4" and c.form.atype == "e3m2")
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


def test_a_suite_states_its_form_readings_and_assumes_asks_its_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    """The readings a form takes for granted come from the suite that owns the form (``form_readings``), and
    the links a suite does not assume from ``readings_not_assumed``: the register floor names no suite."""
    lay_b = _one(TC, lambda c: c.form.cta_group == 2 and c.runtime.m == 128 and c.recipe == "exact")
    assert ("AMB-SF-LAYOUT-B-QUADRANT", "Layout B SFB in quadrant pairs") in TC.form_readings(lay_b)
    fp6 = _one(MS, lambda c: c.form.kind == "mxf8f6f4" and c.form.atype == "e3m2")
    assert ("AMB-MMASYNC-FP6-CONTAINER", "FP6 in its mma.sync 8-bit slot at bits [5:0]") in MS.form_readings(fp6)
    cp = _one(TC, lambda c: c.recipe == "probe:cp_decompress")
    assert ("AMB-FP6-HOLDER-BITS", "probe cp_decompress observes it") in TC.form_readings(cp)
    assert DS.form_readings(DS.cases("standard")[0]) == ()  # the contract's default: a suite with none
    # readings no cited row links and no decided_by names: only the hook supplies them
    hook_only = {"AMB-SF-LAYOUT-B-QUADRANT", "AMB-MMASYNC-FP6-CONTAINER", "AMB-FP6-HOLDER-BITS"}
    assert hook_only <= set(assumes(lay_b) + assumes(fp6) + assumes(cp))
    monkeypatch.setattr(TC, "form_readings", lambda case: ())
    monkeypatch.setattr(MS, "form_readings", lambda case: ())
    assert not hook_only & set(assumes(lay_b) + assumes(fp6) + assumes(cp))
    layout_e = _one(TC, lambda c: "S9.7.16.10.5" in c.spec_rows)  # its catalog link is coarser than the question
    assert "AMB-DATAPATH-LAYOUT-E" not in assumes(layout_e)
    monkeypatch.setattr(TC, "readings_not_assumed", lambda case: ())
    assert "AMB-DATAPATH-LAYOUT-E" in assumes(layout_e)


def test_a_suite_that_is_not_discovered_gives_no_readings_and_no_error() -> None:
    """A test's stand-in case (a suite name no ``suites/<name>/driver.py`` answers) keeps the generic rules
    only, even with a form a suite would read readings into."""
    stand_in = Case("stand_in.k96", "no_such_suite", "tcgen05.mma", "sm_100a", (), form={"kind": "mxf4"},
                    runtime={"k96": True}, recipe="probe:sf_quadrant")
    assert assumes(stand_in) == ()
    assert set(assumes(replace(stand_in, recipe="random"))) == {i for i in RANDOM_RULE if is_open(i)} != set()


def test_every_reading_a_suite_states_names_a_register_entry() -> None:
    """A misspelt register id would be dropped silently by the open-only filter."""
    known = {e.id for e in load_register().entries}
    stated = {amb for amb, _why, _applies in (*TC_READINGS.FORM_RULES, *MS_READINGS.FORM_RULES)}
    stated |= {amb for ids in TC_READINGS.PROBE_RULES.values() for amb in ids} | set(TC_READINGS.NOT_ASSUMED)
    assert stated and stated <= known, sorted(stated - known)


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
