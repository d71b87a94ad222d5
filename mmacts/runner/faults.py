"""Fault containment for a conformance run: a bad case costs one record, never the run.

A suite that runs instructions of unknown behaviour meets every kind of fault:
a kernel or a model that never returns, a worker that segfaults, a CUDA context
poisoned by a sticky error (after which every later launch in that process is
meaningless). The rules here:

- **Per-case wall-clock limit** (:func:`case_time_limit`): ``SIGALRM`` raises
  :class:`CaseTimeout` in the case body; the plugin turns it into a ``timeout``
  record and the run goes on. ``CaseTimeout`` is a ``BaseException`` on purpose:
  the executor turns every ``Exception`` into ``error``, and a timeout must not
  be reported as an error. A case stuck in C code that never returns to the
  interpreter (a blocking CUDA call) cannot see the signal, so a watchdog thread
  ends the whole process after a grace period, leaving the ``timeout`` record
  behind first (:func:`exit_process`).
- **Ending a process on purpose** (:func:`exit_process`): the record of the case
  that caused it is made durable *before* ``os._exit``. In an xdist worker the
  controller writes records, so the worker leaves it in a marker file the
  controller picks up when it hears of the crash (:func:`take_worker_marker`);
  a worker that dies without ending itself is recorded from the note it wrote as the
  case started (:func:`note_running`);
  in a single process, which is its own controller, it appends the record to
  ``results.jsonl`` itself. ``mmacts run`` then resumes (single process) or
  xdist replaces the worker.
- **Sticky CUDA errors** (:func:`is_sticky_cuda_error`, :func:`context_poisoned`):
  after an illegal address, a launch failure or a hang the CUDA context cannot
  be used again, so the process ends after recording the case that did it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mmacts.backends.cuda_errors import is_sticky_cuda_error
from mmacts.cases.status import CRASH
from mmacts.core.records import append_jsonl, empty_record, read_jsonl
from mmacts.report.atomic import write_text_atomic

EXIT_CODE = 75
"""Exit status of a process ended on purpose by :func:`exit_process` (EX_TEMPFAIL: try again)."""

RESTARTABLE_ENV = "MMACTS_RESTARTABLE"
"""Set to 1 by ``mmacts run``: a single test process may end itself, the CLI resumes it."""

INFLIGHT_FILE = ".inflight"
"""In a single-process run: the case now running (so a crash can be pinned on it)."""

DEFAULT_CASE_TIMEOUT_S = 300.0


class CaseTimeout(BaseException):
    """The case ran past its wall-clock limit (BaseException: must not become ``error``)."""


# ------------------------------------------------------------------------- process state
_STATE: dict[str, Any] = {"out": None, "worker": None, "sync": None}


def configure(out: str | Path | None, worker: str | None) -> None:
    """Tell this module where records go and which xdist worker this is (None: the controller)."""
    _STATE["out"] = Path(out) if out else None
    _STATE["worker"] = worker


def marker_path(out: Path, worker: str) -> Path:
    """Where a worker leaves the record of the case it ended itself on."""
    return Path(out) / f".worker-{worker}.last.json"


def running_note_path(out: Path, worker: str) -> Path:
    """Where a worker names the case it is running (rewritten as each case starts)."""
    return Path(out) / f".worker-{worker}.running.json"


class Note:
    """A small file rewritten in place as each case starts: the descriptor stays open (an ``open``
    per case cost about a millisecond on a busy disk) and one ``pwrite`` replaces the text, padded
    with spaces to the previous length so no truncate is needed (readers strip, JSON allows it).
    No fsync: a note only has to outlive its process, not the machine."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None
        self._size = 0

    def write(self, text: str) -> None:
        data = text.encode()
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            self._size = 0
        if len(data) < self._size:
            data += b" " * (self._size - len(data))
        os.pwrite(self._fd, data, 0)
        self._size = len(data)

    def close(self, unlink: bool = False) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if unlink:
            self.path.unlink(missing_ok=True)


_NOTES: dict[Path, Note] = {}


def write_note(path: Path, text: str) -> None:
    """Rewrite the note file ``path`` (kept open across cases; see :class:`Note`)."""
    note = _NOTES.get(Path(path))
    if note is None or (note._fd is not None and os.fstat(note._fd).st_nlink == 0):  # removed under us: a new file
        if note is not None:
            note.close()
        note = _NOTES[Path(path)] = Note(path)
    note.write(text)


def drop_note(path: Path) -> None:
    """Close and remove the note file ``path``."""
    note = _NOTES.pop(Path(path), None)
    if note is not None:
        note.close(unlink=True)
    else:
        Path(path).unlink(missing_ok=True)


def note_running(nodeid: str, case: dict[str, Any]) -> None:
    """xdist worker: name the item it starts (node id and the case's record identity).

    If the worker dies under it, the controller reads this note to record the case
    (:func:`read_running_note`) instead of trusting the form of xdist's crash report.
    """
    out, worker = _STATE["out"], _STATE["worker"]
    if out is None or not worker:
        return
    with contextlib.suppress(OSError):
        write_note(running_note_path(out, worker), json.dumps({"nodeid": nodeid, "case": case}, default=str))


def read_running_note(out: Path, worker: str) -> dict[str, Any] | None:
    """The note a (dead) worker left about the item it was running, else None."""
    try:
        note = json.loads(running_note_path(out, worker).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return note if isinstance(note, dict) and isinstance(note.get("case", {}), dict) else None


def set_record_sync(sync: Callable[[], None] | None) -> None:
    """The controller's record log registers its fsync here; :func:`exit_process` calls it first."""
    _STATE["sync"] = sync


# ------------------------------------------------------------------------- time limit
def hard_grace_s(limit_s: float) -> float:
    """How long past the soft limit a case stuck in C code gets before the process is ended."""
    return min(60.0, max(2.0, 0.25 * limit_s))


@contextlib.contextmanager
def case_time_limit(limit_s: float | None, on_hard_timeout: Callable[[], None] | None = None,
                    grace_s: float | None = None) -> Iterator[None]:
    """Raise :class:`CaseTimeout` in the body after ``limit_s``; call ``on_hard_timeout``
    from a watchdog thread if the body is still running ``grace_s`` later.

    Signals only reach the main thread; elsewhere (or with no limit) the body runs
    unbounded rather than failing.
    """
    if not limit_s or limit_s <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def _alarm(signum: int, frame: Any) -> None:
        raise CaseTimeout(f"case exceeded its wall-clock limit of {limit_s:g} s")

    old = signal.signal(signal.SIGALRM, _alarm)
    if on_hard_timeout is not None:
        _WATCHDOG.arm(limit_s + (hard_grace_s(limit_s) if grace_s is None else grace_s), on_hard_timeout)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if on_hard_timeout is not None:
            _WATCHDOG.disarm()


class _Watchdog:
    """One thread per process that calls a function if a deadline passes before it is disarmed.

    Armed and disarmed around every case: a ``threading.Timer`` per case started (and joined
    the start of) one OS thread per case, about a millisecond each on a loaded host."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._deadline: float | None = None
        self._fn: Callable[[], None] | None = None
        self._thread: threading.Thread | None = None

    def arm(self, after_s: float, fn: Callable[[], None]) -> None:
        with self._cond:
            self._deadline, self._fn = time.monotonic() + after_s, fn
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="mmacts-case-watchdog", daemon=True)
                self._thread.start()
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._deadline = self._fn = None
            self._cond.notify()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._deadline is None or self._deadline > time.monotonic():
                    self._cond.wait(None if self._deadline is None else self._deadline - time.monotonic())
                fn, self._deadline, self._fn = self._fn, None, None
            if fn is not None:
                fn()


_WATCHDOG = _Watchdog()


def case_record(case: Any, status: str, message: str, **extra: Any) -> dict[str, Any]:
    """A record for ``case`` made outside the executor (timeouts, crashes)."""
    return empty_record(
        case_id=case.case_id, suite=case.suite, instruction=case.instruction,
        spec_rows=" ".join(case.spec_rows), arch=case.arch, expect=case.expect, level=case.level,
        status=status, message=message, **extra)


# ------------------------------------------------------------------------- ending a process
def exit_process(record: dict[str, Any], why: str = "") -> None:
    """Make ``record`` durable, then end this process at once (never returns).

    Worker: the record goes to a marker file the controller reads when it hears of
    the crash. Single process: the record is appended to ``results.jsonl`` (this
    process is its own controller). ``os._exit`` skips every cleanup on purpose: a
    poisoned CUDA context may hang in its destructor.
    """
    record = dict(record)
    if why:
        record["message"] = f"{record.get('message') or ''} [{why}]".strip()
    out, worker = _STATE["out"], _STATE["worker"]
    try:
        sync = _STATE.get("sync")
        if sync is not None:  # the records written so far are batched: make them durable first
            with contextlib.suppress(Exception):
                sync()
        if out is not None and worker:
            write_text_atomic(marker_path(out, worker), json.dumps(record, default=str))
        elif out is not None:
            append_jsonl(out / "results.jsonl", record)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_CODE)


def may_end_process() -> bool:
    """Whether ending this process loses nothing: an xdist worker, or a run ``mmacts run`` restarts."""
    return bool(_STATE["worker"]) or os.environ.get(RESTARTABLE_ENV) == "1"


def take_worker_marker(out: Path, worker: str, case_id: str) -> dict[str, Any] | None:
    """The record a crashed worker left for ``case_id`` (and remove the marker), else None."""
    path = marker_path(out, worker)
    if not path.is_file():
        return None
    try:
        rec = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        rec = None
    with contextlib.suppress(OSError):
        path.unlink()
    return rec if isinstance(rec, dict) and rec.get("case_id") == case_id else None


PROCESS_ENDED = "process ended"
"""Words in the message of every record whose case ended its process (see :func:`is_contained_fault`)."""


def is_contained_fault(record: dict[str, Any]) -> bool:
    """Whether ``record`` is a case that ended its process: a resume must not run it again
    (a deterministic crash would end the resumed process too, forever). A ``crash``, and the
    ``error`` records of runs made before ``crash`` existed ("worker crashed: ...")."""
    msg = str(record.get("message") or "")
    if record.get("status") == CRASH:
        return True
    return record.get("status") == "error" and (msg.startswith("worker crashed") or PROCESS_ENDED in msg)


def is_crash(record: dict[str, Any]) -> bool:
    """A case whose process died under it: ``crash``, or an ``error`` an older mmacts recorded for one
    (``--resume --rerun-crashed`` runs these again; a case that ended its process on purpose, a
    timeout or a poisoned context, keeps its record)."""
    return record.get("status") == CRASH or (
        record.get("status") == "error" and str(record.get("message") or "").startswith("worker crashed"))


def how_it_died(rc: int) -> str:
    """``signal 11 (SIGSEGV)`` or ``exit code 3``: a process's end as ``subprocess`` reports it
    (a negative return code is the signal that ended it)."""
    if rc < 0:
        try:
            return f"signal {-rc} ({signal.Signals(-rc).name})"
        except ValueError:
            return f"signal {-rc}"
    return f"exit code {rc}"


def record_lost_inflight(out: Path, owner: dict[str, Any] | None, host: str, boot: str) -> list[str]:
    """Before a resume: the cases the dead run was running (its in-flight notes) and never recorded.

    ``owner`` is the lock content the dead run left (``runlock.owner_of``). When it was taken on this
    host under another boot, the machine went down while those cases ran (a hang that needed a
    reset, a power loss): each is recorded ``crash`` and not run again (it may take the machine down
    again; ``--rerun-crashed`` asks for it). Otherwise the run was stopped from outside (Ctrl-C,
    SIGTERM, ``kill -9`` of ``mmacts run``): the case was interrupted, not at fault, and the resume
    runs it. Either way the stale notes are removed, so a resumed process that dies before its first
    case is not blamed on them. Returns the case IDs recorded as crash."""
    notes = [Path(out) / INFLIGHT_FILE, *sorted(Path(out).glob(".worker-*.running.json"))]
    running: list[dict[str, Any]] = []
    for note in notes:
        try:
            text = note.read_text().strip()
        except OSError:
            continue
        if note.name == INFLIGHT_FILE:
            running.append({"case_id": text})
        else:
            with contextlib.suppress(json.JSONDecodeError, AttributeError):
                running.append(dict(json.loads(text).get("case") or {}))
        drop_note(note)
    restarted = bool(owner and owner.get("host") == host and owner.get("boot") and boot and owner["boot"] != boot)
    if not restarted:
        return []
    done = {r.get("case_id") for r in read_jsonl(Path(out) / "results.jsonl")}
    lost = [c for c in running if c.get("case_id") and c["case_id"] not in done]
    for case in lost:
        append_jsonl(Path(out) / "results.jsonl", empty_record(**dict(
            case, status=CRASH, message="crash: the machine restarted while this case ran (its boot id changed "
            "since the run took its lock); not run again by --resume, which --rerun-crashed asks for")))
    return [c["case_id"] for c in lost]


def crash_message(worker: str, detail: str) -> str:
    """The message of a case whose worker process died under it."""
    return (f"crash: worker process {worker} died while running this case (segfault, os._exit or "
            f"killed); xdist replaced it and the run went on. {detail}").strip()


# ------------------------------------------------------------------------- CUDA stickiness
def context_poisoned(record: dict[str, Any] | None = None) -> str:
    """Why this process's CUDA context can no longer be trusted ('' if it can).

    Looks at the process runtime of :mod:`mmacts.backends.cuda_runtime` (poisoned by a
    hung launch) if it was ever used, and at the message of ``record`` (a sticky error
    the executor turned into an ``error`` record).
    """
    rt_mod = sys.modules.get("mmacts.backends.cuda_runtime")
    rt = getattr(rt_mod, "_RUNTIME", None) if rt_mod is not None else None
    if rt is not None and getattr(rt, "poisoned", ""):
        return f"CUDA context poisoned: {rt.poisoned}"
    if record is not None and record.get("status") in ("error", "timeout") and is_sticky_cuda_error(
            record.get("message")):
        return "CUDA context poisoned by a sticky error"
    return ""


def end_if_poisoned(record: dict[str, Any]) -> None:
    """The hook the cuda backend needs: after ``record`` is final, end the process if its
    context is poisoned (and ending it loses nothing); otherwise return."""
    why = context_poisoned(record)
    if why and may_end_process():
        exit_process(record, f"{why}; {PROCESS_ENDED}, the run goes on in a fresh one")


# ------------------------------------------------------------------------- xdist scheduling
def crash_safe_loadgroup(config: Any, log: Any) -> Any:
    """A ``--dist loadgroup`` scheduler that does not run a crashed case again.

    xdist's group scheduler puts the whole unfinished group of a dead worker back in
    the queue, *including the case it died on*: a case that crashes deterministically
    would then crash every replacement worker in turn. This one marks that case done
    (its ``error`` record is written from xdist's crash report) before re-queueing the
    rest of the group. Falls back to xdist's own behaviour if its internals differ.
    """
    from xdist.scheduler import LoadGroupScheduling

    class CrashSafeLoadGroupScheduling(LoadGroupScheduling):  # type: ignore[misc]
        def remove_node(self, node: Any) -> str | None:
            workload = getattr(self, "assigned_work", {}).get(node)
            if not workload or not self._pending_of(workload) or not hasattr(self, "workqueue"):
                return super().remove_node(node)
            crashitem = next(nid for unit in workload.values() for nid, done in unit.items() if not done)
            del self.assigned_work[node]
            workload = {scope: unit for scope, unit in workload.items()
                        if not all(done or nid == crashitem for nid, done in unit.items())}
            for unit in workload.values():
                if crashitem in unit:
                    unit[crashitem] = True
            self.workqueue.update(workload)
            for other in self.assigned_work:
                self._reschedule(other)
            return crashitem

        def _reschedule(self, node: Any) -> None:
            # Two workers replaced close together: xdist reschedules every node when one replacement
            # finishes collecting, including the other one that has not collected yet, and dies on
            # its missing collection (INTERNALERROR, the rest of the run lost). A node still
            # collecting gets its work when its own collection finishes.
            if node not in self.registered_collections:
                return
            # The node may be dead already, its own errordown not yet processed: sending then fails.
            # Give back what this call assigned, so the dead node's removal does not blame a case it
            # never received, and another worker runs it.
            before = set(self.assigned_work.get(node, {}))
            try:
                super()._reschedule(node)
            except OSError:
                assigned = self.assigned_work.get(node, {})
                for scope in [sc for sc in assigned if sc not in before]:
                    self.workqueue[scope] = assigned.pop(scope)
                    self.workqueue.move_to_end(scope, last=False)

    return CrashSafeLoadGroupScheduling(config, log)
