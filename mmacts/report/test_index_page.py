"""index.html read in a minute (issue 24 item 4): summary and a table of contents first, failures before
observations, observed answers grouped and collapsed with no placeholder rows, an inline filter (no
network), coverage wording that agrees with the mutation score, no kernel-time columns a CPU run
cannot fill."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from mmacts.core.records import empty_record
from mmacts.report import html
from mmacts.report.coverage import row_coverage
from mmacts.report.frame import to_frame

OBS = json.dumps({"answer": "block_size=16", "measured_bits": ["477fe800"]})


def _df(failing: bool = True) -> pd.DataFrame:
    recs = [empty_record(case_id=f"t.pass{i}", suite="t", status="pass", backend="model", run_s=0.01,
                         spec_rows="T44.1") for i in range(50)]
    recs += [empty_record(case_id=f"probes.block_size.p{i}", suite="probes", status="observed", backend="model",
                          observation=OBS, message="observation") for i in range(3)]
    recs += [empty_record(case_id="x.st.probe:sparse_meta", suite="tcgen05", status="observed", backend="model",
                          message="observation; no JSON for this one")]
    if failing:
        recs.append(empty_record(case_id="t.bad", suite="t", status="fail", backend="model", message="2 mismatches"))
    return to_frame(recs)


def test_summary_toc_then_failures_then_observations() -> None:
    page = html.render(_df(), {"expectations": None}, ["<h2>Ambiguity register</h2><p>entries</p>"])
    order = [page.index(x) for x in ("<h1>mmacts run</h1>", "<nav class='toc'>", "<h2 id='failures'>",
                                     "<h2 id='observed'>", "<h2 id='counts'>", "<h2 id='run'>",
                                     "<details id='register'>")]
    assert order == sorted(order), order
    for anchor in re.findall(r"<a href='#([\w-]+)'>", page):
        assert f"id='{anchor}'" in page, f"table of contents links to a missing #{anchor}"


def test_observed_answers_are_grouped_collapsed_and_never_blank() -> None:
    page = html.render(_df(), {})
    assert "no observation JSON" not in page
    groups = re.findall(r"<details class='obs'><summary><b>([^<]+)</b> \((\d+)\)", page)
    assert groups == [("probe:sparse_meta", "1"), ("probes.block_size", "3")]
    sparse = page.split("<b>probe:sparse_meta</b>")[1].split("</details>")[0]
    assert "answer" not in sparse and "no JSON for this one" in sparse  # no empty answer column


def test_the_filter_is_inline_and_the_page_fetches_nothing() -> None:
    page = html.render(_df(), {})
    assert "id='filter'" in page and "table.filterable" in page and "filterable" in page.split("<h2 id='failures'>")[1]
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=['\"]?https?:", page)


def test_a_cpu_run_has_no_kernel_time_columns() -> None:
    page = html.render(_df(), {})
    timing = page.split("<h2 id='timing'>")[1].split("</table>")[0]
    assert "run_s" in timing and "kernel_us" not in timing


def test_coverage_wording_agrees_with_the_mutation_score() -> None:
    """A row whose mutants were all killed, by cases that do not cite it, is not 'mutant survived'
    (index.html said so beside '274/274 mutants killed')."""
    cov = {"mutants": [{"name": "m1", "killed": True}, {"name": "m2", "killed": False}],
           "rows": {"T35.3": {"mutants": ["m1"], "killing_mutants": [], "covered": False},
                    "T37.2": {"mutants": ["m1", "m2"], "killing_mutants": [], "covered": False},
                    "T44.1": {"mutants": ["m1"], "killing_mutants": ["m1"], "covered": True,
                              "failing_cases": ["t.pass0"]}}}
    got = dict(row_coverage({"T35.3": 1, "T37.2": 1, "T44.1": 2, "T99.1": 1}, cov)[["row", "can fail"]].values)
    assert got == {"T35.3": "no: its mutants were caught by cases not citing it",
                   "T37.2": "no: mutant survived (m2)", "T44.1": "yes", "T99.1": "citation only"}


@pytest.mark.skipif(not __import__("shutil").which("chromium"), reason="chromium is not installed")
def test_a_run_without_failures_is_under_5000_px(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    import page_height

    from mmacts.report.write import _extra_sections

    df = to_frame([empty_record(case_id=f"t.pass{i}", suite="t", status="pass", backend="model", spec_rows="T44.1")
                   for i in range(2000)] + [empty_record(case_id=f"probes.f{i % 20}.p{i}", suite="probes",
                                                         status="observed", backend="model", observation=OBS)
                                            for i in range(200)])
    page = tmp_path / "index.html"
    page.write_text(html.render(df, {}, _extra_sections(df)), encoding="utf-8")
    assert page_height.height(page, page_height.chromium()) < 5000


def test_coverage_per_feature_beside_the_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26 item 3: index.html shows, per feature, can-fail / observed-only / none; a feature whose only
    caught mutant was seen by an observation is not shown as proved."""
    from mmacts.report import mutant_features
    from mmacts.report.coverage import html_sections

    cov = {"date": "d", "score": {"killed": 2, "total": 2},
           "mutants": [{"name": "dplace-vm.dol-msb-first", "killed": True, "how": "observed", "killers": ["c.dol"]},
                       {"name": "shift-vm.rows-up", "killed": True, "how": "fail", "killers": ["c.shift"]}],
           "rows": {"T44.1": {"mutants": ["shift-vm.rows-up"], "killing_mutants": ["shift-vm.rows-up"],
                              "covered": True, "failing_cases": ["t.pass0"]}}}
    monkeypatch.setattr(mutant_features, "load_coverage", lambda: cov)
    page = "".join(html_sections(_df(failing=False)))
    assert page.index("per spec row") < page.index("per feature (14 features)")
    assert "1 of 14 features a failing mutant proves can fail, 1 observed-only (disable-output-lane), 12 none" in page
    got = {f: s for f, s in re.findall(r"<tr>\s*<td>([\w.-]+)</td>\s*<td>([\w-]+)</td>", page.split("per feature")[1])}
    assert got["disable-output-lane"] == "observed-only" and got["shift.down"] == "can-fail"
    assert got["collector.a"] == "none" and len(got) == 14
