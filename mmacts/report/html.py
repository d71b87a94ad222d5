"""index.html: one self-contained page a person reads first after a run."""

from __future__ import annotations

import html
import re
from typing import Any

import pandas as pd

from mmacts.report.frame import spec_tables

_STATUS_ORDER = ["pass", "flake", "fail", "error", "timeout", "skip", "xfail", "observed"]
_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f0f0f0}.pass{color:#176317}.fail,.error,.timeout{color:#a01010;font-weight:bold}
.skip,.xfail,.observed{color:#666}.banner{background:#fff4d6;border:1px solid #e0b000;padding:0.8em}
code{font-size:90%}.flake{color:#a05a00;font-weight:bold}
table.wide{width:100%}table.wide td{vertical-align:top;overflow-wrap:anywhere}
table.wide td:first-child{font-family:ui-monospace,monospace;font-size:85%;min-width:22em}
"""
_REF = re.compile(r"^(T\d+)\.(\d+)$")


def compact_refs(refs: str) -> str:
    """``T44.1 T44.2 T44.3 T44.7 T54.2`` -> ``T44.1-3,7 T54.2``: a failure row stays one line high."""
    rows: dict[str, list[int]] = {}
    other: list[str] = []
    for ref in str(refs or "").split():
        m = _REF.match(ref)
        if m:
            rows.setdefault(m.group(1), []).append(int(m.group(2)))
        else:
            other.append(ref)
    out = []
    for table in sorted(rows, key=lambda t: int(t[1:])):
        nums = sorted(set(rows[table]))
        spans, start = [], nums[0]
        for a, b in zip(nums, nums[1:] + [None], strict=True):
            if b != a + 1:
                spans.append(f"{start}-{a}" if a > start else f"{start}")
                start = b
        out.append(f"{table}.{','.join(spans)}")
    return " ".join(out + other)


def _table(df: pd.DataFrame, classes: str | None = None) -> str:
    return df.to_html(index=False, escape=True, border=0, na_rep="", classes=classes)


def _counts(df: pd.DataFrame, by: str) -> pd.DataFrame:
    if df.empty:
        return pd.DataFrame({by: []})
    ct = pd.crosstab(df[by], df["status"])
    cols = [s for s in _STATUS_ORDER if s in ct.columns] + [c for c in ct.columns if c not in _STATUS_ORDER]
    ct = ct[cols]
    ct["total"] = ct.sum(axis=1)
    ct.columns.name = None  # else to_html prints an empty 'status' column
    return ct.reset_index()


def banner(df: pd.DataFrame) -> str:
    """Say plainly which results came from hardware and which from the CPU model."""
    backends = set(df["backend"].dropna().unique()) if not df.empty else set()
    parts = []
    if "model" in backends:
        parts.append("Rows with backend <b>model</b> ran on the CPU spec model: a model pass is "
                     "<b>not</b> a hardware pass.")
    if "compile" in backends:
        parts.append("Rows with backend <b>compile</b> were assembled by ptxas only, never executed.")
    if "cuda" in backends:
        devices = ", ".join(sorted(set(df.loc[df["backend"] == "cuda", "device"].dropna())))
        parts.append(f"Rows with backend <b>cuda</b> ran on real hardware: {html.escape(devices)}.")
    return f"<p class='banner'>{' '.join(parts)}</p>" if parts else ""


def _without_first(message: Any, first: Any) -> Any:
    """The message less its ``N mismatches, first <first_mismatch>`` lead: the columns beside it say it once."""
    if pd.isna(message) or pd.isna(first) or not first:
        return message
    m = re.match(r"^\d+ mismatches, first " + re.escape(str(first)) + r"(; )?", str(message))
    return str(message)[m.end():] if m else message


def _flakes(df: pd.DataFrame) -> list[str]:
    """Cases that failed and then passed on a retry (``mmacts run --retries N``): not a pass, not a failure."""
    flaky = df[df["status"] == "flake"]
    if flaky.empty:
        return []
    view = flaky[["case_id", "backend", "attempts", "message"]].head(500)
    view = view.assign(attempts=view["attempts"].astype("Int64"))
    return [f"<h2>Flakes ({len(flaky)})</h2><p>failed, then passed on a retry</p>", _table(view, "wide")]


def _coverage_sections(df: pd.DataFrame) -> list[str]:
    """What the verdicts assume; which cited rows a mutant proves can fail (``mmacts.report.coverage``)."""
    from mmacts.report.coverage import html_sections

    return html_sections(df) if len(df) else []


def render(df: pd.DataFrame, run: dict[str, Any], extra_sections: list[str] | None = None) -> str:
    """The whole page."""
    tot = len(df)
    by_status = df["status"].value_counts().to_dict() if tot else {}
    summary = ", ".join(f"<span class='{s}'>{by_status[s]} {s}</span>" for s in _STATUS_ORDER if s in by_status)
    g = run.get("gpu", {})
    tools = run.get("toolchain", {})
    meta = pd.DataFrame(
        [
            ("command", " ".join(run.get("command", []))),
            ("start / end", f"{run.get('start')} / {run.get('end')}"),
            ("complete", str(run.get("complete"))),
            ("host", run.get("host")),
            ("GPU", f"{g.get('name') or '-'} {g.get('compute_capability') or ''} driver {g.get('kernel_driver') or '-'}"
             f" (CUDA {g.get('driver') or '-'})"
             f" runtime {g.get('cuda_runtime') or '-'}" if g.get("usable") else f"none ({g.get('reason')})"),
            ("ptxas / nvdisasm", f"{tools.get('ptxas')} / {tools.get('nvdisasm')}"),
            ("git", run.get("git_sha")),
        ],
        columns=["field", "value"],
    )
    bad = df[df["status"].isin(["fail", "error", "timeout"])]
    bad_view = bad[["case_id", "status", "backend", "spec_rows", "mismatches", "first_mismatch", "message"]].head(500)
    bad_view = bad_view.assign(spec_rows=bad_view["spec_rows"].fillna("").map(compact_refs))
    bad_view = bad_view.assign(message=[_without_first(m, f) for m, f in
                                        zip(bad_view["message"], bad_view["first_mismatch"], strict=True)])
    timing = (
        df.groupby(["suite", "backend"])[["compile_s", "run_s", "kernel_us"]]
        .agg(["count", "sum", "median"]).round(4)
        if tot else pd.DataFrame()
    )
    if not timing.empty:
        timing.columns = [" ".join(c) for c in timing.columns]
        timing = timing.reset_index()
    by_table = _counts(spec_tables(df).drop_duplicates(["case_id", "table"]), "table")
    sections = [
        f"<h1>mmacts run</h1><p>{tot} cases: {summary}</p>",
        banner(df),
        "<h2>Run</h2>", _table(meta),
        "<h2>By suite</h2>", _table(_counts(df, "suite")),
        "<h2>By spec table</h2><p>cases citing at least one row of the table</p>",
        _table(by_table) if len(by_table) else "<p>no case of this run cites a spec-table row</p>",
        "<h2>By backend</h2>", _table(_counts(df, "backend")),
        f"<h2>Failures, errors and timeouts ({len(bad)})</h2>",
        (f"<p>the first {len(bad_view)} are shown; every one is in results.csv / results.parquet</p>"
         if len(bad) > len(bad_view) else ""),
        _table(bad_view, "wide") if len(bad) else "<p>none</p>",
        *_flakes(df),
        "<h2>Timing</h2>", _table(timing) if not timing.empty else "<p>no timings</p>",
        *_coverage_sections(df),
    ]
    sections += extra_sections or []
    body = "\n".join(sections)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>mmacts run</title>"
            f"<style>{_CSS}</style></head><body>{body}</body></html>")
