"""Reading a finished run directory (``run.json`` and its results) for the report tools, the store and the runner.

Why a module of its own: ``mmacts report compare`` (compare_gate.py) reads runs, and the report CLI dispatches
to it; with the readers in the CLI the two modules imported each other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from mmacts.core.records import RecordsError, latest_by_case, read_records
from mmacts.report.frame import to_frame
from mmacts.report.runinfo import SCHEMA


class ReportInputError(Exception):
    """A run directory that cannot be used: exit 2 with this message."""


def read_meta(run_dir: Path) -> dict[str, Any]:
    """run.json of an mmacts run of this schema, or ReportInputError saying what is wrong."""
    meta_path = Path(run_dir) / "run.json"
    if not meta_path.is_file():
        raise ReportInputError(f"{run_dir}: not an mmacts run directory (no run.json)")
    try:
        meta = json.loads(meta_path.read_text())
    except json.JSONDecodeError as exc:
        raise ReportInputError(f"{meta_path}: not valid JSON ({exc.msg})") from exc
    if meta.get("schema") != SCHEMA:
        raise ReportInputError(f"{meta_path}: schema {meta.get('schema')!r}, this mmacts reads {SCHEMA!r}")
    return meta


def run_records(run_dir: Path) -> list[dict[str, Any]]:
    """The last record per case of a run: from results.jsonl, else from results.parquet (a
    published report may ship without the jsonl); missing values are None, as in the jsonl."""
    run_dir = Path(run_dir)
    if (run_dir / "results.jsonl").is_file():
        try:
            records = latest_by_case(read_records(run_dir / "results.jsonl"))
        except RecordsError as exc:
            raise ReportInputError(str(exc)) from exc
        _check_not_truncated(run_dir, records)
        return records
    if (run_dir / "results.parquet").is_file():
        try:
            df = pd.read_parquet(run_dir / "results.parquet")
        except Exception as exc:
            raise ReportInputError(f"{run_dir}/results.parquet unreadable ({type(exc).__name__})") from exc
        return df.astype(object).where(df.notna(), None).to_dict("records")
    raise ReportInputError(f"{run_dir}: no results.jsonl or results.parquet")


def _check_not_truncated(run_dir: Path, records: list[dict[str, Any]]) -> None:
    """A completed run's run.json counts its cases: a results.jsonl with fewer was cut short."""
    try:
        meta = json.loads((run_dir / "run.json").read_text())
    except (OSError, json.JSONDecodeError):
        return
    counts = meta.get("counts") if meta.get("complete") is True else None
    if isinstance(counts, dict):
        want = sum(v for v in counts.values() if isinstance(v, int))
        if len(records) < want:
            raise ReportInputError(f"{run_dir}/results.jsonl holds {len(records)} cases but run.json counts {want}: "
                                   "the file is truncated")


def read_run(run_dir: Path) -> tuple[dict[str, Any], pd.DataFrame]:
    """run.json and results of a run, or ReportInputError saying what is wrong."""
    return read_meta(run_dir), to_frame(run_records(run_dir))
