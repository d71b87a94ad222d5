"""``mmacts ambiguities``: print the register as a table, CSV or JSON.

The lead wires ``mmacts ambiguities`` to :func:`main`. Errors (a malformed register,
a bad option) are one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Sequence

import pandas as pd

from mmacts.ambiguity.register import STATUSES, Register, RegisterError, entry_to_dict, load_register


class _ArgError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would exit with its own usage dump
        raise _ArgError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mmacts ambiguities", description="Print the ambiguity register.")
    p.add_argument("--status", choices=STATUSES, help="only entries with this status")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p.add_argument("--register", help="register file (default: the packaged register.yaml)")
    return p


def summary_frame(register: Register) -> pd.DataFrame:
    """One row per entry: the columns a person scans first."""
    rows = []
    for e in register.entries:
        answers = sorted({f"{o.device} [{o.case_id or o.run}]: {o.answer}" for o in e.observations})
        rows.append(
            {
                "id": e.id,
                "status": e.status,
                "area": e.area,
                "title": e.title,
                "spec": " ".join(e.spec_refs),
                "readings": " | ".join(r.id for r in e.readings),
                "decided_by": " ".join(e.decided_by),
                "observations": len(e.observations),
                "answers": "; ".join(answers),
            }
        )
    return pd.DataFrame(rows, columns=["id", "status", "area", "title", "spec", "readings", "decided_by",
                                       "observations", "answers"])


def render_table(register: Register) -> str:
    """Fixed-width text: id, status, observation count, spec refs, title (wrapped to one line)."""
    df = summary_frame(register)
    if df.empty:
        return "(no entries)\n"
    out = io.StringIO()
    idw = max(len("id"), *(len(i) for i in df["id"]))
    out.write(f"{'id':<{idw}}  {'status':<7}  obs  {'spec':<28}  title\n")
    for r in df.itertuples(index=False):
        spec = r.spec if len(r.spec) <= 28 else r.spec[:25] + "..."
        out.write(f"{r.id:<{idw}}  {r.status:<7}  {r.observations:>3}  {spec:<28}  {r.title}\n")
    counts = df["status"].value_counts()
    out.write(f"\n{len(df)} entries ({', '.join(f'{counts.get(s, 0)} {s}' for s in STATUSES)})\n")
    return out.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(list(argv) if argv is not None else None)
        register = load_register(args.register).with_status(args.status)
    except (_ArgError, RegisterError) as exc:
        print(f"mmacts ambiguities: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        sys.stdout.write(json.dumps([entry_to_dict(e) for e in register.entries], indent=1) + "\n")
    elif args.format == "csv":
        sys.stdout.write(summary_frame(register).to_csv(index=False))
    else:
        sys.stdout.write(render_table(register))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
