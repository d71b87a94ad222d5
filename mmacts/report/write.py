"""Write the six report files of a run directory from its ``results.jsonl``.

Every file is written atomically, run.json last with ``complete: true``: a
directory whose run.json does not say complete was not finished, whatever else
it holds.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pandas as pd

from mmacts.ambiguity import load_register, render_html
from mmacts.cases.status import CRASH, ERROR, NOT_SUPPORTED, SKIP, TIMEOUT, XFAIL
from mmacts.core.records import latest_by_case, read_jsonl
from mmacts.report import html as html_report
from mmacts.report.atomic import write_atomic, write_text_atomic
from mmacts.report.frame import to_frame
from mmacts.report.runinfo import now

REPORT_FILES = ("results.jsonl", "results.parquet", "results.csv", "junit.xml", "run.json", "index.html")


def load_results(run_dir: Path) -> pd.DataFrame:
    """The results table of a run directory (last record per case)."""
    return to_frame(latest_by_case(read_jsonl(Path(run_dir) / "results.jsonl")))


_JUNIT_PROPS = ("status", "backend", "executor", "device", "arch", "spec_rows", "assumes", "compare_mode")


def _junit_properties(rec: dict[str, Any]) -> list[tuple[str, str]]:
    """``mmacts.<column>`` for the columns a CI dashboard filters on; empty ones left out."""
    out = []
    for col in _JUNIT_PROPS:
        v = rec.get(col)
        if v is None or (not isinstance(v, str) and pd.isna(v)) or str(v) == "":
            continue
        out.append((f"mmacts.{col}", str(v)))
    return out


def junit_xml(df: pd.DataFrame) -> str:
    """JUnit XML, one testsuite per suite, for CI dashboards that read it."""
    root = ET.Element("testsuites", name="mmacts")
    for suite, part in df.groupby("suite", dropna=False):
        ts = ET.SubElement(root, "testsuite", name=str(suite), tests=str(len(part)))
        counts = {"failures": 0, "errors": 0, "skipped": 0, "observed": 0}
        for rec in part.to_dict("records"):
            tc = ET.SubElement(ts, "testcase", classname=str(suite), name=str(rec["case_id"]),
                               time=str(rec["run_s"] if pd.notna(rec["run_s"]) else 0))
            st, msg = rec["status"], str(rec["message"] or "")
            props = ET.SubElement(tc, "properties")
            for name, value in _junit_properties(rec):
                ET.SubElement(props, "property", name=name, value=value)
            if st == "fail":
                ET.SubElement(tc, "failure", message=msg[:500]).text = msg
                counts["failures"] += 1
            elif st in (ERROR, CRASH, TIMEOUT):
                ET.SubElement(tc, "error", message=f"{st}: {msg[:500]}").text = msg
                counts["errors"] += 1
            elif st in (SKIP, NOT_SUPPORTED, XFAIL):
                ET.SubElement(tc, "skipped", message=f"{st}: {msg[:500]}")
                counts["skipped"] += 1
            elif st == "flake":  # passed on a retry: a pass with the failed attempt attached (Surefire's rerun form)
                ET.SubElement(tc, "flakyFailure", message=msg[:500]).text = msg
                n = int(rec["attempts"]) if pd.notna(rec.get("attempts")) else "?"
                ET.SubElement(tc, "system-out").text = f"mmacts status flake: passed after {n} attempts"
            elif st == "observed":  # a recorded answer, not a pass: no verdict element, said in a property and here
                ET.SubElement(tc, "system-out").text = (
                    f"mmacts status observed: a probe's answer, recorded and never judged (not a pass). {msg}").strip()
                counts["observed"] += 1
        observed = counts.pop("observed")
        for k, v in counts.items():
            ts.set(k, str(v))
        if observed:  # testsuite attributes are fixed by the schema: the count goes in a property
            sp = ET.Element("properties")
            ET.SubElement(sp, "property", name="mmacts.observed", value=str(observed))
            ts.insert(0, sp)
    return ET.tostring(root, encoding="unicode")


def _extra_sections(df: pd.DataFrame) -> list[str]:
    """Sections other layers contribute: the ambiguity register with this run's answers."""
    try:
        return [render_html(load_register(), df)]
    except Exception as exc:  # the report must still be written
        return [f"<h2>Ambiguity register</h2><p>could not render: {exc}</p>"]


def write_reports(run_dir: Path, run: dict[str, Any]) -> pd.DataFrame:
    """Write parquet, csv, junit, html, then run.json marked complete."""
    run_dir = Path(run_dir)
    df = load_results(run_dir)
    write_atomic(run_dir / "results.parquet", lambda p: df.to_parquet(p, index=False))
    write_atomic(run_dir / "results.csv", lambda p: df.to_csv(p, index=False))
    write_text_atomic(run_dir / "junit.xml", junit_xml(df))
    run = dict(run, end=now(), complete=True, counts=df["status"].value_counts().to_dict())
    write_text_atomic(run_dir / "index.html", html_report.render(df, run, _extra_sections(df)))
    write_text_atomic(run_dir / "run.json", json.dumps(run, indent=2, default=str))
    return df
