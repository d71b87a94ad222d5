"""Pages read at a glance (issue 15 item 7): index.html's status chart, observed-answer table and failures
grouped by diagnosis; junit.xml's per-test properties; history.html's per-selection trends; a real render."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

from mmacts.core.records import empty_record
from mmacts.report import html
from mmacts.report.frame import to_frame
from mmacts.report.history import render_history
from mmacts.report.write import junit_xml

FIRST = "(0, 3) got=1.5 (0x3fc00000) want=2.0 (0x40000000)"
OBS = json.dumps({"answer": "block_size=16", "details": {"consistent_with": {"block_size": [16]}},
                  "measured_bits": ["477fe800"] * 9})


def _df() -> pd.DataFrame:
    def bad(i: int, why: str) -> dict:
        return empty_record(case_id=f"t.bad{i}", suite="t", status="fail", backend="cuda", device="B200",
                            executor="cuda", spec_rows="T44.1", assumes="AMB-SF-PER-ROW-WORDING", mismatches=4,
                            first_mismatch=FIRST, message=f"4 mismatches, first {FIRST}; {why}")
    return to_frame([
        bad(1, "suspect the instruction descriptor"), bad(2, "suspect the instruction descriptor"),
        bad(3, "whole rows wrong -> SFA layout"),
        empty_record(case_id="probes.block_size.mma_sync.sm_90a", suite="probes", status="observed", backend="cuda",
                     assumes="", observation=OBS, compare_mode="observe",
                     message="observation; hypothesis for mma_sync.sm_90a: hmma_fp8_emulation; agrees with the "
                             "hypothesis; see AMB-ACC-PRECISION"),
        empty_record(case_id="t.good", suite="t", status="pass", backend="cuda", assumes="")])


def test_index_has_a_chart_an_observed_table_and_grouped_failures() -> None:
    page = html.render(_df(), {})
    assert "<svg id='status-chart'" in page and "3 fail" in page and "1 observed" in page
    assert "Grouped by diagnosis (2 groups)" in page
    groups = re.sub(r"\s+", " ", page.split("Grouped by diagnosis")[1].split("</table>")[0])
    assert "<td>2</td> <td>fail</td> <td>suspect the instruction descriptor</td>" in groups
    assert "<td>1</td> <td>fail</td> <td>whole rows wrong -&gt; SFA layout</td>" in groups
    obs = page.split("<h2 id='observed'>Observed answers (1)")[1]
    assert "block_size=16" in obs and "block_size in {16}" in obs and "0x477fe800" in obs
    assert "decides AMB-ACC-BLOCKSIZE" in obs and "AMB-ACC-PRECISION" in obs  # register entry decided / named


def test_junit_carries_properties_and_marks_observed_cases() -> None:
    root = ET.fromstring(junit_xml(_df()))
    cases = {tc.get("name"): tc for tc in root.iter("testcase")}
    props = {p.get("name"): p.get("value") for p in cases["t.bad1"].find("properties")}
    assert props["mmacts.backend"] == "cuda" and props["mmacts.device"] == "B200"
    assert props["mmacts.spec_rows"] == "T44.1" and props["mmacts.assumes"] == "AMB-SF-PER-ROW-WORDING"
    probe = cases["probes.block_size.mma_sync.sm_90a"]
    assert {p.get("name"): p.get("value") for p in probe.find("properties")}["mmacts.status"] == "observed"
    assert "observed" in probe.find("system-out").text and probe.find("failure") is None
    assert [c.tag for c in probe] == ["properties", "system-out"]  # properties first, as JUnit readers expect
    suite = next(ts for ts in root.iter("testsuite") if ts.get("name") == "probes")
    assert suite[0].tag == "properties" and suite.get("failures") == "0"


def test_history_labels_runs_and_keeps_selections_apart() -> None:
    def run(level: str, suites: list[str], start: str) -> tuple[dict, pd.DataFrame]:
        return ({"start": start, "options": {"level": level, "backend": "cuda", "suites": suites, "k": None}},
                _df())
    page = render_history([run("smoke", ["t"], "1"), run("full", ["t", "probes"], "2"), run("smoke", ["t"], "3")])
    assert "Selection 1: level smoke, backend cuda, suites t (2 runs)" in page
    assert "Selection 2: level full, backend cuda, suites probes t (1 run)" in page
    assert "median kernel time per suite: no data in these runs" in page  # no empty chart frames
    assert "<td>smoke</td><td>cuda</td><td>1: suites t</td>" in page


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_index_renders_in_headless_chromium(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text(html.render(_df(), {}), encoding="utf-8")
    out = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-background-networking", f"--user-data-dir={tmp_path / 'profile'}",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=60)
    assert 'id="status-chart"' in out.stdout and "Observed answers (1)" in out.stdout, out.stderr[-2000:]
