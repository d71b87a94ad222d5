"""The typed queries return what the spec says, in canonical spellings, citing resolvable rows.

Expected values are written from the spec text (file 004 / 003 prose), not from the YAML.
"""

from __future__ import annotations

import itertools

import pytest

from mmacts.spec.catalog import load
from mmacts.spec.queries import parse_value_cell

CAT = load()
FP8F6F4 = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")


def _refs_resolve(refs) -> bool:
    return all(CAT.has_ref(r) for r in refs)


def test_mma_sync_combos_expand_every_type_pair():
    combos = CAT.mma_sync_blockscale_combos()
    assert len(combos) == 25 + 1 + 2 + 1
    mx = {(c.atype, c.btype) for c in combos if c.kind == "mxf8f6f4"}
    assert mx == set(itertools.product(FP8F6F4, FP8F6F4))
    assert all(c.scale_vec == "scale_vec::1X" and c.stype == "ue8m0" and c.sf_per_row == 1
               for c in combos if c.kind == "mxf8f6f4")
    nv = {(c.stype, c.scale_vec) for c in combos if c.kind == "mxf4nvf4"}
    assert nv == {("ue8m0", "scale_vec::2X"), ("ue8m0", "scale_vec::4X"), ("ue4m3", "scale_vec::4X")}
    assert all(_refs_resolve(c.refs) for c in combos)


@pytest.mark.parametrize(
    ("sv", "bida", "tida", "bidb", "tidb"),
    [("1X", (0, 1, 2, 3), (0, 1), (0, 1, 2, 3), (0, 1, 2, 3)),
     (".scale_vec::2X", (0, 2), (0, 1), (0, 2), (0, 1, 2, 3)),
     ("scale_vec::4X", (0,), (0, 1), (0,), (0, 1, 2, 3))],
)
def test_mma_sync_selectors(sv, bida, tida, bidb, tidb):
    s = CAT.mma_sync_selectors(sv)
    assert (s.byte_id_a, s.thread_id_a, s.byte_id_b, s.thread_id_b) == (bida, tida, bidb, tidb)
    assert _refs_resolve(s.refs)
    assert bool(s.inferred) == (sv != "1X")


def test_tcgen05_block_scaled_shapes():
    shapes = [s for k in ("mxf8f6f4", "mxf4", "mxf4nvf4") for s in CAT.tcgen05_shapes(k)]
    assert {s.M for s in shapes} == {128, 256} and not any(s.ws for s in shapes)
    assert {(s.kind, s.M, s.cta_group) for s in shapes if s.K == 96} == {("mxf4", 256, 2), ("mxf4nvf4", 256, 2)}
    cta1 = [s for s in shapes if s.cta_group == 1]
    assert all(s.N == tuple(range(8, 257, 8)) and s.M == 128 for s in cta1)
    assert {(s.kind, s.sparse, s.K) for s in shapes if s.kind == "mxf8f6f4"} == {("mxf8f6f4", False, 32),
                                                                                  ("mxf8f6f4", True, 64)}
    assert all(_refs_resolve(s.refs) for s in shapes)


def test_tcgen05_i8_n_set_and_invalid_ws_combos():
    i8 = [s for s in CAT.tcgen05_shapes("i8") if s.cta_group == 1 and not s.ws]
    assert i8[0].N == (8, 16, 24, 32, *range(48, 257, 16))
    invalid = {(i.kind, i.ws) for i in CAT.tcgen05_invalid_combos()}
    assert {("mxf8f6f4", True), ("mxf4", True), ("mxf4nvf4", True)} <= invalid
    assert all(i.ws for i in CAT.tcgen05_invalid_combos())  # only .ws combinations are invalid


def test_scale_vec_rules():
    rules = CAT.scale_vec_rules()
    assert len(rules) == 14
    assert {r.scale_vec for r in rules if 96 in r.K} == {"block16", "block32"}
    k96 = {(r.kind, r.scale_vec, r.sf_per_row) for r in rules if r.K == (96,)}
    assert k96 == {("mxf4nvf4", "block16", 6), ("mxf4", "block32", 3), ("mxf4nvf4", "block32", 3)}
    ue4m3 = {(r.scale_vec, r.K) for r in rules if r.stype == "ue4m3"}
    assert ue4m3 == {("scale_vec::4X", (64, 128)), ("block16", (96,)), ("block16", (64, 128))}
    assert all(_refs_resolve(r.refs) for r in rules)


def test_ld_st_shapes():
    shapes = CAT.ld_st_shapes()
    ld = {(s.shape, s.num): s.regs for s in shapes if s.op == "ld"}
    assert ld[(".32x32b", ".x128")] == 128 and ld[(".16x256b", ".x32")] == 128
    assert (".16x256b", ".x64") not in ld and (".16x128b", ".x128") not in ld
    assert max(ld.values()) == 128 and len(ld) == 3 * 8 + 7 + 6


def test_idesc_fields_encodings_per_kind():
    f = {x.lo: x for x in CAT.idesc_fields("mxf8f6f4")}
    assert f[7].encodings == {"E4M3": 0, "E5M2": 1, "E2M3": 3, "E3M2": 4, "E2M1": 5}
    assert (f[29].lo, f[29].hi, f[29].values) == (29, 30, (0, 1, 2, 3)) and f[4].values == (0, 1, 2, 3)
    assert f[27].formula == "M >> 7" and f[24].fixed == 0 and f[23].encodings == {"UE8M0": 1}
    g = {x.lo: x for x in CAT.idesc_fields(".kind::mxf4")}
    assert g[7].encodings == {"E2M1": 1} and (g[10].lo, g[10].hi) == (10, 11) and g[12].fixed == 0
    assert g[15].encodings == {"No Transpose": 0}
    h = {x.lo: x for x in CAT.idesc_fields("f16")}
    assert h[4].encodings == {"F16": 0, "F32": 1} and h[24].formula == "M >> 4"
    with pytest.raises(KeyError):
        CAT.idesc_fields("f64")


def test_parse_value_cell_forms():
    assert parse_value_cell("0 (NA)") == {"fixed": 0}
    assert parse_value_cell("0–3") == {"values": (0, 1, 2, 3)}
    assert parse_value_cell("0 or 2") == {"values": (0, 2)}
    assert parse_value_cell("N >> 3") == {"formula": "N >> 3"}
    assert parse_value_cell("Unsigned 8b = 0; Signed 8b = 1") == {"encodings": {"Unsigned 8b": 0, "Signed 8b": 1}}
    with pytest.raises(ValueError):
        parse_value_cell("whatever")


def test_descriptor_queries():
    names = [f.name for f in CAT.smem_desc_fields()]
    assert names[0] == "start_address" and names[-1] == "swizzle"
    modes = {m.code: m.pattern_bytes for m in CAT.smem_swizzle_modes()}
    assert modes == {0: None, 1: None, 2: 1024, 4: 512, 6: 256}
    z = {f.name: (f.lo, f.hi) for f in CAT.zero_column_mask_fields()}
    assert z["sc3"] == (24, 31) and z["skip_span"] == (40, 47) and z["column_shift"] == (56, 61)


def test_transpose_queries():
    assert CAT.transpose_negate("mxf4nvf4").transpose is False
    assert CAT.transpose_negate(".kind::i8").negate is False
    rules = {r.cta_group: r.N for r in CAT.transpose_b_n_rule()}
    assert rules[1] == tuple(range(16, 257, 16)) and rules[2] == tuple(range(32, 257, 32))


def test_target_notes():
    assert "sm_100f" not in CAT.archs_for("tcgen05.mma .kind::i8")
    assert CAT.archs_for("tcgen05.mma K = 96") == ("sm_103a",)
    assert "sm_103a" in CAT.archs_for("tcgen05.mma.sp .kind::mxf4nvf4")
    assert CAT.target_note("tcgen05.mma .block32").ptx_isa == "8.8"
    assert CAT.target_note("tcgen05.mma .kind::mxf4nvf4").ptx_isa == "8.7"
    assert "sm_100a" not in CAT.archs_for("tcgen05.ld.red")
    with pytest.raises(KeyError):
        CAT.archs_for("mma.sync")  # file 004 has no Target ISA note (A16)


def test_datapath_layouts():
    layouts = CAT.datapath_layouts()
    assert sorted(x.layout for x in layouts) == list("ABCDEFG")
    assert {(x.M, x.cta_group) for x in layouts if x.layout in "AD"} == {(256, 2), (128, 1)}
