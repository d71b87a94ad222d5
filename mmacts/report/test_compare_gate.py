"""``mmacts report compare`` gates CI: regressions first, exit 1 on them, a warning when the runs
selected different cases, timings only past the noise floor and only from hardware."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from mmacts.report.cli import main
from mmacts.report.test_report_cli import make_run, rec

SEL = {"suites": ["s"], "level": "standard", "backend": "cuda", "k": None, "shard": None}


def _cmp(capsys: pytest.CaptureFixture, base: Path, new: Path, *extra: str) -> tuple[int, str, str, pd.DataFrame]:
    rc = main(["compare", str(base), str(new), *extra])
    cap = capsys.readouterr()
    out = Path(extra[extra.index("--out") + 1]) if "--out" in extra else new
    df = pd.read_csv(out / "compare.csv") if (out / "compare.csv").is_file() else pd.DataFrame()
    return rc, cap.out, cap.err, df


def test_every_category_and_regressions_first(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    base = make_run(tmp_path / "base", [
        rec("a.fails", "pass", sass_opcodes="QMMA:1"), rec("b.fixed", "fail"),
        rec("c.sass", "pass", sass_opcodes="QMMA:1"),
        rec("d.gone", "pass"), rec("e.flaky", "pass"), rec("f.skipped", "pass"), rec("g.err", "fail"),
        rec("h.same", "pass", sass_opcodes="QMMA:1")], options=SEL)
    new = make_run(tmp_path / "new", [
        rec("a.fails", "fail", message="3 mismatches, first (0, 1) got=1.0 (0x3f800000) want=2.0 (0x40000000)",
            sass_opcodes="HMMA:1"),
        rec("b.fixed", "pass"), rec("c.sass", "pass", sass_opcodes="HMMA:2"), rec("e.flaky", "flake", attempts=2),
        rec("f.skipped", "skip"), rec("g.err", "error"), rec("h.same", "pass", sass_opcodes="QMMA:1"),
        rec("i.added", "pass")], options=SEL)
    rc, out, err, df = _cmp(capsys, base, new)
    assert rc == 1
    got = dict(zip(df["case_id"], df["change"], strict=True))
    assert got == {"a.fails": "newly failing", "d.gone": "missing from new run", "c.sass": "SASS changed",
                   "e.flaky": "newly flaky", "f.skipped": "newly skipped", "g.err": "status changed",
                   "b.fixed": "newly passing", "i.added": "new in new run"}
    assert list(df["case_id"][:2]) == ["a.fails", "d.gone"] and df["regression"][:2].all()
    assert not df["regression"][2:].any()
    assert df.loc[df["case_id"] == "a.fails", "also"].item() == "SASS changed"  # the likely cause, beside it
    assert out.index("REGRESSIONS: 1 newly failing, 1 missing from new run") < out.index("other changes")
    assert "0x3f800000" in out and str(new / "compare.csv") in out and str(new / "compare.json") in out
    assert "Empty DataFrame" not in out + err
    summary = json.loads((new / "compare.json").read_text())
    assert summary["exit"] == 1 and summary["regressions"] == {"newly-failing": 1, "missing": 1}
    page = (new / "compare.html").read_text()
    assert page.index("a.fails") < page.index("b.fixed")


def test_no_changes_is_exit_0_and_never_an_empty_dataframe(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    base = make_run(tmp_path / "base", [rec("a", "pass"), rec("b", "fail")], options=SEL)
    new = make_run(tmp_path / "new", [rec("a", "pass"), rec("b", "fail")], options=SEL)
    rc, out, err, df = _cmp(capsys, base, new, "--out", str(tmp_path / "cmp"))
    assert rc == 0 and "no regressions" in out and "no changes" in out
    assert "Empty DataFrame" not in out + err and err == ""
    assert len(df) == 0 and list(df.columns)[:2] == ["case_id", "change"]


def test_different_selections_warn_and_missing_cases_do_not_gate(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    base = make_run(tmp_path / "base", [rec("a", "pass"), rec("b", "pass")], options=SEL)
    new = make_run(tmp_path / "new", [rec("a", "pass")], options=dict(SEL, k="a"))
    rc, out, err, df = _cmp(capsys, base, new)
    assert "warning: the runs selected different cases (k None vs 'a')" in err and "1 only in BASE" in err
    assert rc == 0 and list(df["change"]) == ["missing from new run"]
    # the same selection: a case that vanished is a regression
    new2 = make_run(tmp_path / "new2", [rec("a", "pass")], options=SEL)
    rc, out, err, _ = _cmp(capsys, base, new2)
    assert rc == 1 and "different cases for the same selection" in err
    # and --fail-on decides what gates
    rc, *_ = _cmp(capsys, base, new2, "--fail-on", "newly-failing")
    assert rc == 0


def test_slower_needs_ratio_and_absolute_time_and_hardware(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rows = [("fast.tiny", 1.0, 3.0, "cuda"),        # 3x but only 2 us: noise
            ("slow.real", 20.0, 40.0, "cuda"),      # 2x and 20 us: slower
            ("slow.ratio", 100.0, 120.0, "cuda"),   # 20 us but 1.2x: not slower
            ("slow.model", 20.0, 400.0, "model")]   # the CPU model's timing is never judged
    base = make_run(tmp_path / "base", [rec(c, "pass", kernel_us=b, backend=be) for c, b, _, be in rows], options=SEL)
    new = make_run(tmp_path / "new", [rec(c, "pass", kernel_us=n, backend=be) for c, _, n, be in rows], options=SEL)
    rc, out, _, df = _cmp(capsys, base, new)
    assert rc == 0 and list(df["case_id"]) == ["slow.real"] and list(df["change"]) == ["slower"]
    assert "20.0 -> 40.0 us (2.00x)" in out
    rc, *_ = _cmp(capsys, base, new, "--fail-on", "newly-failing,slower")
    assert rc == 1
    # without kernel times, the case time with its own floor
    base = make_run(tmp_path / "b2", [rec("x", "pass", run_s=0.01, backend="cuda"),
                                      rec("y", "pass", run_s=0.2, backend="cuda")], options=SEL)
    new = make_run(tmp_path / "n2", [rec("x", "pass", run_s=0.04, backend="cuda"),
                                     rec("y", "pass", run_s=0.5, backend="cuda")], options=SEL)
    _, _, _, df = _cmp(capsys, base, new)
    assert list(df["case_id"]) == ["y"]


@pytest.mark.parametrize("extra,words", [(["--fail-on", "everything"], "unknown category 'everything'"),
                                         (["--slower", "0.5"], "--slower must be >= 1")])
def test_bad_options_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture, extra: list[str],
                                  words: str) -> None:
    base = make_run(tmp_path / "base", [rec("a", "pass")])
    rc = main(["compare", str(base), str(base), *extra])
    err = capsys.readouterr().err
    assert rc == 2 and words in err and len(err.strip().splitlines()) == 1
    assert not (base / "compare.csv").exists()


def test_status_transitions_are_counted_with_their_meaning(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """fail -> pass is an improvement (a baseline listing it is now wrong), pass -> timeout a regression:
    each pair counted in compare.json, on the console and on the page; the CSV has a column for it."""
    base = make_run(tmp_path / "base", [rec("a", "fail"), rec("b", "fail"), rec("c", "pass"), rec("d", "fail"),
                                        rec("e", "pass")], options=SEL)
    new = make_run(tmp_path / "new", [rec("a", "pass"), rec("b", "pass"), rec("c", "timeout"), rec("d", "error"),
                                      rec("e", "pass")], options=SEL)
    rc, out, _, df = _cmp(capsys, base, new)
    assert rc == 1
    summary = json.loads((new / "compare.json").read_text())["transitions"]
    assert summary == {"fail -> pass": {"cases": 2, "meaning": "improvement (unexpected if a baseline lists it)"},
                       "pass -> timeout": {"cases": 1, "meaning": "regression"},
                       "fail -> error": {"cases": 1, "meaning": "failure changed kind"}}
    assert "status transitions: 2 fail -> pass (improvement), 1 pass -> timeout (regression)" in out
    assert dict(zip(df["case_id"], df["transition"], strict=True))["c"] == "pass -> timeout"
    assert "<h2>Status transitions</h2>" in (new / "compare.html").read_text()
