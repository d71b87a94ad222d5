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
    ("smemA-overwritten-after-fill", {"observed"}), ("plain:layout-", {"pass"}), ("plain:a-tmem", {"pass"}),
    ("plain:sparse-meta", {"observed"}), ("plain:i8-saturate", {"pass"}),
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


def _shape(standard, recipe: str, kind: str = "f8f6f4"):
    case = next(c for c in standard if c.recipe == recipe and c.form["kind"] == kind)
    return case, PL.make_inputs(case)


def test_plain_shape_cases_cover_the_four_forms(standard) -> None:
    got = {(c.form["cta_group"], c.runtime["m"], c.form["sparse"], c.form["a_tmem"], c.form["kind"],
            c.runtime["d_lane"]) for c in standard if c.recipe in PL.SHAPE_RECIPES}
    assert {(1, 64, False, False, "f8f6f4", 0), (1, 64, False, False, "f8f6f4", 16),
            (2, 256, False, False, "f8f6f4", 0), (2, 256, False, False, "tf32", 0), (1, 128, True, False, "f8f6f4", 0),
            (1, 128, True, False, "i8", 0), (1, 128, False, True, "f8f6f4", 0), (1, 128, False, True, "f16", 0)} <= got
    a_tmem = {c.runtime["atype"] for c in standard if c.recipe == "plain:a-tmem"}
    assert a_tmem == {"e4m3", "e5m2", "f16", "bf16", "tf32", "s8"}  # every A container width, each kind
    d16 = next(c for c in standard if c.recipe == "plain:d-f16")
    assert d16.runtime["d_type"] == "f16" and d16.runtime["negate_a"] and "negate_a" in d16.case_id
    inp = PL.make_inputs(d16)
    assert not (inp.programs[0].preload[:, :inp.n] >> 16).any()  # the old f16 D fills only the low halves
    want = PL.expected_shape(inp)
    plain_d = -inp.extra["a_val"] @ inp.extra["b_val"] + inp.c  # exact in float64: one rounding to f16
    assert np.array_equal(want, plain_d.astype(np.float16).astype(np.float32))
    sp = next(c for c in standard if c.recipe == "plain:sparse-meta")
    exp = DRIVER.expected(sp, PL.make_inputs(sp))
    assert exp.mode == "observe" and "AMB-SPARSE-META-TMEM" in exp.note  # the metadata's place is open


def test_plain_layout_f_old_d_is_read_back_only_through_lane_32_m16(standard) -> None:
    """Layout F (9.7.16.10.5.6): D row m sits in lane 32 (m // 16) + m % 16; the position-coded old D read with
    the lane-m reading of Layout D (or any other lane map) is another matrix."""
    from reference.tcgen05_model import machine

    _, lane, _ = machine.d_placement("F", 64, 8)
    assert (lane[15, 0], lane[16, 0], lane[63, 0]) == (15, 32, 111)
    case, inp = _shape(standard, "plain:layout-F")
    pre = inp.programs[0].preload
    n = inp.n
    assert np.array_equal(machine.decode_d([pre[:, :n]], "F", 64, n), inp.c.astype(np.float32))
    assert not np.array_equal(pre[:64, :n].view(np.float32), inp.c.astype(np.float32))
    assert np.unique(inp.c).size == inp.c.size  # every old D cell distinct
    case16 = next(c for c in standard if c.recipe == "plain:layout-F" and c.runtime["d_lane"] == 16)
    inp16 = PL.make_inputs(case16)
    pre16 = inp16.programs[0].preload
    assert inp16.programs[0].mmas[0].d_tmem >> 16 == 16  # the D address names lane 16
    assert pre16[16, 0] == inp16.c.astype(np.float32).view(np.uint32)[0, 0] and not pre16[:16].any()
    assert np.array_equal(machine.decode_d([pre16[:, :n]], "F", 64, n, lane_align=16), inp16.c.astype(np.float32))


def test_plain_layout_a_ctas_differ_everywhere(standard) -> None:
    """Layout A (9.7.16.10.5.1): rows 128-255 live in the peer CTA; its A rows, B columns and old D differ from
    the leader's in every cell, so whose copy an MMA reads, or where it writes, shows."""
    case, inp = _shape(standard, "plain:layout-A")
    p0, p1 = inp.programs
    assert (p0.preload[:, :inp.n] != p1.preload[:, :inp.n]).all()
    assert not np.array_equal(p0.smem, p1.smem) and not p1.mmas  # the leader issues for both
    assert (inp.a[:128] != inp.a[128:]).any(axis=1).all()
    want = PL.expected_shape(inp)
    assert np.array_equal(want - inp.c.astype(np.float32), (inp.extra["a_val"] @ inp.extra["b_val"]).astype(np.float32))


def test_plain_sparse_and_a_tmem_inputs(standard) -> None:
    """.sp: A keeps two of every four K (zeros elsewhere) and the metadata column holds one listed nibble per
    chunk; A in TMEM: kind::f16 two elements per column, the lower k in bits 0-15."""
    from suites.tcgen05_blockscale.build import SPARSE_INDEX_VALUES

    for kind in ("f8f6f4", "i8"):
        case, inp = _shape(standard, "plain:sparse-meta", kind)
        a = inp.extra["a_val"]
        assert ((a.reshape(a.shape[0], -1, 4) != 0).sum(axis=2) <= 2).all()
        nib = (inp.programs[0].preload[:, PL.META_COL:PL.META_COL + 2, None] >> (4 * np.arange(8))) & 0xF
        assert np.isin(nib, SPARSE_INDEX_VALUES).all()
    case, inp = _shape(standard, "plain:a-tmem", "f16")
    cell = inp.programs[0].preload[:, PL.A_COL]
    assert np.array_equal(cell & 0xFFFF, inp.a[:, 0]) and np.array_equal(cell >> 16, inp.a[:, 1])


def test_plain_i8_saturate_clamps_some_cells_at_each_limit(standard) -> None:
    """kind::i8 with Table 42's saturate bit: the old D sits near both s32 limits, every product of a cell has the
    column's sign (so any accumulation order clamps alike), some cells cross each limit and their neighbours stay
    inside; the want is clamp(old D + A B) less the old D, exact in fp32 where the s32 values are not."""
    from reference import gemm as G
    from suites.tcgen05_blockscale.build import decode_output

    case, inp = _shape(standard, PL.SATURATE_RECIPE, "i8")
    assert (case.runtime["atype"], case.runtime["btype"]) == ("u8", "s8") and "saturate" in case.case_id
    assert (inp.programs[0].mmas[0].idesc >> 3) & 1  # Table 42 bit 3
    a, b, c = inp.extra["a_val"].astype(np.int64), inp.extra["b_val"].astype(np.int64), inp.c.astype(np.int64)
    assert a.min() >= 0 and a.max() > 127 and ((b >= 0) | (np.arange(inp.n) % 2 == 1)).all()
    assert ((b <= 0) | (np.arange(inp.n) % 2 == 0)).all() and np.unique(c).size == c.size
    raw = a @ b + c
    over, under = raw > PL.S32_MAX, raw < -PL.S32_MAX - 1
    assert over[:64].sum() > 500 and under[64:].sum() > 500 and (~(over | under)).sum() > 4000
    want = PL.expected_shape(inp)
    assert np.array_equal(want[over], (PL.S32_MAX - c[over]).astype(np.float32))
    assert np.array_equal(want[~over & ~under], (a @ b)[~over & ~under].astype(np.float32))
    d = G.int_gemm(a, b, c, satfinite=True)  # the read-back a conforming core leaves: decoded less the old D
    assert inp.layout == "D" and np.array_equal(decode_output(inp, [d.view(np.uint32)]), want)  # lane m: row m
