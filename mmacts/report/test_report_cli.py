"""merge and compare: the right cases in the right buckets; foreign input refused, nothing overwritten."""

from __future__ import annotations

import json
from pathlib import Path

from mmacts.core.records import append_jsonl, empty_record
from mmacts.report.cli import main
from mmacts.report.runinfo import SCHEMA


def make_run(d: Path, records: list[dict], **meta: object) -> Path:
    d.mkdir(parents=True)
    for r in records:
        append_jsonl(d / "results.jsonl", empty_record(**r))
    (d / "run.json").write_text(json.dumps({"schema": SCHEMA, "command": ["t"], **meta}))
    return d


def rec(case_id: str, status: str, **kw: object) -> dict:
    return dict(case_id=case_id, suite="s", status=status, **kw)


def shard(i: int, n: int = 2) -> dict:
    return {"options": {"level": "smoke", "shard": f"{i}/{n}"}}


def test_merge_shards(tmp_path: Path) -> None:
    a = make_run(tmp_path / "a", [rec("c1", "pass"), rec("c2", "fail")], complete=True, **shard(0))
    b = make_run(tmp_path / "b", [rec("c3", "pass")], complete=True, **shard(1))
    out = tmp_path / "m"
    assert main(["merge", str(out), str(a), str(b)]) == 0
    lines = (out / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["case_id"] for x in lines) == ["c1", "c2", "c3"]
    assert json.loads((out / "run.json").read_text())["complete"] is True


def test_merge_refuses_to_overwrite(tmp_path: Path) -> None:
    a = make_run(tmp_path / "a", [rec("c1", "pass")])
    out = tmp_path / "exists"
    out.mkdir()
    (out / "keep").write_text("mine")
    assert main(["merge", str(out), str(a)]) == 2
    assert (out / "keep").read_text() == "mine"


def test_compare_buckets(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    base = make_run(tmp_path / "base", [
        rec("a", "pass"), rec("b", "fail"), rec("c", "pass", sass_opcodes="QMMA:1"),
        rec("d", "pass", kernel_us=10.0, backend="cuda")])
    new = make_run(tmp_path / "new", [
        rec("a", "fail"), rec("b", "pass"), rec("c", "pass", sass_opcodes="HMMA:2"),
        rec("d", "pass", kernel_us=30.0, backend="cuda")])
    assert main(["compare", str(base), str(new)]) == 1  # a newly fails: a regression
    import pandas as pd

    df = pd.read_csv(new / "compare.csv")
    got = dict(zip(df["case_id"], df["change"], strict=True))
    assert got == {"a": "newly failing", "b": "newly passing", "c": "SASS changed", "d": "slower"}
    assert (new / "compare.html").is_file()


def test_foreign_input(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "run.json").write_text(json.dumps({"schema": "other/9"}))
    good = make_run(tmp_path / "good", [rec("a", "pass")])
    assert main(["compare", str(bad), str(good)]) == 2
    assert "schema" in capsys.readouterr().err
    assert not (good / "compare.csv").exists()


def test_history_page(tmp_path: Path) -> None:
    runs = []
    for i, st in enumerate(["pass", "fail", "pass"]):
        runs.append(make_run(tmp_path / f"r{i}", [
            rec("mma_sync.m16n8k32/e4m3xe2m1/sfa1-sfb2", st, spec_rows="T36.1", kernel_us=5.0 + i),
            rec("mma_sync.m16n8k32/e5m2xe5m2/sfa0-sfb0", "pass", spec_rows="T36.1 T37.1")],
            start=f"2026-01-0{i + 1}T00:00:00"))
    assert main(["history", *map(str, runs), "--out", str(tmp_path)]) == 0
    page = (tmp_path / "history.html").read_text()
    assert page.count("<svg") == 3
    assert "by type pair" in page and "e4m3" in page and "0/1" in page


def test_compact_refs() -> None:
    from mmacts.report.html import compact_refs

    assert compact_refs("T44.1 T44.2 T44.3 T44.7 T54.2 S9.7.16.10.9.1") == "T44.1-3,7 T54.2 S9.7.16.10.9.1"
    assert compact_refs("T36.2 T36.1") == "T36.1-2"
    assert compact_refs("") == ""


def test_report_files_are_readable_by_others(tmp_path: Path) -> None:
    import os
    import stat

    from mmacts.report.atomic import write_text_atomic

    old = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "x.html", "hi")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "x.html").stat().st_mode) == 0o644


def test_merge_refuses_an_unfinished_shard(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """A shard whose run died must not become part of a run.json that says complete."""
    a = make_run(tmp_path / "a", [rec("c1", "pass")], complete=True)
    b = make_run(tmp_path / "b", [rec("c2", "pass")], complete=False)
    out = tmp_path / "m"
    assert main(["merge", str(out), str(a), str(b)]) == 2
    assert "did not complete" in capsys.readouterr().err and not out.exists()


def test_merge_refuses_shards_of_different_selections(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    a = make_run(tmp_path / "a", [rec("c1", "pass")], complete=True,
                 options={"level": "full", "backend": "cuda", "shard": "0/2", "n": "4"})
    b = make_run(tmp_path / "b", [rec("c2", "pass")], complete=True,
                 options={"level": "smoke", "backend": "cuda", "shard": "1/2", "n": "2"})
    c = make_run(tmp_path / "c", [rec("c3", "pass")], complete=True,
                 options={"level": "full", "backend": "cuda", "shard": "1/2", "n": "2"})
    assert main(["merge", str(tmp_path / "m"), str(a), str(b)]) == 2
    assert "not shards of one selection" in capsys.readouterr().err
    assert main(["merge", str(tmp_path / "m2"), str(a), str(c)]) == 0  # shard and -n may differ


def test_merge_takes_a_shard_that_ships_only_parquet(tmp_path: Path) -> None:
    """read_run accepts a parquet-only run; merge must not silently drop its cases."""
    a = make_run(tmp_path / "a", [rec("c1", "pass")], complete=True, **shard(0))
    b = make_run(tmp_path / "b", [rec("c2", "fail", mismatches=3)], complete=True, **shard(1))
    import shutil

    from mmacts.report.write import write_reports

    shutil.copytree(b, tmp_path / "b2")
    write_reports(tmp_path / "b2", json.loads((b / "run.json").read_text()))  # writes b2/results.parquet
    (tmp_path / "b2" / "results.jsonl").unlink()
    out = tmp_path / "m"
    assert main(["merge", str(out), str(a), str(tmp_path / "b2")]) == 0
    recs = {json.loads(x)["case_id"]: json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()}
    assert sorted(recs) == ["c1", "c2"]
    assert recs["c2"]["status"] == "fail" and recs["c2"]["mismatches"] == 3 and recs["c2"]["kernel_us"] is None


def test_unwritable_output_is_one_line(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    base = make_run(tmp_path / "base", [rec("c1", "pass")])
    new = make_run(tmp_path / "new", [rec("c1", "fail")])
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["compare", str(base), str(new), "--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mmacts report: error: cannot write") and "Traceback" not in err


def test_index_says_when_failures_are_cut() -> None:
    from mmacts.report import html
    from mmacts.report.frame import to_frame

    df = to_frame([empty_record(case_id=f"c{i:04d}", suite="s", status="fail", backend="model")
                   for i in range(600)])
    page = html.render(df, {})
    assert "Failures, errors and timeouts (600)" in page and "the first 500 are shown" in page
    assert "the first" not in html.render(df.head(10), {})


def test_merge_refuses_missing_or_doubled_shards(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """Some shards of N, or one shard twice, would be marked complete while lacking or doubling cases."""
    a = make_run(tmp_path / "a", [rec("c1", "pass")], complete=True, **shard(0, 3))
    b = make_run(tmp_path / "b", [rec("c2", "pass")], complete=True, **shard(1, 3))
    b2 = make_run(tmp_path / "b2", [rec("c2", "pass")], complete=True, **shard(1, 3))
    plain = make_run(tmp_path / "p", [rec("c2", "pass")], complete=True, options={"level": "smoke"})
    for runs, words in (((a, b), "shard 2/3 missing"), ((a, b, b2), "given twice"), ((a, plain), "not a shard"),
                        ((plain,), "not a shard"), ((a,), "shards 1/3, 2/3 missing")):
        out = tmp_path / "m"
        assert main(["merge", str(out), *map(str, runs)]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1 and not out.exists(), err


def _complete_run(d: Path, n: int = 3) -> Path:
    run = make_run(d, [rec(f"c{i}", "pass") for i in range(n)], complete=True,
                   counts={"pass": n}, options={"level": "smoke"})
    return run


def test_foreign_or_truncated_results_are_refused(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """merge, compare and history: one line naming the file, exit 2, nothing written."""
    good = _complete_run(tmp_path / "good")
    foreign = _complete_run(tmp_path / "foreign")
    with open(foreign / "results.jsonl", "a") as fh:
        fh.write('{"hello": "world"}\n')
    torn = _complete_run(tmp_path / "torn")
    with open(torn / "results.jsonl", "a") as fh:
        fh.write('{"case_id": "c9", "sta')
    cut = _complete_run(tmp_path / "cut")
    lines = (cut / "results.jsonl").read_text().splitlines(keepends=True)
    (cut / "results.jsonl").write_text("".join(lines[:2]))
    for bad, words in ((foreign, "not an mmacts record"), (torn, "cut off"), (cut, "truncated")):
        for argv in (["merge", str(tmp_path / "m"), str(bad)], ["compare", str(good), str(bad)],
                     ["history", str(good), str(bad), "--out", str(tmp_path / "h")]):
            assert main(argv) == 2, argv
            err = capsys.readouterr().err
            assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (argv, err)
            assert not (tmp_path / "m").exists() and not (tmp_path / "h").exists()
            assert not (bad / "compare.csv").exists()
