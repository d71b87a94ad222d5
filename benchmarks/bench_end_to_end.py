"""End-to-end throughput of ``mmacts run``: start-up, wall time per case, cases per launch, peak memory.

Prints figures, asserts nothing (``benchmarks/`` are not tests). Per suite present in
this checkout (missing suites are simply absent; a suite that fails is reported and
skipped), at the given level (default ``standard``), one timed ``mmacts run`` per layer:

- ``compile cold``: ``--backend compile`` with an empty compile cache (a fresh
  ``MMACTS_CACHE_DIR``): ptxas and nvdisasm run for every form;
- ``compile warm``: the same again on the now-filled cache;
- ``model``: ``--backend model`` (warm cache): the kernels run on the PTX VM;
- ``cuda``: ``--backend cuda`` when a GPU answers (``--gpu``).

"Warm cache" is the compile cache and the answer cache (``mmacts.compare.answer_cache``: the
reference's answers, keyed by code, case and inputs), which an untimed run fills before a warm
layer's timed runs; ``--answers off`` times every run computing every answer instead.

For every warm layer the harness cost is split the way the fleet target reads it (issue 12:
at most 5 s of fixed start-up, then at most 5 ms of wall time per case):

- **start-up**: the wall time of the same command selecting one case (``-k <its id>``);
- **per case**: (wall of the whole level - wall of the one-case run) / (cases - 1);
- **where**: from the phase marks every process of the run writes (``MMACTS_TIMING``,
  :mod:`mmacts.runner.timing`): the CLI before pytest (imports, run.json: GPU probe, toolchain
  versions), pytest until the first case starts (interpreter, plugins, xdist workers,
  collection), the cases, and the end (pytest's end, then the reports);
- **kernel** (cuda): launches, cases per launch and kernel time per case. The records of one
  launch share its event-timed ``kernel_us``, so launches are counted as distinct values.

For the model backend the per-case figure includes the VM's execution of the kernels; the
``run_s`` sum of the records is printed beside it (with ``-n 0`` the difference is the
harness's own per-case cost).

Then, unless ``--skip-whole``, the whole level end to end (``--backend auto``, every suite at
once) cold and warm, against the targets of the fleet issue: on this 2-core machine under
10 minutes cold and under 3 minutes warm.

Peak memory is ``ru_maxrss`` of the children of one small wrapper process per command
(``resource.getrusage(RUSAGE_CHILDREN)``): the largest single process of that run
(pytest controller or one xdist worker), not the sum over workers.

Usage: ``python benchmarks/bench_end_to_end.py [--level standard] [-n 2] [--suite S ...]
[-k EXPR] [--skip-per-suite] [--skip-whole] [--gpu] [--only-gpu] [--layers L,...] [--no-fit] [--repeat N]
[--answers warm|off]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

WRAPPER = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.call(sys.argv[1:])\n"
    "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print('MAXRSS_KB', ru.ru_maxrss, ru.ru_utime + ru.ru_stime, file=sys.stderr)\n"
    "sys.exit(rc)\n"
)
TARGET_COLD_S, TARGET_WARM_S = 600.0, 180.0
TARGET_STARTUP_S, TARGET_PER_CASE_MS = 5.0, 5.0


@dataclass
class Figure:
    """One timed ``mmacts run``."""

    label: str
    wall_s: float
    cases: int
    counts: dict[str, int]
    peak_mb: float
    ok: bool
    note: str = ""
    kernel_us: list[float] = field(default_factory=list)
    """``kernel_us`` of every record that has one."""
    run_s_sum: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)
    first_id: str = ""
    cpu_s: float = 0.0
    """User + system CPU time of every process of the run (a figure a loaded machine disturbs less)."""

    @property
    def rate(self) -> float:
        return self.cases / self.wall_s if self.wall_s > 0 else 0.0


TIMING_ENV = "MMACTS_TIMING"
"""``mmacts.runner.timing.ENV``, spelled here so this file also times a checkout that predates the marks."""


def _read_marks(path: Path) -> list[tuple[float, str, str]]:
    """(epoch, who, name) of every mark the run wrote (``mmacts.runner.timing`` format), in time order."""
    out = []
    if path.is_file():
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 3:
                out.append((float(parts[0]), parts[1], parts[2]))
    return sorted(out)


def _phases(marks: list[tuple[float, str, str]], t0: float, t1: float) -> dict[str, float]:
    """Seconds per phase of one run from its timing marks (see the module docstring)."""
    first = {}
    for t, who, name in marks:
        first.setdefault((who, name), t)
    ctl = {name: t for (who, name), t in first.items() if who == "ctl"}
    cli = {name: t for (who, name), t in first.items() if who == "cli"}
    out: dict[str, float] = {}
    if "proc_start" in ctl:
        out["cli before pytest"] = ctl["proc_start"] - t0
    if "first_case" in ctl and "proc_start" in ctl:
        out["pytest to first case"] = ctl["first_case"] - ctl["proc_start"]
        workers = [t for (who, name), t in first.items() if who.startswith("gw") and name == "configure"]
        if workers:
            out["  of which: workers configured"] = max(workers) - ctl["proc_start"]
    if "first_case" in ctl and "last_case" in ctl:
        out["cases"] = ctl["last_case"] - ctl["first_case"]
        if "second_case" in ctl:
            out["  of which: after the first case"] = ctl["last_case"] - ctl["second_case"]
    if "last_case" in ctl and "finish" in ctl:
        out["pytest end"] = ctl["finish"] - ctl["last_case"]
        workers = [t for (who, name), t in first.items() if who.startswith("gw") and name == "finish"]
        if workers:
            out["  of which: workers finished"] = max(workers) - ctl["last_case"]
    if "finish" in ctl:
        out["reports and exit"] = t1 - ctl["finish"]
        if "pytest_done" in cli:
            out["  of which: test process exit"] = cli["pytest_done"] - ctl["finish"]
        if "reports_written" in cli and "pytest_done" in cli:
            out["  of which: reports"] = cli["reports_written"] - cli["pytest_done"]
    return out


def run_mmacts(label: str, argv: list[str], cache: Path, out: Path, timeout_s: float) -> Figure:
    """Time one ``mmacts run`` (in a wrapper that reports its children's peak RSS)."""
    marks_file = out.parent / f"marks-{time.monotonic_ns()}.txt"
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MMACTS_CACHE_DIR=str(cache), **{TIMING_ENV: str(marks_file)})
    cmd = [sys.executable, "-c", WRAPPER, sys.executable, "-m", "mmacts.runner.cli", "run", "--out", str(out),
           *argv]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return Figure(label, time.time() - t0, 0, {}, 0.0, False, f"timed out after {timeout_s:g} s")
    t1 = time.time()
    wall = t1 - t0
    usage = next((line.split()[1:] for line in p.stderr.splitlines() if line.startswith("MAXRSS_KB")), ["0", "0"])
    peak_kb, cpu_s = float(usage[0]), float(usage[1])
    lines = p.stdout.strip().splitlines()
    run_dir = Path(lines[-1]) if lines else None
    if p.returncode not in (0, 1) or run_dir is None or not (run_dir / "run.json").is_file():
        err = [x for x in p.stderr.splitlines() if x.strip() and not x.startswith("MAXRSS_KB")]
        why = f"exit {p.returncode}: {err[-1] if err else 'no output'}"
        return Figure(label, wall, 0, {}, peak_kb / 1024, False, why)
    run = json.loads((run_dir / "run.json").read_text())
    counts = {str(k): int(v) for k, v in run.get("counts", {}).items()}
    fig = Figure(label, wall, sum(counts.values()), counts, peak_kb / 1024, True,
                 phases=_phases(_read_marks(marks_file), t0, t1), cpu_s=cpu_s)
    from mmacts.core.records import read_jsonl

    for rec in read_jsonl(run_dir / "results.jsonl"):
        if rec.get("kernel_us") is not None:
            fig.kernel_us.append(float(rec["kernel_us"]))
        fig.run_s_sum += float(rec.get("run_s") or 0.0)
        fig.first_id = fig.first_id or str(rec.get("case_id") or "")
    return fig


def show(f: Figure) -> None:
    if not f.ok:
        print(f"  {f.label:<28} FAILED ({f.note}) after {f.wall_s:.1f} s", flush=True)
        return
    counts = " ".join(f"{k}={v}" for k, v in sorted(f.counts.items()))
    print(f"  {f.label:<28} {f.wall_s:8.2f} s {f.cases:6d} cases {f.rate:8.1f} cases/s "
          f"cpu {f.cpu_s:6.2f} s peak {f.peak_mb:6.0f} MB  [{counts}]", flush=True)


def _fastest(figs: list[Figure]) -> Figure:
    """The fastest of repeated runs (the least disturbed by the rest of the machine)."""
    ok = [f for f in figs if f.ok]
    return min(ok, key=lambda f: f.wall_s) if ok else figs[0]


def show_split(f: Figure, one: Figure | None, repeat: int = 1,
               pairs: list[tuple[Figure, Figure]] | None = None) -> None:
    """Start-up and per-case wall (two-point), where the time went, and the kernel figures."""
    if not f.ok:
        return
    if repeat > 1:
        print(f"      (fastest of {repeat} runs each)", flush=True)
        est = [(a.wall_s - b.wall_s) / (a.cases - b.cases) * 1e3 for a, b in pairs or []
               if a.ok and b.ok and a.cases > b.cases]
        if len(est) > 1:  # the spread says how far the machine's noise moves the two-point figure
            print(f"      per case of each full/1-case pair: {', '.join(f'{x:.2f}' for x in est)} ms "
                  f"(median {statistics.median(est):.2f})", flush=True)
    if one is not None and one.ok and f.cases > one.cases:
        startup = one.wall_s
        per_case_ms = (f.wall_s - one.wall_s) / (f.cases - one.cases) * 1e3
        ok_s = "MEETS" if startup <= TARGET_STARTUP_S else "MISSES"
        ok_c = "MEETS" if per_case_ms <= TARGET_PER_CASE_MS else "MISSES"
        print(f"      start-up {startup:.2f} s ({one.cases}-case run; target <= {TARGET_STARTUP_S:g} s: {ok_s}), "
              f"per case {per_case_ms:.2f} ms beyond it (target <= {TARGET_PER_CASE_MS:g} ms: {ok_c}); "
              f"cpu: {one.cpu_s:.2f} s + {(f.cpu_s - one.cpu_s) / (f.cases - one.cases) * 1e3:.2f} ms/case",
              flush=True)
    if f.cases:  # the same targets read as one bound on the whole level's wall
        bound = TARGET_STARTUP_S + f.cases * TARGET_PER_CASE_MS / 1e3
        print(f"      whole level {f.wall_s:.2f} s for {f.cases} cases; bound {TARGET_STARTUP_S:g} s + "
              f"{f.cases} x {TARGET_PER_CASE_MS:g} ms = {bound:.2f} s: {'MEETS' if f.wall_s <= bound else 'MISSES'}",
              flush=True)
    if f.phases:
        where = ", ".join(f"{k.strip()} {v:.2f} s" for k, v in f.phases.items())
        print(f"      where: {where}", flush=True)
        if one is not None and one.ok and one.phases:
            # the two-point figure phase by phase: which part of the run grows with the cases
            diff = ", ".join(f"{k.strip()} {(v - one.phases[k]) * 1e3:+.0f} ms" for k, v in f.phases.items()
                             if k in one.phases)
            print(f"      whole level minus the 1-case run, by phase: {diff}", flush=True)
        if f.cases and "cases" in f.phases:
            print(f"      cases phase: {f.phases['cases'] / f.cases * 1e3:.2f} ms/case wall "
                  f"(record run_s sum {f.run_s_sum:.2f} s = {f.run_s_sum / f.cases * 1e3:.2f} ms/case)", flush=True)
        if one is not None and one.ok and "cases" in one.phases and f.cases > one.cases:
            # the two-point figure on the cases phase alone (first case start to last record): the
            # interpreter, collection and report writing of the two runs, and their noise, stay out
            per = (f.phases["cases"] - one.phases["cases"]) / (f.cases - one.cases) * 1e3
            print(f"      per case in the cases phase (whole level minus 1-case run): {per:.2f} ms "
                  f"(target <= {TARGET_PER_CASE_MS:g} ms: {'MEETS' if per <= TARGET_PER_CASE_MS else 'MISSES'})",
                  flush=True)
    if f.kernel_us:
        launches = sorted(set(f.kernel_us))
        total = sum(launches)
        print(f"      kernel: {len(launches)} launches for {len(f.kernel_us)} cases "
              f"({len(f.kernel_us) / len(launches):.1f} cases per launch), {total:.0f} us in all, "
              f"{total / len(f.kernel_us):.2f} us/case", flush=True)


def main(argv: list[str] | None = None) -> int:
    from mmacts.core.suites import suite_names

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--level", default="standard")
    ap.add_argument("-n", default="2", help="xdist workers for every run (default 2; 0 = one process)")
    ap.add_argument("--suite", action="append", help="only these suites (default: every suite present)")
    ap.add_argument("-k", default=None, help="pytest -k expression for the per-suite runs (e.g. sm_90a)")
    ap.add_argument("--skip-per-suite", action="store_true", help="only the whole-level cold/warm runs")
    ap.add_argument("--skip-whole", action="store_true", help="only the per-suite layers")
    ap.add_argument("--gpu", action="store_true", help="also time --backend cuda per suite")
    ap.add_argument("--only-gpu", action="store_true", help="per suite: compile cold (to fill the cache), then cuda")
    ap.add_argument("--layers", default=None,
                    help="per suite, comma separated: compile-cold, compile-warm, model, cuda (overrides the above)")
    ap.add_argument("--no-fit", action="store_true", help="no one-case runs (no start-up / per-case split)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="warm layers: run the whole level and the one-case run N times each, keep the fastest")
    ap.add_argument("--timeout", type=float, default=1800.0, help="limit per mmacts run in seconds")
    ap.add_argument("--answers", choices=("warm", "off"), default="warm",
                    help="warm (default): an untimed run fills the answer cache before a warm layer's timed runs; "
                    "off: every run computes every reference answer (--no-answer-cache)")
    args = ap.parse_args(argv)

    present = suite_names()
    suites = [s for s in (args.suite or present) if s in present]
    missing = [s for s in (args.suite or []) if s not in present]
    nargs = ["-n", args.n] if args.n not in ("0", "") else []
    print(f"mmacts end-to-end benchmark: level {args.level}, -n {args.n or 0}, {os.cpu_count()} CPUs"
          + (f", -k {args.k!r}" if args.k else "") + f"; suites present: {', '.join(present) or 'none'}"
          + (f"; missing: {', '.join(missing)}" if missing else ""))
    work = Path(tempfile.mkdtemp(prefix="mmacts-bench-"))
    try:
        if not args.skip_per_suite:
            for s in suites:
                print(f"suite {s}:", flush=True)
                cache = work / f"cache-{s}"
                base = ["--suite", s, "--level", args.level, *nargs]
                kexpr = args.k
                names = ["compile-cold"] + ([] if args.only_gpu else ["compile-warm", "model"]) + (
                    ["cuda"] if args.gpu or args.only_gpu else [])
                if args.layers:
                    names = [x.strip() for x in args.layers.split(",") if x.strip()]
                known = {"compile-cold": ("compile cold", "compile", False),
                         "compile-warm": ("compile warm", "compile", True),
                         "model": ("model (warm cache)", "model", True), "cuda": ("cuda (warm cache)", "cuda", True)}
                layers = [known[x] for x in names]
                for label, backend, split in layers:
                    extra = ["--backend", backend, *(["-k", kexpr] if kexpr else [])]
                    if args.answers == "off":
                        extra.append("--no-answer-cache")
                    elif split:  # "warm cache" holds the reference's answers too: one untimed run fills them
                        run_mmacts(f"{label}, answers warm-up", base + extra, cache, work / "runs", args.timeout)
                    times = max(1, args.repeat) if split else 1
                    fulls = [run_mmacts(label, base + extra, cache, work / "runs", args.timeout)]
                    fig = fulls[0]
                    ones: list[Figure] = []
                    if split and not args.no_fit and fig.ok and fig.cases > 1 and fig.first_id:
                        sel = f"{kexpr} and {fig.first_id}" if kexpr else fig.first_id
                        for i in range(times):  # alternated, so a drift in the machine's load hits both alike
                            if i:
                                fulls.append(run_mmacts(label, base + extra, cache, work / "runs", args.timeout))
                            ones.append(run_mmacts(f"{label}, 1 case", base + ["--backend", backend, "-k", sel],
                                                   cache, work / "runs", args.timeout))
                    else:
                        fulls += [run_mmacts(label, base + extra, cache, work / "runs", args.timeout)
                                  for _ in range(times - 1)]
                    fig = _fastest(fulls)
                    show(fig)
                    if split:
                        show_split(fig, _fastest(ones) if ones else None, times, list(zip(fulls, ones, strict=False)))
        if not args.skip_whole:
            print(f"whole level {args.level}, every suite, --backend auto:", flush=True)
            cache = work / "cache-all"
            sel = [x for s in suites for x in ("--suite", s)] if args.suite else []
            cold = run_mmacts("end to end cold", ["--level", args.level, "--backend", "auto", *nargs, *sel],
                              cache, work / "runs", args.timeout)
            show(cold)
            warm = run_mmacts("end to end warm", ["--level", args.level, "--backend", "auto", *nargs, *sel],
                              cache, work / "runs", args.timeout)
            show(warm)
            print("targets (fleet issue, 2-core CPU machine):")
            for name, fig, target in (("cold", cold, TARGET_COLD_S), ("warm", warm, TARGET_WARM_S)):
                if fig.ok:
                    ok = "MEETS" if fig.wall_s < target else "MISSES"
                    print(f"  {name:<34} {fig.wall_s:8.1f} s  target < {target:.0f} s: {ok}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
