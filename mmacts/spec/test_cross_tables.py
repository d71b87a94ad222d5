"""Cross-table consistency: tables that describe the same thing must agree, and where the spec
itself disagrees the disagreement is pinned here (so a silent 'fix' of the data is noticed) and
registered in data/ambiguities.yaml.
"""

from __future__ import annotations

import re

from mmacts.spec.catalog import load
from mmacts.spec.queries import canon_kind, canon_scale_vec, canon_type, expand_n, parse_value_cell

CAT = load()


def _bits(printed: str) -> range:
    lo, hi = (int(x) for x in (printed.split("-") * 2)[:2]) if "-" in printed else (int(printed),) * 2
    return range(lo, hi + 1)


def _cell(table: int, row: int, kind: str, variant: str | None = None):
    return parse_value_cell(CAT.table(table, variant).row(row)[f"kind::{kind}"])


# --------------------------------------------------------------------------------------------- 54 vs 55
def test_t54_and_t55_name_the_same_kind_spellings():
    from54 = {(canon_kind(k), canon_scale_vec(r["scale_vectorsize"])) for r in CAT.table(54) for k in r["kinds"]}
    from55 = {(canon_kind(r["kind"]), canon_scale_vec(s)) for r in CAT.table(55)
              for pair in r["scale_vectorsize"] for s in pair}
    assert from54 == from55


def test_t54_scale_vec_nx_has_n_scale_factors():
    for r in CAT.table(54):
        sv = canon_scale_vec(r["scale_vectorsize"])
        if sv.startswith("scale_vec::"):
            n = int(re.search(r"(\d)X", sv).group(1))
            assert r["shape_scale_a"] == f"M x {n}" and r["shape_scale_b"] == f"{n} x N", r.ref


def test_t54_block_n_times_scale_factors_is_dense_k():
    """.blockN: N elements per scale factor. For dense K (Table 39) K / #SF must equal N."""
    dense_k = {}
    for r in CAT.table(39):
        if not r.get("invalid") and r["sparsity"] == "Dense" and r["ws"] == "No .ws":
            dense_k.setdefault(canon_kind(r["kind"]), set()).update({r["K"], *([r["K1"]] if "K1" in r.values else [])})
    for r in CAT.table(54):
        sv = canon_scale_vec(r["scale_vectorsize"])
        if not sv.startswith("block"):
            continue
        block = int(sv.removeprefix("block"))
        n_sf = int(re.search(r"\d+", r["shape_scale_a"]).group())
        for kind in (canon_kind(k) for k in r["kinds"]):
            ks = dense_k[kind]
            ks = {96} & ks if r["K"] == "K = 96" else ks - {96}
            assert ks and all(k // n_sf == block for k in ks), (r.ref, kind, ks)


def test_t55_types_are_encodable_in_the_idesc():
    """Element types of Table 55 have atype encodings in Tables 43/44 (001 and 003 agree on these)."""
    for r in CAT.table(55):
        kind = canon_kind(r["kind"])
        table = 43 if kind == "mxf8f6f4" else 44
        for variant in (None, "001"):
            atype = _cell(table, 6, kind, variant)["encodings"]
            assert set(r["element_types"]) <= set(atype), (r.ref, variant)


def test_t55_scale_types_vs_idesc_bit_23():
    """001 and the merged query encode every Table 55 scale type; 003's mxf4nvf4 cell lacks UE8M0 (A07)."""
    for r in CAT.table(55):
        kind = canon_kind(r["kind"])
        table, row = (43, 13) if kind == "mxf8f6f4" else (44, 14)
        assert r["scale_type"] in _cell(table, row, kind, "001")["encodings"], r.ref
        merged = next(f for f in CAT.idesc_fields(kind) if f.lo == 23)
        assert r["scale_type"] in merged.encodings
    assert _cell(44, 14, "mxf4nvf4") == {"encodings": {"UE4M3": 0}}  # the printed contradiction, pinned
    assert CAT.row("T44.14").ambiguity == "A07"


def test_t39_scale_types_agree_with_t55():
    for r in CAT.table(39):
        if "scale" not in r.values:
            continue
        kind = canon_kind(r["kind"])
        t55 = {canon_type(x["scale_type"]) for x in CAT.table(55) if canon_kind(x["kind"]) == kind}
        assert {canon_type(s) for s in r["scale"]} == t55, r.ref
        t55_types = {canon_type(t) for x in CAT.table(55) if canon_kind(x["kind"]) == kind for t in x["element_types"]}
        assert {canon_type(t) for t in r["atype_btype"]} == t55_types, r.ref


def test_sf_ids_of_idesc_vs_scale_factor_prose():
    """Idesc SF-ID values (Tables 43/44) vs the per-size valid IDs of S9.7.16.10.7.2/.3."""
    t43 = set(_cell(43, 16, "mxf8f6f4")["values"])
    t44 = set(_cell(44, 17, "mxf4")["values"])
    by_sv = {d["scale_vec"]: d for d in CAT.rule("scale_factor_a_id").data}
    assert set(by_sv["scale_vec::1X/block32"]["ids"]) == t43 == {0, 1, 2, 3}
    assert set(by_sv["scale_vec::2X/block32"]["ids"]) <= t44
    assert set(by_sv["scale_vec::4X/block16"]["ids"]) <= t44
    assert set(by_sv["block16"]["ids"]) <= t44
    # block32 with K = 96 (mxf4 kinds, Table 44) uses IDs 0-3 in the prose, but Table 44 allows 0 or 2 (A09)
    assert set(by_sv["block32"]["ids"]) - t44 == {1, 3}
    assert CAT.rule("scale_factor_a_id").data == [
        {k: v for k, v in d.items() if k != "N_split"} for d in CAT.rule("scale_factor_b_id").data]


def test_idesc_k_bit_matches_t39_k_values():
    enc = _cell(44, 18, "mxf4")["encodings"]
    ks = {(r["sparsity"], r["K"]) for r in CAT.table(39) if canon_kind(r["kind"]) == "mxf4" and not r.get("invalid")}
    ks |= {("Dense", r["K1"]) for r in CAT.table(39) if canon_kind(r["kind"]) == "mxf4" and "K1" in r.values}
    named = {(m.group(1), int(m.group(2))) for key in enc for m in re.finditer(r"(Dense|Sparse) K=(\d+)", key)}
    assert named == ks


def test_idesc_m_and_n_fields_can_hold_every_t39_shape():
    for s in CAT.tcgen05_shapes():
        fields = {f.formula: f for f in CAT.idesc_fields(s.kind) if f.formula}
        m_field = fields.get("M >> 4") or fields["M >> 7"]
        shift = int(m_field.formula.split(">>")[1])
        assert s.M % (1 << shift) == 0 and (s.M >> shift) < (1 << m_field.width), (s.refs, s.M)
        n_field = fields["N >> 3"]
        assert all(n % 8 == 0 and (n >> 3) < (1 << n_field.width) for n in s.N), s.refs


# --------------------------------------------------------------------------------------------- 35 / 36 / 37
def test_mma_sync_tables_name_the_same_scale_vec_sizes():
    t35 = {canon_scale_vec(r["scale_vec"]) for r in CAT.table(35)}
    t36 = {canon_scale_vec(s) for r in CAT.table(36) for s in r["scale_vec"]}
    t37 = {canon_scale_vec(r["scale_vec"]) for r in CAT.table(37)}
    assert t35 == t36 == t37 == {"scale_vec::1X", "scale_vec::2X", "scale_vec::4X"}


def test_t37_byte_ids_leave_room_for_the_scale_factors():
    """A byte-id selects sf_per_row consecutive bytes of a 32-bit register: id + sf_per_row <= 4."""
    n_sf = {canon_scale_vec(r["scale_vec"]): int(re.search(r"\d", r["shape_scale_a"]).group()) for r in CAT.table(35)}
    for r in CAT.table(37):
        n = n_sf[canon_scale_vec(r["scale_vec"])]
        for col in ("byte_id_a", "byte_id_b"):
            assert all(b + n <= 4 and b % n == 0 for b in r[col]), r.ref
        assert len(r["byte_id_a"]) == 4 // n


def test_mma_sync_and_tcgen05_agree_on_kind_types():
    """Table 36 (mma.sync) and Table 55 (tcgen05) allow the same (kind, type, stype, NX) sets."""
    t36 = {(canon_kind(r["kind"]), canon_type(t), canon_type(r["stype"]), canon_scale_vec(s))
           for r in CAT.table(36) for t in r["element_types"] for s in r["scale_vec"]}
    t55 = {(canon_kind(r["kind"]), canon_type(t), canon_type(r["scale_type"]), canon_scale_vec(p[0]))
           for r in CAT.table(55) for t in r["element_types"] for p in r["scale_vectorsize"]}
    assert t36 == t55


# --------------------------------------------------------------------------------------------- 39 vs 49 / 50
def test_t39_and_t49_name_the_same_kinds():
    assert {canon_kind(r["kind"]) for r in CAT.table(39)} == {canon_kind(r["kind"]) for r in CAT.table(49)}


def test_t49_agrees_with_idesc_transpose_and_negate_bits():
    for r in CAT.table(49):
        kind = canon_kind(r["kind"])
        fields = {f.lo: f for f in CAT.idesc_fields(kind)}
        assert (fields[15].encodings.get("Transpose") == 1) == r["transpose"], kind
        assert (fields[16].encodings.get("Transpose") == 1) == r["transpose"], kind
        assert (fields[13].encodings.get("Negate") == 1) == r["negate"], kind
        assert (fields[14].encodings.get("Negate") == 1) == r["negate"], kind


def test_t50_n_values_are_t39_n_values_of_8bit_kinds():
    for rule in CAT.transpose_b_n_rule():
        for kind in ("f8f6f4", "mxf8f6f4", "i8"):
            shapes = [s for s in CAT.tcgen05_shapes(kind) if s.cta_group == rule.cta_group and not s.ws]
            assert shapes and all(set(rule.N) <= set(s.N) for s in shapes), (kind, rule)


# --------------------------------------------------------------------------------------------- 42-44: 003 vs 001
KNOWN_003_001_DIFFERENCES = {("T42.4", "kind::f8f6f4"), ("T44.14", "kind::mxf4nvf4")}


def test_idesc_tables_003_and_001_agree_except_registered_cells():
    diffs = set()
    for number in (42, 43, 44):
        a, b = CAT.table(number), CAT.table(number, "001")
        assert a.columns == b.columns and len(a) == len(b)
        for ra, rb in zip(a.rows, b.rows, strict=True):
            assert (ra["bits"], ra["size"]) == (rb["bits"], rb["size"]), ra.ref
            assert ra["description"].replace(" -reuse", "-reuse") == rb["description"], ra.ref
            for col in a.columns[3:]:
                if parse_value_cell(ra[col]) != parse_value_cell(rb[col]):
                    diffs.add((ra.ref, col))
    assert diffs == KNOWN_003_001_DIFFERENCES
    assert {CAT.row(ref).ambiguity for ref, _ in diffs} == {"A06", "A07"}


def test_idesc_fields_tile_32_bits_and_sizes_match_ranges():
    for number in (42, 43, 44):
        for variant in (None, "001"):
            covered: list[int] = []
            for r in CAT.table(number, variant):
                bits = _bits(r["bits"])
                assert len(bits) == r["size"], r.ref
                covered += list(bits)
            assert covered == list(range(32)), (number, variant)


def test_smem_and_zero_mask_descriptor_bit_ranges():
    t40 = [b for r in CAT.table(40) for b in _bits(r["bits"])]
    assert sorted(set(range(64)) - set(t40)) == [14, 15, 30, 31] and len(t40) == len(set(t40))
    assert all(len(_bits(r["bits"])) == r["size"] for r in CAT.table(40))
    t45 = [b for r in CAT.table(45) for b in _bits(r["bits"])]
    assert t45 == list(range(62)) and all(len(_bits(r["bits"])) == r["size"] for r in CAT.table(45))


def test_ld_and_st_tables_are_identical_and_match_the_fragment_shapes():
    assert [r.values for r in CAT.table(47)] == [r.values for r in CAT.table(48)]
    frag = {r.data["shape"]: r.data for r in CAT.section_rules() if r.id.startswith("ld_st_fragment.")}
    for s in CAT.ld_st_shapes():
        d = frag[s.shape]
        num = int(s.num.removeprefix(".x"))
        # 32 threads x 32-bit registers carry lanes x (bits per lane per num) x num bits
        assert s.regs * 32 * 32 == d["lanes"] * d["bits_per_lane_per_num"] * num * d.get("accesses", 1), s
    assert {s.shape for s in CAT.ld_st_shapes()} == set(CAT.rule("data_movement_shapes").data["ld_st"])


def test_n_sets_of_t39_are_multiples_of_8():
    for r in CAT.table(39):
        if "N" in r.values:
            assert all(n % 8 == 0 and 8 <= n <= 256 for n in expand_n(r["N"])), r.ref
