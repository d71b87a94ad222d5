"""PTX VM throughput per suite: cases/s, scheduler steps/s, thread-instructions/s and peak memory.

What is timed: the ``model`` backend's execution of every case of the suite at ``--level``, in
process, exactly as ``mmacts run --backend model`` executes it (``Executor.execute``: inputs, the
batched VM launch of the driver's own ``launch``, decoding, comparison). The VM figures come from
every launch's :class:`~mmacts.ptxvm.runtime.VmOutcome`: ``steps`` (scheduler steps: one
instruction executed by the threads standing at it) and ``thread_instructions`` (instructions summed
over the threads that executed them; a thread whose guard predicate is false does not count), over
the time spent inside ``VmModule.launch``. Cases whose suite falls back to its record-level model
(no kernel to execute) count in cases/s, not in the VM figures.

Each suite runs in its own subprocess so that its peak memory (``ru_maxrss``) is its own.
BLAS threads are switched off; the process may be pinned with ``--cpu``.

Run: ``python benchmarks/bench_vm.py [--level standard] [--suite S ...] [--limit N] [--cpu N]``.
Prints figures only (no targets are asserted: a timed test would be flaky).
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SUITES = ("tcgen05_blockscale", "mma_sync_blockscale", "hopper_validation", "probes")


def _one(suite: str, level: str, limit: int) -> dict:
    """Run one suite in this process; the figures as a dict."""
    import importlib

    from mmacts.backends.execute import Executor
    from mmacts.ptxvm import runtime

    driver = importlib.import_module(f"suites.{suite}.driver").DRIVER
    cases = driver.cases(level)
    if limit:
        cases = cases[:limit]
    ex = Executor("model")
    for c in cases:
        ex.all_cases.setdefault(repr(c.form_key), []).append(c)

    launches: list = []
    orig = runtime.VmModule.launch

    def launch(self, *a, **kw):  # type: ignore[no-untyped-def]
        out = orig(self, *a, **kw)
        launches.append(out)
        return out

    runtime.VmModule.launch = launch  # type: ignore[method-assign]
    try:
        t0 = time.perf_counter()
        statuses = Counter(ex.execute(driver, c)["status"] for c in cases)
        wall = time.perf_counter() - t0
    finally:
        runtime.VmModule.launch = orig  # type: ignore[method-assign]
    vm_s = sum(o.wall_s for o in launches)
    return {
        "suite": suite, "level": level, "cases": len(cases), "statuses": dict(statuses), "wall_s": wall,
        "launches": len(launches), "vm_s": vm_s, "steps": sum(o.steps for o in launches),
        "thread_instructions": sum(o.thread_instructions for o in launches),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _rate(n: float, s: float) -> str:
    if s <= 0:
        return "-"
    r = n / s
    return f"{r / 1e6:.2f}M" if r >= 1e6 else f"{r / 1e3:.1f}k" if r >= 1e3 else f"{r:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--level", default="standard")
    ap.add_argument("--suite", action="append", choices=SUITES, help="suite (repeatable; default all four)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N cases of each suite")
    ap.add_argument("--cpu", type=int, default=None, help="CPU to pin to")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    if args.one:
        print(json.dumps(_one(args.one, args.level, args.limit)))
        return 0
    rows = []
    for suite in args.suite or SUITES:
        cmd = [sys.executable, __file__, "--one", suite, "--level", args.level, "--limit", str(args.limit)]
        if args.cpu is not None:
            cmd += ["--cpu", str(args.cpu)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0:
            print(f"{suite}: failed\n{proc.stderr[-2000:]}", file=sys.stderr)
            return 1
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    print(f"PTX VM, level={args.level}{f', first {args.limit} cases' if args.limit else ''}, BLAS threads = 1")
    hdr = (f"{'suite':<22}{'cases':>6}{'wall s':>9}{'cases/s':>9}{'launches':>9}{'VM s':>8}{'steps':>10}"
           f"{'steps/s':>9}{'thr-instr':>12}{'thr-instr/s':>12}{'peak MiB':>10}")
    print(hdr)
    for r in rows:
        print(f"{r['suite']:<22}{r['cases']:>6}{r['wall_s']:>9.2f}{_rate(r['cases'], r['wall_s']):>9}"
              f"{r['launches']:>9}{r['vm_s']:>8.2f}{r['steps']:>10}{_rate(r['steps'], r['vm_s']):>9}"
              f"{r['thread_instructions']:>12}{_rate(r['thread_instructions'], r['vm_s']):>12}"
              f"{r['peak_rss_mib']:>10.0f}")
    for r in rows:
        print(f"  {r['suite']}: {r['statuses']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
