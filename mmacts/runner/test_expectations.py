"""Baselines, retries and flakes: ``mmacts run --expectations FILE --retries N`` and
``mmacts expectations update``, end to end on the fake ``faulty`` suite (model backend, seconds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from mmacts.core.records import read_jsonl
from mmacts.runner import expectations as ex


def _mmacts(tmp_path: Path, cases: str, *argv: str) -> tuple[int, str, str]:
    suites = tmp_path / "extra_suites" / "faulty"
    suites.mkdir(parents=True, exist_ok=True)
    (suites / "driver.py").write_text("from mmacts.runner.fake_suite import FAULTY_DRIVER as DRIVER\n")
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    env = dict(os.environ, MMACTS_FAULTY_CASES=cases, MMACTS_NO_GPU="1", MMACTS_FAKE_STATE_DIR=str(state),
               MMACTS_EXTRA_SUITES_DIR=str(tmp_path / "extra_suites"))
    env.pop("MMACTS_RESTARTABLE", None)
    p = subprocess.run([sys.executable, "-m", "mmacts.runner.cli", *argv], env=env, capture_output=True, text=True,
                       timeout=180)
    return p.returncode, p.stdout, p.stderr


RUN = ("run", "--suite", "faulty", "--level", "smoke", "--backend", "model")


# ------------------------------------------------------------------------------------- the file
def test_parse_patterns_and_errors() -> None:
    b = ex.parse("# made on: X / ptxas 1\ncase_id,expect,reason\na.b,fail,known\nprobe.*,flake,\n"
                 "c,skip,\"hangs, bug 1\"\n", "f.csv")
    assert b.made_on == "X / ptxas 1"
    assert b.lookup("a.b").expect == "fail" and b.lookup("probe.x.y").expect == "flake"
    assert b.lookup("c").reason == "hangs, bug 1" and b.lookup("a.bc") is None
    for text, words in [("a,broken,\n", "f.csv:1: expect 'broken' is not one of"),
                        ("a,skip,\n", "f.csv:1: a skip needs a reason"),
                        ("a,fail,x\na,fail,y\n", "f.csv:2: a is listed twice (first on line 1)"),
                        ("a\n", "f.csv:1: expected 'case_id,expect,reason'")]:
        with pytest.raises(ex.ExpectationsError, match=words.replace("(", r"\(").replace(")", r"\)")):
            ex.parse(text, "f.csv")


@pytest.mark.parametrize("expected,got,unexpected", [
    ("pass", "fail", True), ("pass", "timeout", True), ("pass", "flake", False), ("pass", "skip", False),
    ("fail", "fail", False), ("fail", "pass", True), ("fail", "error", True), ("fail", "skip", False),
    ("flake", "fail", False), ("flake", "pass", False), ("timeout", "timeout", False), ("skip", "skip", False)])
def test_what_is_unexpected(expected: str, got: str, unexpected: bool) -> None:
    assert ex.is_unexpected(expected, got) is unexpected


def test_bad_baseline_is_one_line_and_starts_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "base.csv"
    bad.write_text("faulty.00.good,sometimes,\n")
    rc, out, err = _mmacts(tmp_path, "good", *RUN, "--expectations", str(bad), "--out", str(tmp_path / "runs"))
    assert rc == 2 and err.strip().splitlines() == [
        f"mmacts: error: {bad}:1: expect 'sometimes' is not one of fail, error, crash, timeout, flake, skip"]
    assert not (tmp_path / "runs").exists()
    rc, _, err = _mmacts(tmp_path, "good", *RUN, "--expectations", str(tmp_path / "nope.csv"))
    assert rc == 2 and "cannot read expectations file" in err and "Traceback" not in err


# ------------------------------------------------------------------------------------- mmacts run
def test_flake_baseline_gate_and_update(tmp_path: Path) -> None:
    cases = "good,bad,flaky,bad,good,good"
    # 1. no baseline: the flaky case passes on its retry -> flake with its attempts; bad stays fail
    rc, out, err = _mmacts(tmp_path, cases, *RUN, "--retries", "2", "--out", str(tmp_path / "runs"))
    assert rc == 1, err
    run1 = Path(out.strip().splitlines()[-1])
    df = pd.read_parquet(run1 / "results.parquet").set_index("case_id")
    assert df.loc["faulty.02.flaky", "status"] == "flake" and df.loc["faulty.02.flaky", "attempts"] == 2
    assert "passed on attempt 2 of 2 (1: fail, 2: pass)" in df.loc["faulty.02.flaky", "message"]
    assert df.loc["faulty.01.bad", "status"] == "fail" and df.loc["faulty.01.bad", "attempts"] == 3
    assert "1 flake" in err and "retry 2 of 2: 2 unexpected failure(s)" in err
    assert json.loads((run1 / "run.json").read_text())["counts"] == {"pass": 3, "fail": 2, "flake": 1}
    assert "<flakyFailure" in (run1 / "junit.xml").read_text()
    assert "1 flake" in (run1 / "index.html").read_text()

    # 2. the baseline that run implies; a person adds a skip with its reason
    baseline = tmp_path / "h200.csv"
    rc, out, err = _mmacts(tmp_path, cases, "expectations", "update", str(run1), "--out", str(baseline))
    assert rc == 0 and out.strip() == str(baseline)
    text = baseline.read_text()
    assert "# made on: no GPU / ptxas" in text and "backend model" in text
    assert 'faulty.01.bad,fail,"6 mismatches, first (0, 0) got=1.0 (0x3f800000) want=0.0 (0x00000000)"' in text
    assert "faulty.02.flaky,flake," in text and "faulty.00.good" not in text
    baseline.write_text(text + "faulty.05.good,skip,hangs on driver 999 (bug 42)\n")

    # 3. a run that matches the baseline: exit 0; the skip is recorded with its reason, not run
    rc, out, err = _mmacts(tmp_path, cases, *RUN, "--expectations", str(baseline), "--retries", "1",
                           "--out", str(tmp_path / "runs"))
    assert rc == 0, err
    run2 = Path(out.strip().splitlines()[-1])
    recs = {r["case_id"]: r for r in read_jsonl(run2 / "results.jsonl")}
    assert recs["faulty.05.good"]["status"] == "skip"
    assert recs["faulty.05.good"]["message"] == "expectations: hangs on driver 999 (bug 42)"
    assert "the run matches" in err and "retry" not in err  # expected failures are not retried
    assert json.loads((run2 / "run.json").read_text())["expectations"]["unexpected"] == 0

    # 4. a fixed bug (00.good, listed as failing) and a new failure (04.bad): exit 1, a short summary, unexpected.csv
    baseline.write_text(baseline.read_text() + "faulty.00.good,fail,was broken on driver 998\n")
    rc, out, err = _mmacts(tmp_path, "good,bad,flaky,bad,bad,good", *RUN, "--expectations", str(baseline),
                           "--out", str(tmp_path / "runs"))
    assert rc == 1, err
    run3 = Path(out.strip().splitlines()[-1])
    assert "1 unexpected fail/error/crash/timeout, 1 unexpected pass" in err
    assert err.index("FAIL     (expected pass) faulty.04.bad") < err.index("PASS     (expected fail) faulty.00.good")
    assert f"mmacts expectations update {run3} --out {baseline}" in err
    unexpected = pd.read_csv(run3 / "unexpected.csv")
    assert list(unexpected["case_id"]) == ["faulty.04.bad", "faulty.00.good"]
    # update follows the run, and keeps the person's skip and the known flake
    rc, out, _ = _mmacts(tmp_path, cases, "expectations", "update", str(run3), "--out", str(baseline))
    assert rc == 0
    entries = {e.case_id: e.expect for e in ex.load(baseline).all_entries()}
    assert entries == {"faulty.01.bad": "fail", "faulty.02.flaky": "flake", "faulty.03.bad": "fail",
                       "faulty.04.bad": "fail", "faulty.05.good": "skip"}
    assert ex.load(baseline).lookup("faulty.05.good").reason == "hangs on driver 999 (bug 42)"


def test_update_refuses_an_unfinished_run(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"schema": "mmacts-run/1", "complete": False}))
    assert ex.main(["update", str(tmp_path)]) == 2


# ------------------------------------------------------------------------------------- waivers
WAIVERS = """case_id,expect,reason,bug,device,driver,ptxas
faulty.01.bad,fail,known wrong answer,BUG-7,,,
faulty.02.bad,fail,only on the B200,BUG-8,B200,,
faulty.03.good,skip,hangs the B200,BUG-9,B200,,
faulty.99.gone,skip,was renamed,BUG-1,,,
"""


def test_waivers_apply_where_they_say_and_are_listed_apart(tmp_path: Path) -> None:
    """A waiver carries a bug and a scope: on this machine (no GPU) the B200 entries do not apply
    (02 fails unexpectedly, 03 is run, not skipped); the waived 01 is listed apart with its bug;
    the entry that matches no case and the ones for the B200 are reported."""
    base = tmp_path / "waivers.csv"
    base.write_text(WAIVERS)
    cases = "good,bad,bad,good"
    rc, out, err = _mmacts(tmp_path, cases, *RUN, "--expectations", str(base), "--out", str(tmp_path / "runs"))
    assert rc == 1, err
    run = Path(out.strip().splitlines()[-1])
    recs = {r["case_id"]: r for r in read_jsonl(run / "results.jsonl")}
    assert recs["faulty.03.good"]["status"] == "pass"  # a B200 skip does not skip here
    unexpected = pd.read_csv(run / "unexpected.csv")
    assert list(unexpected["case_id"]) == ["faulty.02.bad"]
    waived = pd.read_csv(run / "waived.csv")
    assert list(waived["case_id"]) == ["faulty.01.bad"] and waived["bug"][0] == "BUG-7"
    assert "1 waived" in err and "faulty.01.bad fail (bug BUG-7)" in err
    assert "1 expectation entries match no case: faulty.99.gone (line 5; bug BUG-1)" in err
    assert "2 expectation entries are for a device" in err and "device B200" in err
    info = json.loads((run / "run.json").read_text())["expectations"]
    assert info["waived"] == 1 and len(info["not_applicable"]) == 2 and len(info["matching_none"]) == 1
    page = (run / "index.html").read_text()
    assert "Waived by the expectations (1)" in page and "BUG-7" in page
    assert "Failures, errors and timeouts (1)" in page and "1 more are waived" in page
    assert "Expectation entries that did nothing (3)" in page

    # --strict-expectations: an entry matching no case is refused before anything starts
    rc, _, err = _mmacts(tmp_path, cases, *RUN, "--expectations", str(base), "--strict-expectations",
                         "--out", str(tmp_path / "strict"))
    assert rc == 2 and "faulty.99.gone matches no case" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "strict").exists()
    # ... and an entry for a device that never ran is an unexpected result
    base.write_text(WAIVERS.replace("faulty.99.gone,skip,was renamed,BUG-1,,,\n", "").replace(
        "faulty.02.bad,fail,only on the B200,BUG-8,B200,,", "faulty.02.bad,fail,here,BUG-8,no gpu,,"))
    rc, out, err = _mmacts(tmp_path, cases, *RUN, "--expectations", str(base), "--strict-expectations",
                           "--out", str(tmp_path / "strict"))
    assert rc == 1 and "1 entries that did nothing" in err, err
    run = Path(out.strip().splitlines()[-1])
    assert list(pd.read_csv(run / "unexpected.csv")["got"]) == ["not-applicable"]
    assert list(pd.read_csv(run / "waived.csv")["case_id"]) == ["faulty.01.bad", "faulty.02.bad"]
    # without --strict the same run matches its baseline
    rc, out, err = _mmacts(tmp_path, cases, *RUN, "--expectations", str(base), "--out", str(tmp_path / "loose"))
    assert rc == 0 and "the run matches" in err, err
    # update keeps each entry's bug and scope, and the entries for other devices verbatim
    rc, out, _ = _mmacts(tmp_path, cases, "expectations", "update", out.strip().splitlines()[-1],
                         "--out", str(base))
    assert rc == 0
    got = {(e.case_id, e.bug, e.device) for e in ex.load(base).all_entries()}
    assert got == {("faulty.01.bad", "BUG-7", ""), ("faulty.02.bad", "BUG-8", "no gpu"),
                   ("faulty.03.good", "BUG-9", "B200")}


def test_one_case_may_have_an_entry_per_device() -> None:
    b = ex.parse("case_id,expect,reason,bug,device\nc,fail,x,1,B200\nc,timeout,y,2,GB300\n", "f.csv")
    on = {d: b.for_env({"device": d})[0].lookup("c") for d in ("NVIDIA B200 sm_100", "NVIDIA GB300 sm_103", "H100")}
    assert on["NVIDIA B200 sm_100"].expect == "fail" and on["NVIDIA GB300 sm_103"].expect == "timeout"
    assert on["H100"] is None
    with pytest.raises(ex.ExpectationsError, match="listed twice"):
        ex.parse("case_id,expect,reason,bug,device\nc,fail,x,1,B200\nc,fail,y,2,B200\n", "f.csv")
    with pytest.raises(ex.ExpectationsError, match="unknown or repeated column 'gpu'"):
        ex.parse("case_id,expect,gpu\nc,fail,x\n", "f.csv")


def test_a_waiver_for_another_device_does_not_stop_a_retry(tmp_path: Path) -> None:
    """faulty.00.flaky fails once: waived only on a B200, on this machine it is an unexpected failure,
    retried, and ends as a flake."""
    base = tmp_path / "b.csv"
    base.write_text("case_id,expect,reason,bug,device\nfaulty.00.flaky,fail,known on B200,7,B200\n")
    rc, out, err = _mmacts(tmp_path, "flaky,good", *RUN, "--expectations", str(base), "--retries", "1",
                           "--out", str(tmp_path / "runs"))
    run = Path(out.strip().splitlines()[-1])
    recs = {r["case_id"]: r for r in read_jsonl(run / "results.jsonl")}
    assert "retry 1 of 1" in err and recs["faulty.00.flaky"]["status"] == "flake", err
