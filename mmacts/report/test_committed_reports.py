"""Every committed run under ``validation/`` obeys the observation rule, and its files agree.

An observe-mode case (``compare_mode`` ``observe`` / ``observe:...``) is never a ``pass`` or a
``fail`` -- in results.jsonl, results.parquet, results.csv, junit.xml, run.json and index.html
alike. Runs made before the rule are relabelled by ``python -m mmacts.report.relabel``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

from mmacts.core.records import append_jsonl, empty_record, latest_by_case, read_jsonl
from mmacts.report import relabel
from mmacts.report.write import write_reports

REPO = Path(__file__).resolve().parents[2]
RUNS = sorted(p.parent for p in (REPO / "validation").rglob("run.json")
              if (p.parent / "results.parquet").is_file() or (p.parent / "results.jsonl").is_file())


def test_the_committed_runs_are_found() -> None:
    assert len(RUNS) >= 5, RUNS


@pytest.mark.parametrize("run_dir", RUNS, ids=[str(r.relative_to(REPO)) for r in RUNS])
def test_no_observation_is_a_verdict(run_dir: Path) -> None:
    tables = {"results.parquet": pd.read_parquet(run_dir / "results.parquet")}
    if (run_dir / "results.jsonl").is_file():  # every line, not only the last per case
        tables["results.jsonl"] = pd.DataFrame(list(read_jsonl(run_dir / "results.jsonl")))
    if (run_dir / "results.csv").is_file():
        tables["results.csv"] = pd.read_csv(run_dir / "results.csv", dtype=str, keep_default_na=False)
    for name, df in tables.items():
        assert relabel.violations(df) == [], f"{name}: observe-mode rows with a verdict"
    # a relabelled row says so
    df = tables["results.parquet"]
    relabelled = df[df["message"].fillna("").str.contains("relabelled from")]
    assert set(relabelled["status"]) <= {"observed"}
    assert (json.loads((run_dir / "run.json").read_text()).get("relabelled") is not None) == (len(relabelled) > 0)


@pytest.mark.parametrize("run_dir", RUNS, ids=[str(r.relative_to(REPO)) for r in RUNS])
def test_the_files_of_a_run_agree(run_dir: Path) -> None:
    assert relabel.disagreements(run_dir) == []


# ------------------------------------------------------------------------------ the tool itself
def _run_with_an_old_observation(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    recs = [
        empty_record(case_id="a.exact", suite="s", status="pass", compare_mode="exact", mismatches=0),
        empty_record(case_id="b.probe", suite="s", status="pass", compare_mode="observe", mismatches=0,
                     message="observation; hypothesis h"),
        empty_record(case_id="c.model", suite="s", status="fail", compare_mode="observe:model:m", mismatches=3,
                     first_mismatch="[0,1]"),
        empty_record(case_id="d.skip", suite="s", status="skip", compare_mode="observe", message="no GPU"),
    ]
    for r in recs:
        append_jsonl(run / "results.jsonl", r)
    write_reports(run, {"schema": "mmacts-run/1", "command": ["t"], "start": "s0", "end": "e0"})
    return run


def test_relabel_rewrites_every_file_consistently(tmp_path: Path) -> None:
    run = _run_with_an_old_observation(tmp_path)
    end = json.loads((run / "run.json").read_text())["end"]
    assert relabel.violations(pd.read_parquet(run / "results.parquet")) == ["b.probe", "c.model"]
    assert relabel.main([str(run), "--check"]) == 1
    changed, before = relabel.relabel_run(run)
    assert changed == 2 and before == []
    df = pd.read_parquet(run / "results.parquet")
    st = dict(zip(df["case_id"], df["status"], strict=True))
    assert st == {"a.exact": "pass", "b.probe": "observed", "c.model": "observed", "d.skip": "skip"}
    msg = dict(zip(df["case_id"], df["message"], strict=True))
    assert msg["b.probe"].startswith("observation; hypothesis h; agrees with the hypothesis; relabelled from 'pass'")
    assert "3 elements differ from the hypothesis" in msg["c.model"] and "relabelled from 'fail'" in msg["c.model"]
    assert relabel.disagreements(run) == []
    meta = json.loads((run / "run.json").read_text())
    assert meta["end"] == end and meta["counts"] == {"pass": 1, "observed": 2, "skip": 1}
    assert meta["relabelled"][0]["rows"] == 2 and meta["relabelled"][0]["from"] == {"pass": 1, "fail": 1}
    junit = ET.parse(run / "junit.xml").getroot()
    assert [ts.get("failures") for ts in junit.iter("testsuite")] == ["0"]
    assert "1 pass" in (run / "index.html").read_text() and "2 observed" in (run / "index.html").read_text()
    assert [r["status"] for r in latest_by_case(read_jsonl(run / "results.jsonl"))] == [
        "pass", "observed", "observed", "skip"]
    # a second pass finds nothing to do and writes nothing
    stamp = {p.name: p.stat().st_mtime_ns for p in run.iterdir()}
    assert relabel.relabel_run(run) == (0, [])
    assert {p.name: p.stat().st_mtime_ns for p in run.iterdir()} == stamp
    assert relabel.main([str(run), "--check"]) == 0


def test_relabel_a_run_published_without_its_jsonl(tmp_path: Path) -> None:
    run = _run_with_an_old_observation(tmp_path)
    (run / "results.jsonl").unlink()
    assert relabel.relabel_run(run)[0] == 2
    assert not (run / "results.jsonl").exists()
    assert relabel.violations(pd.read_parquet(run / "results.parquet")) == []
    assert relabel.disagreements(run) == []


def test_disagreeing_files_are_found(tmp_path: Path) -> None:
    run = _run_with_an_old_observation(tmp_path)
    csv = (run / "results.csv").read_text().replace(",skip,", ",pass,")
    (run / "results.csv").write_text(csv)
    meta = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps(dict(meta, counts={"pass": 4})))
    problems = relabel.disagreements(run)
    assert any(p.startswith("results.csv: column status") for p in problems)
    assert any(p.startswith("run.json: counts") for p in problems)
    relabel.relabel_run(run)  # regenerates from the records
    assert relabel.disagreements(run) == []
