"""``mmacts db``: the results store (DuckDB file by default, PostgreSQL with ``--db postgresql://...``).

  mmacts db ingest RUN...                      load finished run directories (idempotent, one transaction each)
  mmacts db history [--since D] [--until D]    history.html: pass rate per suite / spec table / device / config
  mmacts db flaky [--since D]                  flaky.html + flaky.csv: status changes on one device+driver+ptxas
  mmacts db regressions --since D              regressions.html + .csv: first failing run and what changed
  mmacts db device HOST:DEVICE                 device-<name>.html: everything one GPU answered
  mmacts db transitions [--since D]            transitions.html + .csv: status changes between consecutive runs
  mmacts db status | migrate                   schema version, counts, size | apply migrations

``--db`` defaults to ``$MMACTS_DB``, else ``reports/mmacts.duckdb``. Bad input or an unusable
store prints one line and exits 2.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

from mmacts.db import pages, queries, schema
from mmacts.db.connect import open_store
from mmacts.db.ingest import IngestError, ingest_runs
from mmacts.db.store import StoreError, default_url, describe
from mmacts.report.atomic import write_atomic, write_text_atomic
from mmacts.report.run_dir import ReportInputError, read_meta


def _label(store_url: str) -> str:
    return describe(store_url)


def _write(out: Path | None, name: str, text: str) -> str:
    """Write a page into ``out``; without ``--out`` nothing is written where the user did not ask
    (these commands used to drop files into the current directory): say how to get the page."""
    if out is None:
        return f"(no page written: add --out DIR for {name} and its CSV)"

    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / name, text)
    return str(out / name)


def _csv(out: Path | None, name: str, df: pd.DataFrame) -> None:
    if out is None:
        return

    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / name, lambda f: df.to_csv(f, index=False))


def cmd_ingest(args: argparse.Namespace) -> int:
    # What is plainly not ingestible (not a run directory, a run that did not complete) is refused
    # before the store is opened: ingesting nothing must not leave an empty store file behind (a
    # later ``history`` would read an empty store). A store is never removed afterwards: another
    # host may be ingesting into it.
    runs = []
    bad = 0
    for d in args.runs:
        try:
            meta = read_meta(Path(d))
            if meta.get("complete") is not True and not args.allow_incomplete:
                raise ReportInputError(f"{d}: the run did not complete; finish it first "
                                       f"(mmacts run --resume {d}) or pass --allow-incomplete")
            runs.append(d)
        except ReportInputError as exc:
            print(f"mmacts db: error: {exc}", file=sys.stderr)
            bad += 1
    if not runs:
        return 2
    with open_store(args.db) as store:
        for got in ingest_runs(store, runs, allow_incomplete=args.allow_incomplete):
            if isinstance(got, IngestError):
                print(f"mmacts db: error: {got}", file=sys.stderr)
                bad += 1
                continue
            what = f"added {got.cases} cases" if got.added else "skipped"
            print(f"{what}: {got.source}" + (f" ({got.note})" if got.note else ""))
    return 2 if bad else 0


def cmd_history(args: argparse.Namespace) -> int:
    with open_store(args.db, read_only=True) as store:
        h = queries.history(store, queries.parse_date(args.since), queries.parse_date(args.until), args.bucket,
                            args.device)
    s = h["suite"]
    if s.empty:
        print("no runs in this window")
    else:
        last = s[s["bucket"] == s["bucket"].max()]
        print(f"latest {h['bucket']['bucket'].iloc[0]} ({pd.Timestamp(last['bucket'].iloc[0]).date()}):")
        for r in last.itertuples():
            rate = "-" if pd.isna(r.rate) else f"{100 * r.rate:.2f}%"
            print(f"  {r.suite:22s} pass rate {rate:>8s}  ({int(r.n_bad)} bad of {int(r.n_cases)})")
    print(_write(args.out, "history.html", pages.history_page(h, _label(args.db))))
    return 0


def cmd_flaky(args: argparse.Namespace) -> int:
    since = queries.parse_date(args.since)
    with open_store(args.db, read_only=True) as store:
        df = queries.flaky(store, since, args.min_changes, args.device)
    print(f"{len(df)} flake candidates (status changed >= {args.min_changes} times on one device+driver+ptxas)")
    if len(df):
        with pd.option_context("display.width", 200, "display.max_colwidth", 70):
            print(df[["case_id", "device", "runs", "n_bad", "changes", "last_status"]].head(30).to_string(index=False))
    _csv(args.out, "flaky.csv", df)
    print(_write(args.out, "flaky.html", pages.flaky_page(df, _label(args.db), args.min_changes, args.since)))
    return 0


def cmd_regressions(args: argparse.Namespace) -> int:
    since = queries.parse_date(args.since)
    with open_store(args.db, read_only=True) as store:
        df = queries.regressions(store, since, args.device)
    still = int(df["still_failing"].sum()) if len(df) else 0
    print(f"{len(df)} cases started failing since {args.since} ({still} still failing)")
    if len(df):
        with pd.option_context("display.width", 220, "display.max_colwidth", 70):
            print(df[["case_id", "device", "first_failing", "what_changed"]].head(30).to_string(index=False))
    _csv(args.out, "regressions.csv", df)
    print(_write(args.out, "regressions.html", pages.regressions_page(df, _label(args.db), args.since)))
    return 0


def cmd_transitions(args: argparse.Namespace) -> int:
    with open_store(args.db, read_only=True) as store:
        df = queries.transitions(store, queries.parse_date(args.since), queries.parse_date(args.until), args.device)
    print(f"{len(df)} kinds of status transition between consecutive runs of a case on a device")
    if len(df):
        with pd.option_context("display.width", 200, "display.max_colwidth", 60):
            print(df.to_string(index=False))
    _csv(args.out, "transitions.csv", df)
    print(_write(args.out, "transitions.html", pages.transitions_page(df, _label(args.db), args.since)))
    return 0


def cmd_device(args: argparse.Namespace) -> int:
    with open_store(args.db, read_only=True) as store:
        d = queries.device(store, args.device)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", d["label"]).strip("_")
    runs = d["runs"]
    print(f"{d['label']}: {len(runs)} runs, {len(d['register'])} register answers, "
          f"{len(d['probes'])} probe answers, {len(d['bad'])} cases that ever failed")
    for name in ("runs", "probes", "bad"):
        _csv(args.out, f"device-{slug}-{name}.csv", d[name])
    print(_write(args.out, f"device-{slug}.html", pages.device_page(d, _label(args.db))))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    with open_store(args.db, read_only=True) as store:
        for k, v in queries.summary(store).items():
            print(f"{k}: {v}")
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    with open_store(args.db, migrate=False) as store:
        applied = schema.migrate(store)
        print(f"schema version {schema.version(store)}" + (f" (applied {applied})" if applied else " (up to date)"))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mmacts db", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)

    def add(name: str, func, help: str, out: bool = True) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help)
        sp.add_argument("--db", default=None, help="store URL or DuckDB file (default $MMACTS_DB, else "
                        "reports/mmacts.duckdb)")
        if out:
            sp.add_argument("--out", type=Path, default=None,
                            help="folder for the page and CSV (default: none written, the summary is printed)")
        sp.set_defaults(func=func)
        return sp

    i = add("ingest", cmd_ingest, "load run directories into the store", out=False)
    i.add_argument("runs", nargs="+")
    i.add_argument("--allow-incomplete", action="store_true", help="also ingest a run whose run.json is not complete")
    h = add("history", cmd_history, "pass rates and kernel times over time")
    h.add_argument("--since")
    h.add_argument("--until")
    h.add_argument("--bucket", default="auto", choices=("auto", "day", "week", "month"))
    h.add_argument("--device", help="only devices whose host:device label contains this")
    f = add("flaky", cmd_flaky, "cases whose status changes across runs of one device+driver+ptxas")
    f.add_argument("--since")
    f.add_argument("--min-changes", type=int, default=2, help="status changes that make a candidate (default 2)")
    f.add_argument("--device")
    r = add("regressions", cmd_regressions, "first run where each case started failing, and what changed")
    r.add_argument("--since", required=True, help="YYYY-MM-DD")
    r.add_argument("--device")
    t = add("transitions", cmd_transitions, "status changes between consecutive runs (fail -> pass, ...)")
    t.add_argument("--since")
    t.add_argument("--until")
    t.add_argument("--device")
    d = add("device", cmd_device, "everything one GPU answered")
    d.add_argument("device", help="host:device label (or a unique part of it)")
    add("status", cmd_status, "schema version, counts and size", out=False)
    add("migrate", cmd_migrate, "apply the schema migrations the store lacks", out=False)
    return p


def main(argv: list[str]) -> int:
    p = build_parser()
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code in (0, None) else 2
    args.db = args.db or default_url()
    try:
        return int(args.func(args))
    except StoreError as exc:
        print(f"mmacts db: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"mmacts db: error: cannot write {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # the database said no (a driver error): one line, not a traceback
        if type(exc).__module__.split(".")[0] not in ("duckdb", "_duckdb", "psycopg"):
            raise
        print(f"mmacts db: error: {str(exc).strip().splitlines()[0]}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
