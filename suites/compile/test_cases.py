"""Pins of the compile-suite enumeration: stable unique IDs, nested levels, row coverage."""

from __future__ import annotations

from collections import defaultdict

import pytest

from mmacts.cases.model import Case
from suites.compile import spaces as S
from suites.compile.driver import DRIVER


def _by_level() -> dict[str, list[Case]]:
    return {lv: DRIVER.cases(lv) for lv in ("smoke", "standard", "full")}


def test_ids_unique_stable_and_levels_nested():
    lv = _by_level()
    ids = [c.case_id for c in lv["full"]]
    assert len(ids) == len(set(ids))
    assert set(c.case_id for c in lv["smoke"]) <= set(c.case_id for c in lv["standard"]) <= set(ids)
    assert 20 <= len(lv["smoke"]) <= 80
    for c in lv["full"]:
        assert c.case_id.startswith("compile.") and c.case_id.endswith(f"/{c.arch}/{c.expect}")
    assert "compile.tcgen05.mma.cta_group1.kind_mxf4nvf4.block_scale.block16/sm_100a/accept" in ids


def _coverage(cases: list[Case]) -> dict[str, set[str]]:
    cov: dict[str, set[str]] = defaultdict(set)
    for c in cases:
        for r in c.spec_rows:
            cov[r].add(c.expect)
    return cov


def test_standard_covers_every_row_positively_and_negatively_where_a_complement_exists():
    cov = _coverage(DRIVER.cases("standard"))
    # Table 39: every printed row; the Invalid rows only negatively.
    for r in S.T39:
        want = {"reject"} if r.invalid else {"accept", "reject"}
        assert want <= cov[f"T39.{r.row}"], (r, cov[f"T39.{r.row}"])
    rows = ([f"T35.{i}" for i in (1, 2, 3)] + [f"T36.{i}" for i in (1, 2, 3, 4)] + [f"T37.{i}" for i in (1, 2, 3)]
            + [f"T47.{i}" for i in range(1, 9)] + [f"T48.{i}" for i in range(1, 9)]
            + [f"T49.{i}" for i in range(1, 8)] + [f"T50.{i}" for i in (1, 2)]
            + [f"T54.{i}" for i in (1, 2, 3, 5, 7, 8)] + [f"T55.{i}" for i in (1, 2, 3, 4)])
    for ref in rows:
        assert "accept" in cov[ref], ref
    for ref in ("T36.1", "T36.2", "T36.3", "T36.4", "T37.1", "T37.2", "T37.3", "T47.7", "T47.8", "T48.8",
                "T49.5", "T49.6", "T49.7", "T50.1", "T50.2", "T55.1", "T55.2", "T55.3"):
        assert "reject" in cov[ref], ref
    for sect in (S.S_ALLOC, S.S_LD, S.S_ST, S.S_WAIT, S.S_CP, S.S_SHIFT, S.S_FENCE, S.S_COMMIT, S.S_MMA,
                 S.S_MMA_SP, S.S_MMA_WS, S.S_MMA_WS_SP, S.S_MMA_SYNC_BS):
        assert {"accept", "reject"} <= cov[sect], sect


def test_target_notes_are_honoured_in_the_expectations():
    full = DRIVER.cases("full")
    by = {c.case_id: c for c in full}
    i8 = "compile.tcgen05.mma.cta_group1.kind_i8"
    assert f"{i8}/sm_100a/accept" in by and f"{i8}/sm_100f/reject" in by and f"{i8}/sm_103a/reject" in by
    assert all(c.expect == "reject" for c in full if c.arch == "sm_90a")
    assert all(c.expect == "reject" for c in full
               if c.arch in ("sm_120a", "sm_121a") and c.form["op"] != "mma.sync.block_scale")
    assert "compile.tcgen05.shift.cta_group1.order_syntax/sm_100f/reject" in by


def test_every_positive_compile_case_has_the_minimum_version_of_its_target():
    from mmacts.ptx.module import min_ptx_for_target, version_key

    for c in DRIVER.cases("standard"):
        v = c.form["ptx_version"]
        if not c.form.get("version_probe"):
            assert version_key(v) >= version_key(min_ptx_for_target(c.arch)), c.case_id


def test_module_for_a_case_is_complete():
    c = DRIVER.cases("smoke")[0]
    ptx = DRIVER.module_ptx(c)
    assert ptx.startswith(".version ") and f".target {c.arch}" in ptx and ".entry" in ptx


@pytest.mark.parametrize(("first", "arch"), [("shift", "sm_100f"), ("cp", "sm_90a")])
def test_mixed_cta_group_refusal_for_the_target_lands_on_the_marked_pair(first, arch):
    """The mixed-.cta_group rule concerns two instructions; on a target lacking the first one
    ptxas refuses there, which must still count as 'refused at the instruction under test'."""
    from mmacts.ptx.compile_forms import UNDER_TEST_MARK, build_module
    from mmacts.toolchain.assemble import assemble
    from mmacts.toolchain.conformance import error_lines, under_test_lines

    ptx = build_module({"op": "tcgen05.mixed_cta_group", "first": first}, arch, "8.8")
    assert ptx.count(UNDER_TEST_MARK) == 2
    r = assemble(ptx, arch)
    assert not r.ok
    blamed = error_lines(r.log)
    assert blamed and blamed <= under_test_lines(ptx), (blamed, r.first_error_line)
