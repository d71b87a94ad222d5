"""The plugin streams records as cases finish and maps records onto pytest outcomes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mmacts.core.records import COLUMNS, read_jsonl
from mmacts.report.write import REPORT_FILES, write_reports

REPO = Path(__file__).resolve().parents[2]

TEST_MODULE = """
from mmacts.runner.fake_suite import DRIVER
from mmacts.runner.plugin import run_case

def test_case(case):
    run_case(DRIVER, case)
"""


def _run(tmp_path: Path, *extra: str) -> tuple[int, list[dict]]:
    (tmp_path / "test_fake.py").write_text(TEST_MODULE)
    out = tmp_path / "run"
    out.mkdir(exist_ok=True)
    rc = subprocess.call(
        [sys.executable, "-m", "pytest", "-q", "-p", "mmacts.runner.plugin", "-p", "no:cacheprovider",
         str(tmp_path / "test_fake.py"), f"--mmacts-out={out}", f"--rootdir={tmp_path}", *extra],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    return rc, list(read_jsonl(out / "results.jsonl"))


def test_model_backend_statuses(tmp_path: Path) -> None:
    rc, recs = _run(tmp_path, "--mmacts-backend=model")
    by = {r["case_id"]: r for r in recs}
    assert set(by) == {"fake.good", "fake.bad", "fake.boom"}  # 'big' is standard level
    assert by["fake.good"]["status"] == "pass"
    assert by["fake.bad"]["status"] == "fail"
    assert by["fake.bad"]["first_mismatch"].startswith("(1, 2)")
    assert by["fake.boom"]["status"] == "error" and "exploded" in by["fake.boom"]["message"]
    assert all(set(COLUMNS) <= set(r) for r in recs)
    assert rc == 1


def test_cuda_backend_without_gpu_is_not_supported_with_reason(tmp_path: Path) -> None:
    """The device's limit, not the user's choice: ``not-supported``, never ``skip`` (nor a pass)."""
    _, recs = _run(tmp_path, "--mmacts-backend=cuda", "--mmacts-level=standard")
    assert len(recs) == 4
    assert {r["status"] for r in recs} == {"not-supported"}
    assert all(r["message"] for r in recs)


def test_resume_runs_only_missing_cases(tmp_path: Path) -> None:
    _run(tmp_path, "--mmacts-backend=model")
    res = tmp_path / "run" / "results.jsonl"
    _, recs = _run(tmp_path, "--mmacts-backend=model", "--mmacts-level=standard", f"--mmacts-resume={res}")
    ids = [r["case_id"] for r in recs]
    # the first run's 3 records, then only the missing 'big' (and 'boom', whose error is retried)
    assert ids.count("fake.good") == 1 and ids.count("fake.big") == 1 and ids.count("fake.boom") == 2


def test_shards_partition_the_cases(tmp_path: Path) -> None:
    seen: list[str] = []
    for i in range(3):
        sub = tmp_path / f"s{i}"
        sub.mkdir()
        _, recs = _run(sub, "--mmacts-backend=model", "--mmacts-level=standard", f"--mmacts-shard={i}/3")
        seen += [r["case_id"] for r in recs]
    assert sorted(seen) == sorted({"fake.good", "fake.bad", "fake.boom", "fake.big"})


def test_reports_written_from_records(tmp_path: Path) -> None:
    _run(tmp_path, "--mmacts-backend=model")
    df = write_reports(tmp_path / "run", {"command": ["test"], "schema": "mmacts-run/1"})
    for name in REPORT_FILES:
        assert (tmp_path / "run" / name).is_file(), name
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["complete"] is True and run["counts"]["fail"] == 1
    assert list(df.columns) == list(COLUMNS)
    html = (tmp_path / "run" / "index.html").read_text()
    assert "not</b> a hardware pass" in html and "fake.bad" in html
    assert "id='ambiguities'" in html, "the ambiguity register section is part of every report"


def test_spec_rows_select_with_k(tmp_path: Path) -> None:
    _, recs = _run(tmp_path, "--mmacts-backend=model", "--mmacts-level=standard", "-k", "T36.1 and big")
    assert [r["case_id"] for r in recs] == ["fake.big"]
    sub = tmp_path / "none"
    sub.mkdir()
    _, recs = _run(sub, "--mmacts-backend=model", "-k", "T99")
    assert recs == []
