"""Model-backend throughput of the tcgen05 block-scale suite: cases/s and peak RSS on ONE core.

Issue 4 target: >= 50 cases/s and peak memory < 2 GiB for the ``standard`` level (M=256, N=256,
K=128 cases included). What is timed is the model backend's per-case work, in process:
``make_inputs`` (exact-by-construction data + every encoder), ``run_record_model`` (the executable
spec model from the encoded bytes), ``expected`` (the exact reference on the logical matrices)
and the comparison. Not timed: enumerating the cases (one catalog load) and ptxas, which the
model backend runs once per kernel form and caches (``bench_compile.py`` measures that).

Why one core: CI and the lead's machine are small; BLAS threads are switched off before numpy
loads (the exact reference's float64 products are exact in any order, so this changes speed
only) and the process is pinned to one CPU.

Run: ``python benchmarks/bench_model.py [--level standard] [--cpu N]``. Prints figures only.
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_CASES_PER_S = 50.0
TARGET_PEAK_GIB = 2.0


def _peak_rss_gib() -> float:
    """Peak resident set of this process (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--level", default="standard")
    ap.add_argument("--cpu", type=int, default=None, help="CPU to pin to (default: the first allowed)")
    args = ap.parse_args(argv)
    cpu = args.cpu if args.cpu is not None else min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})

    from mmacts.compare.compare import compare
    from suites.tcgen05_blockscale.driver import DRIVER

    t0 = time.perf_counter()
    cases = DRIVER.cases(args.level)
    t_enum = time.perf_counter() - t0
    statuses: Counter[str] = Counter()
    per_case: list[tuple[float, str, int, int, int]] = []
    t_all = time.perf_counter()
    for c in cases:
        t = time.perf_counter()
        inp = DRIVER.make_inputs(c)
        res = DRIVER.run_record_model(c, inp)
        exp = DRIVER.expected(c, inp)
        statuses[compare(res.got, exp).status] += 1
        k = int(inp.extra["kmma"]) * int(inp.extra["nmma"])
        per_case.append((time.perf_counter() - t, c.case_id, inp.m, inp.n, k))
    wall = time.perf_counter() - t_all
    rate = len(cases) / wall
    peak = _peak_rss_gib()
    big = [p for p in per_case if p[2] == 256 and p[3] == 256 and p[4] >= 128]
    slow = sorted(per_case, reverse=True)[:3]
    print(f"tcgen05_blockscale level={args.level} backend=model, one core (cpu {cpu}), BLAS threads = 1")
    print(f"cases: {len(cases)} (enumerated in {t_enum:.2f} s, not timed)   verdicts: {dict(statuses)}")
    print(f"model backend: {wall:.2f} s = {rate:.1f} cases/s   (target >= {TARGET_CASES_PER_S:.0f}: "
          f"{'MET' if rate >= TARGET_CASES_PER_S else 'NOT MET'})")
    print(f"peak RSS: {peak:.3f} GiB   (target < {TARGET_PEAK_GIB:.0f} GiB: "
          f"{'MET' if peak < TARGET_PEAK_GIB else 'NOT MET'})")
    if big:
        mean = sum(p[0] for p in big) / len(big)
        print(f"M=256 N=256 K>=128 cases: {len(big)}, mean {mean * 1e3:.1f} ms each")
    for dt, cid, m, n, k in slow:
        print(f"slowest: {dt * 1e3:7.1f} ms  M={m} N={n} K={k}  {cid}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
