"""Every mutant of the registry is caught by the suites on the model backend (the PTX VM), not only by a
unit test of the helper it breaks.

CI runs the fast subset (``Mutant.fast``: one mutant per family, one case each); ``pytest -m mutants_full``
(or ``mmacts selftest --mutants``) runs all of them. A mutant that survives is a test to write."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mmacts.mutants import registry as R
from mmacts.mutants.engine import cases_for
from mmacts.mutants.run import run_all


def _peers_absent(m: R.Mutant) -> bool:
    """A mutant caught by the peers suite has no case where Triton/CUTLASS are not installed (the floor env)."""
    return m.suite == R.PE and not cases_for(m)


def _check(m: R.Mutant) -> None:
    if _peers_absent(m):
        pytest.skip(f"{m.name}: its killers are peers cases, and no peer is installed here")
    (res,) = run_all([m], jobs=1, progress=False)
    assert res.killed, f"{m.name} ({m.what}) survived: {res.how}; {res.verdicts}"
    if m.family != "kernel" and not m.refusal:
        allowed = ("fail", "observed") if m.observed else ("fail",)
        assert res.how in allowed, f"{m.name}: caught by {res.how}, must be one of {allowed}"


FAST = [replace(m, limit=1) if m.suite == R.TC and m.family != "comparator" else m for m in R.fast_mutants()]


@pytest.mark.parametrize("mutant", FAST, ids=lambda m: m.name)
def test_fast_mutant_is_caught(mutant: R.Mutant) -> None:
    _check(mutant)


@pytest.mark.mutants_full
@pytest.mark.parametrize("mutant", R.all_mutants(), ids=lambda m: m.name)
def test_mutant_is_caught(mutant: R.Mutant) -> None:
    _check(mutant)


def test_registry_covers_every_family_and_field() -> None:
    ms = R.all_mutants()
    fams = {m.family for m in ms}
    for side in ("host", "vm"):
        for f in ("idesc", "sdesc", "swizzle", "sf", "atmem", "dplace", "packed", "mmasync"):
            assert f"{f}-{side}" in fams
    assert {"comparator", "kernel", "t42-host", "t45-host"} <= fams
    rows = {r for m in ms for r in m.rows}
    for table, fields in R.IDESC_ROWS.items():
        assert {f"{table}.{r}" for r in fields.values()} <= rows
    assert {f"T40.{r}" for r in range(1, 9)} <= rows
    assert {f"T45.{r}" for r in (1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13)} <= rows
    assert all(cases_for(m) or _peers_absent(m) for m in ms), "every mutant selects at least one case"
    assert {m.family for m in R.fast_mutants()} >= fams - {"kernel"}


def test_comparator_controls_all_pass_unmutated() -> None:
    from mmacts.mutants.engine import run_cases
    from suites.tcgen05_blockscale.cases import CONTROLS
    from suites.tcgen05_blockscale.driver import DRIVER

    cases = [c for c in DRIVER.cases("standard") if c.recipe.startswith("control:")]
    assert len(cases) == len(CONTROLS) == 16
    recs = run_cases(DRIVER.suite, cases)
    assert all(r["status"] == "pass" for r in recs.values()), {k: r["message"] for k, r in recs.items()
                                                              if r["status"] != "pass"}


def test_merging_new_results_keeps_the_rows_old_mutants_proved() -> None:
    """``--merge`` rebuilds the coverage of mutants it does not re-run from coverage.json, which keeps only 10
    killers per mutant: the rows they proved must come back from the rows table (a merge once turned
    T42.4/.6/.7 into citation-only rows)."""
    from mmacts.mutants.run import COVERAGE_PATH, coverage_data, load_coverage, merged

    old = load_coverage(COVERAGE_PATH)
    assert old is not None
    again = coverage_data(merged(old, []))
    lost = sorted(r for r, e in old["rows"].items() if e.get("covered") and not again["rows"].get(r, {}).get("covered"))
    assert lost == []


def test_a_mutant_with_no_case_here_is_skipped_not_a_crash(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture) -> None:
    """Where an optional suite is absent (the peers extra), its mutants select nothing: the self-test says so and
    runs the rest; it did raise "no case selected" in the worker pool."""
    from mmacts.mutants import run as RUN

    nobody = replace(R.all_mutants()[0], name="nobody.selects", pick=lambda c: False)
    monkeypatch.setattr(R, "all_mutants", lambda: [nobody])
    assert RUN.main(["-k", "nobody"]) == 0
    assert "skipped 1 mutants that select no case here" in capsys.readouterr().out
    assert RUN.main(["--write-coverage"]) == 2
