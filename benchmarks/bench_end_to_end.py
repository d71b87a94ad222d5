"""End-to-end throughput of ``mmacts run``: wall time and cases/s per layer, peak memory.

Prints figures, asserts nothing (``benchmarks/`` are not tests). Per suite present in
this checkout (missing suites are simply absent; a suite that fails is reported and
skipped), at the given level (default ``standard``):

- ``compile cold``: ``--backend compile`` with an empty compile cache (a fresh
  ``MMACTS_CACHE_DIR``): ptxas runs for every form;
- ``compile warm``: the same again on the now-filled cache;
- ``model``: ``--backend model`` (warm cache): encode, CPU spec model, compare;
- ``cuda``: ``--backend cuda`` when a GPU answers (``--gpu``), with the kernel time
  the records report (launch overhead per case = wall per case - kernel time per case).

Then the whole level end to end (``--backend auto``, every suite at once) cold and warm,
against the targets of the fleet issue: on this 2-core machine under 10 minutes cold and
under 3 minutes warm.

Peak memory is ``ru_maxrss`` of the children of one small wrapper process per command
(``resource.getrusage(RUSAGE_CHILDREN)``): the largest single process of that run
(pytest controller or one xdist worker), not the sum over workers.

Usage: ``python benchmarks/bench_end_to_end.py [--level standard] [-n 2] [--suite S ...]
[--skip-per-suite] [--gpu]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

WRAPPER = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.call(sys.argv[1:])\n"
    "print('MAXRSS_KB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(rc)\n"
)
TARGET_COLD_S, TARGET_WARM_S = 600.0, 180.0


@dataclass
class Figure:
    """One timed ``mmacts run``."""

    label: str
    wall_s: float
    cases: int
    counts: dict[str, int]
    peak_mb: float
    kernel_us_sum: float
    ok: bool
    note: str = ""

    @property
    def rate(self) -> float:
        return self.cases / self.wall_s if self.wall_s > 0 else 0.0


def run_mmacts(label: str, argv: list[str], cache: Path, out: Path, timeout_s: float) -> Figure:
    """Time one ``mmacts run`` (in a wrapper that reports its children's peak RSS)."""
    env = dict(os.environ, MMACTS_CACHE_DIR=str(cache))
    cmd = [sys.executable, "-c", WRAPPER, sys.executable, "-m", "mmacts.runner.cli", "run", "--out", str(out),
           *argv]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return Figure(label, time.perf_counter() - t0, 0, {}, 0.0, 0.0, False, f"timed out after {timeout_s:g} s")
    wall = time.perf_counter() - t0
    peak_kb = next((float(line.split()[1]) for line in p.stderr.splitlines() if line.startswith("MAXRSS_KB")), 0.0)
    lines = p.stdout.strip().splitlines()
    run_dir = Path(lines[-1]) if lines else None
    if p.returncode not in (0, 1) or run_dir is None or not (run_dir / "run.json").is_file():
        err = [x for x in p.stderr.splitlines() if x.strip() and not x.startswith("MAXRSS_KB")]
        return Figure(label, wall, 0, {}, peak_kb / 1024, 0.0, False,
                      f"exit {p.returncode}: {err[-1] if err else 'no output'}")
    run = json.loads((run_dir / "run.json").read_text())
    counts = {str(k): int(v) for k, v in run.get("counts", {}).items()}
    kernel = 0.0
    try:
        import pandas as pd

        kernel = float(pd.read_parquet(run_dir / "results.parquet", columns=["kernel_us"])["kernel_us"].sum())
    except Exception:
        pass
    return Figure(label, wall, sum(counts.values()), counts, peak_kb / 1024, kernel, True)


def show(f: Figure) -> None:
    if not f.ok:
        print(f"  {f.label:<34} FAILED ({f.note}) after {f.wall_s:.1f} s", flush=True)
        return
    counts = " ".join(f"{k}={v}" for k, v in sorted(f.counts.items()))
    extra = ""
    if f.kernel_us_sum > 0 and f.cases:
        extra = (f"  kernel {f.kernel_us_sum / f.cases:.2f} us/case, wall-kernel "
                 f"{(f.wall_s * 1e6 - f.kernel_us_sum) / f.cases:.0f} us/case")
    print(f"  {f.label:<34} {f.wall_s:8.1f} s {f.cases:6d} cases {f.rate:8.1f} cases/s "
          f"peak {f.peak_mb:6.0f} MB  [{counts}]{extra}", flush=True)


def verdict(name: str, seconds: float, target: float) -> str:
    ok = "MEETS" if seconds < target else "MISSES"
    return f"  {name:<34} {seconds:8.1f} s  target < {target:.0f} s: {ok}"


def main(argv: list[str] | None = None) -> int:
    from mmacts.runner.suites import suite_names

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--level", default="standard")
    ap.add_argument("-n", default="2", help="xdist workers for every run (default 2; 0 = one process)")
    ap.add_argument("--suite", action="append", help="only these suites (default: every suite present)")
    ap.add_argument("--skip-per-suite", action="store_true", help="only the whole-level cold/warm runs")
    ap.add_argument("--skip-whole", action="store_true", help="only the per-suite layers")
    ap.add_argument("--gpu", action="store_true", help="also time --backend cuda per suite")
    ap.add_argument("--timeout", type=float, default=1800.0, help="limit per mmacts run in seconds")
    args = ap.parse_args(argv)

    present = suite_names()
    suites = [s for s in (args.suite or present) if s in present]
    missing = [s for s in (args.suite or []) if s not in present]
    nargs = ["-n", args.n] if args.n not in ("0", "") else []
    print(f"mmacts end-to-end benchmark: level {args.level}, -n {args.n or 0}, {os.cpu_count()} CPUs; "
          f"suites present: {', '.join(present) or 'none'}" + (f"; missing: {', '.join(missing)}" if missing else ""))
    work = Path(tempfile.mkdtemp(prefix="mmacts-bench-"))
    try:
        if not args.skip_per_suite:
            for s in suites:
                print(f"suite {s}:", flush=True)
                cache = work / f"cache-{s}"
                base = ["--suite", s, "--level", args.level, *nargs]
                layers = [("compile cold", ["--backend", "compile"]), ("compile warm", ["--backend", "compile"]),
                          ("model (warm cache)", ["--backend", "model"])]
                if args.gpu:
                    layers.append(("cuda (warm cache)", ["--backend", "cuda"]))
                for label, extra in layers:
                    show(run_mmacts(label, base + extra, cache, work / "runs", args.timeout))
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
            if cold.ok:
                print(verdict("cold", cold.wall_s, TARGET_COLD_S))
            if warm.ok:
                print(verdict("warm", warm.wall_s, TARGET_WARM_S))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
