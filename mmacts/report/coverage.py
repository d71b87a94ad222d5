"""Two questions a verdict must answer, for ``mmacts list`` and index.html.

* Could it have failed? Per spec row: the cases citing it, and whether a planted mutant of that row's
  reading made one of them fail (``mmacts/mutants/coverage.json``, written by a mutation run; nothing
  here re-runs mutants). Rows cited but never proved are listed as covered by citation only.
* What does it assume? Verdicts that rest on the spec text alone vs on an open reading of the
  ambiguity register (the record column ``assumes``).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from mmacts.report import mutant_features as MF
from mmacts.report import mutant_scores as scores


def row_coverage(cited: Mapping[str, int], coverage: Mapping[str, Any] | None) -> pd.DataFrame:
    """One line per cited spec row: cases citing it, mutants of its reading, proved (a citing case failed
    under one of them)."""
    rows = (coverage or {}).get("rows", {})
    killed = {m.get("name"): bool(m.get("killed")) for m in (coverage or {}).get("mutants", [])}
    out = []
    for ref in sorted(cited, key=_ref_key):
        e = rows.get(ref, {})
        out.append({"row": ref, "cases": int(cited[ref]), "mutants": len(e.get("mutants", [])),
                    "killing mutants": len(e.get("killing_mutants", [])),
                    "can fail": "yes" if e.get("covered") else _why_not(e, killed),
                    "failing case (example)": (e.get("failing_cases") or [""])[0]})
    return pd.DataFrame(out, columns=["row", "cases", "mutants", "killing mutants", "can fail",
                                      "failing case (example)"])


def _why_not(entry: Mapping[str, Any], killed: Mapping[str, bool]) -> str:
    """Why a cited row is not proved: a mutant of its reading survived every case, or every one was
    caught only by cases that do not cite the row (the run's score counts those as killed: saying
    "survived" there contradicted it), or no mutant of it exists."""
    mutants = entry.get("mutants") or []
    if not mutants:
        return "citation only"
    survivors = [m for m in mutants if not killed.get(m, False)]
    if survivors:
        return f"no: mutant survived ({survivors[0]})"
    return "no: its mutants were caught by cases not citing it"


def _ref_key(ref: str) -> tuple:
    head, _, rest = ref.partition(".")
    nums = tuple(int(x) if x.isdigit() else 0 for x in rest.split("."))
    return (head[0], int(head[1:]) if head[1:].isdigit() else 0, nums)


def coverage_summary(table: pd.DataFrame) -> str:
    if table.empty:
        return "no spec row cited"
    proved = int((table["can fail"] == "yes").sum())
    return (f"{len(table)} spec rows cited; {proved} covered by a failing mutant, "
            f"{len(table) - proved} by citation only")


def cited_in(df: pd.DataFrame) -> dict[str, int]:
    out: dict[str, int] = {}
    for refs in df["spec_rows"].fillna(""):
        for r in str(refs).split():
            out[r] = out.get(r, 0) + 1
    return out


def assumes_split(df: pd.DataFrame) -> pd.DataFrame:
    """Counts per status of verdicts resting on the spec text alone vs on an assumed (open) reading."""
    if df.empty or "assumes" not in df.columns:
        return pd.DataFrame()
    basis = df["assumes"].fillna("").astype(str).str.strip().map(
        lambda a: "assumed reading" if a else "spec text alone")
    ct = pd.crosstab(basis, df["status"])
    ct["total"] = ct.sum(axis=1)
    ct.columns.name = None
    return ct.reset_index().rename(columns={"assumes": "verdict rests on"})


def assumes_counts(values: Iterable[str]) -> pd.DataFrame:
    counts: dict[str, int] = {}
    for v in values:
        for a in (v if isinstance(v, str) else "").split():  # pd.NA: a record without the column
            counts[a] = counts.get(a, 0) + 1
    return pd.DataFrame(sorted(counts.items(), key=lambda kv: -kv[1]), columns=["register entry", "cases"])


def html_sections(df: pd.DataFrame) -> list[str]:
    """index.html sections: what verdicts assume, and which cited rows a mutant proves can fail."""
    def tbl(d: pd.DataFrame) -> str:
        return d.to_html(index=False, escape=True, border=0, na_rep="")

    out = []
    split = assumes_split(df)
    if not split.empty:
        out += ["<h2>What the verdicts rest on</h2>",
                "<p>A verdict resting on an <b>assumed reading</b> takes an open entry of the ambiguity register "
                "for granted (column <code>assumes</code>); on hardware its failure is evidence about that reading, "
                "not a defect.</p>", tbl(split)]
        ac = assumes_counts(df["assumes"])
        if not ac.empty:
            out += [f"<details><summary>open readings assumed, by cases ({len(ac)} entries)</summary>{tbl(ac)}"
                    "</details>"]
    cov = MF.load_coverage()
    table = row_coverage(cited_in(df), cov)
    if not table.empty:
        score = (cov or {}).get("score", {})
        head = (f"mutation run of {html.escape(str(cov.get('date')))}: {score.get('killed')}/{score.get('total')} "
                "mutants killed" if cov else "no mutation results (mmacts/mutants/coverage.json) yet")
        only = table[table["can fail"] != "yes"]
        out += ["<h2>Coverage by what can fail</h2>",
                f"<p>{html.escape(coverage_summary(table))}; {head}. A row is covered when a case citing it "
                "failed under a planted mutant of that row's reading.</p>",
                f"<details><summary>per spec row ({len(table)} rows)</summary>{tbl(table)}</details>"]
        if len(only):
            out += [f"<p>covered by citation only ({len(only)}): "
                    f"{html.escape(' '.join(only['row']))}</p>"]
        out += feature_section(cov)
        out += generated_section()
    return out


def feature_table(cov: Mapping[str, Any] | None) -> pd.DataFrame:
    """One line per tcgen05 / mma.sync feature (:mod:`~mmacts.report.mutant_features`): can-fail / observed-only /
    none."""
    cols = ["feature", "status", "fail", "observed", "mutants", "example case", "what"]
    return pd.DataFrame(MF.rows(cov), columns=cols)


def feature_section(cov: Mapping[str, Any] | None) -> list[str]:
    """index.html's per-feature coverage beside the per-row one: the summary line visible, the table folded."""
    table = feature_table(cov)
    if table.empty:
        return []
    meaning = "; ".join(f"<b>{html.escape(k)}</b>: {html.escape(v)}" for k, v in MF.STATUS_MEANING.items())
    return [f"<p>Per feature: {html.escape(MF.summary(cov))}. {meaning}. Columns fail / observed / mutants "
            "count the feature's mutants caught by a failing case, by an observation only, and all of them.</p>",
            f"<details><summary>per feature ({len(table)} features)</summary>"
            f"{table.to_html(index=False, escape=True, border=0, na_rep='')}</details>"]


def generated_section() -> list[str]:
    """index.html's generated-mutation scores (``mmacts.mutants.generated``, committed ``generated/*.json``):
    the summary visible, the per-module table folded."""
    rows = scores.report_rows()
    if not rows:
        return []
    table = pd.DataFrame([*rows, scores.totals(rows)], columns=list(scores.REPORT_COLUMNS))
    return [f"<p>Operator-level mutants per module, {html.escape(scores.summary_line(rows))}. A mutant "
            "killed only by a unit test is a hole of the suites; a justified one is equivalent "
            "(mmacts/mutants/generated/survivors.yaml says why).</p>",
            f"<details><summary>generated mutation per module ({len(rows)} modules)</summary>"
            f"{table.to_html(index=False, escape=True, border=0, na_rep='')}</details>"]
