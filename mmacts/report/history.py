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

from mmacts.report.frame import spec_tables

BAD = ("fail", "error", "timeout")
TYPE_PAIR = re.compile(r"(e\dm\d)x(e\dm\d)")
SF_IDS = re.compile(r"sfa(\d)[-_.]?sfb(\d)")
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def _label(meta: dict, i: int) -> str:
    start = str(meta.get("start") or "")[:16].replace("T", " ")
    return f"#{i + 1} {start}"


def line_chart(series: dict[str, list[float | None]], labels: list[str], title: str, ymax: float | None = None,
               unit: str = "") -> str:
    """A small multi-series SVG line chart (None = no value for that run)."""
    w, h, left, bottom, top = 720, 260, 60, 60, 30
    vals = [v for s in series.values() for v in s if v is not None]
    hi = ymax if ymax is not None else (max(vals) if vals else 1.0) or 1.0
    n = max(len(labels), 2)
    x = lambda i: left + (w - left - 20) * i / (n - 1)  # noqa: E731
    y = lambda v: top + (h - top - bottom) * (1 - v / hi)  # noqa: E731
    parts = [f"<svg width='{w}' height='{h}' xmlns='http://www.w3.org/2000/svg' font-size='11'>",
             f"<text x='{left}' y='16' font-size='13' font-weight='bold'>{html.escape(title)}</text>"]
    for frac in (0, 0.5, 1):
        yy = y(hi * frac)
        parts.append(f"<line x1='{left}' x2='{w - 20}' y1='{yy:.1f}' y2='{yy:.1f}' stroke='#ddd'/>")
        parts.append(f"<text x='{left - 6}' y='{yy + 4:.1f}' text-anchor='end'>{hi * frac:.3g}{unit}</text>")
    for i, lab in enumerate(labels):
        parts.append(f"<text x='{x(i):.1f}' y='{h - bottom + 16}' text-anchor='middle'>{html.escape(lab[:3])}</text>")
    for k, (name, s) in enumerate(series.items()):
        color = PALETTE[k % len(PALETTE)]
        pts = [(x(i), y(v)) for i, v in enumerate(s) if v is not None]
        if len(pts) > 1:
            d = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
            parts.append(f"<polyline fill='none' stroke='{color}' stroke-width='2' points='{d}'/>")
        for px, py in pts:
            parts.append(f"<circle cx='{px:.1f}' cy='{py:.1f}' r='3' fill='{color}'/>")
        ly = h - 28 + 14 * (k // 4)
        lx = left + 170 * (k % 4)
        parts.append(f"<rect x='{lx}' y='{ly - 9}' width='10' height='10' fill='{color}'/>"
                     f"<text x='{lx + 14}' y='{ly}'>{html.escape(name[:24])}</text>")
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


def render_history(runs: list[tuple[dict, pd.DataFrame]]) -> str:
    """The whole page for ``runs`` in the order given (oldest first)."""
    labels = [_label(m, i) for i, (m, _) in enumerate(runs)]
    suites = sorted({s for _, df in runs for s in df["suite"].dropna().unique()})

    def rate(df: pd.DataFrame) -> float | None:
        judged = df[df["status"].isin(("pass", *BAD))]
        return None if judged.empty else float((judged["status"] == "pass").mean())

    by_suite = {s: [rate(df[df["suite"] == s]) for _, df in runs] for s in suites}
    tables_all = [spec_tables(df) for _, df in runs]
    tnames = sorted({t for t in pd.concat(tables_all)["table"].unique()} if tables_all else [])
    by_table = {t: [rate(tt[tt["table"] == t]) for tt in tables_all] for t in tnames}
    ktime = {s: [float(df.loc[df["suite"] == s, "kernel_us"].median())
                 if df.loc[df["suite"] == s, "kernel_us"].notna().any() else None for _, df in runs]
             for s in suites}
    last = runs[-1][1].copy() if runs else pd.DataFrame(columns=["case_id", "status"])
    last["bad"] = last["status"].isin(BAD)
    tp = last["case_id"].str.extract(TYPE_PAIR)
    pairs = last.assign(atype=tp[0], btype=tp[1]).dropna(subset=["atype", "btype"])
    sf = last["case_id"].str.extract(SF_IDS)
    sfids = last.assign(sfa=sf[0], sfb=sf[1]).dropna(subset=["sfa", "sfb"])
    meta_rows = "".join(
        f"<tr><td>{html.escape(lab)}</td><td>{html.escape(str(m.get('git_sha')))}</td>"
        f"<td>{html.escape(str(m.get('gpu', {}).get('name') or 'none'))}</td>"
        f"<td>{html.escape(str(m.get('toolchain', {}).get('ptxas')))}</td><td>{len(df)}</td>"
        f"<td>{int(df['status'].isin(BAD).sum())}</td></tr>"
        for lab, (m, df) in zip(labels, runs, strict=True))
    return "".join([
        "<!doctype html><html><head><meta charset='utf-8'><title>mmacts history</title><style>",
        "body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}",
        "td,th{border:1px solid #ccc;padding:3px 7px}.heat td{text-align:center;min-width:48px}</style></head><body>",
        f"<h1>mmacts history: {len(runs)} runs</h1>",
        "<table><tr><th>run</th><th>git</th><th>GPU</th><th>ptxas</th><th>cases</th><th>bad</th></tr>",
        meta_rows, "</table>",
        "<h2>Pass rate per suite</h2>", line_chart(by_suite, labels, "pass rate (pass / judged)", 1.0),
        "<h2>Pass rate per spec table</h2>", line_chart(by_table, labels, "pass rate per table", 1.0),
        "<h2>Kernel time</h2>", line_chart(ktime, labels, "median kernel time per suite", unit=" us"),
        "<h2>Failures in the latest run</h2>",
        heat_map(_cells(pairs, "atype", "btype"), "by type pair (rows atype, columns btype)"),
        heat_map(_cells(sfids, "sfa", "sfb"), "by SF ID (rows SFA ID, columns SFB ID)"),
        "</body></html>",
    ])


def write_history(out: Path, runs: list[tuple[dict, pd.DataFrame]]) -> Path:
    """Write ``history.html`` into ``out``."""
    from mmacts.report.atomic import write_text_atomic

    path = Path(out) / "history.html"
    write_text_atomic(path, render_history(runs))
    return path
