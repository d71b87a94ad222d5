"""Cross-check: the qualifier spaces of ``spaces.py`` against the spec catalog's tables."""

from __future__ import annotations

import pytest

from suites.compile import spaces as S

catalog = pytest.importorskip("mmacts.spec.catalog")


@pytest.fixture(scope="module")
def cat():
    return catalog.load()


def _k(s: str) -> str:
    return s.strip().lstrip(".").removeprefix("kind::")


def test_table_39_rows_agree(cat):
    t = cat.table(39)
    assert len(t.rows) == len(S.T39)
    for row, mine in zip(t.rows, S.T39, strict=True):
        v = row.values
        assert _k(v["kind"]) == mine.kind, row.ref
        assert (v["ws"] == ".ws") == mine.ws, row.ref
        ctas = tuple(v["cta_group"]) if isinstance(v["cta_group"], list) else (v["cta_group"],)
        assert ctas == mine.cta_groups, row.ref
        sp = {"Dense": (False,), "Sparse": (True,), "Either": (False, True)}[v["sparsity"]]
        assert sp == mine.sparse, row.ref
        assert bool(v.get("invalid")) == mine.invalid, row.ref


def test_table_47_na_cells_agree(cat):
    for n in (47, 48):
        for row in cat.table(n).rows:
            num = int(row.values["num"].lstrip(".x"))
            for col, shapes in (("16x128b", ("16x128b",)), ("16x256b", ("16x256b",)),
                                ("16x32bx2/16x64b/32x32b", ("16x32bx2", "16x64b", "32x32b"))):
                for shape in shapes:
                    assert (row.values[col] is None) == (not S.t47_valid(shape, num)), (row.ref, shape)
                    if row.values[col] is not None:
                        assert row.values[col] == S.T47_COLUMN[shape] * num


def test_tables_54_55_agree(cat):
    for kind, valid in S.TCGEN05_SCALE_VEC_VALID.items():
        from_55 = set()
        for row in cat.table(55).rows:
            if _k(row.values["kind"]) == kind:
                for group in row.values["scale_vectorsize"]:
                    from_55 |= {s.lstrip(".").removeprefix("scale_vec::") for s in group}
        assert from_55 == {s for s in valid if s is not None}, kind
    for sv, rows in S.T54_ROWS.items():
        for r in rows:
            printed = cat.row(f"T54.{r}").values["scale_vectorsize"]
            assert printed.lstrip(".").removeprefix("scale_vec::") == sv


def test_table_36_and_37_agree(cat):
    mine = {(k, st, tuple(sorted(svs))) for k, _shape, _t, st, svs, _r in S.MMA_SYNC_VALID}
    theirs = set()
    for row in cat.table(36).rows:
        v = row.values
        theirs.add((_k(v["kind"]), v["stype"].lstrip("."),
                    tuple(sorted(s.removeprefix(".scale_vec::") for s in v["scale_vec"]))))
    assert mine == theirs
    for row in cat.table(37).rows:
        sv = row.values["scale_vec"].removeprefix("scale_vec::")
        ba, ta, bb, tb, _ = S.T37_SELECTORS[sv]
        assert [list(ba), list(ta), list(bb), list(tb)] == [row.values[c] for c in
                                                            ("byte_id_a", "thread_id_a", "byte_id_b", "thread_id_b")]


def test_target_notes_agree_with_the_catalog(cat):
    def archs(subject):
        return {a.replace("sm_101", "sm_110") for a in cat.target_note(subject).archs}

    assert archs("tcgen05.mma") == set(S.NOTE_TCGEN05.exact) | set(S.NOTE_TCGEN05.family)
    assert archs("tcgen05.mma .kind::i8") == set(S.NOTE_I8.exact)
    assert archs("tcgen05.shift") == set(S.NOTE_SHIFT.exact)
    assert archs("tcgen05.ld.red") == set(S.NOTE_LD_RED.exact) | set(S.NOTE_LD_RED.family)
    assert archs("tcgen05.mma.sp .kind::mxf4") == set(S.NOTE_SP_MXF4.exact)
    assert archs("tcgen05.mma .scale_vec::4X") == set(S.NOTE_SV_NX.exact)
    assert archs("tcgen05.mma .block16") == set(S.NOTE_SV_BLOCK.family)
