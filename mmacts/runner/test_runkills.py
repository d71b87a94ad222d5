"""``kill -9`` of ``mmacts run`` at a random moment: of the CLI, of its test process, of both.

Each ends with every selected case recorded exactly once after (at most) one ``--resume``, and a
resume of a run that is still going is refused. The suite is the runner's ``faulty`` stub (cases
that sleep a little), so a kill lands before, between and inside cases. The moment is random; its
seed is in every failure message (``MMACTS_KILL_SEED`` replays one).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from mmacts.core.records import read_records
from mmacts.runner import runlock
from mmacts.runner.test_faults import _env
from mmacts.runner.test_runlife import _gone

N = 8
CASES = ",".join(["sleep=0.25"] * (N - 1) + ["slow"])
"""The last case sleeps ``MMACTS_FAKE_SLOW_S`` (read as it runs): long in a run whose orphan must be
seen (an orphan would live on), short in its resume."""


def _seed() -> int:
    return int(os.environ.get("MMACTS_KILL_SEED") or random.SystemRandom().randrange(1 << 30))


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _mmacts(tmp_path: Path, *argv: str, slow_s: float = 0.25, **popen: object) -> subprocess.Popen:
    """``mmacts run`` on the faulty stub suite, its output into files: a pipe would make a reader
    wait for an orphaned test process that still holds it, and hide that it outlived the CLI."""
    suites = tmp_path / "extra_suites" / "faulty"
    suites.mkdir(parents=True, exist_ok=True)
    (suites / "driver.py").write_text("from mmacts.runner.fake_suite import FAULTY_DRIVER as DRIVER\n")
    env = dict(_env(CASES), MMACTS_EXTRA_SUITES_DIR=str(tmp_path / "extra_suites"), MMACTS_FAKE_SLOW_S=str(slow_s))
    k = len(list(tmp_path.glob("out-*")))
    out, err = open(tmp_path / f"out-{k}", "w"), open(tmp_path / f"err-{k}", "w")  # noqa: SIM115
    p = subprocess.Popen([sys.executable, "-m", "mmacts.runner.cli", "run", *argv], env=env,
                         stdout=out, stderr=err, **popen)
    p.out_err = (tmp_path / f"out-{k}", tmp_path / f"err-{k}")  # type: ignore[attr-defined]
    out.close()
    err.close()
    return p


def _finish(p: subprocess.Popen, timeout: float = 180) -> tuple[str, str]:
    p.wait(timeout=timeout)
    return tuple(f.read_text() for f in p.out_err)  # type: ignore[attr-defined,return-value]


def _start(tmp_path: Path, *extra: str, **popen: object) -> tuple[subprocess.Popen, Path]:
    out = tmp_path / "runs"
    p = _mmacts(tmp_path, "--suite", "faulty", "--level", "smoke", "--backend", "model", "--out", str(out),
                *extra, **popen)
    return p, out


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        kids = _children(todo.pop())
        out += kids
        todo += kids
    return out


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:  # a kernel without CONFIG_PROC_CHILDREN: read every process's parent
        kids = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    kids.append(int(stat.parent.name))
            except (OSError, ValueError, IndexError):
                continue
        return kids
    except OSError:
        return []


def _wait_for_child(p: subprocess.Popen, out: Path, records: int, why: str) -> tuple[Path, int]:
    """The run directory and its test process's pid, once ``records`` cases are recorded."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        dirs = list(out.iterdir()) if out.exists() else []
        kids = _children(p.pid)
        if dirs and kids:
            res = dirs[0] / "results.jsonl"
            done = res.read_bytes().count(b"\n") if res.exists() else 0
            if done >= records:
                return dirs[0], kids[0]
        assert p.poll() is None, f"{why}: the run ended before the kill: {_finish(p)}"
        time.sleep(0.02)
    pytest.fail(f"{why}: the run never got going")


def _kill_point(seed: int) -> tuple[int, float]:
    rng = random.Random(seed)
    return rng.randrange(N - 1), rng.uniform(0, 0.3)  # after this many records, this much later


def _resume(tmp_path: Path, run_dir: Path, why: str) -> tuple[int, str]:
    r = _mmacts(tmp_path, "--resume", str(run_dir))
    stdout, stderr = _finish(r)
    assert stdout.strip().splitlines()[-1] == str(run_dir), f"{why}: {stderr}"
    return r.returncode, stderr


def _once_each(run_dir: Path, why: str) -> list[dict]:
    recs = read_records(run_dir / "results.jsonl")  # strict: a glued or cut line fails here
    ids = Counter(r["case_id"] for r in recs)
    assert len(ids) == N and set(ids.values()) == {1}, f"{why}: lost or repeated cases: {ids}"
    assert not (run_dir / runlock.LOCK_FILE).exists(), f"{why}: the lock outlived the run"
    return recs


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["single", "xdist"])
def test_kill_9_of_the_cli_takes_its_test_process_with_it(tmp_path: Path, workers: tuple[str, ...]) -> None:
    seed = _seed()
    after, extra = _kill_point(seed)
    why = f"seed {seed}: CLI {' '.join(workers)} killed after {after} records + {extra:.2f} s"
    p, out = _start(tmp_path, *workers, slow_s=60)
    run_dir, child = _wait_for_child(p, out, after, why)
    time.sleep(extra)
    family = _descendants(p.pid)  # the test process, and with -n its xdist workers
    p.send_signal(signal.SIGKILL)
    p.wait()
    left = [pid for pid in family if not _gone(pid, 3.0)]
    assert not left, f"{why}: {left} outlived the CLI (orphans a resume would run beside)"
    rc, err = _resume(tmp_path, run_dir, why)
    assert rc == 0, f"{why}: {err}"
    assert all(r["status"] == "pass" for r in _once_each(run_dir, why))


def test_kill_9_of_the_test_process_is_survived_by_the_run(tmp_path: Path) -> None:
    seed = _seed()
    after, extra = _kill_point(seed)
    why = f"seed {seed}: test process killed after {after} records + {extra:.2f} s"
    p, out = _start(tmp_path)
    run_dir, child = _wait_for_child(p, out, after, why)
    time.sleep(extra)
    os.kill(child, signal.SIGKILL)
    stdout, stderr = _finish(p)
    assert p.returncode in (0, 1), f"{why}: {stderr}"  # 1: the case it died in is recorded as crash
    assert "resuming" in stderr, f"{why}: {stderr}"
    recs = _once_each(run_dir, why)
    bad = [r for r in recs if r["status"] != "pass"]
    assert len(bad) <= 1 and all(r["status"] == "crash" and "signal 9 (SIGKILL)" in r["message"] for r in bad), \
        f"{why}: {bad}"


def test_kill_9_of_both_then_resume(tmp_path: Path) -> None:
    seed = _seed()
    after, extra = _kill_point(seed)
    why = f"seed {seed}: process group killed after {after} records + {extra:.2f} s"
    p, out = _start(tmp_path, start_new_session=True)
    run_dir, _ = _wait_for_child(p, out, after, why)
    time.sleep(extra)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    rc, err = _resume(tmp_path, run_dir, why)
    assert rc == 0, f"{why}: {err}"
    _once_each(run_dir, why)


def test_resume_of_a_live_run_is_refused_in_one_line(tmp_path: Path) -> None:
    p, out = _start(tmp_path)
    run_dir, child = _wait_for_child(p, out, 1, "live run")
    r = _mmacts(tmp_path, "--resume", str(run_dir))
    stdout, stderr = _finish(r)
    assert r.returncode == 2 and stdout == "", stderr
    assert len(stderr.strip().splitlines()) == 1 and f"being run by pid {p.pid} on host" in stderr, stderr
    stdout, stderr = _finish(p)
    assert p.returncode == 0, stderr
    _once_each(run_dir, "live run")


def test_an_interrupt_exits_130_and_says_how_to_resume(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the whole foreground group): exit 130 as a shell reports it (2 is a usage
    error), the run directory and the resume command printed; the resume completes the run."""
    p, out = _start(tmp_path, slow_s=60, start_new_session=True)
    run_dir, _ = _wait_for_child(p, out, 2, "interrupt")
    os.killpg(p.pid, signal.SIGINT)
    stdout, stderr = _finish(p, timeout=60)
    assert p.returncode == 130, stderr
    assert f"resume with: mmacts run --resume {run_dir}" in stderr and "Traceback" not in stderr, stderr
    assert not (run_dir / runlock.LOCK_FILE).exists()
    rc, err = _resume(tmp_path, run_dir, "interrupt")
    assert rc == 0, err
    _once_each(run_dir, "interrupt")


def test_sigterm_of_the_cli_stops_the_run_resumably(tmp_path: Path) -> None:
    """A scheduler's time limit (SIGTERM to the CLI alone): exit 143, the test process stopped, the
    lock given back, the resume command printed; the resume completes the run."""
    p, out = _start(tmp_path, slow_s=60)
    run_dir, child = _wait_for_child(p, out, 2, "sigterm")
    p.send_signal(signal.SIGTERM)
    stdout, stderr = _finish(p, timeout=60)
    assert p.returncode == 143, stderr
    assert f"terminated; partial results kept in {run_dir}" in stderr and "Traceback" not in stderr, stderr
    assert _gone(child, 3.0) and not (run_dir / runlock.LOCK_FILE).exists()
    rc, err = _resume(tmp_path, run_dir, "sigterm")
    assert rc == 0, err
    _once_each(run_dir, "sigterm")
