"""The register as one HTML section of the run report.

The section lists every entry (id, status, spec places, readings, sources, what decides
it) with the answers recorded so far, plus the answers of the run being reported
(``observations_df`` = that run's results table) so a reader sees at once what this
run said about each open question. Everything is escaped: spec text contains ``<``.
"""

from __future__ import annotations

import html
import json

import pandas as pd

from mmacts.ambiguity.observe import decided_by_regex
from mmacts.ambiguity.register import Entry, Register

_STYLE = """
<style>
#ambiguities table{border-collapse:collapse;font-size:13px;margin-bottom:6px}
#ambiguities td,#ambiguities th{border:1px solid #ccc;padding:2px 6px;vertical-align:top;text-align:left}
#ambiguities details{margin:4px 0 10px 0}
#ambiguities .open{color:#a15c00;font-weight:bold}
#ambiguities .decided{color:#1b7f2a;font-weight:bold}
#ambiguities blockquote{margin:2px 0 2px 12px;color:#444;font-size:12px}
</style>
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _rows(results: pd.DataFrame | list[dict] | None) -> list[dict]:
    """The run's rows as dicts, made once per report (not once per entry: that was
    entries x cases dict conversions, a second per report at 86 cases, minutes at 10,000)."""
    if results is None:
        return []
    if isinstance(results, list):
        return results
    if results.empty or "case_id" not in results.columns:
        return []
    cols = [c for c in ("case_id", "status", "observation", "device", "backend") if c in results.columns]
    return results[cols].to_dict("records")


def _run_answers(entry: Entry, results: pd.DataFrame | list[dict] | None) -> list[dict[str, str]]:
    out = []
    names = decided_by_regex(tuple(entry.decided_by))
    for row in _rows(results):
        case_id = str(row.get("case_id", ""))
        if not names.match(case_id):
            continue
        answer = str(row.get("status", ""))
        raw = row.get("observation")
        if isinstance(raw, str) and raw:
            try:
                answer = str(json.loads(raw).get("answer", answer))
            except (json.JSONDecodeError, AttributeError):
                answer = raw
        out.append({"case": case_id, "device": str(row.get("device", "")),
                    "backend": str(row.get("backend", "")), "answer": answer})
    return out


def _entry_html(entry: Entry, results: pd.DataFrame | list[dict] | None) -> str:
    parts = [f"<details id='{_e(entry.id)}'><summary><code>{_e(entry.id)}</code> "
             f"<span class='{_e(entry.status)}'>{_e(entry.status)}</span> {_e(entry.title)}</summary>"]
    for place in entry.spec:
        parts.append(f"<div>{_e(place.file)} {_e(' '.join(place.refs))}<blockquote>{_e(place.text)}</blockquote></div>")
    parts.append("<table><tr><th>reading</th><th>means</th></tr>")
    parts += [f"<tr><td>{_e(r.id)}</td><td>{_e(r.means)}</td></tr>" for r in entry.readings]
    parts.append("</table>")
    if entry.sources:
        parts.append("<table><tr><th>source</th><th>where</th><th>says</th></tr>")
        parts += [f"<tr><td>{_e(s.name)}</td><td>{_e(s.where)}</td><td>{_e(s.says)}</td></tr>"
                  for s in entry.sources]
        parts.append("</table>")
    parts.append(f"<div>decided by: {', '.join(f'<code>{_e(d)}</code>' for d in entry.decided_by)}</div>")
    if entry.observations:
        parts.append("<table><tr><th>device</th><th>driver</th><th>ptxas</th><th>answer</th><th>run</th>"
                     "<th>date</th></tr>")
        parts += [f"<tr><td>{_e(o.device)}</td><td>{_e(o.driver)}</td><td>{_e(o.ptxas)}</td>"
                  f"<td>{_e(o.answer)}</td><td>{_e(o.run)}</td><td>{_e(o.date)}</td></tr>"
                  for o in entry.observations]
        parts.append("</table>")
    answers = _run_answers(entry, results)
    if answers:
        parts.append("<table><tr><th>this run: case</th><th>device</th><th>backend</th><th>answer</th></tr>")
        parts += [f"<tr><td>{_e(a['case'])}</td><td>{_e(a['device'])}</td><td>{_e(a['backend'])}</td>"
                  f"<td>{_e(a['answer'])}</td></tr>" for a in answers]
        parts.append("</table>")
    parts.append("</details>")
    return "\n".join(parts)


def render_html(register: Register, observations_df: pd.DataFrame | None = None) -> str:
    """One ``<section id="ambiguities">`` for the run report (no ``<html>`` wrapper)."""
    n_open = sum(e.status == "open" for e in register.entries)
    head = (f"<section id='ambiguities'>{_STYLE}<h2>Ambiguity register</h2>"
            f"<p>{len(register)} entries, {n_open} open. Observations are filled from run results only; "
            "a model-backend answer is a hypothesis, not a hardware observation.</p>")
    rows = _rows(observations_df)
    body = "\n".join(_entry_html(e, rows) for e in register.entries)
    return head + body + "</section>\n"
