"""The issue-26 cases: tcgen05.ld/st shapes, shift, .ws buffers, disable-output-lane, the peer SFB copy, the
collector decoy, UE4M3 0x7F, signed-zero controls -- their expected values say what the spec says, and they
agree with the PTX VM (the planted faults that must break them are in mmacts/mutants/registry.py)."""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.backends.execute import Executor
from mmacts.ptx import tcgen05_feature_kernels as FK
from suites.tcgen05_blockscale import features as FT
from suites.tcgen05_blockscale import plain as PL
from suites.tcgen05_blockscale.driver import DRIVER


@pytest.fixture(scope="module")
def standard():
    return DRIVER.cases("standard")


def test_shift_want_moves_rows_down() -> None:
    case = next(c for c in DRIVER.cases("standard") if c.recipe == "feature:shift")
    inp = FT.make_inputs(case)
    w = FT.want_shift(inp)
    assert (w[97, 3:11] == inp.pre[96, 3:11]).all() and (w[96, 3:11] == inp.pre[96, 3:11]).all()
    assert (w[0:96, 3:11] == inp.pre[0:96, 3:11]).all() and (w[32, 16:24] == inp.pre[32, 16:24]).all()
    assert (w[97:, 0:3] == inp.pre[97:, 0:3]).all() and (w[97:, 11:16] == inp.pre[97:, 11:16]).all()


def test_ws_buffer_bookkeeping_and_mask_bit_order() -> None:
    assert PL._buffers(("b1::fill", "b2::fill", "b1::use", "b2::lastuse")) == [0, 1, 0, 1]
    assert PL._buffers(("b3::fill", "b0::fill", "b3::lastuse", "b0::lastuse")) == [0, 1, 0, 1]
    for mask in PL.DOL_MASKS:  # asymmetric under bit reversal inside a word: an MSB-first reading differs
        assert any(int(f"{w:032b}"[::-1], 2) != w for w in mask)
    case = next(c for c in DRIVER.cases("standard") if c.recipe == "plain:dol")
    inp = PL.make_inputs(case)
    d = PL.expected_d(inp)
    assert np.array_equal(d[0], inp.c[0]) and np.array_equal(d[63], inp.c[63])  # word 0 bit 0, word 1 bit 31


@pytest.mark.parametrize("pattern,statuses", [
    ("feature:shift", {"pass"}), ("probe:shift_row_scope", {"observed"}), ("plain:", {"pass"}),
    ("ldst.16x64b", {"pass"}), ("probe:sfb_peer_copy", {"observed"}), ("probe:collector_reuse", {"observed"}),
    ("probe:ue4m3_nan_scale", {"observed"}), ("control:signed_zero_asked", {"pass"}),
    ("smemA-overwritten-after-fill", {"observed"}),
])
def test_new_cases_agree_with_the_vm(standard, pattern: str, statuses: set[str]) -> None:
    picked = [c for c in standard if pattern in c.case_id][:2]
    assert picked
    ex = Executor("model")
    for c in picked:
        ex.all_cases.setdefault(repr(c.form_key), []).append(c)
    for c in picked:
        rec = ex.execute(DRIVER, c)
        clean = pattern.startswith("control:") or not rec.get("mismatches")  # a control's mismatch is its point
        assert rec["status"] in statuses and clean, (c.case_id, rec["status"], rec["message"])


def test_ue4m3_nan_probe_wants_nan_rows_and_columns(standard) -> None:
    case = next(c for c in standard if c.recipe == "probe:ue4m3_nan_scale" and c.form["cta_group"] == 1)
    want = DRIVER.expected(case, DRIVER.make_inputs(case)).want
    assert np.isnan(want[5]).all() and np.isnan(want[:, 7]).all() and np.isfinite(want[0, 0])


def test_feature_case_ids_are_readable_and_cite_rows(standard) -> None:
    feats = [c for c in standard if FT.is_feature(c)]
    assert len(feats) == 3 * len(FK.LDST_NUMS) + 2 + 4  # + the lane-8 probes (plain and .pack::16b, ld and st)
    exact = [c for c in feats if not c.recipe.startswith("probe:")]
    assert all(c.spec_rows for c in exact) and all(not c.spec_rows for c in feats if c not in exact)
