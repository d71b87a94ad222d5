"""The ``flake`` status and mismatch messages in the reports: index.html, junit.xml."""

from __future__ import annotations

from mmacts.core.records import empty_record
from mmacts.report import html
from mmacts.report.frame import to_frame
from mmacts.report.write import junit_xml

FIRST = "(0, 3) got=1.5 (0x3fc00000) want=2.0 (0x40000000)"


def _df():  # noqa: ANN202
    # assumes="": mmacts/report/coverage.py (another layer) reads that column; NA there is its own concern
    return to_frame([{**r, "assumes": ""} for r in [
        empty_record(case_id="a.bad", suite="s", status="fail", backend="model", mismatches=4, first_mismatch=FIRST,
                     message=f"4 mismatches, first {FIRST}; whole rows wrong -> SFA layout"),
        empty_record(case_id="b.flaky", suite="s", status="flake", backend="model", attempts=2,
                     message="flake: passed on attempt 2 of 2 (1: fail, 2: pass); attempt 1 was fail: x"),
        empty_record(case_id="c.good", suite="s", status="pass", backend="model")]])


def test_index_lists_flakes_and_gives_the_first_mismatch_once() -> None:
    page = html.render(_df(), {})
    assert "1 flake" in page and "Flakes (1)" in page and "<td>2</td>" in page
    assert page.count("0x3fc00000") == 1 and "whole rows wrong -&gt; SFA layout" in page


def test_junit_flake_is_a_pass_with_its_failed_attempt() -> None:
    xml = junit_xml(_df())
    assert 'failures="1"' in xml and 'errors="0"' in xml
    assert "<flakyFailure" in xml and "passed after 2 attempts" in xml
