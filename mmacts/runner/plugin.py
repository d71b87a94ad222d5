"""pytest plugin: turns each suite's ``DRIVER.cases(level)`` into test items and
streams one record per finished case to ``results.jsonl``.

Records are written by the controlling process (with xdist the workers hand
them over in the test report), one line per case, the moment the case ends,
through :class:`mmacts.runner.recordlog.RecordLog`: written and flushed at once
(``kill -9`` of the run loses nothing that finished), fsync'd in batches (at most
64 records or 0.5 s apart, and at the end).

Faults (see :mod:`mmacts.runner.faults`): every case runs under a wall-clock
limit (``--mmacts-case-timeout``, status ``timeout``); a worker that dies under a
case leaves an ``error`` record for it ("worker crashed") and xdist replaces it;
a worker whose CUDA context is poisoned ends itself after recording its case.
Which case a dead worker was running comes from the note the worker wrote before
starting it (:func:`mmacts.runner.faults.note_running`), not from the form of
xdist's crash report, which differs between pytest/xdist versions (pytest 9.1
reports ``...[ID]@group`` under ``--dist loadgroup``, pytest 9.2 ``...[ID]``).
With ``--mmacts-pin-gpus`` each xdist worker gets its own GPU
(:mod:`mmacts.runner.gpu_pinning`).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from mmacts.backends import BACKENDS, DEFAULT_BACKEND
from mmacts.backends.execute import Executor
from mmacts.cases.model import LEVELS, Case
from mmacts.cases.status import CRASH
from mmacts.compare.answer_cache import AnswerCache
from mmacts.core.records import RECORD_KEY, empty_record, read_jsonl
from mmacts.core.suites import load_driver, suite_names
from mmacts.runner import faults, gpu_pinning, lifeline, timing
from mmacts.runner.recordlog import RecordLog

CASE_MARK = "mmacts_case"


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("mmacts")
    g.addoption("--mmacts-level", default="smoke", choices=LEVELS, help="case level (default smoke)")
    g.addoption("--mmacts-backend", default=DEFAULT_BACKEND, choices=BACKENDS,
                help=f"backend (default {DEFAULT_BACKEND})")
    g.addoption("--mmacts-out", default=None, help="run directory: results.jsonl is appended there")
    g.addoption("--mmacts-resume", default=None, help="results.jsonl of an earlier run: skip cases it has")
    g.addoption("--mmacts-rerun-crashed", action="store_true",
                help="with --mmacts-resume: run again the cases recorded as crash")
    g.addoption("--mmacts-shard", default=None, help="I/N: run only shard I (0-based) of N")
    g.addoption("--mmacts-suite", action="append", default=None, help="suite name (repeatable; default all)")
    g.addoption("--mmacts-case-timeout", type=float, default=faults.DEFAULT_CASE_TIMEOUT_S,
                help=f"wall-clock limit per case in seconds; 0 = none (default {faults.DEFAULT_CASE_TIMEOUT_S:g})")
    g.addoption("--mmacts-quiet", action="store_true", default=False,
                help="no progress letters for cases (mmacts run prints its own progress and summary)")
    g.addoption("--mmacts-answer-cache", default=None,
                help="directory of the oracle's answers kept between runs (mmacts.compare.answer_cache); "
                     "default none: every answer computed")
    g.addoption("--mmacts-pin-gpus", action="store_true", default=False,
                help="pin xdist worker gwK to GPU K (CUDA_VISIBLE_DEVICES); MMACTS_GPUS overrides the count")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{CASE_MARK}: a conformance case generated from a suite driver")
    config.addinivalue_line("markers", "xdist_group(name): cases launched together (pytest-xdist's mark)")
    workerinput = getattr(config, "workerinput", None)
    worker = workerinput.get("workerid") if workerinput else None
    faults.configure(config.getoption("--mmacts-out"), worker)
    if worker and os.environ.get(lifeline.WORKERS_ENV):
        lifeline.die_with_parent()  # an xdist worker of ``mmacts run`` ends with its controller
    if timing.enabled():
        _TIMES["who"] = worker or "ctl"
        timing.mark("proc_start", _TIMES["who"], timing.process_start())
        timing.mark("configure", _TIMES["who"])
    if worker and config.getoption("--mmacts-pin-gpus"):
        # before anything in this worker initialises CUDA (collection may probe the GPU)
        spare = "share" if config.getoption("--mmacts-backend") == "cuda" else "none"
        gpu_pinning.pin_worker(worker, spare=spare)


def shard_of(case_id: str, n: int) -> int:
    """Deterministic shard of a case: depends on its ID only, so adding cases moves no other case."""
    return int(hashlib.sha1(case_id.encode()).hexdigest()[:8], 16) % n


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    """``--mmacts-quiet``: no dot per case (pytest would count an observed case as passed)."""
    if config.getoption("--mmacts-quiet") and "[" in report.nodeid:
        return ("xfailed" if hasattr(report, "wasxfail") else report.outcome) if report.when == "call" else "", "", ""
    return None


def _form_group(case: Case) -> str:
    return "form-" + hashlib.sha1(repr(case.form_key).encode()).hexdigest()[:12]


def _drivers_for(metafunc: pytest.Metafunc) -> list[Any]:
    """A module either names its own ``DRIVER`` or asks for every selected suite's."""
    own = getattr(metafunc.module, "DRIVER", None)
    if own is not None:
        return [own]
    if not getattr(metafunc.module, "MMACTS_ALL_SUITES", False):
        return []
    names = metafunc.config.getoption("--mmacts-suite") or suite_names()
    return [load_driver(n) for n in names]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" not in metafunc.fixturenames:
        return
    drivers = _drivers_for(metafunc)
    if not drivers:
        return
    level = metafunc.config.getoption("--mmacts-level")
    params = []
    for driver in drivers:
        for c in driver.cases(level):
            if c.in_level(level):
                marks = [pytest.mark.xdist_group(_form_group(c)), getattr(pytest.mark, CASE_MARK)]
                params.append(pytest.param(c, id=c.case_id, marks=marks))
    metafunc.parametrize("case", params)


def pytest_itemcollected(item: pytest.Item) -> None:
    """Spec rows are keywords too: ``-k T54.3`` or ``-k T37`` selects the cases citing them."""
    case = _case_of(item)
    if case is not None:
        item.extra_keyword_matches.update(case.spec_rows)


@pytest.hookimpl(trylast=True)  # after -k/-m deselection, so batches hold only selected cases
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    resume = config.getoption("--mmacts-resume")
    done = done_cases(Path(resume), config.getoption("--mmacts-rerun-crashed")) if resume else set()
    shard = config.getoption("--mmacts-shard")
    idx = total = 0
    if shard:
        idx, total = (int(x) for x in shard.split("/"))
    keep, drop = [], []
    for item in items:
        case = _case_of(item)
        if case is not None and (case.case_id in done or (total and shard_of(case.case_id, total) != idx)):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    by_form: dict[str, list[Case]] = {}
    for item in items:
        case = _case_of(item)
        if case is not None:
            by_form.setdefault(repr(case.form_key), []).append(case)
    config.stash[_ALL_CASES] = by_form


_ALL_CASES = pytest.StashKey[dict]()


def done_cases(results: Path, rerun_crashed: bool = False) -> set[str]:
    """The cases a resume of ``results`` (a results.jsonl) does not run again: every recorded case,
    except an ``error`` the harness may cure by running it again; a ``crash`` (and an error the case
    itself caused by ending its process) counts as done, since it would end the resumed process too,
    unless the user asks for it (``rerun_crashed``: ``mmacts run --resume RUN --rerun-crashed``).
    The last record of a case decides: a crash re-run that passed is done."""
    latest = {r["case_id"]: r for r in read_jsonl(results)}
    return {cid for cid, r in latest.items()
            if (r.get("status") not in (None, "error") or faults.is_contained_fault(r))
            and not (rerun_crashed and faults.is_crash(r))}


def _case_of(item: Any) -> Case | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    case = callspec.params.get("case")
    return case if isinstance(case, Case) else None


_EXECUTOR = pytest.StashKey[Executor]()


def session_executor(config: pytest.Config) -> Executor:
    """One executor per session (made at first use): it caches assembled modules and batched GPU
    launches. Kept in the config, not reached through a fixture: a session fixture is still resolved
    item by item (with ``pytestconfig`` under it), a large part of pytest's per-item set-up."""
    ex = config.stash.get(_EXECUTOR, None)
    if ex is None:
        ex = Executor(backend=config.getoption("--mmacts-backend"))
        answers = config.getoption("--mmacts-answer-cache")
        if answers:
            ex.answers = AnswerCache(answers)
        ex.all_cases = config.stash.get(_ALL_CASES, {})
        config.stash[_EXECUTOR] = ex
    return ex


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    config = _CONFIG.get("config")
    if config is None or hasattr(config, "workerinput"):
        return
    out = config.getoption("--mmacts-out")
    if not out:
        return
    rec = None
    if report.when == "call":
        for key, value in report.user_properties:
            if key == RECORD_KEY:
                rec = value
    crashed = getattr(report, _CRASH_ATTR, False) or report.when not in ("setup", "call", "teardown")
    if rec is None and not crashed and "[" not in report.nodeid:
        return
    if rec is None:
        if report.when == "call" and report.passed:
            return
        if report.when != "call" and not report.failed:
            return
        lines = str(report.longrepr).strip().splitlines() or ["unknown"]
        worker = _worker_of(report) if crashed else None
        if worker:
            # xdist's report for an item whose worker died: the worker may have left the record
            # (a timeout or a poisoned context it ended itself on); otherwise it crashed.
            rec = _crash_record(Path(out), worker, report.nodeid, lines[-1])
            if rec is None:
                return
        else:
            # an error outside the case body (fixture, setup): record it, never lose it.
            rec = empty_record(case_id=_case_id(report.nodeid), status="error",
                               message=f"{report.when}: {lines[-1]}")
    _append(Path(out), rec)


_CRASH_ATTR = "_mmacts_crashed_worker"
"""Set on xdist's crash report by :func:`pytest_handlecrashitem` (its public hook for that case)."""

_WORKER_IN_TEXT = re.compile(r"\bworker\s+'?\"?(gw\d+)")


def _worker_of(report: pytest.TestReport) -> str | None:
    """The xdist worker a crash report is about: from the report's node (the worker controller,
    ``gateway.id`` or ``workerinput['workerid']``), else from xdist's message ("worker 'gw0' crashed")."""
    node = getattr(report, "node", None)
    for get in (lambda n: n.gateway.id, lambda n: n.workerinput["workerid"]):
        try:
            wid = get(node)
        except Exception:
            continue
        if isinstance(wid, str) and wid:
            return wid
    m = _WORKER_IN_TEXT.search(str(report.longrepr))
    return m.group(1) if m else None


def _crash_record(out: Path, worker: str, nodeid: str, detail: str) -> dict | None:
    """The record of the case a dead worker was running (None: that case is recorded already).

    The case is the one the worker's in-flight note names when that note is about this item
    (xdist may decorate the node id: pytest 9.1 with loadgroup appends ``@group``); else the case
    ID read from the node id. The record carries the case's own columns (suite, instruction,
    spec rows, arch, level), so a crashed case is grouped like any other in the reports."""
    note = faults.read_running_note(out, worker)
    fields: dict = {}
    if note and (nodeid.startswith(note.get("nodeid") or "\0") or "[" not in nodeid):
        fields = {k: v for k, v in note.get("case", {}).items() if k in _IDENTITY}
    case_id = fields.get("case_id") or _case_id(nodeid)
    if case_id in _WRITTEN:
        return None
    marker = faults.take_worker_marker(out, worker, case_id)
    if marker is not None:
        return marker
    return empty_record(**dict(fields, case_id=case_id, status=CRASH,
                               message=faults.crash_message(worker, detail)))


_IDENTITY = ("case_id", "suite", "instruction", "spec_rows", "arch", "expect", "level")
"""Record columns a case has before it runs (what the in-flight note carries)."""


def _case_id(nodeid: str) -> str:
    """``test_x.py::test_case[ID]`` -> ``ID``: the text between the first ``[`` and the last ``]``
    (so a suffix some xdist versions add, ``...[ID]@group``, is dropped); a node id without
    parameters is returned whole."""
    if "[" not in nodeid:
        return nodeid
    return nodeid.split("[", 1)[1].rsplit("]", 1)[0]


# ------------------------------------------------------------------------- the record log
_LOG: dict[str, RecordLog] = {}
_WRITTEN: set[str] = set()
"""Case IDs recorded by this session: a case is recorded once, whatever xdist reports about it later."""


def _append(out: Path, rec: dict) -> None:
    case_id = rec.get("case_id")
    if case_id in _WRITTEN:
        return
    log = _LOG.get("log")
    if log is None or log.path != out / "results.jsonl":
        log = _open_log(out)
    log.append(rec)
    _WRITTEN.add(case_id)
    if "who" in _TIMES:
        _TIMES["last_case"] = time.time()
        if timing.per_case():
            timing.mark("case_written", _TIMES["who"], _TIMES["last_case"])


_TIMES: dict = {}
"""Phase marks of this process when ``MMACTS_TIMING`` is set (:mod:`mmacts.runner.timing`)."""


def pytest_collection_finish(session: pytest.Session) -> None:
    if "who" in _TIMES:
        timing.mark("collected", _TIMES["who"])


def _open_log(out: Path) -> RecordLog:
    old = _LOG.pop("log", None)
    if old is not None:
        old.close()
    log = _LOG["log"] = RecordLog(out / "results.jsonl")
    faults.set_record_sync(log.sync)
    atexit.register(log.close)
    return log


def _close_log() -> None:
    log = _LOG.pop("log", None)
    if log is not None:
        log.close()
    faults.set_record_sync(None)


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem: str, report: pytest.TestReport, sched: object) -> None:
    """xdist's public hook for an item whose worker died: mark its report as a crash report."""
    setattr(report, _CRASH_ATTR, True)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` (what ``mmacts run -n`` uses): never re-run the case a worker died on."""
    if config.getvalue("dist") == "loadgroup":
        return faults.crash_safe_loadgroup(config, log)
    return None


def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    """Single process: note the case now running, so a crash of the process can be pinned on it."""
    config = _CONFIG.get("config")
    if "who" in _TIMES and "second_case" not in _TIMES and "[" in nodeid:
        # the second start is where the first case's one-time work (CUDA context, imports) has ended:
        # the benchmark's in-run per-case figure counts from here
        name = "second_case" if "first_case" in _TIMES else "first_case"
        _TIMES[name] = True
        timing.mark(name, _TIMES["who"])
    if "who" in _TIMES and timing.per_case():
        timing.mark("case_start", _TIMES["who"])
    if config is None or hasattr(config, "workerinput") or config.pluginmanager.hasplugin("dsession"):
        return
    out = config.getoption("--mmacts-out")
    if out and "[" in nodeid:
        faults.write_note(Path(out) / faults.INFLIGHT_FILE, _case_id(nodeid))


_CURRENT: dict[str, pytest.Item] = {}
"""The item running now: :func:`run_case` attaches the record to it (the ``record_property`` fixture
does the same through a function-scoped fixture, whose per-item set-up cost more than the rest of the
plugin's per-case work)."""


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Remember the running item; xdist worker: note the case it starts, so the controller can record it
    should the worker die."""
    _CURRENT["item"] = item
    config = item.config
    if not hasattr(config, "workerinput") or not config.getoption("--mmacts-out"):
        return
    case = _case_of(item)
    ident = {"case_id": case.case_id, "suite": case.suite, "instruction": case.instruction,
             "spec_rows": " ".join(case.spec_rows), "arch": case.arch, "expect": case.expect,
             "level": case.level} if case is not None else {}
    faults.note_running(item.nodeid, ident)


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = session.config.getoption("--mmacts-out")
    if out and not hasattr(session.config, "workerinput"):
        faults.drop_note(Path(out) / faults.INFLIGHT_FILE)
        _close_log()
    if "who" in _TIMES:
        if "last_case" in _TIMES:
            timing.mark("last_case", _TIMES["who"], _TIMES["last_case"])
        timing.mark("finish", _TIMES["who"])


_CONFIG: dict[str, pytest.Config] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _CONFIG["config"] = session.config
    _WRITTEN.clear()


def record_to_pytest(rec: dict[str, Any]) -> None:
    """End the pytest item the way the record says (a record is the truth)."""
    status, msg = rec["status"], rec.get("message") or ""
    if status in ("pass", "observed"):
        return
    if status == "skip":
        pytest.skip(msg)
    if status == "xfail":
        pytest.xfail(msg)
    pytest.fail(f"{status.upper()}: {msg}", pytrace=False)


def run_case(driver: Any, case: Case, executor: Executor | None = None) -> None:
    """The body of every generated case item (``driver`` None: look it up by suite name; ``executor``
    None: the session's). The record goes onto the running item's ``user_properties`` (the list the
    ``record_property`` fixture appends to, carried to an xdist controller with the report)."""
    if driver is None:
        driver = load_driver(case.suite)
    item = _CURRENT["item"]
    limit = item.config.getoption("--mmacts-case-timeout")
    if executor is None:
        executor = session_executor(item.config)

    def hard_timeout() -> None:  # watchdog thread: the case is stuck where no signal reaches it
        faults.exit_process(faults.case_record(
            case, "timeout", f"case exceeded its wall-clock limit of {limit:g} s and did not return "
            f"to Python within {faults.hard_grace_s(limit):g} s more"), "process ended")

    try:
        marks = timing.per_case()
        with faults.case_time_limit(limit, on_hard_timeout=hard_timeout):
            if marks:
                timing.mark("exec_start")
                cpu0 = time.process_time()
            rec = executor.execute(driver, case)
            if marks:
                timing.mark("exec_end")
                timing.mark(f"exec_cpu_ms={(time.process_time() - cpu0) * 1e3:.3f}")  # this process, all threads
    except faults.CaseTimeout as exc:
        try:
            backend = executor.choose(driver, case)[0]
        except Exception:
            backend = executor.backend
        rec = faults.case_record(case, "timeout", str(exc), backend=backend, run_s=limit)
    if rec.get("backend") == "cuda" and rec.get("device"):
        rec["device"] = gpu_pinning.device_label(str(rec["device"]))
    rec = json.loads(json.dumps(rec, default=str))
    item.user_properties.append((RECORD_KEY, rec))
    if not executor.holds_results():  # let the rest of a poisoned batch record its cached results first
        faults.end_if_poisoned(rec)
    record_to_pytest(rec)
