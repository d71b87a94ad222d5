"""``mmacts``: run the suites, list cases, explain one, and the tools around them.

Bad input (an unknown suite, level or backend, a ``-k`` that selects nothing,
an unwritable output directory, a missing ptxas) prints one line naming the
problem and exits 2, without a traceback and without leaving a report that
looks complete.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmacts.backends import BACKENDS, DEFAULT_BACKEND
from mmacts.cases.model import LEVELS
from mmacts.cases.status import BAD, CRASH
from mmacts.core.records import RecordsError, append_jsonl, empty_record, read_jsonl, read_records, repair_tail
from mmacts.core.suites import REPO_ROOT, suite_names
from mmacts.report import mutant_features
from mmacts.report.atomic import write_text_atomic
from mmacts.runner import console, runlock, select, timing
from mmacts.runner import expectations as gating
from mmacts.runner.errors import UsageError  # one class, also under python -m mmacts.runner.cli
from mmacts.runner.expectations import check_made_on, prepare_run
from mmacts.runner.faults import INFLIGHT_FILE, how_it_died, record_lost_inflight
from mmacts.runner.gpu_pinning import visible_gpus
from mmacts.runner.lifeline import PARENT_ENV
from mmacts.runner.runlock import RunLock, RunLocked, boot_id
from mmacts.runner.scheduler import ShardError
from mmacts.runner.scheduler import resolve as shard_from_scheduler
from mmacts.toolchain.cache import cache_dir


def _fail(msg: str) -> int:
    print(f"mmacts: error: {msg}", file=sys.stderr)
    return 2


# --------------------------------------------------------------------------- run
def _check_suites(names: list[str] | None) -> list[str]:
    known = suite_names()
    if not names:
        return known
    bad = [n for n in names if n not in known]
    if bad:
        raise UsageError(f"unknown suite {bad[0]!r}; known suites: {', '.join(known)}")
    return names


def _check_out(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("x")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"cannot write to output directory {out}: {exc.strerror or exc}") from exc


def _check_toolchain() -> None:
    from mmacts.backends import assembler  # the run's own (the toolchain): not on every CLI start

    try:
        assembler.ptxas_version()
    except Exception as exc:
        raise UsageError(f"ptxas not available: {exc}") from exc


def _answer_cache(args: argparse.Namespace) -> str | None:
    """Where the run keeps the oracle's answers (``mmacts.compare.answer_cache``); None: not kept."""
    if getattr(args, "no_answer_cache", False):
        return None

    return str(cache_dir().resolve() / "answers")


def _workers(n: str | None) -> str | None:
    """``-n``: a number, ``auto`` (xdist: one per core) or ``gpus`` (one per visible GPU)."""
    if n is None or n in ("0",):
        return None
    if n == "gpus":
        # One GPU (or none): the test process itself is the one worker. An xdist controller plus one
        # worker would start a second interpreter and collect twice for nothing; a crash or a poisoned
        # context ends the single process and this command resumes it (cmd_run), as xdist would replace it.
        count = len(visible_gpus())
        return str(count) if count > 1 else None
    if n != "auto" and not n.isdigit():
        raise UsageError(f"-n must be a number, 'auto' or 'gpus', got {n!r}")
    return n


PYTEST_ENDED = (0, 1, 2, 3, 4, 5)
"""pytest exit codes; anything else (a signal, faults.EXIT_CODE) means the test process died."""


def _blame_inflight(run_dir: Path, rc: int) -> str | None:
    """After the single test process died: record ``crash`` for the case it was running, with the
    signal or exit code (a resume does not run it again unless asked: ``--rerun-crashed``)."""
    marker = run_dir / INFLIGHT_FILE
    if not marker.is_file():
        return None
    case_id = marker.read_text().strip()
    marker.unlink()
    last = None
    for last in read_jsonl(run_dir / "results.jsonl"):  # noqa: B007 -- the last record is wanted
        pass
    if not case_id or (last is not None and last.get("case_id") == case_id):
        return None  # it was recorded before the process ended (faults.exit_process)
    append_jsonl(run_dir / "results.jsonl", empty_record(
        case_id=case_id, status=CRASH, message=f"crash: the test process died ({how_it_died(rc)}) while running "
        "this case; the run went on in a fresh one (mmacts run --resume RUN --rerun-crashed runs it again)"))
    return case_id


def _crashed_at_restart(run_dir: Path, previous: dict | None) -> None:
    """--resume: record ``crash`` for the cases a run was running when its machine went down (the lock
    it left is of another boot of this host); a run stopped from outside runs them again."""
    import socket


    lost = record_lost_inflight(run_dir, previous, socket.gethostname(), boot_id())
    if lost:
        print(f"mmacts: the machine restarted while {len(lost)} case(s) ran; recorded as crash, not run again "
              f"({', '.join(lost[:3])}{' ...' if len(lost) > 3 else ''}); --rerun-crashed runs them", file=sys.stderr)


def _count_cases(run_dir: Path) -> int:
    """Cases with a record: the measure of progress between restarts of a dying test process."""
    return len({r.get("case_id") for r in read_jsonl(run_dir / "results.jsonl")})


def _resolve_shard(spec: str | None) -> tuple[str | None, dict | None]:
    try:
        return shard_from_scheduler(spec)
    except ShardError as exc:
        raise UsageError(str(exc)) from exc


def _ingest_into(run_dir: Path, db: str) -> bool:
    """``mmacts run --db URL``: load the finished run into the results store (mmacts.db)."""
    try:
        from mmacts.db.connect import open_store
        from mmacts.db.ingest import ingest_run
        from mmacts.db.store import describe

        with open_store(db) as store:
            got = ingest_run(store, run_dir)
        print(f"mmacts: {'ingested' if got.added else 'already in'} {describe(db)} ({got.cases} cases)",
              file=sys.stderr)
        return True
    except Exception as exc:  # the run itself is complete on disk: say how to ingest it later
        print(f"mmacts: error: could not ingest into {db}: {str(exc).strip().splitlines()[0] if str(exc) else exc!r}; "
              f"the run is complete in {run_dir}: mmacts db ingest {run_dir} --db URL", file=sys.stderr)
        return False


def _check_numbers(args: argparse.Namespace) -> None:
    if args.case_timeout < 0 or args.case_timeout != args.case_timeout:  # NaN too
        raise UsageError(f"--case-timeout must be >= 0 seconds (0 = no limit), got {args.case_timeout:g}")
    if args.retries < 0:
        raise UsageError(f"--retries must be >= 0, got {args.retries}")
    if getattr(args, "rerun_crashed", False) and not args.resume:
        raise UsageError("--rerun-crashed goes with --resume RUN (it runs that run's crashed cases again)")


def _check_resumable(run_dir: Path) -> None:
    """--resume: every line of results.jsonl an mmacts record (a torn last line is what a kill leaves)."""
    if (run_dir / "results.jsonl").is_file():
        try:
            read_records(run_dir / "results.jsonl", allow_torn_tail=True)
        except RecordsError as exc:
            raise UsageError(f"cannot resume: {exc}") from exc


def child_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of a run's test processes."""
    env = dict(environ, MMACTS_RESTARTABLE="1",
               # Only the plugins a run needs (ours, and xdist by name): a host's other pytest plugins
               # (hypothesis, benchmark, timeout, ...) cost every process of the run their imports (0.5-2 s).
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    # One BLAS thread per worker: xdist already uses the cores, and oversubscribed BLAS made the
    # model backend 3x slower on a 2-core machine. An explicit setting is kept.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    if env.pop("PYTHONDONTWRITEBYTECODE", ""):
        # Container images often forbid bytecode files next to the sources; then every test process
        # compiled ~200 modules again (0.4 s each on an H100 host). Compiled files go to mmacts' own
        # cache instead (an explicit PYTHONPYCACHEPREFIX is kept; an unwritable one costs nothing).
        env.setdefault("PYTHONPYCACHEPREFIX", str(cache_dir().resolve() / "pycache"))
    return env


_HELD: dict = {}
"""This command's run: ``run_dir`` (once known) and ``lock`` (its :class:`~mmacts.runner.runlock.RunLock`)."""


def _start(argv: list[str], env: dict[str, str]) -> subprocess.Popen:
    """Start a test process (the one place a run starts pytest: tests replace it). It inherits the
    run's lock (held while it lives) and dies with this process (``mmacts.runner.lifeline``)."""
    lock = _HELD.get("lock")
    proc = subprocess.Popen(argv, cwd=REPO_ROOT, env=dict(env, **{PARENT_ENV: str(os.getpid())}),
                            pass_fds=lock.inheritable_fd() if lock else ())
    if lock:
        lock.note_child(proc.pid)
    return proc


def _call(argv: list[str], env: dict[str, str]) -> int:
    """A test process, waited for; an interrupted CLI does not leave it running."""
    with _start(argv, env) as proc:
        try:
            return proc.wait()
        except BaseException:
            proc.kill()
            raise


def _warm_reports() -> None:
    """Import the report writer (pandas) and parse the register while the test process runs, when
    this process would only wait: 0.5-1 s less between the last case and the reports on a GPU host."""
    try:
        import mmacts.report.write  # noqa: F401
        from mmacts.ambiguity import load_register

        load_register()
    except Exception:  # noqa: S110 -- the reports say what is wrong, later
        pass


INTERRUPTED = 130
"""Exit status of an interrupted run (128 + SIGINT, what a shell reports)."""
TERMINATED = 143
"""Exit status of a run ended by SIGTERM (128 + 15): a scheduler's time limit (Slurm), a pod's stop."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled as an interrupt: the test process is stopped, the lock given back, the resume
    command printed (by default the signal ended this process with nothing said)."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise _Terminated()


def cmd_run(args: argparse.Namespace) -> int:
    """``mmacts run``: the run itself is :func:`_run`; here the run directory's lock is given back
    however it ends, and an interrupt (Ctrl-C, SIGTERM) says where the partial run is and how to
    complete it."""
    import signal
    import threading

    _HELD.clear()
    old = None
    if threading.current_thread() is threading.main_thread():
        old = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _run(args)
    except KeyboardInterrupt as exc:
        run_dir = _HELD.get("run_dir")
        where = (f"; partial results kept in {run_dir}; resume with: mmacts run --resume {run_dir}"
                 if run_dir is not None and run_dir.is_dir() else "")
        print(f"mmacts: {'terminated' if isinstance(exc, _Terminated) else 'interrupted'}{where}", file=sys.stderr)
        return TERMINATED if isinstance(exc, _Terminated) else INTERRUPTED
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
        lock = _HELD.pop("lock", None)
        if lock is not None:
            lock.release()


def _lock(run_dir: Path, command: list[str]) -> None:
    """Own ``run_dir`` for this command (one line, exit 2, when a live process owns it)."""
    try:
        _HELD["lock"] = RunLock(run_dir).acquire(command)
    except RunLocked as exc:
        raise UsageError(f"cannot resume: {exc}") from None
    except OSError as exc:  # a read-only or vanished run directory
        raise UsageError(f"cannot lock {run_dir}: {exc.strerror or exc}") from None
    _HELD["run_dir"] = run_dir


def _check_resume_options(args: argparse.Namespace, opts: dict, run_dir: Path) -> None:
    """``--resume`` completes a run as it was started: an option that would change its cases is
    refused (one line), one that repeats the run's own value is honoured (it changes nothing)."""
    ours = {"--suite": (",".join(args.suite) if args.suite else None, ",".join(opts.get("suites") or []) or None),
            "-k": (args.k, opts.get("k")),
            "--shard": (args.shard, opts.get("shard")),
            "--rows": (",".join(args.rows) if args.rows else None, ",".join(opts.get("rows") or []) or None),
            "--arch": (",".join(args.arch) if args.arch else None, ",".join(opts.get("arch") or []) or None),
            "--expectations": (str(Path(args.expectations).resolve()) if args.expectations else None,
                               opts.get("expectations")),
            "--retries": (args.retries or None, opts.get("retries") or None),
            "--caselist": (str(Path(args.caselist).resolve()) if args.caselist else None, opts.get("caselist")),
            "--fraction": (args.fraction, opts.get("fraction")),
            "--mandatory": (str(Path(args.mandatory).resolve()) if args.mandatory else None, opts.get("mandatory")),
            "--strict-expectations": (args.strict_expectations or None, opts.get("strict_expectations")),
            "--out": (args.out, None)}
    for flag, default in (("--level", "standard"), ("--backend", DEFAULT_BACKEND)):
        given = getattr(args, flag[2:])
        ours[flag] = (given if given != default else None, opts.get(flag[2:]))
    for flag, (given, stored) in ours.items():
        if given is None or given == stored or (flag in ("--suite", "--rows", "--arch") and _same_list(given, stored)):
            continue
        shown = " ".join(stored) if isinstance(stored, list) else stored
        raise UsageError(f"--resume completes {run_dir} as it was started ({flag} {shown or '(none)'}); "
                         f"{flag} {' '.join(given) if isinstance(given, list) else given} would change it: "
                         "start a new run instead")


def _same_list(a: str | None, b: str | None) -> bool:
    return sorted((a or "").split(",")) == sorted((b or "").split(","))


@dataclass
class _RunPlan:
    """What one ``mmacts run`` runs, decided before anything starts: from the command line, or, for
    ``--resume``, from the run directory's ``run.json`` (a resumed run completes the run as it was started)."""

    run_dir: Path
    suites: list[str]
    level: str
    backend: str
    kexpr: str | None
    shard: str | None
    sel_args: argparse.Namespace
    expect_file: str | None
    retries: int
    strict: bool
    require_gpu: bool
    old: dict = field(default_factory=dict)
    """The resumed run's ``run.json`` (empty for a new run)."""
    scheduler: dict | None = None


def _plan_resume(args: argparse.Namespace, suites: list[str]) -> _RunPlan:
    """``--resume DIR``: check the directory and the options, own it, repair its results' tail and record
    the case a dead run was running; the plan is the one the run was started with."""
    run_dir = Path(args.resume)
    if not (run_dir / "run.json").is_file():
        raise UsageError(f"{run_dir} is not an mmacts run directory (no run.json)")
    try:
        old = json.loads((run_dir / "run.json").read_text())
    except json.JSONDecodeError as exc:
        raise UsageError(f"{run_dir}/run.json is not valid JSON ({exc.msg})") from exc
    if old.get("schema") != "mmacts-run/1":
        raise UsageError(f"{run_dir}/run.json has schema {old.get('schema')!r}, expected 'mmacts-run/1'")
    opts = old.get("options", {})
    _check_resume_options(args, opts, run_dir)
    _check_resumable(run_dir)
    previous = runlock.owner_of(run_dir)  # what a run that died holding the lock left in it
    _lock(run_dir, ["mmacts", *sys.argv[1:]])
    try:
        repaired = repair_tail(run_dir / "results.jsonl")
    except OSError as exc:
        raise UsageError(f"cannot resume: {run_dir}/results.jsonl: {exc.strerror or exc}") from None
    if repaired:
        print(f"mmacts: {repaired}", file=sys.stderr)
    _crashed_at_restart(run_dir, previous)
    plan = _RunPlan(
        run_dir, opts.get("suites", suites), opts.get("level", args.level), opts.get("backend"),
        opts.get("k"), opts.get("shard"),  # a resumed shard stays that shard
        argparse.Namespace(k=opts.get("k"), rows=opts.get("rows"), arch=opts.get("arch"),
                           caselist=opts.get("caselist"), fraction=opts.get("fraction"),
                           mandatory=opts.get("mandatory")),
        opts.get("expectations"), int(opts.get("retries") or 0), bool(opts.get("strict_expectations")),
        bool(opts.get("require_gpu")) or args.require_gpu, old=old, scheduler=old.get("scheduler"))
    unknown = [s for s in plan.suites if s not in suite_names()]
    if unknown:
        raise UsageError(f"{run_dir} ran suite {unknown[0]!r}, which this checkout does not have")
    return plan


def _plan_new(args: argparse.Namespace, suites: list[str]) -> _RunPlan:
    """A new run: its directory named by the time, level, backend and process; ``--shard auto`` resolved
    from the scheduler's environment (Slurm, Kubernetes)."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path(args.out) if args.out else REPO_ROOT / "reports" / "runs"
    shard, scheduler = _resolve_shard(args.shard)
    return _RunPlan(base / f"{stamp}-{args.level}-{args.backend}-{os.getpid()}", suites, args.level, args.backend,
                    args.k, shard, args, str(Path(args.expectations).resolve()) if args.expectations else None,
                    args.retries, args.strict_expectations, args.require_gpu, scheduler=scheduler)


def _run_options(args: argparse.Namespace, plan: _RunPlan, sel: Any) -> dict[str, Any]:
    """The run's options as run.json keeps them (what ``--resume`` restores and compares)."""
    return {"suites": plan.suites, "level": plan.level, "backend": plan.backend, "k": plan.kexpr, "n": args.n,
            "shard": plan.shard, "case_timeout": args.case_timeout, "rows": list(sel.rows) or None,
            "arch": list(sel.arch) or None, "expectations": plan.expect_file, "retries": plan.retries,
            "require_gpu": plan.require_gpu or None, "answer_cache": _answer_cache(args),
            "strict_expectations": plan.strict or None, "caselist": sel.files[0],
            "fraction": f"{sel.fraction[0]}/{sel.fraction[1]}" if sel.fraction else None, "mandatory": sel.files[1]}


def _pytest_argv(args: argparse.Namespace, plan: _RunPlan, sel: Any, options: dict[str, Any], baseline: Any,
                 workers: str | None) -> list[str]:
    """The test process's command line: the case collector, the plugins, and the selection."""
    pyargs = [sys.executable, "-m", "mmacts.runner.pytest_main", str(REPO_ROOT / "suites" / "test_cases.py"),
              *(f"--mmacts-suite={s}" for s in plan.suites), "-p", "no:cacheprovider",
              # pytest's log capture wraps every phase of every item (cases log nothing)
              "-p", "no:logging",
              # quiet: no dots, no "N passed" (which would count observed cases as passed), no
              # tracebacks of failed cases (their record says it): mmacts prints progress and the summary
              "-qq", "-rN", "--tb=no", "--mmacts-quiet",
              # no assertion rewriting (the cases assert nothing; pytest rewrote ~60 modules per process)
              "--assert=plain",
              # Python-level capture only: fd capture dup2s stdout and stderr around every phase of every
              # item (12 system calls a case); cases print nothing, and what C code might write is seen
              "--capture=sys",
              f"--rootdir={REPO_ROOT}", "-c", str(REPO_ROOT / "tox.ini"),
              f"--mmacts-level={plan.level}", f"--mmacts-backend={plan.backend}", f"--mmacts-out={plan.run_dir}",
              f"--mmacts-case-timeout={args.case_timeout}", "-m", "mmacts_case",
              "-p", "mmacts.runner.select_plugin", *sel.pytest_args()]
    if options["answer_cache"]:
        pyargs += [f"--mmacts-answer-cache={options['answer_cache']}"]
    if baseline is not None:
        pyargs += [f"--mmacts-expectations={plan.expect_file}"]
    if plan.kexpr:
        pyargs += ["-k", plan.kexpr]
    if workers:
        # one GPU per worker; a crashed worker is replaced (each crash records its case, so the
        # bound only stops a machine that crashes workers for no case at all)
        pyargs += ["-p", "xdist.plugin", "-n", workers, "--dist", "loadgroup", "--mmacts-pin-gpus",
                   "--max-worker-restart=1000"]
    if plan.shard:
        pyargs += [f"--mmacts-shard={plan.shard}"]
    return pyargs


def _start_and_describe(args: argparse.Namespace, plan: _RunPlan, pyargs: list[str], resume_arg: list[str],
                        env: dict[str, str], command: list[str], options: dict[str, Any], baseline: Any,
                        sel: Any) -> tuple[int, dict[str, Any]]:
    """Start the test process, describe the run while it imports and collects, show progress until it
    ends; (its exit code, the run description)."""
    # The test process starts first; this process describes the run (GPU probe, toolchain
    # versions: CuPy's import and a CUDA call, ~1 s on a GPU host) and imports the report writer
    # while pytest imports and collects, instead of before it.
    from mmacts.report.runinfo import collect, now  # the run's own (the toolchain): not on every CLI start

    timing.mark("cli_ready", "cli")
    first = [*resume_arg, *(["--mmacts-rerun-crashed"] if getattr(args, "rerun_crashed", False) else [])]
    first = first if args.resume else []
    old = plan.old
    with _start(pyargs + first, env) as proc:
        try:
            run = collect(REPO_ROOT, command, options)
            if plan.scheduler:
                run["scheduler"] = plan.scheduler
            for warning in run.get("warnings", []):  # once per run, and in run.json
                print(f"mmacts: warning: {warning}", file=sys.stderr)
            check_made_on(baseline, run)
            if old:  # a resumed run keeps its identity: first start, first command, its options
                run.update(start=old.get("start"), command=old.get("command", command),
                           options=old.get("options", options),
                           resumed=[*old.get("resumed", []), {"at": now(), "command": command}])
            write_text_atomic(plan.run_dir / "run.json", json.dumps(run, indent=2, default=str))
            with console.Progress(plan.run_dir / "results.jsonl",
                                  console.selected_totals(plan.suites, plan.level, sel, plan.shard)):
                _warm_reports()
                rc = proc.wait()
        except BaseException:  # as subprocess.call: an interrupted CLI does not leave pytest running
            proc.kill()
            raise
    return rc, run


def _resume_after_crashes(rc: int, run_dir: Path, pyargs: list[str], resume_arg: list[str],
                          env: dict[str, str]) -> tuple[int, bool]:
    """While the test process dies (a crash in a single process, or a poisoned CUDA context it ended
    itself on): pin it on the running case and go on with what is missing, while that progresses.
    (pytest's exit code, or 3 when a restart finished no case; whether it was restarted)."""
    restarted, last_count = False, -1
    while rc not in PYTEST_ENDED:
        blamed = _blame_inflight(run_dir, rc)
        count = _count_cases(run_dir)
        if count == last_count:
            print(f"mmacts: the test process died (exit {rc}) again without finishing a case; partial "
                  f"results kept in {run_dir}/results.jsonl; resume with --resume {run_dir}", file=sys.stderr)
            return _GAVE_UP, restarted
        last_count, restarted = count, True
        print(f"mmacts: the test process died (exit {rc})" + (f" running {blamed}" if blamed else "")
              + "; resuming", file=sys.stderr)
        rc = _call(pyargs + resume_arg, env)
    return rc, restarted


_GAVE_UP = -3
""":func:`_resume_after_crashes`: a restarted test process finished no case (``mmacts run`` exits 3)."""


def _finish(args: argparse.Namespace, plan: _RunPlan, run: dict[str, Any], baseline: Any, pyargs: list[str],
            env: dict[str, str], on_model: list[str], why: str | None) -> int:
    """After the cases: retries of unexpected failures, the expectations gate, the reports, the summary,
    the store; the exit code."""
    run_dir = plan.run_dir

    def again(extra: list[str]) -> int:  # one more test process, for the retries of unexpected failures
        rc = _call(pyargs + extra, env)
        if rc not in PYTEST_ENDED:
            _blame_inflight(run_dir, rc)
        return rc

    flakes = gating.retry_unexpected(run_dir, again, plan.retries, gating.applying(baseline, run))
    verdicts: list = []
    if baseline is not None:
        verdicts, run["expectations"] = gating.gate(run_dir, baseline, run, plan.strict)
    timing.mark("pytest_done", "cli")
    from mmacts.report.write import write_reports  # pandas and the HTML writer: only once the cases ran

    df = write_reports(run_dir, run)
    timing.mark("reports_written", "cli")
    counts = Counter(df["status"].dropna())
    for line in console.summary_lines(df):
        print(f"mmacts: {line}", file=sys.stderr)
    if on_model:
        print(f"mmacts: {console.model_banner(on_model, why)}", file=sys.stderr)
    for line in gating.summary(verdicts, flakes, baseline, run_dir, info=run.get("expectations")):
        print(f"mmacts: {line}", file=sys.stderr)
    ingested = _ingest_into(run_dir, args.db) if getattr(args, "db", None) else True
    print(run_dir)
    if not ingested:
        return 6
    if plan.require_gpu:
        n_off, where = console.not_on_gpu(df, console.hardware_suites(plan.suites))
        if n_off:
            print(f"mmacts: error: --require-gpu: {n_off} hardware-suite cases did not run on a GPU ("
                  + ", ".join(f"{s} {k}" for s, k in sorted(where.items())) + ")", file=sys.stderr)
            return console.REQUIRE_GPU_EXIT
    if baseline is not None:
        return 1 if verdicts else 0
    return 1 if any(counts[s] for s in BAD) else 0


def _run(args: argparse.Namespace) -> int:
    """``mmacts run``, step by step: plan, select, own the directory, start the test process, recover from
    its crashes, finish (retries, gate, reports, store)."""
    _check_numbers(args)
    suites = _check_suites(args.suite)
    workers = _workers(args.n)
    plan = _plan_resume(args, suites) if args.resume else _plan_new(args, suites)
    sel, baseline = prepare_run(plan.suites, plan.level, plan.sel_args, plan.expect_file, plan.retries, plan.strict)
    on_model, why = console.gpu_plan(plan.suites, plan.backend)
    if plan.require_gpu and on_model:
        raise UsageError(f"--require-gpu: {', '.join(on_model)} cannot run on a GPU here ({why})")
    _check_out(plan.run_dir.parent)
    _check_toolchain()
    plan.run_dir.mkdir(parents=True, exist_ok=True)
    if "lock" not in _HELD:
        _lock(plan.run_dir, ["mmacts", *sys.argv[1:]])
    from mmacts.report.runinfo import SCHEMA, now  # the run's own (the toolchain): not on every CLI start

    command = ["mmacts", *sys.argv[1:]]
    options = _run_options(args, plan, sel)
    if not plan.old:  # a run directory is resumable from the start, before its full description exists
        write_text_atomic(plan.run_dir / "run.json", json.dumps(
            {"schema": SCHEMA, "command": command, "options": options, "start": now(), "end": None,
             "complete": False}, indent=2, default=str))
    pyargs = _pytest_argv(args, plan, sel, options, baseline, workers)
    resume_arg = [f"--mmacts-resume={plan.run_dir / 'results.jsonl'}"]
    print(f"mmacts: running {', '.join(plan.suites)} at level {plan.level} on backend {plan.backend} -> "
          f"{plan.run_dir}", file=sys.stderr)
    if on_model:
        print(f"mmacts: {console.model_banner(on_model, why)}", file=sys.stderr)
    env = child_env(os.environ)
    rc, run = _start_and_describe(args, plan, pyargs, resume_arg, env, command, options, baseline, sel)
    rc, restarted = _resume_after_crashes(rc, plan.run_dir, pyargs, resume_arg, env)
    if rc == _GAVE_UP:
        return 3
    if rc == 5 and not args.resume and not restarted:
        shutil.rmtree(plan.run_dir, ignore_errors=True)
        raise UsageError(f"{sel.describe()} selects no case (suites {', '.join(plan.suites)}, level {plan.level})")
    if rc in (2, 3, 4):
        print(f"mmacts: pytest stopped with exit code {rc} (interrupted or internal error); "
              f"partial results kept in {plan.run_dir}/results.jsonl; resume with --resume {plan.run_dir}",
              file=sys.stderr)
        return INTERRUPTED if rc == 2 else rc
    return _finish(args, plan, run, baseline, pyargs, env, on_model, why)


# -------------------------------------------------------------------------- list
def cmd_list(args: argparse.Namespace) -> int:
    suites = _check_suites(args.suite)
    sel = select.Selection.from_args(args)  # the selection options of ``run``: list previews what a run does
    select.check_exact_names(suites, args.level, sel)
    from mmacts.backends.execute import assumes_of

    per_row: Counter[str] = Counter()
    n = 0
    for case in select.cases(suites, args.level, sel):
        n += 1
        per_row.update(case.spec_rows)
        if not args.rows_only:
            print(f"{case.case_id}\t{' '.join(case.spec_rows)}\tassumes={' '.join(assumes_of(case)) or '-'}")
    if n == 0 and (sel.k or sel.rows or sel.arch):
        raise UsageError(f"{sel.describe()} selects no case (suites {', '.join(suites)}, level {args.level})")
    for hint in select.substring_hints(sel.k, select.cases(suites, args.level, sel)) if sel.k else []:
        print(f"mmacts: note: {hint}", file=sys.stderr)
    chosen = "" if sel.describe() == "this selection" else f" selected by {sel.describe()}"
    doc = mutant_features.load_coverage()
    cov = (doc or {}).get("rows", {})
    print(f"# {n} cases at level {args.level}{chosen}; coverage per spec row (cases, whether a planted mutant of "
          "the row's reading made a citing case fail: mmacts/mutants/coverage.json):")
    try:
        from mmacts.spec.catalog import load

        refs = [r.ref for r in load().rows()]
    except Exception as exc:  # catalog missing: still show what the cases cite
        print(f"# (spec catalog unavailable: {exc})")
        refs = []
    only = []
    for ref in sorted(set(refs) | set(per_row), key=_ref_key):
        proved = cov.get(ref, {}).get("covered")
        can = "-" if not per_row.get(ref) else ("can-fail" if proved else "citation-only")
        if can == "citation-only":
            only.append(ref)
        print(f"{ref}\t{per_row.get(ref, 0)}\t{can}")
    cited = sum(1 for r in per_row if per_row[r])
    print(f"# {cited - len(only)} cited rows covered by a failing mutant, {len(only)} by citation only"
          + (f": {' '.join(only)}" if only else ""))
    from mmacts.report import mutant_scores  # operator-level mutants per module (`generated report` prints the table)

    print(f"# {mutant_scores.summary_line(mutant_scores.report_rows())}")
    _list_features(doc)
    return 0


def _list_features(doc: dict | None) -> None:
    """Coverage per tcgen05 / mma.sync feature (:mod:`mmacts.report.mutant_features`), as comment lines: a feature is
    not a case, and readers of ``list`` take every other line for one."""
    rows = mutant_features.rows(doc)
    if not rows:
        print("# coverage per feature: no mutation results (mmacts/mutants/coverage.json) yet")
        return
    print("# coverage per feature (status; mutants caught by a failing case / by an observation only / all; "
          "an example catching case): " + "; ".join(f"{k}: {v}" for k, v in mutant_features.STATUS_MEANING.items()))
    for r in rows:
        print(f"# feature {r['feature']}\t{r['status']}\t{r['fail']}/{r['observed']}/{r['mutants']}\t"
              f"{r['example case'] or '-'}")
    print(f"# {mutant_features.summary(doc)}")


def _ref_key(ref: str) -> tuple:
    parts = ref[1:].split(".")
    return (ref[0], *(int(p) if p.isdigit() else 0 for p in parts))


# ----------------------------------------------------------------------- explain
def cmd_explain(args: argparse.Namespace) -> int:
    from mmacts.runner.explain import explain

    return explain(args.case_id, trace=args.trace, threads=args.threads, max_lines=args.max_lines,
                   run_dir=args.run, full=args.full)


# ----------------------------------------------------------------------- repro
def cmd_repro(args: argparse.Namespace) -> int:
    from mmacts.runner.repro import repro

    return repro(args.case_id, args.out, run_dir=args.run)


DELEGATED = {"predict": "reference.predict", "ambiguities": "mmacts.ambiguity.cli", "report": "mmacts.report.cli",
             "expectations": "mmacts.runner.expectations", "db": "mmacts.db.cli", "selftest": "mmacts.mutants.selftest",
             "vm": "mmacts.ptxvm.cli"}
"""Subcommands whose own module parses the rest of the command line."""
DELEGATED["package"] = "mmacts.runner.package"  # submission packages (mmacts.runner.package)


def _delegate(module: str, argv: list[str]) -> int:
    import importlib

    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise UsageError(f"this command is not available in this checkout ({exc})") from exc
    return int(mod.main(argv) or 0)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mmacts", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run suites and write a report")
    r.add_argument("--suite", action="append", help="suite name (repeatable; default all)")
    r.add_argument("--level", default="standard", choices=LEVELS)
    r.add_argument("--backend", default=DEFAULT_BACKEND, choices=BACKENDS)
    r.add_argument("-n", default=None, help="pytest-xdist workers: a number, auto (one per core) or gpus "
                   "(one per visible GPU); workers are pinned one per GPU")
    r.add_argument("--out", default=None, help="parent directory of the run directory (default reports/runs)")
    r.add_argument("-k", default=None, help="pytest -k expression over case IDs")
    r.add_argument("--shard", default=None, help="I/N: run shard I (0-based) of N; auto: from the scheduler "
                   "(Slurm job array, Kubernetes indexed Job; see mmacts/runner/scheduler.py)")
    r.add_argument("--db", default=None, help="at the end, ingest the run into this results store (DuckDB file or "
                   "postgresql://...; see mmacts db); exit code 6 if that fails")
    select.add_arguments(r, k=False)
    r.add_argument("--expectations", default=None, metavar="FILE",
                   help="baseline of known failures, flakes and skips: exit 0 when the run matches it")
    r.add_argument("--strict-expectations", action="store_true",
                   help="an expectation entry that matches no case (exit 2 before the run) or is for a device, "
                   "driver or ptxas that did not run here (exit 1) is an error, not a warning")
    r.add_argument("--retries", type=int, default=0, metavar="N",
                   help="re-run unexpected failures up to N times; one that passes is recorded as flake")
    r.add_argument("--resume", default=None, help="run directory to complete: runs only the missing cases")
    r.add_argument("--rerun-crashed", action="store_true",
                   help="with --resume: run again the cases recorded as crash (by default a crash is final: "
                   "it would end the resumed run too)")
    r.add_argument("--require-gpu", action="store_true",
                   help="refuse to start without a GPU that fits every hardware suite selected; exit 7 when a "
                   "hardware-suite case did not run on a GPU")
    r.add_argument("--case-timeout", type=float, default=300.0,
                   help="wall-clock limit per case in seconds (status timeout); 0 = none (default 300)")
    r.add_argument("--no-answer-cache", action="store_true",
                   help="compute every reference answer; by default answers are kept under the cache directory "
                   "($MMACTS_CACHE_DIR/answers), keyed by the code, the case and its inputs")
    r.set_defaults(func=cmd_run)
    ls = sub.add_parser("list", help="list cases and spec-row coverage")
    ls.add_argument("--suite", action="append")
    ls.add_argument("--level", default="standard", choices=LEVELS)
    select.add_arguments(ls)
    ls.add_argument("--rows-only", action="store_true", help="print only the per-row coverage")
    ls.set_defaults(func=cmd_list)
    ex = sub.add_parser("explain", help="PTX, SASS, descriptors, inputs and reference of one case")
    ex.add_argument("case_id")
    ex.add_argument("--trace", action="store_true",
                    help="run the case on the PTX VM and print what the chosen threads executed")
    ex.add_argument("--threads", default="0:0",
                    help="threads to trace as CTA:thread, comma separated (default 0:0)")
    ex.add_argument("--max-lines", type=int, default=4000, help="cap on trace lines (default 4000)")
    ex.add_argument("--run", default=None, metavar="RUN_DIR",
                    help="show got vs want of this case in a finished run, with a mismatch map")
    ex.add_argument("--full", action="store_true", help="do not cap sections (default: 120 lines each)")
    ex.set_defaults(func=cmd_explain)
    rp = sub.add_parser("repro", help="a standalone folder reproducing one case (PTX, cubin, buffers, launchers)")
    rp.add_argument("case_id")
    rp.add_argument("--out", required=True, help="folder to write (created)")
    rp.add_argument("--run", default=None, help="finished run directory: copy this case's record from it")
    rp.set_defaults(func=cmd_repro)
    for name, module in DELEGATED.items():
        sp = sub.add_parser(name, help=f"see mmacts {name} --help", add_help=False)
        sp.add_argument("rest", nargs=argparse.REMAINDER)
        sp.set_defaults(func=lambda a, m=module: _delegate(m, a.rest))
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DELEGATED:
        try:
            return _delegate(DELEGATED[argv[0]], argv[1:])
        except UsageError as exc:
            return _fail(str(exc))
        except BrokenPipeError:
            return _closed_stdout()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if exc.code in (0, None) else 2
    try:
        return int(args.func(args))
    except UsageError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        print("mmacts: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # ``mmacts list | head -1``: the reader has what it wanted
        return _closed_stdout()


def _closed_stdout() -> int:
    """stdout's reader went away: no traceback (and none from Python's flush at exit); 141 = 128 +
    SIGPIPE, what a shell reports for ``git log | head -1``."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141


if __name__ == "__main__":
    sys.exit(main())
