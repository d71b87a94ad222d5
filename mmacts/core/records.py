"""One record per finished case: the columns every report is built from.

Records are plain JSON dicts so that a worker process can hand them to the
controller and the controller can append them to ``results.jsonl`` the moment a
case ends: a run that dies keeps every case it finished.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

COLUMNS: tuple[str, ...] = (
    "case_id",
    "suite",
    "instruction",
    "spec_rows",
    "assumes",
    "arch",
    "backend",
    "executor",
    "device",
    "status",
    "attempts",
    "compare_mode",
    "mismatches",
    "max_abs_err",
    "max_ulp_err",
    "first_mismatch",
    "compile_s",
    "run_s",
    "kernel_us",
    "sass_opcodes",
    "ptxas_version",
    "expect",
    "level",
    "observation",
    "message",
)
"""Report columns, in the order the CSV and the HTML show them."""

RECORD_KEY = "mmacts_record"
"""Name under which a test hands its record to the plugin (pytest user_properties)."""


def empty_record(**fields: Any) -> dict[str, Any]:
    """A record with every column present (``None`` where nothing was measured)."""
    rec: dict[str, Any] = {c: None for c in COLUMNS}
    unknown = set(fields) - set(COLUMNS)
    if unknown:
        raise KeyError(f"unknown record columns: {sorted(unknown)}")
    rec.update(fields)
    return rec


def repair_tail(path: Path | str) -> str | None:
    """Make ``path`` end at a line boundary before anything is appended to it.

    A kill while a record is being written leaves its line cut (no newline). Appending the next
    record onto that fragment would glue the two into one line that is not JSON: the case being
    written is lost *and* the next one with it, and every strict reader refuses the file after.
    So a writer calls this first: a fragment that is a whole record (the kill came between the
    record and its newline) gets its newline; any other fragment is cut off (its case has no
    record, so a resume runs it again). Returns what was done (``None``: the file was fine), for
    the run's messages. Only the bytes after the last newline are ever touched.
    """
    path = Path(path)
    try:
        fh = open(path, "r+b")  # noqa: SIM115 -- closed below
    except FileNotFoundError:
        return None
    with fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return None
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return None
        # find the start of the last line, reading backwards in blocks
        pos, start = size, 0
        while pos > 0:
            step = min(65536, pos)
            pos -= step
            fh.seek(pos)
            nl = fh.read(step).rfind(b"\n")
            if nl >= 0:
                start = pos + nl + 1
                break
        fh.seek(start)
        tail = fh.read()
        try:
            rec = json.loads(tail)
        except (json.JSONDecodeError, UnicodeDecodeError):
            rec = None
        if isinstance(rec, dict) and isinstance(rec.get("case_id"), str) and "status" in rec:
            fh.seek(size)
            fh.write(b"\n")
            what = f"completed the last record of {path.name} (its newline was cut off)"
        else:
            fh.truncate(start)
            what = f"removed a cut-off last record of {path.name} ({size - start} bytes)"
        fh.flush()
        os.fsync(fh.fileno())
    return what


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one record as one line and flush it to disk before returning (after
    :func:`repair_tail`: a line cut by a kill is never glued to this one)."""
    line = json.dumps(record, sort_keys=True, default=str) + "\n"
    repair_tail(path)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Read records back; a torn last line (the run was killed mid-write) is ignored."""
    if not path.exists():
        return
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue


class RecordsError(ValueError):
    """A results.jsonl that is not (all) mmacts records: one line naming the file and line."""


def read_records(path: Path, *, allow_torn_tail: bool = False) -> list[dict[str, Any]]:
    """Every record of ``path``, checked: each line a JSON object with a string ``case_id`` and a
    ``status`` key, else RecordsError naming the line. A last line cut mid-write (no newline, not
    JSON) is what a killed run leaves: ``allow_torn_tail`` (``--resume``) ignores it; the report
    tools refuse it, since a report over it would silently miss that case."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RecordsError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    lines = raw.split(b"\n")
    out: list[dict[str, Any]] = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        last = no == len(lines)  # no newline after it
        try:
            rec = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            if last and allow_torn_tail:
                continue
            what = ("its last line is cut off (the run was killed mid-write?)" if last
                    else f"line {no} is not JSON")
            raise RecordsError(f"{path}: {what}; not a complete mmacts results file") from None
        if not (isinstance(rec, dict) and isinstance(rec.get("case_id"), str) and "status" in rec):
            raise RecordsError(f"{path}: line {no} is not an mmacts record (needs case_id and status): "
                               f"{line[:60].decode('utf-8', 'replace')!r}")
        out.append(rec)
    return out


def latest_by_case(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the last record of each case (a resumed run may have re-run some)."""
    by_id: dict[str, dict[str, Any]] = {}
    for rec in records:
        by_id[rec["case_id"]] = rec
    return list(by_id.values())
