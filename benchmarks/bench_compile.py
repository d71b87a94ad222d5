"""Benchmark of the compile-conformance layer: cold and warm wall time of one level.

Prints: distinct modules of the level, cold seconds (fresh cache dir), warm seconds (same cache),
cases per second (cold and warm), the status counts, and with ``--findings`` every case whose
status is not ``pass``. Uses a process pool (default 2 workers, as on the 2-core CI machine).

    python benchmarks/bench_compile.py [--level standard] [--workers 2] [--findings]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mmacts.toolchain.conformance import check_compile_case  # noqa: E402
from suites.compile.driver import DRIVER  # noqa: E402


def _check(case_id: str) -> tuple[str, dict]:
    case = _BY_ID[case_id]
    return case_id, check_compile_case(case, DRIVER.module_ptx(case))


_BY_ID: dict = {}


def _init(level: str) -> None:
    _BY_ID.update({c.case_id: c for c in DRIVER.cases(level)})


def run(level: str, workers: int) -> tuple[float, dict[str, dict]]:
    ids = [c.case_id for c in DRIVER.cases(level)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(workers, initializer=_init, initargs=(level,)) as pool:
        results = dict(pool.map(_check, ids, chunksize=8))
    return time.perf_counter() - t0, results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--level", default="standard")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--findings", action="store_true", help="print every non-pass case")
    ap.add_argument("--cache-dir", default=None, help="reuse this cache dir (default: a fresh temp dir)")
    args = ap.parse_args()
    cases = DRIVER.cases(args.level)
    modules = {(c.arch, DRIVER.module_ptx(c)) for c in cases}
    with tempfile.TemporaryDirectory(prefix="mmacts-bench-") as tmp:
        os.environ["MMACTS_CACHE_DIR"] = args.cache_dir or tmp
        cold, res = run(args.level, args.workers)
        warm, res2 = run(args.level, args.workers)
    statuses = Counter(r["status"] for r in res.values())
    assert statuses == Counter(r["status"] for r in res2.values()), "warm run disagrees with cold run"
    n = len(cases)
    print(f"level={args.level} workers={args.workers} cases={n} distinct_modules={len(modules)}")
    print(f"cold_s={cold:.1f} warm_s={warm:.1f} cases_per_s_cold={n / cold:.1f} cases_per_s_warm={n / warm:.1f}")
    print("status:", dict(statuses))
    if args.findings:
        for cid, r in sorted(res.items()):
            if r["status"] != "pass":
                print(f"{r['status']:5s} {cid}\n      {r['message']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
