"""Generated mutation (cosmic-ray) over project modules: the machinery is pinned without the tool; with the tool
installed (``pip install cosmic-ray``), a seeded sample of one module's mutants must each be killed by the
target's cases or stand in ``generated/survivors.yaml`` with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmacts.mutants import generated as GEN

ROOT = Path(__file__).resolve().parents[2]


def test_targets_name_modules_and_cases() -> None:
    from mmacts.mutants.engine import _driver

    for name, t in GEN.TARGETS.items():
        assert (ROOT / t.module).is_file(), name
        assert all((ROOT / u).is_file() for u in t.unit_tests)
        picked = [c for s in t.suites for c in _driver(s).cases("standard") if t.pick(c)]
        assert picked, f"target {name} selects no suite case"


def test_the_check_passes_unmutated() -> None:
    assert GEN.check("shift") == 0


def test_every_committed_survivor_has_a_reason() -> None:
    doc = GEN.load_survivors()
    missing = [f"{t}: {k}" for t, ss in doc.items() for k, v in (ss or {}).items() if not str(v.get("reason", ""))]
    assert not missing, missing


def test_survivor_keys_survive_renumbering() -> None:
    m = {"operator": "core/NumberReplacer", "line": 40, "diff": "--- a\n+++ b\n-    x = 1\n+    x = 2\n"}
    assert GEN._key(m) == GEN._key(dict(m, line=41)) == "core/NumberReplacer @ x = 1 => x = 2"


@pytest.mark.skipif(GEN.cosmic_ray() is None, reason="cosmic-ray not installed (pip install cosmic-ray)")
def test_a_sample_of_generated_mutants_is_killed_or_justified() -> None:
    _, _, results = GEN.run_target(GEN.cosmic_ray(), "shift", sample=2, seed=26, progress=False)
    known = GEN.load_survivors().get("shift", {}) or {}
    for r in results:
        assert r["outcome"] == "killed" or GEN._key(r) in known, r


def _doc(target: str, results: list[dict]) -> dict:
    return {"target": target, "module": f"m/{target}.py", "mutants_listed": 10, "results": results}


def _m(outcome: str, by: str = "", line: int = 1) -> dict:
    return {"operator": "core/AddNot", "line": line, "outcome": outcome, "killed_by": by,
            "diff": f"--- a\n+++ b\n-    x = {line}\n+    x = not {line}\n"}


def test_the_report_counts_each_outcome(tmp_path: Path) -> None:
    """Killed by a suite case (or by a crash: the mutated module no longer imports), by a unit test only,
    survivors with and without a reason, mutants not judged -- each in its column, and an unexplained survivor
    makes ``report`` exit 1 (planted: a survivor whose reason is empty)."""
    import json

    import yaml

    res = [_m("killed", "suite"), _m("killed", ""), _m("killed", "unit-test"), _m("survived", line=2),
           _m("survived", line=3), _m("timeout")]
    (tmp_path / "a.json").write_text(json.dumps(_doc("a", res)))
    surv = {"a": {GEN._key(_m("survived", line=2)): {"reason": "equivalent: x"},
                  GEN._key(_m("survived", line=3)): {"reason": ""}}}
    (tmp_path / "survivors.yaml").write_text(yaml.safe_dump(surv))
    (row,) = GEN.report_rows(tmp_path)
    assert [row[c] for c in GEN.REPORT_COLUMNS] == ["a", "m/a.py", 10, 0, 6, 2, 1, 1, 0, 1, 1, 6]  # no m/a.py
    assert GEN.report(tmp_path) == 1
    (tmp_path / "unit_only.yaml").write_text("a: host-side validation\n")
    surv["a"][GEN._key(_m("survived", line=3))]["reason"] = "hole: no case reaches x"
    (tmp_path / "survivors.yaml").write_text(yaml.safe_dump(surv))
    assert GEN.report(tmp_path) == 0
    total = "| total | 1 modules | 10 | 0 | 6 | 2 | 1 | 1 | 1 | 0 | 1 | 6 |"
    assert total in GEN.markdown_table(GEN.report_rows(tmp_path))


def test_a_survivors_rerun_replaces_only_their_outcomes() -> None:
    old = _doc("a", [_m("killed", "suite"), _m("survived", line=2), _m("survived", line=3)])
    new = GEN._replace_results(old, [_m("killed", "unit-test", line=2)])
    assert [r["outcome"] for r in new["results"]] == ["killed", "killed", "survived"]
    assert (new["killed"], new["killed_by_suite"], new["judged"]) == (2, 1, 3)


def test_a_rerun_keeps_mutants_of_equal_lines_apart(tmp_path: Path) -> None:
    """Two equal source lines (``sel = cta == v`` twice in mma_plain) give their mutants one survivor key; a
    re-run of that key runs both: the sampled one keeps its own outcome and its survivor entry stays (planted:
    matching by the key alone recorded the other line's kill for it and dropped the reason)."""
    sampled = dict(_m("survived", line=2), occurrence=25, function="f")
    twin = dict(_m("killed", "suite", line=2), occurrence=29, line=9, function="g")
    assert GEN._key(sampled) == GEN._key(twin)
    new = GEN._replace_results(_doc("a", [_m("killed", "suite"), sampled]), [sampled, twin])
    assert [(r["outcome"], r["occurrence"]) for r in new["results"][1:]] == [("survived", 25)]
    path = tmp_path / "survivors.yaml"
    path.write_text("a:\n  " + repr(GEN._key(sampled)) + ":\n    line: 2\n    reason: equivalent\n")
    assert GEN.merge_survivors("a", [sampled, twin], full=False, path=path) == 0
    assert GEN.load_survivors(path)["a"][GEN._key(sampled)]["reason"] == "equivalent"


def test_every_committed_result_is_explained() -> None:
    """The committed runs (``generated/*.json``): every survivor has its reason in survivors.yaml."""
    rows = GEN.report_rows()
    assert {r["target"] for r in rows} >= {"compare", "shift"}
    assert [r["target"] for r in rows if r["unexplained"]] == []
    assert GEN.unit_only_unnoted(rows) == [], f"say in {GEN.UNIT_ONLY} why no suite case sees them"


def test_readme_shows_the_report_table() -> None:
    """README's score table is the one ``python -m mmacts.mutants.generated report`` computes (figures drift
    otherwise: issue 24)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("<!-- generated-mutation:begin -->", 1)[1].split("<!-- generated-mutation:end -->", 1)[0]
    got = "\n".join(ln.strip() for ln in table.strip().splitlines())
    assert got == GEN.markdown_table(GEN.report_rows()), "README: paste GEN.markdown_table(GEN.report_rows())"


def test_index_page_and_list_show_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    from mmacts.report.coverage import generated_section
    from mmacts.runner import cli

    line = GEN.summary_line(GEN.report_rows())
    html_ = "".join(generated_section())
    assert line in html_ and "<td>shift</td>" in html_
    cli.main(["list", "--level", "smoke", "--rows", "T39.1"])
    assert f"# {line}" in capsys.readouterr().out.splitlines()


def test_annotations_and_the_bare_star_are_static() -> None:
    """Mutants of an annotation or of a signature's keyword-only ``*`` change nothing that runs (planted: a
    default value and a body operator on the same lines must stay runnable)."""
    src = ("from __future__ import annotations\n\n\n"
           "def f(a: int | None, *, b: int = 3) -> int | None:\n"
           "    y: int | None = a * 2\n    return y\n")
    sp = GEN.static_positions(src)

    def static(op: str, line: int, col: int) -> bool:
        return GEN.is_static({"operator_name": f"core/{op}", "start_pos": [line, col]}, sp)

    assert static("ReplaceBinaryOperator_BitOr_Sub", 4, 13) and static("ReplaceBinaryOperator_Mul_Div", 4, 21)
    assert static("ReplaceBinaryOperator_BitOr_Pow", 4, 43) and static("ReplaceBinaryOperator_BitOr_Mul", 5, 11)
    assert not static("NumberReplacer", 4, 33) and not static("ReplaceBinaryOperator_Mul_Div", 5, 22)


@pytest.mark.skipif(GEN.cosmic_ray() is None, reason="cosmic-ray not installed (pip install cosmic-ray)")
def test_a_timed_out_mutant_leaves_the_module_as_it_was(tmp_path: Path) -> None:
    """A mutate-and-test past --timeout is killed with its check, and the module is restored (planted: the
    restore left out, the next mutant applied on top of this one -- it happened in a run of numerics.py).
    The collector target's check runs ~20 cases, far longer than the 5 s given."""
    GEN._copy_tree(tmp_path)
    module = tmp_path / GEN.TARGETS["collector"].module
    items = GEN.work_items(GEN.cosmic_ray(), tmp_path, GEN.TARGETS["collector"].module)
    item = next(it for it in items if it["operator_name"] == "core/AddNot")
    before = module.read_text()
    r = GEN.run_one(GEN.cosmic_ray(), tmp_path, item, "collector", timeout=5.0)
    assert r["outcome"] == "timeout" and module.read_text() == before


def test_a_mutant_whose_line_the_module_no_longer_has_counts_as_source_changed(tmp_path: Path) -> None:
    """The score of a committed run describes the module as it was: a refactor since then shows per target
    (planted: the mutated line edited away -> counted; present again -> not)."""
    from mmacts.report.mutant_scores import source_changed

    (tmp_path / "m").mkdir()
    doc = _doc("a", [_m("killed", "suite", line=1), _m("survived", line=2)])
    (tmp_path / "m" / "a.py").write_text("def f():\n    x = 1\n    x = 2\n")
    assert source_changed(doc, tmp_path) == 0
    (tmp_path / "m" / "a.py").write_text("def f():\n    x = 1\n    y = 2\n")
    assert source_changed(doc, tmp_path) == 1
    (tmp_path / "m" / "a.py").unlink()
    assert source_changed(doc, tmp_path) == 2
