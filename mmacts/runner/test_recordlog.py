"""The record log: every record reaches the file at once, fsyncs come in batches, nothing is lost."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from mmacts.core.records import append_jsonl, empty_record, read_jsonl
from mmacts.runner.recordlog import RecordLog


def _wait(cond, timeout_s: float = 10.0) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + timeout_s
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.01)
    return bool(cond())


def test_lines_are_append_jsonl_lines_and_fsyncs_are_batched(tmp_path: Path) -> None:
    recs = [empty_record(case_id=f"c{i}", status="pass", run_s=0.5) for i in range(100)]
    log = RecordLog(tmp_path / "results.jsonl", every_n=32, every_s=60)
    for r in recs:
        log.append(r)
    assert _wait(lambda: log.syncs >= 1 and log.pending <= 32 - 1), "a full batch waits for its fsync"
    assert 1 <= log.syncs <= 100 // 32 + 2  # batched: a handful of fsyncs, not one per record
    log.close()
    assert log.pending == 0 and log.syncs <= 100 // 32 + 3
    for r in recs:
        append_jsonl(tmp_path / "reference.jsonl", r)
    assert (tmp_path / "results.jsonl").read_bytes() == (tmp_path / "reference.jsonl").read_bytes()


def test_a_quiet_tail_is_synced_within_the_interval(tmp_path: Path) -> None:
    log = RecordLog(tmp_path / "results.jsonl", every_n=1000, every_s=0.1)
    log.append(empty_record(case_id="a", status="pass"))
    assert _wait(lambda: log.pending == 0 and log.syncs == 1)
    log.close()
    log.close()  # twice is fine


def test_without_the_thread_the_writer_syncs_each_batch(tmp_path: Path) -> None:
    log = RecordLog(tmp_path / "results.jsonl", every_n=10, every_s=0)
    for i in range(25):
        log.append(empty_record(case_id=f"c{i}", status="pass"))
    assert log.syncs == 2 and log.pending == 5
    log.close()
    assert log.syncs == 3


def test_a_killed_writer_keeps_every_record_it_appended(tmp_path: Path) -> None:
    """No fsync yet, then the process ends the hard way: the lines are in the file all the same."""
    code = (
        "import os, sys\n"
        "from mmacts.core.records import empty_record\n"
        "from mmacts.runner.recordlog import RecordLog\n"
        "log = RecordLog(sys.argv[1], every_n=10_000, every_s=3600)\n"
        "for i in range(50):\n"
        "    log.append(empty_record(case_id=f'c{i}', status='pass'))\n"
        "assert log.syncs == 0\n"
        "os._exit(9)\n"
    )
    rc = subprocess.call([sys.executable, "-c", code, str(tmp_path / "results.jsonl")])
    assert rc == 9
    assert [r["case_id"] for r in read_jsonl(tmp_path / "results.jsonl")] == [f"c{i}" for i in range(50)]


def test_append_after_close_still_writes(tmp_path: Path) -> None:
    log = RecordLog(tmp_path / "results.jsonl")
    log.close()
    log.append(empty_record(case_id="late", status="pass"))
    log.close()
    assert [r["case_id"] for r in read_jsonl(tmp_path / "results.jsonl")] == ["late"]
