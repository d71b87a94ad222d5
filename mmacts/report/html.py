"""index.html: one self-contained page a person reads first after a run."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pandas as pd

from mmacts.ambiguity import load_register
from mmacts.ambiguity.observe import pattern_matches
from mmacts.cases.status import BAD, ORDER
from mmacts.report.coverage import html_sections
from mmacts.report.frame import spec_tables

_STATUS_ORDER = list(ORDER)
_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f0f0f0}.pass{color:#176317}.fail,.error,.crash,.timeout{color:#a01010;font-weight:bold}
.skip,.not-supported,.xfail,.observed{color:#666}.banner{background:#fff4d6;border:1px solid #e0b000;padding:0.8em}
code{font-size:90%}.flake{color:#a05a00;font-weight:bold}
table.wide{width:100%}table.wide td{vertical-align:top;overflow-wrap:anywhere}
table.wide td:first-child{font-family:ui-monospace,monospace;font-size:85%;min-width:22em}
td.hex,.hex{font-family:ui-monospace,monospace;font-size:85%}
nav.toc{columns:3;background:#f7f7f7;padding:0.5em 1em;margin:0.5em 0}nav.toc a{display:block}
details{margin:0.3em 0}summary{cursor:pointer}#filter{width:30em;padding:4px;margin:0.5em 0}
"""

_FILTER_JS = """
(function(){var box=document.getElementById('filter');if(!box)return;
box.addEventListener('input',function(){var q=box.value.trim().toLowerCase();
document.querySelectorAll('table.filterable').forEach(function(t){var shown=0;
t.querySelectorAll('tbody tr').forEach(function(tr){var c=tr.cells[0]?tr.cells[0].textContent.toLowerCase():'';
var ok=!q||c.indexOf(q)>=0;tr.style.display=ok?'':'none';if(ok)shown++;});
var d=t.closest('details');if(d&&q)d.open=shown>0;});});})();
"""
"""Client-side filter of the case tables by case ID: inline, no network, no library."""
_STATUS_COLOR = {"pass": "#2e8b2e", "flake": "#e08a00", "fail": "#c0392b", "error": "#8e1b1b", "timeout": "#d35400",
                 "crash": "#5b0f0f", "not-supported": "#d0c8a0", "skip": "#b0b0b0", "xfail": "#8fa3bf",
                 "observed": "#3b73b9"}
_AMB = re.compile(r"\bAMB-[A-Z0-9][A-Z0-9-]*[A-Z0-9]\b")
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


def status_chart(df: pd.DataFrame) -> str:
    """One stacked bar per suite (and one for the whole run), a segment per status: inline SVG, no script."""
    if df.empty:
        return "<p>no cases: nothing to chart</p>"
    groups = [("all", df)] + ([(str(s), p) for s, p in df.groupby("suite", dropna=False)] if df["suite"].nunique() > 1
                              else [])
    seen = [s for s in _STATUS_ORDER if (df["status"] == s).any()]
    seen += sorted(set(df["status"].dropna()) - set(seen))
    left, width, bar_h, gap, top = 190, 760, 20, 8, 8
    h = top + (bar_h + gap) * len(groups) + 30
    parts = [f"<svg id='status-chart' role='img' aria-label='cases per status' width='{left + width + 80}' "
             f"height='{h}' xmlns='http://www.w3.org/2000/svg' font-size='12'>"]
    for i, (name, part) in enumerate(groups):
        y = top + (bar_h + gap) * i
        weight = " font-weight='bold'" if name == "all" else ""
        parts.append(f"<text x='{left - 8}' y='{y + 15}' text-anchor='end'{weight}>{html.escape(name[:28])}</text>")
        counts = part["status"].value_counts()
        x, total = float(left), len(part)
        for st in seen:
            n = int(counts.get(st, 0))
            if not n:
                continue
            w = width * n / total
            parts.append(f"<rect x='{x:.1f}' y='{y}' width='{max(w, 1):.1f}' height='{bar_h}' "
                         f"fill='{_STATUS_COLOR.get(st, '#999')}'><title>{html.escape(name)}: {n} {st}</title></rect>")
            if w >= 34:
                parts.append(f"<text x='{x + w / 2:.1f}' y='{y + 15}' text-anchor='middle' fill='#fff'>{n}</text>")
            x += w
        parts.append(f"<text x='{left + width + 6}' y='{y + 15}'>{total}</text>")
    ly = top + (bar_h + gap) * len(groups) + 14
    for k, st in enumerate(seen):
        lx = left + 95 * k
        parts.append(f"<rect x='{lx}' y='{ly - 10}' width='12' height='12' fill='{_STATUS_COLOR.get(st, '#999')}'/>"
                     f"<text x='{lx + 16}' y='{ly}'>{html.escape(st)}</text>")
    parts.append("</svg>")
    return "".join(parts)


def _obs_json(raw: Any) -> dict[str, Any]:
    if raw is None or pd.isna(raw) or not str(raw).strip():
        return {}
    try:
        obs = json.loads(str(raw))
    except json.JSONDecodeError:
        return {}
    return obs if isinstance(obs, dict) else {}


def _supports(obs: dict[str, Any]) -> str:
    """Which hypothesis the measured answer supports: ``supports``/``reading``, else ``consistent_with``."""
    for key in ("supports", "reading"):
        if obs.get(key):
            return str(obs[key])
    details = obs.get("details") if isinstance(obs.get("details"), dict) else {}
    cw = obs.get("consistent_with") or details.get("consistent_with")
    if isinstance(cw, dict):
        return "; ".join(f"{k} in {{{', '.join(map(str, v))}}}" if isinstance(v, list) else f"{k}={v}"
                         for k, v in cw.items())
    return str(cw) if cw else ""


def _hex_list(obs: dict[str, Any], show: int = 4) -> str:
    bits = obs.get("measured_bits")
    if not isinstance(bits, list) or not bits:
        return ""
    head = " ".join(f"0x{b}" if not str(b).startswith("0x") else str(b) for b in bits[:show])
    return head + (f" ... ({len(bits)} values)" if len(bits) > show else "")


def _hypothesis(message: str) -> str:
    """``hypothesis for X: NAME; agrees with the hypothesis`` -> ``NAME (agrees)``."""
    m = re.search(r"hypothesis for [^:;]+: ([^;]+); (agrees with the hypothesis|\d+ elements differ)", message)
    if not m:
        return ""
    return f"{m.group(1).strip()} ({'agrees' if m.group(2).startswith('agrees') else m.group(2)})"


def register_ids(assumes: Any, message: Any) -> str:
    """The ambiguity-register entries a row rests on: its ``assumes`` column and any AMB-... its message names."""
    ids = [a for a in str(assumes if pd.notna(assumes) else "").split() if a]
    ids += [m for m in _AMB.findall(str(message if pd.notna(message) else "")) if m not in ids]
    return " ".join(ids)


def _decided_by() -> Any:
    """case_id -> ``decides AMB-...``: the register entries whose ``decided_by`` names the case."""
    try:
        entries = [(e.id, e.decided_by) for e in load_register().entries]
    except Exception:  # the page must still be written
        return lambda case_id: ""

    def find(case_id: str) -> str:
        ids = [i for i, pats in entries if any(pattern_matches(p, case_id) for p in pats)]
        return f"decides {' '.join(ids)}" if ids else ""
    return find


def _probe_group(case_id: str) -> str:
    """The family an observed case belongs to (``probes.block_size.mma_sync.sm_90a`` -> ``probes.block_size``;
    a tcgen05 probe ``...st.probe:sparse_meta`` -> ``probe:sparse_meta``): one collapsed group each."""
    m = re.search(r"(probe:[\w-]+)", case_id)
    if m:
        return m.group(1)
    parts = re.split(r"[./]", case_id)
    return ".".join(parts[:2]) if len(parts) > 1 else case_id


def observed_table(df: pd.DataFrame) -> list[str]:
    """Probe answers, grouped by probe family and collapsed (``<details>``: the answers are reference
    material, not what a reader looks for first): what was measured, what it supports, which register
    entry it decides. A column no row of a group fills is left out, so no row reads as a blank."""
    obs = df[df["status"] == "observed"]
    if obs.empty:
        return []
    decides = _decided_by()
    rows = []
    for rec in obs.head(500).to_dict("records"):
        o = _obs_json(rec.get("observation"))
        msg = str(rec.get("message") or "")
        note = re.sub(r"^observation; ", "", msg)
        rows.append({"group": _probe_group(str(rec["case_id"])), "case": rec["case_id"], "backend": rec.get("backend"),
                     "answer": str(o["answer"]) if "answer" in o else "",
                     "supports": _supports(o) or _hypothesis(msg), "measured (hex)": _hex_list(o),
                     "register": " ".join(x for x in (decides(str(rec["case_id"])),
                                                      register_ids(rec.get("assumes"), msg)) if x),
                     "note": note[:300]})
    more = f"<p>the first {len(rows)} of {len(obs)} are shown</p>" if len(obs) > len(rows) else ""
    out = [f"<h2 id='observed'>Observed answers ({len(obs)})</h2><p>probes of what the spec leaves open: "
           "recorded, never judged; one group per probe, opened by a click</p>", more]
    for group, part in pd.DataFrame(rows).groupby("group", sort=True):
        view = part.drop(columns=["group"])
        view = view[[c for c in view.columns if c == "case" or (view[c].fillna("") != "").any()]]
        answers = sorted({a for a in part["answer"] if a})
        said = f": {html.escape(', '.join(answers[:3]))}{' ...' if len(answers) > 3 else ''}" if answers else ""
        out.append(f"<details class='obs'><summary><b>{html.escape(str(group))}</b> ({len(part)}){said}</summary>"
                   f"{_table(view, 'wide obs filterable')}</details>")
    return out


def diagnosis(message: Any, first: Any = None) -> str:
    """The suspected cause a failure message names: the part after ``N mismatches, first (...) got=... want=...``."""
    msg = str(message) if message is not None and pd.notna(message) else ""
    rest = _without_first(msg, first)
    rest = str(rest) if rest is not None and pd.notna(rest) else ""
    if rest == msg:  # first_mismatch not given or spelled otherwise: cut the lead up to its first '; '
        m = re.match(r"^\d+ mismatches(, first [^;]*)?(; |$)", msg)
        rest = msg[m.end():] if m else msg
    return rest.strip() or "(no diagnosis in the message)"


def failure_groups(bad: pd.DataFrame) -> list[str]:
    """Failures with the same diagnosis together, most cases first."""
    if bad.empty:
        return []
    keyed = bad.assign(diagnosis=[diagnosis(m, f) for m, f in zip(bad["message"], bad["first_mismatch"],
                                                                  strict=True)])
    keyed = keyed.assign(diagnosis=keyed["diagnosis"].str.slice(0, 400))
    rows = []
    for (diag, st), part in keyed.groupby(["diagnosis", "status"], sort=False):
        ex = part["case_id"].head(3).tolist()
        rows.append({"cases": len(part), "status": st, "diagnosis": diag,
                     "examples": " ".join(ex) + (" ..." if len(part) > 3 else "")})
    view = pd.DataFrame(rows).sort_values("cases", ascending=False, kind="stable")
    return [f"<h3>Grouped by diagnosis ({len(view)} groups)</h3><p>each case's first mismatch (got and want as "
            "values and fp32 hex) is in the table below</p>", _table(view)]


def _flakes(df: pd.DataFrame) -> list[str]:
    """Cases that failed and then passed on a retry (``mmacts run --retries N``): not a pass, not a failure."""
    flaky = df[df["status"] == "flake"]
    if flaky.empty:
        return []
    view = flaky[["case_id", "backend", "attempts", "message"]].head(500)
    view = view.assign(attempts=view["attempts"].astype("Int64"))
    return [f"<h2 id='flakes'>Flakes ({len(flaky)})</h2><p>failed, then passed on a retry</p>",
            _table(view, "wide filterable")]


def _waived(run: dict[str, Any]) -> list[str]:
    """Cases the expectations file waived (known failures, flakes, skips: a decision with a bug and a
    reason, kept visible apart from the failures), and entries that did nothing in this run."""
    info = run.get("expectations") or {}
    rows = info.get("waived_cases") or []
    out = []
    if rows:
        view = pd.DataFrame(rows)[["case_id", "got", "expect", "bug", "reason"]]
        out += [f"<h2 id='waived'>Waived by the expectations ({info.get('waived', len(rows))})</h2>"
                f"<p>known to end this way on this configuration ({html.escape(str(info.get('file')))}); "
                "not counted as failures of this run</p>", _table(view, "wide filterable")]
    idle = [(e, "matches no case") for e in info.get("matching_none") or []]
    idle += [(e, "for a device, driver or ptxas that did not run here") for e in info.get("not_applicable") or []]
    if idle:
        out += [f"<h3>Expectation entries that did nothing ({len(idle)})</h3>",
                _table(pd.DataFrame(idle, columns=["entry", "why"]), "wide")]
    return out


def _coverage_sections(df: pd.DataFrame) -> list[str]:
    """What the verdicts assume; which cited rows a mutant proves can fail (``mmacts.report.coverage``)."""
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
    bad = df[df["status"].isin(BAD)]
    waived_ids = {w["case_id"] for w in (run.get("expectations") or {}).get("waived_cases") or []}
    n_waived = int(bad["case_id"].isin(waived_ids).sum()) if waived_ids else 0
    if n_waived:
        bad = bad[~bad["case_id"].isin(waived_ids)]
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
    if not timing.empty and "kernel_us count" in timing.columns and not timing["kernel_us count"].any():
        timing = timing.drop(columns=[c for c in timing.columns if c.startswith("kernel_us")])  # CPU: none measured
    by_table = _counts(spec_tables(df).drop_duplicates(["case_id", "table"]), "table")
    waived = _waived(run)
    observed = observed_table(df)
    flakes = _flakes(df)
    coverage = _coverage_sections(df)
    toc = [("failures", f"Failures, errors and timeouts ({len(bad)})")]
    toc += [("flakes", "Flakes")] if flakes else []
    toc += [("waived", "Waived by the expectations")] if waived else []
    n_obs = int((df["status"] == "observed").sum()) if tot else 0
    toc += [("observed", f"Observed answers ({n_obs})")] if observed else []
    toc += [("counts", "Counts by suite, spec table, backend"), ("timing", "Timing")]
    toc += [("coverage", "What the verdicts rest on; coverage")] if coverage else []
    toc += [("run", "Run"), ("register", "Ambiguity register")] if extra_sections else [("run", "Run")]
    sections = [
        f"<h1>mmacts run</h1><p>{tot} cases: {summary}</p>",
        banner(df),
        status_chart(df),
        "<nav class='toc'>" + "".join(f"<a href='#{a}'>{html.escape(t)}</a>" for a, t in toc) + "</nav>",
        "<input id='filter' type='search' placeholder='filter the case tables by case ID' aria-label='filter'>",
        f"<h2 id='failures'>Failures, errors and timeouts ({len(bad)})</h2>",
        (f"<p>{n_waived} more are waived by the expectations: <a href='#waived'>listed apart</a></p>"
         if n_waived else ""),
        (f"<p>the first {len(bad_view)} are shown; every one is in results.csv / results.parquet</p>"
         if len(bad) > len(bad_view) else ""),
        *failure_groups(bad),
        "<h3>Every failure</h3>" if len(bad) else "",
        _table(bad_view, "wide filterable") if len(bad) else "<p>none</p>",
        *flakes,
        *waived,
        *observed,
        "<h2 id='counts'>By suite</h2>", _table(_counts(df, "suite")),
        "<h2>By spec table</h2><p>cases citing at least one row of the table</p>",
        _table(by_table) if len(by_table) else "<p>no case of this run cites a spec-table row</p>",
        "<h2>By backend</h2>", _table(_counts(df, "backend")),
        "<h2 id='timing'>Timing</h2>", _table(timing) if not timing.empty else "<p>no timings</p>",
        "<div id='coverage'></div>" if coverage else "", *coverage,
        "<h2 id='run'>Run</h2>", _table(meta),
    ]
    if extra_sections:
        sections.append("<details id='register'><summary><b>Ambiguity register</b> (every place the spec is "
                        "unclear, its readings and what this run answered): open</summary>")
    sections += extra_sections or []
    if extra_sections:
        sections.append("</details>")
    body = "\n".join(sections)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>mmacts run</title>"
            f"<style>{_CSS}</style></head><body>{body}<script>{_FILTER_JS}</script></body></html>")
