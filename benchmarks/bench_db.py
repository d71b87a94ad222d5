"""Scale of the results store: a simulated year of nightly full-level runs on 8 GPUs.

    python benchmarks/bench_db.py                       # DuckDB, then PostgreSQL (throwaway server)
    python benchmarks/bench_db.py --days 30 --no-postgres

Prints, per store: the ingest rate (case rows per second; the year goes in night by night, each
night's 8 runs one transaction, with the same prepare + write as ``mmacts db ingest``; the runs
are generated and prepared in worker processes while the main process writes), the rate of
``mmacts db ingest`` over real run directories (one night written to disk: parquet read included),
the store's size, and the time of each query (history, flaky, regressions, device) and of the
page made from it. Targets (issue 16): >= 100,000 rows/s into DuckDB; each DuckDB query < 1 s.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mmacts.db import ingest, pages, queries  # noqa: E402
from mmacts.db.connect import open_store  # noqa: E402
from mmacts.db.simulate import Fleet, real_cases, tiny_cases  # noqa: E402

_FLEET: Fleet | None = None


def _init(cases, days, gpus) -> None:  # worker: one fleet per process, same seed -> same year
    global _FLEET
    _FLEET = Fleet(cases, days, gpus)


def _night(day: int) -> list[dict]:
    assert _FLEET is not None
    return [ingest.prepare(*_FLEET_run(day, g)) for g in range(_FLEET.gpus)]


def _FLEET_run(day: int, gpu: int):  # noqa: N802
    assert _FLEET is not None
    return _FLEET.run_meta(day, gpu), _FLEET.results(day, gpu)


def _cpu() -> float:
    """CPU seconds of this process and its reaped children (the prepare workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def load_year(url: str, cases, days: int, gpus: int, workers: int) -> tuple[float, int]:
    rows = 0
    t0 = time.perf_counter()
    c0 = _cpu()
    with open_store(url) as store, concurrent.futures.ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init,
            initargs=(cases, days, gpus)) as pool:
        for d, night in enumerate(pool.map(_night, range(days), chunksize=1)):
            ingest.write_prepared(store, night)
            rows += sum(int(p["run"]["n_cases"]) for p in night)
            if d % 30 == 29:
                el = time.perf_counter() - t0
                print(f"    day {d + 1}/{days}: {rows:,} rows in {el:.0f} s ({rows / el:,.0f} rows/s; "
                      f"load {os.getloadavg()[0]:.1f})", flush=True)
    el = time.perf_counter() - t0
    cpu = _cpu() - c0  # the pool has exited: its workers are reaped and counted
    print(f"  CPU: {cpu:.1f} s in all ({cpu / rows * 1e6:.2f} CPU-s per million rows, generation of the simulated "
          f"runs included): {rows / cpu:,.0f} rows per CPU-second, {2 * rows / cpu:,.0f} rows/s on 2 idle cores "
          "if the workers and the writer overlap fully", flush=True)
    return el, rows


def cli_rate(url: str, cases, gpus: int, tmp: Path) -> tuple[float, int]:
    """``mmacts db ingest`` over one night of real run directories (written by write_reports' format)."""
    fleet = Fleet(cases, 1, gpus)
    dirs = []
    for g in range(gpus):
        meta, df = fleet.run_meta(0, g), fleet.results(0, g)
        d = tmp / f"night0-gpu{g}"
        d.mkdir(parents=True, exist_ok=True)
        from mmacts.report.frame import to_frame

        to_frame(df.to_dict("records")).to_parquet(d / "results.parquet", index=False)
        (d / "run.json").write_text(json.dumps(meta))
        dirs.append(d)
    with open_store(url) as store:
        t0 = time.perf_counter()
        got = list(ingest.ingest_runs(store, dirs))
        el = time.perf_counter() - t0
    assert all(isinstance(o, ingest.Outcome) and o.added for o in got), got
    return el, sum(o.cases for o in got)


def timed(fn, *a):
    t0 = time.perf_counter()
    out = fn(*a)
    return time.perf_counter() - t0, out


def query_times(url: str, days: int, gpus: int) -> list[tuple[str, float, float, str]]:
    import datetime as dt

    first = dt.datetime(2026, 1, 1)
    since = first + dt.timedelta(days=min(100, days // 3))
    out = []
    with open_store(url, read_only=True) as store:
        label = str(store.frame("SELECT label FROM devices ORDER BY label LIMIT 1")["label"].iloc[0])
        for name, fn, args, page in (
                ("history", queries.history, (store,), lambda r: pages.history_page(r, url)),
                ("flaky", queries.flaky, (store,), lambda r: pages.flaky_page(r, url, 2, None)),
                ("regressions --since " + str(since.date()), queries.regressions, (store, since),
                 lambda r: pages.regressions_page(r, url, since)),
                ("device " + label, queries.device, (store, label), lambda r: pages.device_page(r, url))):
            timed(fn, *args)  # warm: the first query of a fresh connection loads the catalog
            q, res = timed(fn, *args)
            p, _ = timed(page, res)
            n = len(res) if hasattr(res, "__len__") and not isinstance(res, dict) else (
                len(res.get("runs", [])) if isinstance(res, dict) else 0)
            out.append((name, q, p, f"{n} rows"))
    return out


def bench(kind: str, url: str, cases, days: int, gpus: int, workers: int, tmp: Path) -> None:
    print(f"== {kind}: {days} nights x {gpus} GPUs x {len(cases):,} cases = {days * gpus * len(cases):,} rows",
          flush=True)
    el, rows = load_year(url, cases, days, gpus, workers)
    print(f"  ingest (year, {workers} prepare workers + this writer): {rows:,} rows in {el:.1f} s = "
          f"{rows / el:,.0f} rows/s", flush=True)
    cli_url = url + "-cli" if kind == "duckdb" else url
    if kind == "duckdb":
        el2, rows2 = cli_rate(cli_url, cases, gpus, tmp / "dirs")
        print(f"  mmacts db ingest, 8 run directories into a fresh store: {rows2:,} rows in {el2:.2f} s = "
              f"{rows2 / el2:,.0f} rows/s (parquet read, prepare in workers, one transaction)")
    with open_store(url, read_only=True) as store:
        s = queries.summary(store)
    print(f"  store: {s['runs']:,} runs, {s['results']:,} results, {s['cases']:,} cases, {s['devices']} devices, "
          f"{s['observations']:,} observations; size {s['size_bytes'] / 2**20:,.0f} MiB "
          f"({s['size_bytes'] / max(s['results'], 1):.1f} bytes per result)", flush=True)
    for name, q, p, n in query_times(url, days, gpus):
        print(f"  query {name:45s} {q * 1000:8.0f} ms  (+ page {p * 1000:5.0f} ms; {n})", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--cases", default="full", help="full|standard|smoke (the suites' cases) or tiny")
    ap.add_argument("--workers", type=int, default=max(1, min(4, (os.cpu_count() or 2))))
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument("--no-duckdb", action="store_true")
    ap.add_argument("--pg-days", type=int, default=None, help="nights for PostgreSQL (default --days)")
    ap.add_argument("--keep", type=Path, default=None, help="keep the DuckDB file here")
    args = ap.parse_args()
    cases = tiny_cases() if args.cases == "tiny" else real_cases(args.cases)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (other work on this machine slows "
          f"every wall-clock figure below); {len(cases):,} cases per run ({args.cases})")
    tmp = Path(tempfile.mkdtemp(prefix="mmacts-bench-db-"))
    try:
        if not args.no_duckdb:
            path = args.keep or tmp / "year.duckdb"
            for p in (path, Path(str(path) + ".wal")):
                p.unlink(missing_ok=True)
            bench("duckdb", str(path), cases, args.days, args.gpus, args.workers, tmp)
        if not args.no_postgres:
            from mmacts.db.pgserver import TempPostgres, unavailable_reason

            why = unavailable_reason()
            if why:
                print(f"== postgresql: skipped ({why})")
                return 0
            with TempPostgres(fsync=True) as pg:
                bench("postgresql", pg.url, cases, args.pg_days or args.days, args.gpus, args.workers, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
