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
from pathlib import Path

from mmacts.backends.execute import BACKENDS
from mmacts.cases.model import LEVELS
from mmacts.runner.suites import REPO_ROOT, load_driver, suite_names


class UsageError(Exception):
    """Bad input: reported as one line, exit code 2."""


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
    from mmacts.backends import assembler

    try:
        assembler.ptxas_version()
    except Exception as exc:
        raise UsageError(f"ptxas not available: {exc}") from exc


def _workers(n: str | None) -> str | None:
    """``-n``: a number, ``auto`` (xdist: one per core) or ``gpus`` (one per visible GPU)."""
    if n is None or n in ("0",):
        return None
    if n == "gpus":
        from mmacts.runner.gpu_pinning import visible_gpus

        return str(max(1, len(visible_gpus())))
    if n != "auto" and not n.isdigit():
        raise UsageError(f"-n must be a number, 'auto' or 'gpus', got {n!r}")
    return n


PYTEST_ENDED = (0, 1, 2, 3, 4, 5)
"""pytest exit codes; anything else (a signal, faults.EXIT_CODE) means the test process died."""


def _blame_inflight(run_dir: Path, rc: int) -> str | None:
    """After the single test process died: record ``error`` for the case it was running."""
    from mmacts.report.records import append_jsonl, empty_record, read_jsonl
    from mmacts.runner.faults import INFLIGHT_FILE

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
    how = f"signal {-rc}" if rc < 0 else f"exit code {rc}"
    append_jsonl(run_dir / "results.jsonl", empty_record(
        case_id=case_id, status="error",
        message=f"worker crashed: the test process died ({how}) while running this case; the run was resumed"))
    return case_id


def _count_cases(run_dir: Path) -> int:
    """Cases with a record: the measure of progress between restarts of a dying test process."""
    from mmacts.report.records import read_jsonl

    return len({r.get("case_id") for r in read_jsonl(run_dir / "results.jsonl")})


def cmd_run(args: argparse.Namespace) -> int:
    suites = _check_suites(args.suite)
    workers = _workers(args.n)
    old: dict = {}
    if args.resume:
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
        suites, level, backend = opts.get("suites", suites), opts.get("level", args.level), opts.get("backend")
        kexpr, shard = opts.get("k"), opts.get("shard")  # a resumed shard stays that shard
        unknown = [s for s in suites if s not in suite_names()]
        if unknown:
            raise UsageError(f"{run_dir} ran suite {unknown[0]!r}, which this checkout does not have")
    else:
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        base = Path(args.out) if args.out else REPO_ROOT / "reports" / "runs"
        run_dir = base / f"{stamp}-{args.level}-{args.backend}-{os.getpid()}"
        level, backend, kexpr, shard = args.level, args.backend, args.k, args.shard
    _check_out(run_dir.parent)
    _check_toolchain()
    run_dir.mkdir(parents=True, exist_ok=True)

    from mmacts.report.atomic import write_text_atomic
    from mmacts.report.runinfo import collect, now
    from mmacts.report.write import write_reports

    command = ["mmacts", *sys.argv[1:]]
    options = {"suites": suites, "level": level, "backend": backend, "k": kexpr, "n": args.n,
               "shard": shard, "case_timeout": args.case_timeout}
    run = collect(REPO_ROOT, command, options)
    for warning in run.get("warnings", []):  # once per run, and in run.json
        print(f"mmacts: warning: {warning}", file=sys.stderr)
    if old:  # a resumed run keeps its identity: first start, first command, its options
        run.update(start=old.get("start"), command=old.get("command", command), options=old.get("options", options),
                   resumed=[*old.get("resumed", []), {"at": now(), "command": command}])
    write_text_atomic(run_dir / "run.json", json.dumps(run, indent=2, default=str))
    pyargs = [sys.executable, "-m", "pytest", str(REPO_ROOT / "suites" / "test_cases.py"),
              *(f"--mmacts-suite={s}" for s in suites), "-p", "no:cacheprovider", "-q", "-rN",
              f"--rootdir={REPO_ROOT}", "-c", str(REPO_ROOT / "tox.ini"),
              f"--mmacts-level={level}", f"--mmacts-backend={backend}", f"--mmacts-out={run_dir}",
              f"--mmacts-case-timeout={args.case_timeout}", "-m", "mmacts_case"]
    if kexpr:
        pyargs += ["-k", kexpr]
    if workers:
        # one GPU per worker; a crashed worker is replaced (each crash records its case, so the
        # bound only stops a machine that crashes workers for no case at all)
        pyargs += ["-n", workers, "--dist", "loadgroup", "--mmacts-pin-gpus", "--max-worker-restart=1000"]
    if shard:
        pyargs += [f"--mmacts-shard={shard}"]
    resume_arg = [f"--mmacts-resume={run_dir / 'results.jsonl'}"]
    print(f"mmacts: running {', '.join(suites)} at level {level} on backend {backend} -> {run_dir}",
          file=sys.stderr)
    env = dict(os.environ, MMACTS_RESTARTABLE="1")
    # One BLAS thread per worker: xdist already uses the cores, and oversubscribed BLAS made the
    # model backend 3x slower on a 2-core machine. An explicit setting is kept.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    rc = subprocess.call(pyargs + (resume_arg if args.resume else []), cwd=REPO_ROOT, env=env)
    restarted, last_count = False, -1
    while rc not in PYTEST_ENDED:
        # the test process died (a crash in a single process, or a poisoned CUDA context it ended
        # itself on): pin it on the running case and go on with what is missing, while that progresses.
        blamed = _blame_inflight(run_dir, rc)
        count = _count_cases(run_dir)
        if count == last_count:
            print(f"mmacts: the test process died (exit {rc}) again without finishing a case; partial "
                  f"results kept in {run_dir}/results.jsonl; resume with --resume {run_dir}", file=sys.stderr)
            return 3
        last_count, restarted = count, True
        print(f"mmacts: the test process died (exit {rc})" + (f" running {blamed}" if blamed else "")
              + "; resuming", file=sys.stderr)
        rc = subprocess.call(pyargs + resume_arg, cwd=REPO_ROOT, env=env)
    if rc == 5 and not args.resume and not restarted:
        shutil.rmtree(run_dir, ignore_errors=True)
        what = f"-k {kexpr!r}" if kexpr else "this selection"
        raise UsageError(f"{what} selects no case (suites {', '.join(suites)}, level {level})")
    if rc in (2, 3, 4):
        print(f"mmacts: pytest stopped with exit code {rc} (interrupted or internal error); "
              f"partial results kept in {run_dir}/results.jsonl; resume with --resume {run_dir}",
              file=sys.stderr)
        return rc
    df = write_reports(run_dir, run)
    counts = Counter(df["status"].dropna())
    print("mmacts: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())), file=sys.stderr)
    print(run_dir)
    return 0 if not (counts["fail"] or counts["error"] or counts["timeout"]) else 1


# -------------------------------------------------------------------------- list
def cmd_list(args: argparse.Namespace) -> int:
    suites = _check_suites(args.suite)
    per_row: Counter[str] = Counter()
    n = 0
    for name in suites:
        for case in load_driver(name).cases(args.level):
            if not case.in_level(args.level):
                continue
            n += 1
            per_row.update(case.spec_rows)
            if not args.rows_only:
                print(f"{case.case_id}\t{' '.join(case.spec_rows)}")
    print(f"# {n} cases at level {args.level}; coverage per spec row (cases):")
    try:
        from mmacts.spec.catalog import load

        refs = [r.ref for r in load().rows()]
    except Exception as exc:  # catalog missing: still show what the cases cite
        print(f"# (spec catalog unavailable: {exc})")
        refs = []
    for ref in sorted(set(refs) | set(per_row), key=_ref_key):
        print(f"{ref}\t{per_row.get(ref, 0)}")
    return 0


def _ref_key(ref: str) -> tuple:
    parts = ref[1:].split(".")
    return (ref[0], *(int(p) if p.isdigit() else 0 for p in parts))


# ----------------------------------------------------------------------- explain
def cmd_explain(args: argparse.Namespace) -> int:
    from mmacts.runner.explain import explain

    return explain(args.case_id)


DELEGATED = {"predict": "reference.predict", "ambiguities": "mmacts.ambiguity.cli", "report": "mmacts.report.cli"}
"""Subcommands whose own module parses the rest of the command line."""


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
    r.add_argument("--backend", default="auto", choices=BACKENDS)
    r.add_argument("-n", default=None, help="pytest-xdist workers: a number, auto (one per core) or gpus "
                   "(one per visible GPU); workers are pinned one per GPU")
    r.add_argument("--out", default=None, help="parent directory of the run directory (default reports/runs)")
    r.add_argument("-k", default=None, help="pytest -k expression over case IDs")
    r.add_argument("--shard", default=None, help="I/N: run shard I (0-based) of N")
    r.add_argument("--resume", default=None, help="run directory to complete: runs only the missing cases")
    r.add_argument("--case-timeout", type=float, default=300.0,
                   help="wall-clock limit per case in seconds (status timeout); 0 = none (default 300)")
    r.set_defaults(func=cmd_run)
    ls = sub.add_parser("list", help="list cases and spec-row coverage")
    ls.add_argument("--suite", action="append")
    ls.add_argument("--level", default="standard", choices=LEVELS)
    ls.add_argument("--rows-only", action="store_true", help="print only the per-row coverage")
    ls.set_defaults(func=cmd_list)
    ex = sub.add_parser("explain", help="PTX, SASS, descriptors, inputs and reference of one case")
    ex.add_argument("case_id")
    ex.set_defaults(func=cmd_explain)
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
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if exc.code in (0, None) else 2
    try:
        return int(args.func(args))
    except UsageError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return _fail("interrupted")


if __name__ == "__main__":
    sys.exit(main())
