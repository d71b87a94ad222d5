"""``mmacts report history RUN...``: one self-contained HTML page over many runs.

Pass rate per suite and per spec table over time, heat maps of failures over
type pairs (atype x btype) and over SF IDs, and kernel-time trends. Charts are
inline SVG drawn here (no plotting dependency, no network): a dashboard page
must open anywhere, years later.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd

from mmacts.cases.status import BAD, JUDGED, PASS
from mmacts.report.atomic import write_text_atomic
from mmacts.report.frame import spec_tables

TYPE_PAIR = re.compile(r"(e\dm\d)x(e\dm\d)")
SF_IDS = re.compile(r"sfa(\d)[-_.]?sfb(\d)")
MMA_SYNC_SF_IDS = re.compile(r"bida(\d)-tida(\d)-bidb(\d)-tidb(\d)")
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def _label(meta: dict, i: int) -> str:
    start = str(meta.get("start") or "")[:16].replace("T", " ")
    return f"#{i + 1} {start}"


def selection(meta: dict, df: pd.DataFrame | None = None) -> dict[str, str]:
    """What a run ran, from run.json ``options``: level, backend and the case selection (suites, -k, rows, arch,
    shard). Runs whose selections differ ran different cases: their rates are not one trend."""
    opts = meta.get("options") or {}

    def words(v: object) -> str:
        return " ".join(map(str, v)) if isinstance(v, list | tuple) else ("" if v is None else str(v))

    backend = words(opts.get("backend"))
    if not backend and df is not None and "backend" in df and df["backend"].notna().any():
        backend = " ".join(sorted(df["backend"].dropna().astype(str).unique()))
    suites = words(sorted(opts.get("suites") or []))
    if not suites and df is not None and "suite" in df:
        suites = " ".join(sorted(df["suite"].dropna().astype(str).unique()))
    sel = {"level": words(opts.get("level")) or "?", "backend": backend or "?", "suites": suites or "all"}
    for key, name in (("k", "-k"), ("rows", "rows"), ("arch", "arch"), ("shard", "shard")):
        if opts.get(key):
            sel[name] = words(opts[key])
    return sel


def _rest(sel: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sel.items() if k not in ("level", "backend"))


def selection_text(sel: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sel.items())


def _tick_labels(labels: list[str], room: int) -> list[str]:
    """Run labels under the x axis, thinned so that at most ``room`` are printed."""
    step = max(1, -(-len(labels) // max(room, 1)))
    return [lab.split(" ")[0] if i % step == 0 or i == len(labels) - 1 else "" for i, lab in enumerate(labels)]


def line_chart(series: dict[str, list[float | None]], labels: list[str], title: str, ymax: float | None = None,
               unit: str = "", ymin: float | None = 0.0, percent: bool = False) -> str:
    """A small multi-series SVG line chart (None = no value for that run).

    ``ymin=None`` zooms the y axis to the data (to a multiple of 5 %, for rates): a drop
    from 100 % to 98 % is the news on a dashboard and must not vanish in a 0..1 axis.
    """
    per_row = 4
    legend_rows = max(1, -(-len(series) // per_row))
    w, plot_h, left, top = 720, 200, 64, 30
    h = top + plot_h + 26 + 16 * legend_rows
    vals = [v for s in series.values() for v in s if v is not None]
    if not vals:  # an empty frame reads as a broken page: say so instead
        return f"<p class='nodata'>{html.escape(title)}: no data in these runs</p>"
    hi = ymax if ymax is not None else (max(vals) if vals else 1.0) or 1.0
    if ymin is None:  # four round steps down from the top that reach below the lowest value
        low = min(vals) if vals else 0.0
        step = next((st for st in (0.0125, 0.025, 0.05, 0.1, 0.2, 0.25) if hi - 4 * st < low), 0.25)
        lo = max(0.0, hi - 4 * step)
    else:
        lo = ymin
    n = max(len(labels), 2)
    x = lambda i: left + (w - left - 20) * i / (n - 1)  # noqa: E731
    y = lambda v: top + plot_h * (1 - (v - lo) / ((hi - lo) or 1.0))  # noqa: E731
    fmt = (lambda v: f"{100 * v:.4g}%") if percent else (lambda v: f"{v:.3g}{unit}")  # noqa: E731
    parts = [f"<svg width='{w}' height='{h}' xmlns='http://www.w3.org/2000/svg' font-size='12'>",
             f"<text x='{left}' y='16' font-size='13' font-weight='bold'>{html.escape(title)}</text>"]
    for frac in (0, 0.25, 0.5, 0.75, 1):
        v = lo + (hi - lo) * frac
        yy = y(v)
        parts.append(f"<line x1='{left}' x2='{w - 20}' y1='{yy:.1f}' y2='{yy:.1f}' stroke='#ddd'/>")
        parts.append(f"<text x='{left - 6}' y='{yy + 4:.1f}' text-anchor='end'>{fmt(v)}</text>")
    for i, lab in enumerate(_tick_labels(labels, (w - left) // 40)):
        if lab:
            parts.append(f"<text x='{x(i):.1f}' y='{top + plot_h + 16}' text-anchor='middle'>"
                         f"{html.escape(lab)}</text>")
    for k, (name, s) in enumerate(series.items()):
        color = PALETTE[k % len(PALETTE)]
        dash = "" if k < len(PALETTE) else " stroke-dasharray='6,3'"
        pts = [(x(i), y(v)) for i, v in enumerate(s) if v is not None]
        if len(pts) > 1:
            d = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
            parts.append(f"<polyline fill='none' stroke='{color}' stroke-width='2'{dash} points='{d}'/>")
        for px, py in pts:
            parts.append(f"<circle cx='{px:.1f}' cy='{py:.1f}' r='3' fill='{color}'/>")
        ly = top + plot_h + 38 + 16 * (k // per_row)
        lx = left + 165 * (k % per_row)
        parts.append(f"<rect x='{lx}' y='{ly - 10}' width='12' height='4' fill='{color}'/>"
                     f"<text x='{lx + 16}' y='{ly - 4}'>{html.escape(name[:24])}</text>")
    parts.append("</svg>")
    return "".join(parts)


def _rate_fill(v: float) -> str:
    shade = int(255 - 200 * min(1.0, (1.0 - v) * 5))
    return f"rgb(255,{shade},{shade})"


def rate_grid(rates: dict[str, list[float | None]], labels: list[str], title: str) -> str:
    """Pass rate per (row, run) as an SVG grid shaded white -> red; 20 % failing is full red.

    Many spec tables as lines in one chart are a tangle of one colour per table; a grid
    reads at a glance which table broke in which run.
    """
    if not rates or all(v is None for vals in rates.values() for v in vals):
        return f"<p class='nodata'>{html.escape(title)}: no data in these runs</p>"
    left, top, ch = 120, 42, 22
    cw = max(14, min(70, (900 - left) // max(len(labels), 1)))
    w, h = left + cw * len(labels) + 10, top + ch * len(rates) + 8
    parts = [f"<svg width='{w}' height='{h}' xmlns='http://www.w3.org/2000/svg' font-size='12'>",
             f"<text x='0' y='16' font-size='13' font-weight='bold'>{html.escape(title)}</text>"]
    for i, lab in enumerate(_tick_labels(labels, (w - left) // 40)):
        if lab:
            parts.append(f"<text x='{left + cw * i + cw / 2:.1f}' y='{top - 6}' text-anchor='middle'>"
                         f"{html.escape(lab)}</text>")
    for r, (name, vals) in enumerate(rates.items()):
        yy = top + ch * r
        parts.append(f"<text x='{left - 8}' y='{yy + 15}' text-anchor='end'>{html.escape(name[:18])}</text>")
        for i, v in enumerate(vals):
            fill = "#f4f4f4" if v is None else _rate_fill(v)
            txt = "-" if v is None else ("100%" if v == 1.0 else f"{100 * v:.1f}%")
            parts.append(f"<rect x='{left + cw * i}' y='{yy}' width='{cw - 1}' height='{ch - 1}' fill='{fill}'>"
                         f"<title>{html.escape(name)}, {html.escape(labels[i])}: {txt}</title></rect>")
            if cw >= 44:
                parts.append(f"<text x='{left + cw * i + cw / 2:.1f}' y='{yy + 15}' text-anchor='middle' "
                             f"font-size='11'>{txt}</text>")
    parts.append("</svg>")
    return "".join(parts)


def heat_map(table: pd.DataFrame, title: str) -> str:
    """Failures per cell as an HTML table shaded white -> red (count / cases)."""
    if table.empty:
        return f"<h3>{html.escape(title)}</h3><p>no cases of this kind in these runs</p>"
    rows = [f"<h3>{html.escape(title)}</h3><table class='heat'><tr><th></th>"
            + "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns) + "</tr>"]
    for idx, r in table.iterrows():
        cells = []
        for v in r:
            fails, total = v if isinstance(v, tuple) else (0, 0)
            frac = fails / total if total else 0.0
            shade = int(255 - 200 * frac)
            bg = f"rgb(255,{shade},{shade})" if total else "#f4f4f4"
            cells.append(f"<td style='background:{bg}' title='{fails} of {total} failed'>"
                         f"{fails}/{total}</td>" if total else "<td style='background:#f4f4f4'>-</td>")
        rows.append(f"<tr><th>{html.escape(str(idx))}</th>{''.join(cells)}</tr>")
    rows.append("</table>")
    return "".join(rows)


def _cells(df: pd.DataFrame, key_a: str, key_b: str) -> pd.DataFrame:
    if df.empty:
        return pd.DataFrame()
    g = df.groupby([key_a, key_b])["bad"].agg(["sum", "count"])
    out = pd.DataFrame(index=sorted(df[key_a].unique()), columns=sorted(df[key_b].unique()), dtype=object)
    for (a, b), r in g.iterrows():
        out.loc[a, b] = (int(r["sum"]), int(r["count"]))
    return out


def _trends(runs: list[tuple[dict, pd.DataFrame]], labels: list[str]) -> list[str]:
    """Pass-rate and kernel-time charts over ``runs``, which all ran one selection."""
    suites = sorted({s for _, df in runs for s in df["suite"].dropna().unique()})

    def rate(df: pd.DataFrame) -> float | None:
        judged = df[df["status"].isin(JUDGED)]
        return None if judged.empty else float((judged["status"] == PASS).mean())

    by_suite = {s: [rate(df[df["suite"] == s]) for _, df in runs] for s in suites}
    tables_all = [spec_tables(df).drop_duplicates(["case_id", "table"]) for _, df in runs]
    tnames = sorted({t for t in pd.concat(tables_all)["table"].unique()} if tables_all else [],
                    key=lambda t: (not t[1:].isdigit(), int(t[1:]) if t[1:].isdigit() else 0, t))
    by_table = {t: [rate(tt[tt["table"] == t]) for tt in tables_all] for t in tnames}
    ktime = {s: [float(df.loc[df["suite"] == s, "kernel_us"].median())
                 if df.loc[df["suite"] == s, "kernel_us"].notna().any() else None for _, df in runs]
             for s in suites}
    return [
        "<h3>Pass rate per suite</h3>",
        line_chart(by_suite, labels, "pass rate (pass / judged)", 1.0, ymin=None, percent=True),
        "<h3>Pass rate per spec table</h3><p>cases citing a row of the table that passed, of those judged</p>",
        rate_grid(by_table, labels, "pass rate per spec table"),
        "<h3>Kernel time</h3>", line_chart(ktime, labels, "median kernel time per suite", unit=" us"),
    ]


def render_history(runs: list[tuple[dict, pd.DataFrame]]) -> str:
    """The whole page for ``runs`` in the order given (oldest first): one set of trend charts per selection."""
    labels = [_label(m, i) for i, (m, _) in enumerate(runs)]
    sels = [selection(m, df) for m, df in runs]
    groups: dict[str, list[int]] = {}
    for i, sel in enumerate(sels):
        groups.setdefault(selection_text(sel), []).append(i)
    last = runs[-1][1].copy() if runs else pd.DataFrame(columns=["case_id", "status"])
    last["bad"] = last["status"].isin(BAD)
    tp = last["case_id"].str.extract(TYPE_PAIR)
    pairs = last.assign(atype=tp[0], btype=tp[1]).dropna(subset=["atype", "btype"])
    sf = last["case_id"].str.extract(SF_IDS)
    sfids = last.assign(sfa=sf[0], sfb=sf[1]).dropna(subset=["sfa", "sfb"])
    ms = last["case_id"].str.extract(MMA_SYNC_SF_IDS)
    mma_sf = last.assign(a="bida" + ms[0] + " tida" + ms[1], b="bidb" + ms[2] + " tidb" + ms[3]).dropna(
        subset=["a", "b"])
    group_no = {i: g for g, idx in enumerate(groups.values(), 1) for i in idx}
    meta_rows = "".join(
        f"<tr><td>{html.escape(lab)}</td><td>{html.escape(sel['level'])}</td><td>{html.escape(sel['backend'])}</td>"
        f"<td>{group_no[i]}: {html.escape(_rest(sel))}</td>"
        f"<td>{html.escape(str(m.get('git_sha')))}</td>"
        f"<td>{html.escape(str(m.get('gpu', {}).get('name') or 'none'))}</td>"
        f"<td>{html.escape(str(m.get('toolchain', {}).get('ptxas')))}</td><td>{len(df)}</td>"
        f"<td>{int(df['status'].isin(BAD).sum())}</td></tr>"
        for i, (lab, sel, (m, df)) in enumerate(zip(labels, sels, runs, strict=True)))
    trend_sections: list[str] = []
    for g, (text, idx) in enumerate(groups.items(), 1):
        sub = [runs[i] for i in idx]
        trend_sections += [f"<h2 class='selection'>Selection {g}: {html.escape(text)} ({len(idx)} "
                           f"run{'s' if len(idx) != 1 else ''})</h2>", *_trends(sub, [labels[i] for i in idx])]
    if not runs:
        trend_sections = ["<p class='nodata'>no runs given: no data</p>"]
    latest = f" ({html.escape(labels[-1])}, selection {group_no[len(runs) - 1]})" if runs else ""
    return "".join([
        "<!doctype html><html><head><meta charset='utf-8'><title>mmacts history</title><style>",
        "body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}",
        "td,th{border:1px solid #ccc;padding:3px 7px}.heat{margin-bottom:1em}",
        ".heat td{text-align:center;min-width:48px}.nodata{color:#666;font-style:italic}",
        "h2.selection{border-top:2px solid #ccc;padding-top:0.6em}",
        "</style></head><body>",
        f"<h1>mmacts history: {len(runs)} runs</h1>",
        "<p>runs that ran different selections (level, backend, suites, -k, rows, arch, shard) ran different "
        "cases: each selection has its own trend charts</p>",
        "<table><tr><th>run</th><th>level</th><th>backend</th><th>selection</th><th>git</th><th>GPU</th>"
        "<th>ptxas</th><th>cases</th><th>bad</th></tr>",
        meta_rows, "</table>",
        *trend_sections,
        f"<h2>Failures in the latest run{latest}</h2>",
        heat_map(_cells(pairs, "atype", "btype"), "by type pair (rows atype, columns btype)"),
        heat_map(_cells(sfids, "sfa", "sfb"), "by SF ID, tcgen05 (rows SFA ID, columns SFB ID)"),
        heat_map(_cells(mma_sf, "a", "b"), "by SF selector, mma.sync (rows byte/thread ID of A, columns of B)"),
        "</body></html>",
    ])


def write_history(out: Path, runs: list[tuple[dict, pd.DataFrame]]) -> Path:
    """Write ``history.html`` into ``out``."""
    path = Path(out) / "history.html"
    write_text_atomic(path, render_history(runs))
    return path
