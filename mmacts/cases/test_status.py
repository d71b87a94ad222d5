"""The status vocabulary is one, and every reader of statuses agrees with it."""

from __future__ import annotations

import pandas as pd
import pytest

from mmacts.cases import status as S
from mmacts.core.suites import REPO_ROOT


def test_the_vocabulary_is_consistent() -> None:
    assert set(S.PASSING).isdisjoint(S.BAD)
    assert S.PASS in S.PASSING and S.FLAKE in S.PASSING
    assert set(S.BAD) == {S.FAIL, S.ERROR, S.CRASH, S.TIMEOUT}
    for name in (S.NOT_SUPPORTED, S.SKIP, S.XFAIL, S.OBSERVED):  # none of them is a pass or a failure
        assert name not in S.PASSING and name not in S.BAD and name not in S.JUDGED
    assert len(set(S.ORDER)) == len(S.ORDER) == len(S.VOCABULARY)
    from mmacts.cases.model import STATUSES

    assert STATUSES == S.ORDER


def test_readme_lists_every_status_with_its_meaning() -> None:
    assert S.readme_table() in (REPO_ROOT / "README.md").read_text(), \
        "README's statuses table differs: python -m mmacts.cases.status prints it"


@pytest.mark.parametrize(("base", "new", "kind"), [
    ("fail", "pass", S.IMPROVEMENT), ("crash", "pass", S.IMPROVEMENT), ("timeout", "flake", S.IMPROVEMENT),
    ("pass", "crash", S.REGRESSION), ("pass", "timeout", S.REGRESSION), ("not-supported", "fail", S.REGRESSION),
    ("skip", "crash", S.REGRESSION), ("error", "crash", S.FAILURE_CHANGED), ("pass", "flake", S.BECAME_FLAKY),
    ("pass", "not-supported", S.NOW_NOT_SUPPORTED), ("fail", "not-supported", S.NOW_NOT_SUPPORTED),
    ("pass", "skip", S.NO_LONGER_JUDGED), ("not-supported", "pass", S.JUDGED_AGAIN),
    ("skip", "pass", S.JUDGED_AGAIN), ("observed", "pass", S.OTHER)])
def test_transition_kinds(base: str, new: str, kind: str) -> None:
    assert S.transition_kind(base, new) == kind


def test_compare_and_the_store_name_transitions_alike() -> None:
    """``report compare`` and ``mmacts db transitions`` read the one function."""
    from mmacts.report import compare_gate

    diff = pd.DataFrame({"status_base": ["pass", "pass", "not-supported"], "status_new": ["crash", "crash", "pass"]})
    got = compare_gate.transitions(diff).set_index("transition")
    assert got.loc["pass -> crash", "cases"] == 2 and got.loc["pass -> crash", "meaning"] == S.REGRESSION
    assert got.loc["not-supported -> pass", "meaning"] == S.JUDGED_AGAIN
    assert compare_gate.transition_kind is S.transition_kind


def test_compare_classifies_crash_as_newly_failing_and_not_supported_as_newly_skipped() -> None:
    from mmacts.report import compare_gate

    cols = ["case_id", "suite", "status", "backend", "sass_opcodes", "kernel_us", "run_s", "message"]
    base = pd.DataFrame([("a", "s", "pass", "cuda", "", None, 0.1, ""), ("b", "s", "pass", "cuda", "", None, 0.1, "")],
                        columns=cols)
    new = base.assign(status=["crash", "not-supported"])
    j = compare_gate.classify(base, new).set_index("case_id")
    assert j.loc["a", "change"] == "newly failing" and j.loc["b", "change"] == "newly skipped"


def test_every_reader_knows_every_status() -> None:
    """The console order, the page's colours, the store's codes and rollups, junit: one vocabulary."""
    from mmacts.db import schema
    from mmacts.report import html, relabel
    from mmacts.runner import console

    assert console.ORDER == S.ORDER and tuple(html._STATUS_ORDER) == S.ORDER
    assert set(html._STATUS_COLOR) == set(S.ORDER)
    assert set(schema.ROLLUP_STATUSES) == set(S.ORDER)
    stored = {n: (j, b) for n, _, j, b in schema.STATUSES}
    assert all(stored[s.name] == (s.judged, s.bad) for s in S.VOCABULARY)
    assert set(S.ORDER) - {S.PASS, S.FLAKE, S.OBSERVED} <= set(relabel._JUNIT_KIND)


def test_console_summary_and_page_count_crash_and_not_supported() -> None:
    from mmacts.core.records import empty_record
    from mmacts.report import html
    from mmacts.report.frame import to_frame
    from mmacts.runner import console

    df = to_frame([empty_record(case_id=c, suite="s", backend="cuda", status=st, message="m", spec_rows="T44.1")
                   for c, st in zip("abcd", ["pass", "crash", "not-supported", "crash"], strict=True)])
    assert console.summary_lines(df)[-1] == "total 4 cases: 1 pass, 2 crash, 1 not-supported"
    page = html.render(df, {})
    assert "<span class='crash'>2 crash</span>, <span class='not-supported'>1 not-supported</span>" in page
    failures = page.split("<h2 id='failures'>", 1)[1].split("<h2", 1)[0]
    assert ">b<" in failures and ">c<" not in failures  # a crash is a failure; not-supported is not


def test_junit_reports_a_crash_as_an_error_and_not_supported_as_skipped() -> None:
    from mmacts.core.records import empty_record
    from mmacts.report.frame import to_frame
    from mmacts.report.write import junit_xml

    df = to_frame([empty_record(case_id="a", suite="s", status="crash", message="crash: signal 11 (SIGSEGV)"),
                   empty_record(case_id="b", suite="s", status="not-supported", message="needs sm_100a")])
    xml = junit_xml(df)
    assert '<error message="crash: crash: signal 11 (SIGSEGV)"' in xml
    assert '<skipped message="not-supported: needs sm_100a"' in xml
    assert 'errors="1"' in xml and 'skipped="1"' in xml
