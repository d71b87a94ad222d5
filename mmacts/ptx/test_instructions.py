"""Pins: the builders spell exactly what the spec's own examples and syntax blocks spell.

Independent check: the expected strings are the Examples lines of the PTX text (9.7.16.*),
whitespace-normalised, with the operands renamed to the spec's names.
"""

from __future__ import annotations

import re

import pytest

from mmacts.ptx import instructions as I


def norm(s: str) -> str:
    return re.sub(r"\s+;", ";", re.sub(r"\s+", " ", re.sub(r"\s*,\s*", ", ", s))).strip()


SPEC_EXAMPLES = [
    (I.tcgen05_cp(1, "128x256b", "taddr0", "sdesc0"), "tcgen05.cp.cta_group::1.128x256b [taddr0], sdesc0;"),
    (I.tcgen05_cp(2, "128x128b", "taddr1", "sdesc1", src_fmt="b6x16_p32"),
     "tcgen05.cp.cta_group::2.128x128b.b8x16.b6x16_p32 [taddr1], sdesc1;"),
    (I.tcgen05_cp(1, "64x128b", "taddr2", "sdesc2", multicast="warpx2::02_13"),
     "tcgen05.cp.cta_group::1.64x128b.warpx2::02_13    [taddr2], sdesc2;"),
    (I.tcgen05_ld("32x32b", 2, ["r0", "r1"], "taddr1"),
     "tcgen05.ld.sync.aligned.32x32b.x2.b32     {r0, r1}, [taddr1];"),
    (I.tcgen05_ld("16x128b", 4, [f"r{i}" for i in range(8)], "taddr2"),
     "tcgen05.ld.sync.aligned.16x128b.x4.b32    {r0, r1, r2, r3, r4, r5, r6, r7}, [taddr2];"),
    (I.tcgen05_st("16x64b", 4, "taddr0", ["r0", "r1", "r2", "r3"]),
     "tcgen05.st.sync.aligned.16x64b.x4.b32               [taddr0], {r0,  r1,  r2,  r3};"),
    (I.tcgen05_st("16x128b", 1, "taddr1", ["r0", "r1"], unpack=True),
     "tcgen05.st.sync.aligned.16x128b.x1.unpack::16b.b32  [taddr1], {r0,  r1};"),
    (I.tcgen05_alloc(1, "sMemAddr1", 32), "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [sMemAddr1], 32;"),
    (I.tcgen05_dealloc(2, "taddr", 32), "tcgen05.dealloc.cta_group::2.sync.aligned.b32  taddr, 32;"),
    (I.tcgen05_relinquish(1), "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;"),
    (I.tcgen05_wait("ld"), "tcgen05.wait::ld.sync.aligned;"),
    (I.tcgen05_fence("before"), "tcgen05.fence::before_thread_sync ;"),
    (I.tcgen05_commit(1, "mbarObj1"), "tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [mbarObj1];"),
    (I.tcgen05_shift(2, "taddr1", order="example"), "tcgen05.shift.down.cta_group::2 [taddr1];"),
    (I.tcgen05_mma("tf32", 1, d_tmem="taddr0", a="adesc", b_desc="bdesc", idesc="idesc", enable_input_d="p",
                   disable_output_lane=["m0", "m1", "m2", "m3"]),
     "tcgen05.mma.cta_group::1.kind::tf32      [taddr0],  adesc,  bdesc, idesc, {m0, m1, m2, m3}, p;"),
    (I.tcgen05_mma("mxf8f6f4", 1, d_tmem="taddr2", a="taddr1", a_in_tmem=True, b_desc="bdesc", idesc="idesc",
                   enable_input_d="p", block_scale=True, scale_a_tmem="tmem_scaleA", scale_b_tmem="tmem_scaleB"),
     "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale  [taddr2],  [taddr1],  bdesc, idesc, "
     "[tmem_scaleA], [tmem_scaleB], p;"),
    (I.tcgen05_mma("f16", 1, sparse=True, d_tmem="taddr0", a="adesc", b_desc="bdesc", sp_meta_tmem="tmem_spmeta0",
                   idesc="idesc", enable_input_d="p"),
     "tcgen05.mma.sp.cta_group::1.kind::f16      [taddr0],  adesc,  bdesc, [tmem_spmeta0], idesc, p;"),
    (I.tcgen05_mma("tf32", 1, ws=True, sparse=True, collector_b="b1::fill", d_tmem="taddr1", a="taddr0",
                   a_in_tmem=True, b_desc="bdesc", sp_meta_tmem="tmem_spmeta0", idesc="idesc", enable_input_d="p"),
     "tcgen05.mma.ws.sp.cta_group::1.kind::tf32.collector::b1::fill  [taddr1], [taddr0], bdesc, "
     "[tmem_spmeta0], idesc, p;"),
]


@pytest.mark.parametrize(("got", "want"), SPEC_EXAMPLES, ids=[w.split()[0] for _, w in SPEC_EXAMPLES])
def test_builders_match_the_spec_examples(got, want):
    assert norm(got) == norm(want)


def test_qualifier_order_follows_the_syntax_blocks():
    s = I.tcgen05_mma("mxf4nvf4", 2, sparse=True, block_scale=True, scale_vec="block16", collector_a="lastuse",
                      d_tmem="d", a="a", a_in_tmem=True, b_desc="b", sp_meta_tmem="m", idesc="i",
                      scale_a_tmem="sa", scale_b_tmem="sb", enable_input_d="p")
    assert s == ("tcgen05.mma.sp.cta_group::2.kind::mxf4nvf4.block_scale.block16.collector::a::lastuse"
                 " [d], [a], b, [m], i, [sa], [sb], p;")
    s = I.tcgen05_mma("i8", 1, ashift=True, collector_a="discard", d_tmem="d", a="a", a_in_tmem=True,
                      b_desc="b", idesc="i", enable_input_d="p")
    assert ".kind::i8.ashift.collector::a::discard" in s
    s = I.tcgen05_ld_red("16x32bx2", 8, [f"r{i}" for i in range(8)], "redVal", "taddr3", op="max", dtype="u32",
                         half_splitoff=16)
    # Syntax block order (.num.redOp.type); the spec's example prints .x8.u32.max (register AMB-LD-RED-QUALIFIER-ORDER).
    assert s.startswith("tcgen05.ld.red.sync.aligned.16x32bx2.x8.max.u32 {") and s.endswith("redVal, [taddr3], 16;")


def test_mma_sync_block_scale_spelling():
    s = I.mma_sync_block_scale("mxf8f6f4", "e4m3", "e2m1", "ue8m0", "1X", "m16n8k32", ["d0", "d1", "d2", "d3"],
                               ["a0", "a1", "a2", "a3"], ["b0", "b1"], ["c0", "c1", "c2", "c3"],
                               "sfa", (1, 0), "sfb", (3, 2))
    assert s == ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e2m1.f32.ue8m0"
                 " {d0, d1, d2, d3}, {a0, a1, a2, a3}, {b0, b1}, {c0, c1, c2, c3}, sfa, {1, 0}, sfb, {3, 2};")
    assert ".block_scale.f32" in I.mma_sync_block_scale("mxf4", "e2m1", "e2m1", "ue8m0", None, "m16n8k64", [], [],
                                                         [], [], 0, (0, 0), 0, (0, 0))


@pytest.mark.parametrize(("shape", "per_x1"), [("16x64b", 1), ("16x128b", 2), ("16x256b", 4), ("32x32b", 1),
                                               ("16x32bx2", 1)])
def test_register_count_derivation_matches_table_47_columns(shape, per_x1):
    # Table 47 column heads: .16x32bx2/.16x64b/.32x32b -> 1 per .x1; .16x128b -> 2; .16x256b -> 4.
    for num in (1, 2, 4, 8, 16, 32):
        assert I.ld_st_regs_per_thread(shape, num) == per_x1 * num


def test_structural_errors_are_refused():
    with pytest.raises(ValueError):
        I.tcgen05_alloc(3, "x", 32)
    with pytest.raises(ValueError):
        I.tcgen05_wait("mma")
    with pytest.raises(ValueError):
        I.tcgen05_mma("f16", 1, sparse=True, d_tmem="d", a="a", b_desc="b", idesc="i", enable_input_d="p")
