"""pytest plugin: turns each suite's ``DRIVER.cases(level)`` into test items and
streams one record per finished case to ``results.jsonl``.

Records are written by the controlling process (with xdist the workers hand
them over in the test report), one fsync'd line per case, the moment the case
ends: ``kill -9`` of the run loses nothing that finished.

Faults (see :mod:`mmacts.runner.faults`): every case runs under a wall-clock
limit (``--mmacts-case-timeout``, status ``timeout``); a worker that dies under a
case leaves an ``error`` record for it ("worker crashed") and xdist replaces it;
a worker whose CUDA context is poisoned ends itself after recording its case.
With ``--mmacts-pin-gpus`` each xdist worker gets its own GPU
(:mod:`mmacts.runner.gpu_pinning`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from mmacts.backends.execute import BACKENDS, Executor
from mmacts.cases.model import LEVELS, Case
from mmacts.report.records import RECORD_KEY, append_jsonl, empty_record, read_jsonl
from mmacts.runner import faults, gpu_pinning

CASE_MARK = "mmacts_case"


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("mmacts")
    g.addoption("--mmacts-level", default="smoke", choices=LEVELS, help="case level (default smoke)")
    g.addoption("--mmacts-backend", default="auto", choices=BACKENDS, help="backend (default auto)")
    g.addoption("--mmacts-out", default=None, help="run directory: results.jsonl is appended there")
    g.addoption("--mmacts-resume", default=None, help="results.jsonl of an earlier run: skip cases it has")
    g.addoption("--mmacts-shard", default=None, help="I/N: run only shard I (0-based) of N")
    g.addoption("--mmacts-suite", action="append", default=None, help="suite name (repeatable; default all)")
    g.addoption("--mmacts-case-timeout", type=float, default=faults.DEFAULT_CASE_TIMEOUT_S,
                help=f"wall-clock limit per case in seconds; 0 = none (default {faults.DEFAULT_CASE_TIMEOUT_S:g})")
    g.addoption("--mmacts-pin-gpus", action="store_true", default=False,
                help="pin xdist worker gwK to GPU K (CUDA_VISIBLE_DEVICES); MMACTS_GPUS overrides the count")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{CASE_MARK}: a conformance case generated from a suite driver")
    workerinput = getattr(config, "workerinput", None)
    worker = workerinput.get("workerid") if workerinput else None
    faults.configure(config.getoption("--mmacts-out"), worker)
    if worker and config.getoption("--mmacts-pin-gpus"):
        # before anything in this worker initialises CUDA (collection may probe the GPU)
        spare = "share" if config.getoption("--mmacts-backend") == "cuda" else "none"
        gpu_pinning.pin_worker(worker, spare=spare)


def shard_of(case_id: str, n: int) -> int:
    """Deterministic shard of a case: depends on its ID only, so adding cases moves no other case."""
    return int(hashlib.sha1(case_id.encode()).hexdigest()[:8], 16) % n


def _form_group(case: Case) -> str:
    return "form-" + hashlib.sha1(repr(case.form_key).encode()).hexdigest()[:12]


def _drivers_for(metafunc: pytest.Metafunc) -> list[Any]:
    """A module either names its own ``DRIVER`` or asks for every selected suite's."""
    own = getattr(metafunc.module, "DRIVER", None)
    if own is not None:
        return [own]
    if not getattr(metafunc.module, "MMACTS_ALL_SUITES", False):
        return []
    from mmacts.runner.suites import load_driver, suite_names

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
    done: set[str] = set()
    resume = config.getoption("--mmacts-resume")
    if resume:
        # an error is retried, unless the case itself crashed its process (it would crash it again)
        done = {r["case_id"] for r in read_jsonl(Path(resume))
                if r.get("status") not in (None, "error") or faults.is_contained_fault(r)}
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


def _case_of(item: Any) -> Case | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    case = callspec.params.get("case")
    return case if isinstance(case, Case) else None


@pytest.fixture(scope="session")
def mmacts_executor(pytestconfig: pytest.Config) -> Executor:
    """One executor per process: it caches assembled modules and batched GPU launches."""
    ex = Executor(backend=pytestconfig.getoption("--mmacts-backend"))
    ex.all_cases = pytestconfig.stash.get(_ALL_CASES, {})
    return ex


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    config = _CONFIG.get("config")
    if config is None or hasattr(config, "workerinput"):
        return
    out = config.getoption("--mmacts-out")
    if not out:
        return
    if "[" not in report.nodeid:
        return
    rec = None
    if report.when == "call":
        for key, value in report.user_properties:
            if key == RECORD_KEY:
                rec = value
    if rec is None:
        if report.when == "call" and report.passed:
            return
        if report.when != "call" and not report.failed:
            return
        case_id = _case_id(report.nodeid)
        lines = str(report.longrepr).strip().splitlines() or ["unknown"]
        node = getattr(report, "node", None)
        worker = getattr(getattr(node, "gateway", None), "id", None)
        if report.when not in ("setup", "call", "teardown") and worker:
            # xdist's report for an item whose worker died: the worker may have left the record
            # (a timeout or a poisoned context it ended itself on); otherwise it crashed.
            rec = faults.take_worker_marker(Path(out), worker, case_id) or empty_record(
                case_id=case_id, status="error", message=faults.crash_message(worker, lines[-1]))
        else:
            # an error outside the case body (fixture, setup): record it, never lose it.
            rec = empty_record(case_id=case_id, status="error", message=f"{report.when}: {lines[-1]}")
    append_jsonl(Path(out) / "results.jsonl", rec)


def _case_id(nodeid: str) -> str:
    """``test_x.py::test_case[ID]`` -> ``ID``; also where xdist (loadgroup, pytest < 9.2) reports
    a crashed item as ``...[ID]@group``."""
    return nodeid.split("[", 1)[1].rsplit("]", 1)[0]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` (what ``mmacts run -n`` uses): never re-run the case a worker died on."""
    if config.getvalue("dist") == "loadgroup":
        return faults.crash_safe_loadgroup(config, log)
    return None


def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    """Single process: note the case now running, so a crash of the process can be pinned on it."""
    config = _CONFIG.get("config")
    if config is None or hasattr(config, "workerinput") or config.pluginmanager.hasplugin("dsession"):
        return
    out = config.getoption("--mmacts-out")
    if out and "[" in nodeid:
        (Path(out) / faults.INFLIGHT_FILE).write_text(_case_id(nodeid))


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = session.config.getoption("--mmacts-out")
    if out and not hasattr(session.config, "workerinput"):
        (Path(out) / faults.INFLIGHT_FILE).unlink(missing_ok=True)


_CONFIG: dict[str, pytest.Config] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _CONFIG["config"] = session.config


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


def run_case(driver: Any, case: Case, executor: Executor, record_property: Any) -> None:
    """The body of every generated case item (``driver`` None: look it up by suite name)."""
    if driver is None:
        from mmacts.runner.suites import load_driver

        driver = load_driver(case.suite)
    config = _CONFIG.get("config")
    limit = config.getoption("--mmacts-case-timeout") if config is not None else faults.DEFAULT_CASE_TIMEOUT_S

    def hard_timeout() -> None:  # watchdog thread: the case is stuck where no signal reaches it
        faults.exit_process(faults.case_record(
            case, "timeout", f"case exceeded its wall-clock limit of {limit:g} s and did not return "
            f"to Python within {faults.hard_grace_s(limit):g} s more"), "process ended")

    try:
        with faults.case_time_limit(limit, on_hard_timeout=hard_timeout):
            rec = executor.execute(driver, case)
    except faults.CaseTimeout as exc:
        try:
            backend = executor.choose(driver, case)[0]
        except Exception:
            backend = executor.backend
        rec = faults.case_record(case, "timeout", str(exc), backend=backend, run_s=limit)
    if rec.get("backend") == "cuda" and rec.get("device"):
        rec["device"] = gpu_pinning.device_label(str(rec["device"]))
    rec = json.loads(json.dumps(rec, default=str))
    record_property(RECORD_KEY, rec)
    if not executor.holds_results():  # let the rest of a poisoned batch record its cached results first
        faults.end_if_poisoned(rec)
    record_to_pytest(rec)
