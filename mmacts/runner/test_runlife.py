"""No loss, no double work, whatever dies when: the pieces, each with the fault it exists for.

- a kill cuts ``results.jsonl`` at any byte: the next writer repairs the tail before appending,
  and a resume ends with exactly the selected cases, once each (every byte offset of a real file);
- two processes never run one run: ``RUN/run.lock`` refuses a live owner and is taken over from a
  dead one (flock, and the pid+host fallback where flock is missing);
- a test process dies with the process that started it (prctl, and the polling fallback).

The end-to-end kills of ``mmacts run`` (the CLI, the test process, both) are in test_runkills.py.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mmacts.core import records
from mmacts.core.records import RecordsError, empty_record, read_records, repair_tail
from mmacts.runner import lifeline, runlock
from mmacts.runner.plugin import done_cases
from mmacts.runner.recordlog import RecordLog

SELECTED = [f"suite.case{i}/{'x' * (i * 7)}" for i in range(4)]


def _record(case_id: str) -> dict:
    # one record with a long message (a mismatch map): lines of different lengths
    msg = "m" * (300 if case_id.endswith("x" * 7) else 3)
    return empty_record(case_id=case_id, suite="suite", status="pass", message=msg, run_s=0.25)


def _complete_file(path: Path) -> bytes:
    log = RecordLog(path, every_s=0)
    for c in SELECTED:
        log.append(_record(c))
    log.close()
    return path.read_bytes()


def _resume(path: Path) -> None:
    """What a resume does with the file: repair (RecordLog does it on opening), run what is not done."""
    done = done_cases(path)
    log = RecordLog(path, every_s=0)
    for c in SELECTED:
        if c not in done:
            log.append(_record(c))
    log.close()


@pytest.fixture
def no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thousands of tiny files: the fsyncs are not what is tested here (they cost 5 ms each)."""
    monkeypatch.setattr(records.os, "fsync", lambda fd: None)


def test_a_kill_at_any_byte_then_resume_gives_every_case_once(tmp_path: Path, no_fsync: None) -> None:
    """Property over every kill point of a real file (every byte offset, so every offset of the last
    record too): the repaired file is strict JSONL and the resume ends with each case once."""
    full = _complete_file(tmp_path / "full.jsonl")
    path = tmp_path / "results.jsonl"
    for k in range(len(full) + 1):
        path.write_bytes(full[:k])
        _resume(path)
        got = [r["case_id"] for r in read_records(path)]  # strict: any glued or cut line raises
        assert sorted(got) == sorted(SELECTED) and len(got) == len(SELECTED), (k, got)
        kept = full[:k].rsplit(b"\n", 1)[0]
        assert path.read_bytes().startswith(kept), f"offset {k}: a finished record was rewritten"


def test_repair_keeps_a_whole_record_whose_newline_was_cut(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    line = json.dumps(_record("a"), sort_keys=True)
    path.write_text(line)
    assert "completed" in (repair_tail(path) or "")
    assert path.read_text() == line + "\n"
    assert repair_tail(path) is None  # a sound file is left alone
    assert repair_tail(tmp_path / "missing.jsonl") is None


def test_without_the_repair_a_cut_record_is_glued_to_the_next(tmp_path: Path, no_fsync: None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The fault the repair is for (planted: the repair does nothing): the file is lost to every
    strict reader and one case is missing, which is what issue 24 saw (480 of 481)."""
    full = _complete_file(tmp_path / "full.jsonl")
    path = tmp_path / "results.jsonl"
    path.write_bytes(full[: len(full) - 10])
    monkeypatch.setattr("mmacts.runner.recordlog.repair_tail", lambda p: None)
    _resume(path)
    with pytest.raises(RecordsError, match="not JSON"):
        read_records(path)


# ----------------------------------------------------------------------------------- the lock
HOLDER = """
import sys, time
from mmacts.runner.runlock import RunLock
lock = RunLock(sys.argv[1]).acquire(["holder"])
print("locked", flush=True)
time.sleep(120)
"""


def _holder(run_dir: Path) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir)], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "locked"
    return p


def test_a_live_owner_is_refused_and_a_dead_ones_lock_is_taken_over(tmp_path: Path) -> None:
    p = _holder(tmp_path)
    try:
        with pytest.raises(runlock.RunLocked, match=f"being run by pid {p.pid} on host"):
            runlock.RunLock(tmp_path).acquire()
    finally:
        p.kill()
        p.wait()
    assert runlock.owner_of(tmp_path)["pid"] == p.pid  # the dead owner's file is still there
    lock = runlock.RunLock(tmp_path).acquire(["me"])
    assert runlock.owner_of(tmp_path)["pid"] == os.getpid()
    with pytest.raises(runlock.RunLocked):  # a second owner in this very process is refused too
        runlock.RunLock(tmp_path).acquire()
    lock.release()
    lock.release()
    assert not (tmp_path / runlock.LOCK_FILE).exists()
    runlock.RunLock(tmp_path).acquire().release()


def test_an_inherited_lock_lives_while_the_child_does(tmp_path: Path) -> None:
    """The test process inherits the lock: a CLI that died first does not free the run."""
    lock = runlock.RunLock(tmp_path).acquire()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                             pass_fds=lock.inheritable_fd())
    try:
        os.close(lock._fd)  # this process "dies": its descriptor is gone, the child's is not
        lock._fd = None
        with pytest.raises(runlock.RunLocked):
            runlock.RunLock(tmp_path).acquire()
    finally:
        child.kill()
        child.wait()
    runlock.RunLock(tmp_path).acquire().release()


@pytest.mark.parametrize("owner,taken", [
    ("dead-pid-here", True), ("live-pid-here", False), ("other-host", False), ("garbage", True)])
def test_where_flock_is_missing_the_pid_and_host_decide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        owner: str, taken: bool) -> None:
    monkeypatch.setattr(runlock, "fcntl", None)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    content = {"dead-pid-here": {"pid": dead.pid, "host": socket.gethostname()},
               "live-pid-here": {"pid": os.getppid(), "host": socket.gethostname()},
               "other-host": {"pid": 1, "host": "not-" + socket.gethostname()}}.get(owner)
    (tmp_path / runlock.LOCK_FILE).write_text(json.dumps(content) if content else "{{{")
    if taken:
        runlock.RunLock(tmp_path).acquire().release()
    else:
        with pytest.raises(runlock.RunLocked, match="being run by pid"):
            runlock.RunLock(tmp_path).acquire()


# -------------------------------------------------------------------------------- the lifeline
PARENT = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", sys.argv[1]], env=dict(os.environ, MMACTS_PARENT_PID=str(os.getpid())))
print(child.pid, flush=True)
time.sleep(120)
"""
CHILD = """
import time
from mmacts.runner import lifeline
{patch}
lifeline.from_environment()
time.sleep(120)
"""


def _gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split(")")[-1].split()[0] == "Z":
                    return True  # dead, waiting for its (new) parent to reap it
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["prctl", "polling"])
def test_a_test_process_dies_with_its_parent(how: str) -> None:
    patch = "lifeline._set_pdeathsig = lambda: False" if how == "polling" else ""
    parent = subprocess.Popen([sys.executable, "-c", PARENT, CHILD.format(patch=patch)], stdout=subprocess.PIPE,
                              text=True, env=dict(os.environ, PYTHONPATH=str(Path(lifeline.__file__).parents[2])))
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    time.sleep(1.0)  # the child is running (its lifeline set up)
    assert not _gone(child, 0.1), "the child ended before its parent"
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    assert _gone(child, 5.0), f"the child outlived its parent ({how})"


def test_a_process_started_by_hand_has_no_lifeline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(lifeline.PARENT_ENV, raising=False)
    assert lifeline.from_environment() is False
