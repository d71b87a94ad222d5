"""Each fault is provoked on purpose (CPU, fake suite) and nothing finished is lost.

The ``faulty`` suite (``mmacts.runner.fake_suite.FaultyDriver``) has cases that hang,
get stuck where no signal reaches them, crash their process, segfault, or raise a
sticky CUDA error. A run over them must record every case exactly once with the
right status and go on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from mmacts.core.records import append_jsonl, empty_record, read_jsonl
from mmacts.report.atomic import write_atomic, write_text_atomic
from mmacts.report.write import write_reports
from mmacts.runner import faults

TEST_MODULE = """
from mmacts.runner.fake_suite import FAULTY_DRIVER as DRIVER
from mmacts.runner.plugin import run_case

def test_case(case):
    run_case(DRIVER, case)
"""


def _env(cases: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ, MMACTS_FAULTY_CASES=cases, MMACTS_NO_GPU="1", **extra)
    env.pop("MMACTS_RESTARTABLE", None)
    return env


def _pytest(tmp_path: Path, cases: str, *extra: str) -> tuple[int, list[dict], float]:
    (tmp_path / "test_faulty.py").write_text(TEST_MODULE)
    out = tmp_path / "run"
    out.mkdir(exist_ok=True)
    t0 = time.monotonic()
    rc = subprocess.call(
        [sys.executable, "-m", "pytest", "-q", "-p", "mmacts.runner.plugin", "-p", "no:cacheprovider",
         str(tmp_path / "test_faulty.py"), f"--mmacts-out={out}", f"--rootdir={tmp_path}",
         "--mmacts-backend=model", *extra],
        cwd=tmp_path, env=_env(cases), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return rc, list(read_jsonl(out / "results.jsonl")), time.monotonic() - t0


def _by_kind(recs: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in recs:
        out.setdefault(r["case_id"].split(".", 2)[2], []).append(r)
    return out


# ----------------------------------------------------------------------------- in-process units
def test_time_limit_raises_past_exception_handlers_and_restores_the_alarm() -> None:
    old = signal.getsignal(signal.SIGALRM)
    t0 = time.monotonic()
    with pytest.raises(faults.CaseTimeout, match="0.2 s"):
        with faults.case_time_limit(0.2):
            try:
                time.sleep(5)
            except Exception:  # what the executor does with case exceptions: must not swallow it
                pytest.fail("CaseTimeout was caught as an Exception")
    assert time.monotonic() - t0 < 2
    assert signal.getsignal(signal.SIGALRM) is old
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    with faults.case_time_limit(0.5):  # a case within its limit is untouched
        time.sleep(0.01)


@pytest.mark.parametrize("error,sticky", [
    ("CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory access was encountered", True),
    ("CUDADriverError: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure", True),
    ("CUDADriverError: CUDA_ERROR_ILLEGAL_INSTRUCTION: an illegal instruction was encountered", True),
    ("cudaErrorMisalignedAddress: misaligned address", True),
    ("CUDADriverError: CUDA_ERROR_OUT_OF_MEMORY: out of memory", False),
    ("CUDARuntimeError: cudaErrorInvalidValue: invalid argument", False),
    ("ValueError: model exploded on purpose", False),
])
def test_sticky_cuda_errors_are_recognised(error: str, sticky: bool) -> None:
    assert faults.is_sticky_cuda_error(error) is sticky
    assert bool(faults.context_poisoned(empty_record(case_id="c", status="error", message=error))) is sticky


def test_sticky_error_by_status_code() -> None:
    class FakeCupyError(Exception):
        status = 700  # cudaErrorIllegalAddress in the CUDA runtime API

    assert faults.is_sticky_cuda_error(FakeCupyError("opaque"))
    FakeCupyError.status = 2  # cudaErrorMemoryAllocation: the context survives it
    assert not faults.is_sticky_cuda_error(FakeCupyError("opaque"))


def test_a_note_removed_under_its_writer_is_written_anew(tmp_path: Path) -> None:
    """The in-flight note stays open across cases; a note file someone removed (a resumed run's
    cleanup) must come back at the next case, not go on into the unlinked file."""
    path = tmp_path / faults.INFLIGHT_FILE
    faults.write_note(path, "case.one")
    path.unlink()
    faults.write_note(path, "case.two")
    assert path.read_text().strip() == "case.two"
    faults.write_note(path, "c3")
    assert path.read_text().strip() == "c3"
    faults.drop_note(path)
    assert not path.exists()


def test_worker_marker_only_answers_for_its_case(tmp_path: Path) -> None:
    rec = empty_record(case_id="a", status="timeout", message="m")
    write_text_atomic(faults.marker_path(tmp_path, "gw1"), json.dumps(rec))
    assert faults.take_worker_marker(tmp_path, "gw1", "b") is None
    assert not faults.marker_path(tmp_path, "gw1").exists(), "a stale marker must not blame a later case"
    write_text_atomic(faults.marker_path(tmp_path, "gw1"), json.dumps(rec))
    assert faults.take_worker_marker(tmp_path, "gw1", "a") == rec


def test_atomic_write_failing_midway_keeps_the_previous_file(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    write_text_atomic(target, "<p>complete v1</p>")

    def half_then_die(p: Path) -> None:
        p.write_text("<p>trunc")
        raise OSError("disk full (simulated)")

    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, half_then_die)
    assert target.read_text() == "<p>complete v1</p>"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["report.html"], "no temporary file may be left"


def test_report_writer_failing_midway_keeps_previous_reports(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    run.mkdir()
    for i in range(3):
        append_jsonl(run / "results.jsonl", empty_record(case_id=f"c{i}", suite="s", status="pass"))
    write_reports(run, {"schema": "mmacts-run/1", "command": ["t"]})
    before = {n: (run / n).read_bytes() for n in ("results.parquet", "run.json", "index.html")}
    append_jsonl(run / "results.jsonl", empty_record(case_id="c3", suite="s", status="fail"))

    real = pd.DataFrame.to_parquet

    def torn_parquet(self: pd.DataFrame, path: Path, **kw: object) -> None:
        real(self, path, **kw)
        data = Path(path).read_bytes()
        Path(path).write_bytes(data[: len(data) // 2])  # a torn file, then the process "dies"
        raise OSError("killed while writing parquet (simulated)")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", torn_parquet)
    with pytest.raises(OSError, match="simulated"):
        write_reports(run, {"schema": "mmacts-run/1", "command": ["t"]})
    for name, data in before.items():
        assert (run / name).read_bytes() == data, f"{name} changed by a failed write"
    assert len(pd.read_parquet(run / "results.parquet")) == 3
    assert not [p for p in run.iterdir() if p.name.startswith(".")], "temporary files left behind"


# ----------------------------------------------------------------------------- provoked faults
def test_case_timeout_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    rc, recs, wall = _pytest(tmp_path, "good,hang,good", "--mmacts-case-timeout=3")
    kinds = _by_kind(recs)
    assert [r["status"] for r in kinds["hang"]] == ["timeout"]
    assert "wall-clock limit of 3 s" in kinds["hang"][0]["message"]
    assert [r["status"] for r in kinds["good"]] == ["pass", "pass"]
    assert rc == 1 and wall < 60


def test_crashed_and_poisoned_workers_lose_nothing(tmp_path: Path) -> None:
    """-n 2 with the scheduling ``mmacts run`` uses: every case recorded exactly once."""
    cases = "good,crash,good,segv,good,sticky,good,stuck,good,good"
    rc, recs, _ = _pytest(tmp_path, cases, "-n", "2", "--dist", "loadgroup", "--mmacts-case-timeout=4",
                          "--max-worker-restart=20")
    ids = Counter(r["case_id"] for r in recs)
    assert len(ids) == 10 and set(ids.values()) == {1}, f"lost or repeated cases: {ids}"
    kinds = _by_kind(recs)
    for kind in ("crash", "segv"):
        rec = kinds.get(kind, [None])[0]
        assert rec is not None, f"no record of the {kind} case carries its ID: {sorted(ids)}"
        assert rec["status"] == "crash" and rec["message"].startswith("crash: worker process"), rec
        # the record comes from the worker's in-flight note: the case's own columns, not only its ID
        assert (rec["suite"], rec["arch"], rec["level"]) == ("faulty", "sm_90", "smoke"), rec
    sticky = kinds["sticky"][0]
    assert sticky["status"] == "error"
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in sticky["message"] and "process ended" in sticky["message"]
    stuck = kinds["stuck"][0]
    assert stuck["status"] == "timeout" and "did not return to Python" in stuck["message"]
    assert [r["status"] for r in kinds["good"]] == ["pass"] * 6
    assert rc == 1


# ----------------------------------------------------------------------------- mmacts run
def _mmacts(tmp_path: Path, env: dict[str, str], *argv: str, **popen: object) -> subprocess.Popen:
    suites = tmp_path / "extra_suites" / "faulty"
    suites.mkdir(parents=True, exist_ok=True)
    (suites / "driver.py").write_text("from mmacts.runner.fake_suite import FAULTY_DRIVER as DRIVER\n")
    env = dict(env, MMACTS_EXTRA_SUITES_DIR=str(tmp_path / "extra_suites"))
    return subprocess.Popen([sys.executable, "-m", "mmacts.runner.cli", "run", *argv], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def test_kill_9_of_the_whole_run_then_resume(tmp_path: Path) -> None:
    cases = "good,good,good,slow,good,good"
    out = tmp_path / "runs"
    p = _mmacts(tmp_path, _env(cases, MMACTS_FAKE_SLOW_S="120"), "--suite", "faulty", "--level", "smoke",
                "--backend", "model", "--out", str(out), start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            dirs = list(out.glob("*")) if out.exists() else []
            if dirs and len(list(read_jsonl(dirs[0] / "results.jsonl"))) >= 3:
                break
            assert p.poll() is None, p.communicate()
            time.sleep(0.1)
        else:
            pytest.fail("the run never finished its first three cases")
        time.sleep(0.5)  # now inside the slow case
        os.killpg(p.pid, signal.SIGKILL)
    finally:
        p.wait()
    (run_dir,) = out.iterdir()
    finished = list(read_jsonl(run_dir / "results.jsonl"))
    assert [r["status"] for r in finished] == ["pass"] * 3
    assert json.loads((run_dir / "run.json").read_text())["complete"] is False
    assert not (run_dir / "index.html").exists()

    r = _mmacts(tmp_path, _env(cases, MMACTS_FAKE_SLOW_S="0"), "--resume", str(run_dir))
    stdout, stderr = r.communicate(timeout=120)
    assert r.returncode == 0, stderr
    assert stdout.strip().splitlines()[-1] == str(run_dir)
    recs = list(read_jsonl(run_dir / "results.jsonl"))
    assert recs[:3] == finished, "finished records were rewritten"
    ids = Counter(x["case_id"] for x in recs)
    assert len(ids) == 6 and set(ids.values()) == {1}, f"resume re-ran finished cases: {ids}"
    run = json.loads((run_dir / "run.json").read_text())
    assert run["complete"] is True and run["counts"] == {"pass": 6} and len(run["resumed"]) == 1
    assert len(pd.read_parquet(run_dir / "results.parquet")) == 6


def test_single_process_crashes_are_pinned_on_their_case_and_resumed(tmp_path: Path) -> None:
    """No xdist: ``mmacts run`` itself restarts the test process after a crash or a poisoned context."""
    p = _mmacts(tmp_path, _env("good,crash,good,sticky,good"), "--suite", "faulty", "--level", "smoke",
                "--backend", "model", "--out", str(tmp_path / "runs"))
    stdout, stderr = p.communicate(timeout=180)
    assert p.returncode == 1, stderr  # errors were recorded: not a clean run, but a finished one
    run_dir = Path(stdout.strip().splitlines()[-1])
    recs = list(read_jsonl(run_dir / "results.jsonl"))
    ids = Counter(x["case_id"] for x in recs)
    assert len(ids) == 5 and set(ids.values()) == {1}, ids
    kinds = _by_kind(recs)
    assert kinds["crash"][0]["status"] == "crash" and "died (exit code 13)" in kinds["crash"][0]["message"]
    assert kinds["sticky"][0]["status"] == "error" and "process ended" in kinds["sticky"][0]["message"]
    assert [r["status"] for r in kinds["good"]] == ["pass"] * 3
    assert stderr.count("resuming") == 2
    assert json.loads((run_dir / "run.json").read_text())["complete"] is True


def test_scheduler_leaves_a_still_collecting_replacement_alone() -> None:
    """Two replacement workers at once: rescheduling the one that has not collected must not crash
    the controller (xdist raised KeyError there and the rest of the run was lost)."""
    from types import SimpleNamespace

    sched = faults.crash_safe_loadgroup(SimpleNamespace(getvalue=lambda name: ["2*popen"] if name == "tx" else 2,
                                                        option=SimpleNamespace(numprocesses=2, tx=[])), None)
    class Node:  # a replacement worker that has not sent its collection yet
        shutting_down = False

    collecting = Node()
    sched.assigned_work[collecting] = {}
    sched.workqueue["scope"] = {"test_x.py::t[a]": False}
    sched._reschedule(collecting)  # must not raise
    assert sched.assigned_work[collecting] == {} and "scope" in sched.workqueue


def test_scheduler_gives_back_work_a_dead_worker_could_not_receive() -> None:
    """Two workers dying together: sending to the second fails (channel closed); the unit must go back
    to the queue, not stay assigned to a dead worker whose removal would then blame a case it never ran."""
    from types import SimpleNamespace

    sched = faults.crash_safe_loadgroup(SimpleNamespace(getvalue=lambda name: ["2*popen"] if name == "tx" else 2,
                                                        option=SimpleNamespace(numprocesses=2, tx=[])), None)

    class DeadNode:
        shutting_down = False

        def send_runtest_some(self, indexes: list[int]) -> None:
            raise OSError("cannot send (already closed?)")

    dead = DeadNode()
    sched.assigned_work[dead] = {}
    sched.registered_collections[dead] = ["test_x.py::t[a]", "test_x.py::t[b]"]
    sched.workqueue["a"] = {"test_x.py::t[a]": False}
    sched.workqueue["b"] = {"test_x.py::t[b]": False}
    sched._reschedule(dead)  # must not raise
    assert sched.assigned_work[dead] == {}
    assert list(sched.workqueue) == ["a", "b"], "given back, in the original order"


# ----------------------------------------------------------------------------- xdist report forms
@pytest.mark.parametrize("nodeid", [
    "test_faulty.py::test_case[faulty.01.crash]",  # pytest 9.2 + xdist 3.8
    "test_faulty.py::test_case[faulty.01.crash]@form-e77a40bd5678",  # pytest 9.1 (8.x) + xdist, --dist loadgroup
])
@pytest.mark.parametrize("node", ["gateway", "workerinput", "text"])
def test_crash_report_of_any_xdist_version_records_the_case(tmp_path: Path, nodeid: str, node: str) -> None:
    """The guard for the validation hosts' pytest/xdist: whichever form xdist gives its crash report
    (node id with or without ``@group``; the worker on the report's node or only in its message),
    the crashed case is recorded once, with its own columns from the worker's in-flight note."""
    from types import SimpleNamespace

    from mmacts.runner import plugin

    faults.configure(tmp_path, "gw3")
    try:
        faults.note_running("test_faulty.py::test_case[faulty.01.crash]",
                            {"case_id": "faulty.01.crash", "suite": "faulty", "arch": "sm_90", "level": "smoke"})
    finally:
        faults.configure(None, None)
    worker = {"gateway": SimpleNamespace(gateway=SimpleNamespace(id="gw3")),
              "workerinput": SimpleNamespace(workerinput={"workerid": "gw3"}), "text": None}[node]
    report = SimpleNamespace(nodeid=nodeid, when="???", node=worker, passed=False, failed=True, user_properties=[],
                             longrepr=f"worker 'gw3' crashed while running {nodeid!r}")
    config = SimpleNamespace(getoption=lambda name: str(tmp_path) if name == "--mmacts-out" else None)
    plugin._CONFIG["config"] = config  # type: ignore[assignment]
    plugin._WRITTEN.clear()
    try:
        plugin.pytest_runtest_logreport(report)  # type: ignore[arg-type]
        plugin.pytest_runtest_logreport(report)  # told twice (xdist re-ran it): still one record
    finally:
        plugin._CONFIG.pop("config", None)
        plugin._close_log()
    (rec,) = read_jsonl(tmp_path / "results.jsonl")
    assert rec["case_id"] == "faulty.01.crash" and rec["status"] == "crash"
    assert rec["message"].startswith("crash: worker process gw3")
    assert (rec["suite"], rec["arch"], rec["level"]) == ("faulty", "sm_90", "smoke")


def test_crash_report_without_a_note_falls_back_to_the_node_id(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from mmacts.runner import plugin

    assert plugin._case_id("t.py::test_case[a.b/c-d]@form-1234") == "a.b/c-d"
    assert plugin._case_id("t.py::test_case[a[1]]") == "a[1]"
    report = SimpleNamespace(nodeid="t.py::test_case[x.y]@g", when="???", node=None, passed=False, failed=True,
                             user_properties=[], longrepr="worker 'gw0' crashed while running 't.py::test_case[x.y]@g'")
    plugin._CONFIG["config"] = SimpleNamespace(getoption=lambda n: str(tmp_path) if n == "--mmacts-out" else None)
    plugin._WRITTEN.clear()
    try:
        plugin.pytest_runtest_logreport(report)  # type: ignore[arg-type]
    finally:
        plugin._CONFIG.pop("config", None)
        plugin._close_log()
    (rec,) = read_jsonl(tmp_path / "results.jsonl")
    assert rec["case_id"] == "x.y" and rec["status"] == "crash"
    assert rec["message"].startswith("crash: worker process gw0")
