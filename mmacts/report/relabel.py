"""Relabel finished run directories by the observation rule, and check that their files agree.

An observe-mode case (``compare_mode`` ``observe`` or ``observe:...``) records what the hardware
did where the spec leaves it open: it is never a verdict, so it ends ``observed`` -- never
``pass`` (nor ``fail``), even when it agrees with the hypothesis it was compared with. Runs made
before that rule (commit 333f1a1) recorded such cases as ``pass``.

``python -m mmacts.report.relabel DIR...`` rewrites every report file of each run directory from
the corrected records: ``results.jsonl`` (changed lines only), then ``results.parquet``,
``results.csv``, ``junit.xml`` and ``index.html`` with the project's own writers, and
``run.json`` (its ``counts`` and a ``relabelled`` entry; start, end and everything else kept).
Each relabelled row keeps its measurement and says in its message that it was relabelled and
why. A directory with nothing to relabel is left untouched unless its files disagree, in which
case they are regenerated from results.jsonl (or, where a published run ships without it,
results.parquet). ``--check`` only reports. Exit code: 0 done (or, with --check, nothing to
do), 1 with --check when something would change, 2 for a directory that is not a run.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from mmacts.core.records import latest_by_case, read_jsonl
from mmacts.report import html as html_report
from mmacts.report.atomic import write_atomic, write_text_atomic
from mmacts.report.frame import to_frame
from mmacts.report.run_dir import ReportInputError, read_meta, run_records
from mmacts.report.runinfo import now
from mmacts.report.write import _extra_sections, junit_xml

VERDICTS = ("pass", "fail")
"""Statuses an observation must never carry."""

RULE = ("an observe-mode case is an observation, never a pass/fail verdict "
        "(the rule of commit 333f1a1, which this run predates)")


def is_observation(compare_mode: Any) -> bool:
    """``observe`` or ``observe:<model>``: the expected value is a hypothesis, not the spec."""
    return isinstance(compare_mode, str) and compare_mode.startswith("observe")


def violations(df: pd.DataFrame) -> list[str]:
    """Case IDs of rows that break the observation rule (an observe mode with a verdict)."""
    mode = df["compare_mode"].astype("string").fillna("")
    bad = mode.str.startswith("observe") & df["status"].isin(VERDICTS)
    return sorted(df.loc[bad, "case_id"].astype(str))


def _number(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def relabel_record(rec: dict[str, Any]) -> dict[str, Any] | None:
    """The corrected record, or None when ``rec`` obeys the rule."""
    old = rec.get("status")
    if not is_observation(rec.get("compare_mode")) or old not in VERDICTS:
        return None
    msg = str(rec.get("message") or "")
    parts = [msg] if msg else []
    mismatches = _number(rec.get("mismatches"))
    if "agrees with the hypothesis" not in msg and "differ from the hypothesis" not in msg:
        if mismatches == 0:
            parts.append("agrees with the hypothesis")
        elif mismatches is not None:
            parts.append(f"{int(mismatches)} elements differ from the hypothesis, first {rec.get('first_mismatch')}")
    parts.append(f"relabelled from '{old}' to 'observed' by mmacts.report.relabel: {RULE}")
    return dict(rec, status="observed", message="; ".join(parts))


# ------------------------------------------------------------------------------------------ agreement
_SUMMARY = re.compile(r"<h1>mmacts run</h1><p>(\d+) cases: (.*?)</p>")
_SPAN = re.compile(r"<span class='[^']*'>(\d+) ([a-z-]+)</span>")
_JUNIT_KIND = {"fail": "failure", "error": "error", "crash": "error", "timeout": "error", "skip": "skipped",
               "not-supported": "skipped", "xfail": "skipped"}


def _frame_problems(name: str, got: pd.DataFrame, want: pd.DataFrame) -> list[str]:
    """Where ``got`` (read back from ``name``) differs from the results table ``want``."""
    if list(got.columns) != list(want.columns):
        return [f"{name}: columns differ from results.parquet"]
    if len(got) != len(want) or list(got["case_id"].astype(str)) != list(want["case_id"].astype(str)):
        return [f"{name}: cases differ from results.parquet"]
    out = []
    for col in want.columns:
        a, b = got[col], want[col]
        if pd.api.types.is_numeric_dtype(b):
            an, bn = pd.to_numeric(a, errors="coerce"), pd.to_numeric(b, errors="coerce")
            same = (an.isna() & bn.isna()) | ((an - bn).abs() <= 1e-9 * bn.abs().clip(lower=1))
        else:
            same = a.astype("string").fillna("") == b.astype("string").fillna("")
        same = pd.Series(same).fillna(False).to_numpy(dtype=bool)  # nullable booleans on older pandas
        if not same.all():
            first = want.loc[~same, "case_id"].iloc[0]
            out.append(f"{name}: column {col} differs from results.parquet (first at {first})")
    return out


def disagreements(run_dir: Path) -> list[str]:
    """What the report files of ``run_dir`` say differently from its results.parquet (empty: they agree)."""
    run_dir = Path(run_dir)
    want = pd.read_parquet(run_dir / "results.parquet")
    problems: list[str] = []
    if (run_dir / "results.jsonl").is_file():
        got = to_frame(latest_by_case(read_jsonl(run_dir / "results.jsonl")))
        newer = [c for c in got.columns if c not in want.columns]  # columns added to the writers since
        problems += [f"results.jsonl: column {c} has values results.parquet lacks" for c in newer
                     if got[c].notna().any()]
        problems += _frame_problems("results.jsonl", got.drop(columns=newer), want)
    if (run_dir / "results.csv").is_file():
        csv = pd.read_csv(run_dir / "results.csv", dtype=str, keep_default_na=False)
        problems += _frame_problems("results.csv", csv, want)
    status = dict(zip(want["case_id"].astype(str), want["status"].astype(str), strict=True))
    counts = Counter(status.values())
    if (run_dir / "junit.xml").is_file():
        root = ET.parse(run_dir / "junit.xml").getroot()
        seen = {}
        for tc in root.iter("testcase"):
            kinds = [c.tag for c in tc if c.tag in ("failure", "error", "skipped")]
            seen[tc.get("name")] = kinds[0] if kinds else None
        if seen.keys() != status.keys():
            problems.append("junit.xml: testcases differ from results.parquet")
        else:
            wrong = sorted(c for c, s in status.items() if _JUNIT_KIND.get(s) != seen[c])
            if wrong:
                problems.append(f"junit.xml: {len(wrong)} testcases disagree with their status (first {wrong[0]})")
    meta = json.loads((run_dir / "run.json").read_text())
    if meta.get("counts") is not None and meta["counts"] != dict(counts):
        problems.append(f"run.json: counts {meta['counts']} but results.parquet has {dict(counts)}")
    if (run_dir / "index.html").is_file():
        m = _SUMMARY.search((run_dir / "index.html").read_text(encoding="utf-8"))
        shown = {s: int(n) for n, s in _SPAN.findall(m.group(2))} if m else None
        if m is None or int(m.group(1)) != len(want) or shown != dict(counts):
            problems.append(f"index.html: summary {shown} but results.parquet has {dict(counts)}")
    return problems


# ------------------------------------------------------------------------------------------ rewrite
def _records(run_dir: Path) -> tuple[list[dict[str, Any]], list[str] | None, Counter]:
    """The last record per case (relabelled), the rewritten jsonl lines (None: no jsonl), and the
    old statuses of the relabelled lines."""
    jsonl = run_dir / "results.jsonl"
    old_status: Counter = Counter()
    if jsonl.is_file():
        lines, records = [], []
        for line in jsonl.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                lines.append(line)  # a torn line stays what it was (readers skip it)
                continue
            new = relabel_record(rec)
            if new is not None:
                old_status[rec["status"]] += 1
            lines.append(line if new is None else json.dumps(new, sort_keys=True, default=str))
            records.append(rec if new is None else new)
        return latest_by_case(records), lines, old_status

    out = []
    for rec in run_records(run_dir):  # a published run without its jsonl: the parquet is the record
        new = relabel_record(rec)
        if new is not None:
            old_status[rec["status"]] += 1
        out.append(new or rec)
    return out, None, old_status


def relabel_run(run_dir: Path, check: bool = False) -> tuple[int, list[str]]:
    """Relabel one run directory; return (rows relabelled, disagreements found before)."""
    run_dir = Path(run_dir)
    meta = read_meta(run_dir)
    records, lines, old_status = _records(run_dir)
    changed = sum(old_status.values())
    before = disagreements(run_dir)
    if check or (changed == 0 and not before):
        return changed, before
    if lines is not None and changed:
        write_text_atomic(run_dir / "results.jsonl", "\n".join(lines) + "\n")
    df = to_frame(records)
    if (run_dir / "results.parquet").is_file():  # keep the run's own columns: relabelling changes only statuses
        own = list(pd.read_parquet(run_dir / "results.parquet").columns)
        df = df[[c for c in own if c in df.columns] + [c for c in df.columns if c not in own and df[c].notna().any()]]
    write_atomic(run_dir / "results.parquet", lambda p: df.to_parquet(p, index=False))
    write_atomic(run_dir / "results.csv", lambda p: df.to_csv(p, index=False))
    write_text_atomic(run_dir / "junit.xml", junit_xml(df))
    run = dict(meta, counts=df["status"].value_counts().to_dict())
    if changed:
        run["relabelled"] = [*meta.get("relabelled", []), {
            "at": now(), "by": "mmacts.report.relabel", "rows": changed, "from": dict(old_status),
            "to": "observed", "why": RULE}]
    write_text_atomic(run_dir / "index.html", html_report.render(df, run, _extra_sections(df)))
    write_text_atomic(run_dir / "run.json", json.dumps(run, indent=2, default=str))
    return changed, before


def run_dirs(paths: list[Path]) -> list[Path]:
    """Each path that is a run directory (has run.json), else the run directories below it."""
    out: list[Path] = []
    for p in map(Path, paths):
        out += [p] if (p / "run.json").is_file() else sorted(q.parent for q in p.rglob("run.json")) or [p]
    return out


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m mmacts.report.relabel", description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path, help="run directories (with run.json), or folders holding them")
    p.add_argument("--check", action="store_true", help="report what would change; write nothing")
    args = p.parse_args(argv)

    todo = False
    for run_dir in run_dirs(args.runs):
        try:
            changed, before = relabel_run(run_dir, check=args.check)
        except ReportInputError as exc:
            print(f"relabel: error: {exc}", file=sys.stderr)
            return 2
        verb = "would relabel" if args.check else "relabelled"
        extra = f"; files disagreed: {'; '.join(before)}" if before else ""
        print(f"{run_dir}: {verb} {changed} observe-mode rows as observed{extra}")
        todo = todo or bool(changed or before)
    return 1 if args.check and todo else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
