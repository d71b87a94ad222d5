"""``crash``: a case whose test process died under it. Recorded with the signal or exit code, final for
``--resume`` unless the user asks (``--rerun-crashed``); a run stopped from outside is not a crash,
a machine that went down under the run is."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

from mmacts.core.records import append_jsonl, empty_record, read_jsonl
from mmacts.runner import faults, runlock
from mmacts.runner.plugin import done_cases
from mmacts.runner.test_faults import _env


def test_how_a_process_died_names_the_signal() -> None:
    assert faults.how_it_died(-11) == "signal 11 (SIGSEGV)"
    assert faults.how_it_died(-9) == "signal 9 (SIGKILL)"
    assert faults.how_it_died(13) == "exit code 13"


def test_resume_keeps_a_crash_unless_asked(tmp_path: Path) -> None:
    res = tmp_path / "results.jsonl"
    for cid, st, msg in [("a", "pass", ""), ("b", "crash", "crash: signal 11"), ("c", "error", "harness hiccup"),
                         ("d", "error", "worker crashed: process gw0 died"), ("e", "crash", "crash: exit code 3"),
                         ("e", "pass", "")]:
        append_jsonl(res, empty_record(case_id=cid, status=st, message=msg))
    assert done_cases(res) == {"a", "b", "d", "e"}  # a harness error is tried again; a crash is not
    assert done_cases(res, rerun_crashed=True) == {"a", "e"}  # e crashed, then passed when re-run: done


def _notes(out: Path) -> None:
    (out / faults.INFLIGHT_FILE).write_text("x.single")
    faults.running_note_path(out, "gw1").write_text(json.dumps(
        {"nodeid": "t.py::test_case[x.worker]", "case": {"case_id": "x.worker", "suite": "s", "arch": "sm_90a"}}))
    faults.running_note_path(out, "gw2").write_text(json.dumps({"nodeid": "n", "case": {"case_id": "x.done"}}))
    append_jsonl(out / "results.jsonl", empty_record(case_id="x.done", status="pass"))


def test_a_machine_restart_under_the_run_records_the_running_cases_as_crash(tmp_path: Path) -> None:
    _notes(tmp_path)
    owner = {"pid": 1, "host": socket.gethostname(), "boot": "boot-before"}
    lost = faults.record_lost_inflight(tmp_path, owner, socket.gethostname(), "boot-after")
    assert lost == ["x.single", "x.worker"]
    recs = {r["case_id"]: r for r in read_jsonl(tmp_path / "results.jsonl")}
    assert recs["x.worker"]["status"] == "crash" and recs["x.worker"]["suite"] == "s"
    assert "machine restarted" in recs["x.single"]["message"] and recs["x.done"]["status"] == "pass"
    assert not list(tmp_path.glob(".worker-*")) and not (tmp_path / faults.INFLIGHT_FILE).exists()


def test_a_run_stopped_from_outside_is_not_a_crash(tmp_path: Path) -> None:
    """kill -9 of mmacts run, Ctrl-C, SIGTERM (same boot), a lock given back, or one of another host:
    the in-flight case was interrupted; the stale notes go, the resume runs it."""
    host = socket.gethostname()
    for owner, boot in [({"host": host, "boot": "b1"}, "b1"), (None, "b1"), ({"host": "elsewhere", "boot": "b0"}, "b1"),
                        ({"host": host}, "b1")]:
        _notes(tmp_path)
        assert faults.record_lost_inflight(tmp_path, owner, host, boot) == []
        assert not (tmp_path / faults.INFLIGHT_FILE).exists()
        assert {r["status"] for r in read_jsonl(tmp_path / "results.jsonl")} == {"pass"}


def test_the_lock_records_the_boot(tmp_path: Path) -> None:
    lock = runlock.RunLock(tmp_path).acquire(["mmacts", "run"])
    try:
        assert runlock.owner_of(tmp_path)["boot"] == runlock.boot_id()
    finally:
        lock.release()


def test_rerun_crashed_runs_a_crash_again_and_needs_resume(tmp_path: Path) -> None:
    suites = tmp_path / "extra_suites" / "faulty"
    suites.mkdir(parents=True)
    (suites / "driver.py").write_text("from mmacts.runner.fake_suite import FAULTY_DRIVER as DRIVER\n")
    env = _env("good,crash,good", MMACTS_EXTRA_SUITES_DIR=str(tmp_path / "extra_suites"))
    base = [sys.executable, "-m", "mmacts.runner.cli", "run"]
    p = subprocess.run([*base, "--suite", "faulty", "--level", "smoke", "--backend", "model",
                        "--out", str(tmp_path / "runs")], env=env, capture_output=True, text=True, timeout=180)
    assert p.returncode == 1, p.stderr  # a crash fails the run
    run_dir = Path(p.stdout.strip().splitlines()[-1])
    r = subprocess.run([*base, "--resume", str(run_dir)], env=env, capture_output=True, text=True, timeout=180)
    assert r.returncode == 1 and "resuming" not in r.stderr, r.stderr  # the crash is final: nothing ran
    assert Counter(x["case_id"] for x in read_jsonl(run_dir / "results.jsonl"))["faulty.01.crash"] == 1
    r = subprocess.run([*base, "--resume", str(run_dir), "--rerun-crashed"], env=env, capture_output=True,
                       text=True, timeout=180)
    assert r.returncode == 1 and "died (exit 13) running faulty.01.crash" in r.stderr, r.stderr
    recs = [x for x in read_jsonl(run_dir / "results.jsonl") if x["case_id"] == "faulty.01.crash"]
    assert [x["status"] for x in recs] == ["crash", "crash"] and "exit code 13" in recs[-1]["message"]
    u = subprocess.run([*base, "--rerun-crashed"], env=env, capture_output=True, text=True, timeout=60)
    assert u.returncode == 2 and "--rerun-crashed goes with --resume" in u.stderr
