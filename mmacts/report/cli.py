"""``mmacts report merge|compare|history``: the fleet tools over finished run directories.

- ``merge OUT RUN...``: shards of one run (``--shard I/N`` on N hosts) -> one run directory.
- ``compare BASE NEW [--out DIR] [--slower 1.5] [--fail-on ...]``: what newly fails, is missing,
  newly passes, changed SASS or got slower, regressions first; exit 1 on regressions
  (see compare_gate.py); the whole table goes to ``compare.csv/html/json``.
- ``history RUN... [--out DIR]``: ``history.html`` over many runs (see history.py).

A directory that is not an mmacts run of this schema (merge: a completed one), or an output
that cannot be written, is refused with one line and exit code 2; nothing is overwritten.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from mmacts.cases.status import BAD  # noqa: F401 -- kept for importers
from mmacts.core.records import append_jsonl
from mmacts.report import compare_gate
from mmacts.report.history import write_history
from mmacts.report.run_dir import ReportInputError, read_meta, read_run, run_records
from mmacts.report.runinfo import now
from mmacts.report.write import write_reports

_SHARD_INDEPENDENT = ("shard", "n", "case_timeout")
"""Run options that may differ between shards of one run (everything else names what ran)."""


def _check_shards(runs: list[Path], metas: list[dict[str, Any]]) -> None:
    """Every shard of one ``--shard I/N`` run, each once: anything else would be marked complete
    while it lacks or doubles cases. One run alone is merged only when it is the one shard of
    ``0/1``: a run that is not a shard is not something to merge (README: exit 2)."""
    seen: dict[int, Path] = {}
    counts: set[int] = set()
    for r, m in zip(runs, metas, strict=True):
        spec = (m.get("options") or {}).get("shard")
        if not spec:
            raise ReportInputError(f"{r}: not a shard (run without --shard); merge joins the N shards of one run")
        i, n = (int(x) for x in str(spec).split("/"))
        counts.add(n)
        if i in seen:
            raise ReportInputError(f"shard {spec} given twice ({seen[i]} and {r})")
        seen[i] = r
    if len(counts) > 1:
        raise ReportInputError(f"the runs split the cases differently (shard counts {sorted(counts)})")
    (n,) = counts
    missing = [f"{i}/{n}" for i in range(n) if i not in seen]
    if missing:
        raise ReportInputError(f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} missing: "
                               f"merge needs all {n} shards (got {len(seen)})")


def merge(out: Path, runs: list[Path]) -> pd.DataFrame:
    """Merge shard runs into ``out`` (which must not exist yet).

    Every shard must have completed (the merged run.json says ``complete: true``, which would
    otherwise hide the cases a dead shard never ran) and must have run the same selection.
    """
    if out.exists():
        raise ReportInputError(f"{out} exists; merge writes a new run directory and overwrites nothing")
    metas = [read_meta(r) for r in runs]
    for r, m in zip(runs, metas, strict=True):
        if m.get("complete") is not True:
            raise ReportInputError(f"{r}: the run did not complete; finish it first (mmacts run --resume {r})")
    selections = {json.dumps({k: v for k, v in (m.get("options") or {}).items() if k not in _SHARD_INDEPENDENT},
                             sort_keys=True) for m in metas}
    if len(selections) > 1:
        raise ReportInputError(f"the runs are not shards of one selection (options differ: {sorted(selections)})")
    shard_records = [run_records(r) for r in runs]
    _check_shards(runs, metas)
    out.mkdir(parents=True)
    seen: set[str] = set()
    for records in shard_records:
        for rec in records:
            if rec["case_id"] in seen:
                continue
            seen.add(rec["case_id"])
            append_jsonl(out / "results.jsonl", rec)
    options = dict(metas[0].get("options") or {})
    if len(runs) > 1:
        options["shard"] = None  # the whole run again
    run = dict(metas[0], options=options, command=["mmacts", "report", "merge", str(out), *map(str, runs)],
               start=min(m.get("start") or "" for m in metas), merged_from=[str(r) for r in runs],
               shards=[m.get("options", {}).get("shard") for m in metas], end=now())
    return write_reports(out, run)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="mmacts report")
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("merge", help="merge shard runs into one run directory")
    m.add_argument("out", type=Path)
    m.add_argument("runs", nargs="+", type=Path)
    c = sub.add_parser("compare", help="what changed between two runs; exit 1 on regressions")
    compare_gate.add_arguments(c)
    h = sub.add_parser("history", help="one HTML page over many runs (oldest first)")
    h.add_argument("runs", nargs="+", type=Path)
    h.add_argument("--out", type=Path, default=Path("."), help="folder for history.html (default .)")
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code in (0, None) else 2
    try:
        if args.cmd == "merge":
            df = merge(args.out, args.runs)
            print(f"merged {len(args.runs)} runs, {len(df)} cases")
            print(args.out)
            return 0
        if args.cmd == "history":
            runs = [read_run(r) for r in args.runs]
            runs.sort(key=lambda md: str(md[0].get("start") or ""))
            print(write_history(args.out, runs))
            return 0
        return compare_gate.run(args)
    except ReportInputError as exc:
        print(f"mmacts report: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # an unwritable --out or OUT: one line, like every other bad input
        print(f"mmacts report: error: cannot write {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
