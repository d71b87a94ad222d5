"""Self-contained HTML pages over the store: history, flaky, regressions, device.

Charts are the inline SVG of ``mmacts.report.history`` (no plotting dependency, no network);
a few lines of inline script only note on ``<body data-rendered>`` how many charts the browser
laid out (the headless-Chromium test reads it). Long tables are cut at ``MAX_ROWS`` with the
full list in the CSV written next to the page.
"""

from __future__ import annotations

import datetime as _dt
import html
from typing import Any

import pandas as pd

from mmacts.report.history import line_chart, rate_grid
from mmacts.report.html import _CSS

MAX_ROWS = 500
_SCRIPT = """<script>
window.addEventListener('load', function () {
  var svgs = document.querySelectorAll('svg'), drawn = 0;
  svgs.forEach(function (s) { var b = s.getBBox(); if (b.width > 0 && b.height > 0) drawn++; });
  document.body.setAttribute('data-rendered', drawn + ' of ' + svgs.length + ' charts, ' +
    document.querySelectorAll('table').length + ' tables');
});
</script>"""


def _page(title: str, store_label: str, body: list[str]) -> str:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return "".join([
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1><p>store: <code>{html.escape(store_label)}</code>; made {stamp}</p>",
        *body, _SCRIPT, "</body></html>"])


def table_html(df: pd.DataFrame, what: str, csv_name: str | None = None) -> str:
    if df.empty:
        return f"<p>no {html.escape(what)}</p>"
    cut = ""
    if len(df) > MAX_ROWS:
        cut = (f"<p>first {MAX_ROWS} of {len(df)} {html.escape(what)}"
               + (f"; all of them in <code>{html.escape(csv_name)}</code>" if csv_name else "") + "</p>")
    view = df.head(MAX_ROWS).astype(object).where(df.head(MAX_ROWS).notna(), "")
    return cut + view.to_html(index=False, classes="wide", na_rep="")


def _series(df: pd.DataFrame, key: str, value: str, labels: list) -> dict[str, list[float | None]]:
    out: dict[str, list[float | None]] = {}
    if df.empty:
        return out
    piv = df.pivot_table(index=key, columns="bucket", values=value, aggfunc="first")
    for name, row in piv.iterrows():
        out[str(name)] = [None if b not in row.index or pd.isna(row[b]) else float(row[b]) for b in labels]
    return out


def history_page(h: dict[str, pd.DataFrame], store_label: str) -> str:
    bucket = str(h["bucket"]["bucket"].iloc[0])
    buckets = sorted(set(h["suite"]["bucket"]) | set(h["device"]["bucket"]))
    labels = [str(pd.Timestamp(b).date()) for b in buckets]
    if not buckets:
        return _page("mmacts history", store_label, ["<p>no runs in this window</p>"])
    suite = _series(h["suite"], "suite", "rate", buckets)
    tnames = sorted(h["table"]["tbl"].unique(), key=lambda t: (not t[1:].isdigit(), int(t[1:]) if t[1:].isdigit()
                                                                else 0, t))
    tables = _series(h["table"], "tbl", "rate", buckets)
    tables = {t: tables[t] for t in tnames if t in tables}
    body = [
        f"<p>{len(h['runs'])} most recent runs listed below; one column per {bucket}; pass rate = pass / "
        "(pass + fail + error + timeout) over every run, shard and device in the column</p>",
        "<h2>Pass rate per suite</h2>",
        line_chart(suite, labels, "pass rate per suite", 1.0, ymin=None, percent=True),
        "<h2>Pass rate per spec table</h2>", rate_grid(tables, labels, "pass rate per spec table"),
        "<h2>Pass rate per device</h2>",
        rate_grid(_series(h["device"], "series", "rate", buckets), labels, "pass rate per host:device"),
        "<h2>Pass rate per GPU, driver and ptxas</h2>",
        rate_grid(_series(h["config"], "series", "rate", buckets), labels, "pass rate per configuration"),
        "<h2>Kernel time</h2>",
        line_chart(_series(h["suite"], "suite", "kernel_us", buckets), labels,
                   "median kernel time per suite (median of per-run medians)", unit=" us"),
        line_chart(_series(h["config"], "series", "kernel_us", buckets), labels,
                   "median kernel time per GPU, driver and ptxas", unit=" us"),
        "<h2>Latest runs</h2>", table_html(h["runs"], "runs"),
    ]
    return _page("mmacts history", store_label, body)


def flaky_page(df: pd.DataFrame, store_label: str, min_changes: int, since: Any) -> str:
    body = [f"<p>cases whose status changed at least {min_changes} times across the runs of one device with one "
            f"driver and ptxas{' since ' + html.escape(str(since)) if since else ''}: flake candidates for the "
            "expectations. <b>changes</b> counts status changes between consecutive runs; "
            "<b>flake_rate</b> = bad runs / runs.</p>",
            f"<h2>{len(df)} flake candidates</h2>", table_html(df, "flake candidates", "flaky.csv")]
    return _page("mmacts flaky cases", store_label, body)


def transitions_page(df: pd.DataFrame, store_label: str, since: Any) -> str:
    body = [f"<p>status changes between consecutive runs of each case on each device"
            f"{' since ' + html.escape(str(since)) if since else ''}, per pair: <b>times</b> changes, "
            "<b>cases</b> distinct cases</p>", f"<h2>{len(df)} transitions</h2>",
            table_html(df, "status transitions", "transitions.csv")]
    return _page("mmacts status transitions", store_label, body)


def regressions_page(df: pd.DataFrame, store_label: str, since: Any) -> str:
    counts = (df.groupby("what_changed").size().rename("cases").reset_index().sort_values("cases", ascending=False)
              if len(df) else pd.DataFrame())
    body = [f"<p>for each case and device: the first run since {html.escape(str(since))} where a case started "
            "failing, the last run where it passed before, and what changed between the two</p>",
            f"<h2>{len(df)} regressions, {int(df['still_failing'].sum()) if len(df) else 0} still failing</h2>",
            "<h3>By what changed</h3>", table_html(counts, "changes"),
            "<h3>Cases</h3>", table_html(df, "regressions", "regressions.csv")]
    return _page("mmacts regressions", store_label, body)


def device_page(d: dict[str, Any], store_label: str) -> str:
    runs = d["runs"]
    labels = [str(pd.Timestamp(t))[:16] for t in runs["started_at"]] if len(runs) else []
    judged = (runs[[c for c in ("pass", "fail", "error", "crash", "timeout", "flake") if c in runs]].sum(axis=1)
              if len(runs) else pd.Series(dtype=float))
    rate = (runs["pass"] / judged.where(judged > 0)).tolist() if len(runs) else []
    body = [f"<p>everything <b>{html.escape(d['label'])}</b> answered: {len(runs)} runs</p>",
            line_chart({"pass rate": [None if pd.isna(v) else float(v) for v in rate]}, labels,
                       "pass rate per run", 1.0, ymin=None, percent=True) if len(runs) else "",
            "<h2>Per suite, all runs</h2>", table_html(d["suites"], "suites"),
            "<h2>Ambiguity register: what this device answered</h2>",
            "<p>one row per entry, answer and driver + ptxas (model-backend rows are not evidence about a GPU and "
            "are left out, as in <code>python -m mmacts.ambiguity.observe</code>)</p>",
            table_html(d["register"], "register observations"),
            "<h2>Probe observations</h2>", table_html(d["probes"], "probe observations", "device-probes.csv"),
            "<h2>Cases that ever failed here</h2>", table_html(d["bad"], "failing cases", "device-failing.csv"),
            "<h2>Runs</h2>", table_html(runs, "runs", "device-runs.csv")]
    return _page(f"mmacts device {d['label']}", store_label, body)
