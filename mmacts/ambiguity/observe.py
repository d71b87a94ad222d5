"""Fill the register's observations from run results — the only way they are written.

A run's results table has one row per case. Rows whose ``case_id`` matches an entry's
``decided_by`` become observations of that entry, tagged with the device, driver and
ptxas that produced them. Probe cases carry their answer in the ``observation`` column
(a JSON object with at least ``answer``); other cases answer with their status (a pass
of a case written for one reading supports that reading). Model-backend rows are left
out by default: the model is our hypothesis, not evidence about a GPU.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from mmacts.ambiguity.register import (
    REGISTER_PATH,
    Entry,
    Observation,
    Register,
    RegisterError,
    load_register,
    save_register,
)
from mmacts.cases.status import NOT_RUN

REQUIRED_COLUMNS = ("case_id", "suite", "status", "device", "message")
_SKIPPED_STATUSES = NOT_RUN  # a case whose kernel did not run answers nothing


def pattern_matches(pattern: str, case_id: str) -> bool:
    """True when a ``decided_by`` item names ``case_id``.

    ``probes.neab`` names the probe and every case of it (``probes.neab.<path>``); any
    other item is a glob over case ids.
    """
    if case_id == pattern or case_id.startswith(pattern + "."):
        return True
    return fnmatch.fnmatchcase(case_id, pattern)


@functools.cache
def decided_by_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One compiled regex that matches a case id exactly when ``pattern_matches`` holds
    for one of ``patterns``.

    Why: a report matches every register entry against every row of a run; calling
    ``pattern_matches`` per (entry, row, pattern) was tens of thousands of calls for a
    hundred cases, a large part of writing a run's reports. An empty tuple matches nothing.
    """
    if not patterns:
        return re.compile(r"(?!)")
    alternatives = []
    for pattern in patterns:
        alternatives.append(re.escape(pattern) + r"(?:\..*)?\Z")  # the id itself or one of its cases
        alternatives.append(fnmatch.translate(pattern))  # the glob (translate anchors with \Z)
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.DOTALL)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value != value:  # NaN from pandas
        return ""
    return str(value)


def _answer(row: Mapping[str, Any]) -> tuple[str, str]:
    """(answer, reading) for one result row."""
    raw = _text(row.get("observation"))
    if raw:
        try:
            obs = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise RegisterError(f"case {row.get('case_id')}: observation is not JSON ({exc.msg})") from None
        if not isinstance(obs, dict) or "answer" not in obs:
            raise RegisterError(f"case {row.get('case_id')}: observation JSON has no 'answer'")
        return str(obs["answer"]), _text(obs.get("reading") or obs.get("supports"))
    status = _text(row.get("status"))
    message = _text(row.get("message"))
    return (f"{status}: {message}" if message else status), ""


def record_observations(
    register: Register,
    results_df: pd.DataFrame,
    run_meta: Mapping[str, Any] | None = None,
    *,
    include_model: bool = False,
) -> Register:
    """Return ``register`` with the answers of ``results_df`` appended to the matching entries.

    ``run_meta`` (a run.json mapping) supplies ``driver``, ``run``/``run_dir`` and ``date``
    when the table lacks those columns. Recording the same run twice adds nothing.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in results_df.columns]
    if missing:
        raise RegisterError(f"results table lacks column(s) {', '.join(missing)}")
    meta = dict(run_meta or {})
    gpu = meta.get("gpu") if isinstance(meta.get("gpu"), Mapping) else {}
    if gpu and "driver" not in meta:  # an mmacts run.json: kernel driver (CUDA API version)
        kd, api = gpu.get("kernel_driver"), gpu.get("driver")
        meta["driver"] = f"{kd} (CUDA {api})" if kd else api
    if "run" not in meta and meta.get("start"):
        meta["run"] = f"{meta.get('git_sha', '?')[:12]}@{meta['start']}"
    default_driver = _text(meta.get("driver") or meta.get("driver_version")) or "unknown"
    default_run = _text(meta.get("run") or meta.get("run_dir") or meta.get("run_id")) or "unknown"
    default_date = _text(meta.get("date") or meta.get("start") or meta.get("started")) or _dt.date.today().isoformat()
    default_ptxas = _text(meta.get("ptxas") or meta.get("ptxas_version")) or "unknown"
    rows = results_df.to_dict("records")
    if not include_model and "backend" in results_df.columns:
        rows = [r for r in rows if _text(r.get("backend")) != "model"]
    rows = [r for r in rows if _text(r.get("status")) not in _SKIPPED_STATUSES]

    new_entries: list[Entry] = []
    for entry in register.entries:
        have = {o.key() for o in entry.observations}
        grouped: dict[tuple[str, ...], Observation] = {}
        names = decided_by_regex(tuple(entry.decided_by))
        for row in sorted(rows, key=lambda r: _text(r["case_id"])):
            case_id = _text(row["case_id"])
            if names.match(case_id):
                answer, reading = _answer(row)
            elif _text(row.get("status")) == "fail" and entry.id in _text(row.get("assumes")).split():
                # a verdict that rests on this open reading failed: evidence about the reading, not a defect
                answer, reading = f"assumed reading contradicted: {_text(row.get('message'))[:200]}", ""
            else:
                continue
            obs = Observation(
                device=_text(row.get("device")) or "unknown",
                driver=_text(row.get("driver")) or default_driver,
                ptxas=_text(row.get("ptxas_version")) or _text(row.get("ptxas")) or default_ptxas,
                answer=answer,
                run=_text(row.get("run")) or default_run,
                date=(_text(row.get("date")) or default_date)[:10],
                case_id=case_id,
                backend=_text(row.get("backend")),
                reading=reading,
            )
            if obs.key() in have:  # this run was recorded already
                continue
            first = grouped.get(obs.key())
            grouped[obs.key()] = obs if first is None else replace(first, cases=first.cases + 1)
        added = tuple(grouped.values())
        new_entries.append(replace(entry, observations=entry.observations + added) if added else entry)
    return replace(register, entries=tuple(new_entries))


def compact(register: Register) -> Register:
    """Merge observations that share device, driver, ptxas, run and answer (older per-case lines)."""
    entries = []
    for entry in register.entries:
        merged: dict[tuple[str, ...], Observation] = {}
        for o in entry.observations:
            first = merged.get(o.key())
            merged[o.key()] = o if first is None else replace(first, cases=first.cases + o.cases)
        entries.append(replace(entry, observations=tuple(merged.values())))
    return replace(register, entries=tuple(entries))


def observations_frame(register: Register) -> pd.DataFrame:
    """One row per recorded observation (entry id first), for reports and comparisons."""
    records = [
        {"id": e.id, "status": e.status, **{k: getattr(o, k) for k in Observation.__dataclass_fields__}}
        for e in register.entries
        for o in e.observations
    ]
    columns = ["id", "status", *Observation.__dataclass_fields__]
    return pd.DataFrame.from_records(records, columns=columns)


def read_results(path: str | Path) -> pd.DataFrame:
    """A run's results table from ``results.parquet``, ``.csv`` or ``.jsonl``."""
    p = Path(path)
    if p.suffix == ".parquet":
        return pd.read_parquet(p)
    if p.suffix == ".csv":
        return pd.read_csv(p)
    if p.suffix == ".jsonl":
        return pd.read_json(p, lines=True, dtype=False)
    raise RegisterError(f"{p}: expected a .parquet, .csv or .jsonl results file")


def record_run(results: str | Path, register_path: str | Path | None = None,
               run_meta: Mapping[str, Any] | None = None, *, include_model: bool = False) -> Register:
    """Record one run's answers into the register file (atomically) and return the new register."""
    target = Path(register_path) if register_path is not None else REGISTER_PATH
    reg = record_observations(compact(load_register(target)), read_results(results), run_meta,
                              include_model=include_model)
    save_register(reg, target)
    return reg


def main(argv: list[str] | None = None) -> int:
    """``python -m mmacts.ambiguity.observe RESULTS [--register FILE] [--meta run.json]``."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m mmacts.ambiguity.observe")
    ap.add_argument("results")
    ap.add_argument("--register")
    ap.add_argument("--meta", help="run.json of the run (driver, run id, date)")
    ap.add_argument("--include-model", action="store_true")
    args = ap.parse_args(argv)
    try:
        meta = json.loads(Path(args.meta).read_text()) if args.meta else None
        reg = record_run(args.results, args.register, meta, include_model=args.include_model)
    except (OSError, RegisterError, ValueError) as exc:
        print(f"record observations: {exc}", file=sys.stderr)
        return 2
    print(f"{sum(len(e.observations) for e in reg.entries)} observations in {len(reg)} entries")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
