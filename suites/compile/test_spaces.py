"""Checks of ``spaces.py``: the derived spaces against the PRINTED spec text (parsed here, not via
the catalog), the hand-written universes against everything the catalog names, and the Target
ISA note semantics (renames, families, excepts) against facts read from the notes' text.

Why parse the text again: ``spaces.py`` reads the catalog, the catalog was transcribed from the
text by hand; re-reading the printed tables with a separate parser catches a transcription or
derivation slip that a catalog-vs-spaces comparison could not (both would carry it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mmacts.ptx.module import min_ptx_for_target, version_key
from mmacts.spec.catalog import SPEC_TEXT_DIR
from suites.compile import spaces as S


def _text(prefix: str) -> list[str]:
    (path,) = Path(SPEC_TEXT_DIR).glob(f"{prefix}_*.txt")
    return path.read_text(encoding="utf-8").splitlines()


def _table_lines(lines: list[str], caption: str) -> list[str]:
    """The '| ... |' data lines of the markdown table whose caption line starts with ``caption``."""
    start = next(i for i, ln in enumerate(lines) if ln.startswith(caption))
    out: list[str] = []
    for ln in lines[start + 1:]:
        if ln.startswith("|"):
            out.append(ln)
        elif out and ln.strip():
            break
    return out[2:]  # drop the header line and the '| --- |' rule


def _ticks(s: str) -> list[str]:
    return re.findall(r"`([^`]+)`", s)


def _bare(s: str) -> str:
    return s.replace("\\", "").lstrip(".").removeprefix("kind::").removeprefix("scale_vec::")


# ---------------------------------------------------------------------------- printed tables
@pytest.mark.parametrize(("op", "caption"), [("ld", "Table 47 "), ("st", "Table 48 ")])
def test_tables_47_48_as_printed(op, caption):
    lines = _table_lines(_text("003"), caption)
    header, body = lines[0], lines[1:]
    columns = [[_bare(s.strip()) for s in cell.split("/")] for cell in header.strip("|").split("|")]
    seen_nums = []
    for i, ln in enumerate(body, start=1):
        cells = [c.strip() for c in ln.strip("|").split("|")]
        num = int(_ticks(cells[0])[0].lstrip(".x"))
        seen_nums.append(num)
        assert S.ld_st_row(op, num) == i
        for shapes, cell in zip(columns, cells[1:], strict=True):
            for shape in shapes:
                assert S.ld_st_valid(op, shape, num) == (cell != "NA"), (op, shape, num)
                if cell != "NA":
                    assert S.T47_COLUMN[shape] * num == int(cell)
    assert tuple(seen_nums) == S.NUMS
    assert {s for col in columns for s in col} == set(S.LD_ST_SHAPES)


def test_table_36_as_printed():
    lines = _text("004")
    cap = next(i for i, ln in enumerate(lines) if ln.startswith("Table 36 "))
    printed = []
    for ln in lines[cap + 3:]:
        if not ln.startswith(".kind::"):
            break
        toks = [t.rstrip(",") for t in ln.split()]
        st = next(i for i, t in enumerate(toks) if t.startswith(".ue"))
        printed.append((_bare(toks[0]), tuple(_bare(t) for t in toks[1:st]), _bare(toks[st]),
                        tuple(_bare(t) for t in toks[st + 1:])))
    mine = [(k, ts, st, svs) for k, _shape, ts, st, svs, _row in S.MMA_SYNC_VALID]
    assert mine == printed
    assert [row for *_x, row in S.MMA_SYNC_VALID] == list(range(1, len(printed) + 1))


def test_table_37_first_row_and_selector_ranges_as_printed():
    lines = _text("004")
    row1 = next(ln for ln in lines if ln.startswith("scale_vec::1X ["))
    lists = [tuple(int(x) for x in m.split(",")) for m in re.findall(r"\[([^\]]*)\]", row1)]
    assert S.T37_SELECTORS["1X"][:4] == tuple(lists)
    assert S.SELECTOR_ENCODABLE == tuple(lists)  # row 1 is the widest row
    row3 = next(ln for ln in lines if ln.startswith("scale_vec::4X "))
    assert S.T37_SELECTORS["4X"][0] == S.T37_SELECTORS["4X"][2] == (int(row3.split()[1]),)


def test_tables_54_55_as_printed():
    lines = _text("003")
    t54 = _table_lines(lines, "Table 54 ")
    rows: dict[str, list[int]] = {}
    current = None
    for i, ln in enumerate(t54, start=1):
        svs = [t for t in _ticks(ln) if t.startswith((".scale_vec", ".block"))]
        current = _bare(svs[0]) if svs else current  # merged cell: continues from above
        rows.setdefault(current, []).append(i)
    assert {k: tuple(v) for k, v in rows.items()} == S.T54_ROWS
    t55 = _table_lines(lines, "Table 55 ")
    allowed: dict[str, set[str]] = {}
    kind = None
    for ln in t55:
        kinds = [t for t in _ticks(ln) if t.startswith(".kind::")]
        kind = _bare(kinds[0]) if kinds else kind
        allowed.setdefault(kind, set()).update(_bare(t) for t in _ticks(ln) if not t.startswith(".kind::"))
    mine = {k: {s for s in v if s is not None} for k, v in S.TCGEN05_SCALE_VEC_VALID.items()}
    assert mine == allowed


def test_omitted_scale_vec_follows_the_prose():
    """S9.7.16.10.9.1: ".block32 is the default when .kind::mxf4 omits it"; mxf4nvf4 must name
    it; mxf8f6f4's default is the register's reading (AMB-SCALEVEC-DEFAULT-MXF8F6F4)."""
    assert None in S.TCGEN05_SCALE_VEC_VALID["mxf4"] and S.t54_rows("mxf4", None) == S.t54_rows("mxf4", "block32")
    assert None not in S.TCGEN05_SCALE_VEC_VALID["mxf4nvf4"] and S.t54_rows("mxf4nvf4", None) == ()
    assert S.t54_rows("mxf8f6f4", None) == S.t54_rows("mxf8f6f4", "1X")


def test_table_49_50_as_printed():
    lines = _text("003")
    t49 = _table_lines(lines, "Table 49 ")
    printed = [(i, _bare(_ticks(ln)[0]), ln.split("|")[2].strip() == "Yes", ln.split("|")[3].strip() == "Yes")
               for i, ln in enumerate(t49, start=1)]
    assert list(S.T49) == printed
    t50 = _table_lines(lines, "Table 50 ")
    for (cta, n_ok, n_bad, _row), ln in zip(S.T50, t50, strict=True):
        m = re.search(r"\| (\d) \| (\d+) <= N <= (\d+), step (\d+)", ln)
        assert m and int(m.group(1)) == cta and int(m.group(2)) == n_ok
        step = int(m.group(4))
        assert n_bad % 8 == 0 and (n_bad < n_ok or (n_bad - n_ok) % step), (cta, n_bad)
    assert [r for *_x, r in S.T50] == [1, 2]


def test_table_39_validity_rule_as_read_from_the_text():
    """Read off the printed Invalid cells (003 lines 92-138): every .ws form with cta_group 2 and
    every .ws form of a block-scaled kind is Invalid; everything else has shapes."""
    assert len(S.T39) == 56
    for kind in S.KINDS:
        for ws in (False, True):
            for cta in (1, 2):
                for sp in (False, True):
                    want = not (ws and (cta == 2 or kind in ("mxf8f6f4", "mxf4", "mxf4nvf4")))
                    assert S.t39_valid(kind, ws, cta, sp) == want, (kind, ws, cta, sp)
                    assert S.t39_rows(kind, ws, cta, sp), (kind, ws, cta, sp)
    assert [r.row for r in S.T39] == list(range(1, 57))


# ---------------------------------------------------------------------------- universes
def test_universes_hold_every_value_the_catalog_names():
    """A complement is only meaningful inside a universe that contains the valid set."""
    cat = S.CAT
    assert {s.kind for s in cat.tcgen05_shapes()} | {i.kind for i in cat.tcgen05_invalid_combos()} == set(S.KINDS)
    assert {kind for _row, kind, _tr, _neg in S.T49} == set(S.KINDS)
    assert set(S.BLOCK_SCALED_KINDS) == set(S.TCGEN05_SCALE_VEC_VALID) <= set(S.KINDS)
    for kind, valid in S.TCGEN05_SCALE_VEC_VALID.items():
        assert set(valid) <= set(S.SCALE_VECS), kind
    combos = cat.mma_sync_blockscale_combos()
    assert {c.atype for c in combos} | {c.btype for c in combos} <= set(S.FP8F6F4_TYPES)
    assert {c.stype for c in combos} <= set(S.STYPES)
    assert {r.stype for r in cat.scale_vec_rules()} <= set(S.STYPES)
    assert set(S.MMA_SYNC_SHAPE) == {c.kind for c in combos}
    assert set(S.MMA_SYNC_SHAPE.values()) == set(S.MMA_SYNC_SHAPES)
    assert {c.scale_vec.removeprefix("scale_vec::") for c in combos} <= set(S.MMA_SYNC_SCALE_VECS)
    assert set(S.MMA_SYNC_SCALE_VEC_DEFAULT) <= set(S.MMA_SYNC_SHAPE)
    for n in cat.target_notes():
        for e in n.entries:
            assert (e.renamed_to or e.arch) in S.ARCHS or e.family, (n.subject, e)
    for name in ("tcgen05.mma", "tcgen05.ld.red", "tcgen05.shift"):
        for a in S.note(name).exact + S.note(name).family:
            assert a in S.ARCHS, (name, a)
    assert set(S.CP_MULTICAST_REQUIRED) <= set(S.CP_SHAPES)
    for req in S.CP_MULTICAST_REQUIRED.values():
        assert set(req) <= set(S.CP_MULTICASTS)
    assert set(S.LD_RED_SHAPES) <= set(S.LD_ST_SHAPES) and S.LD_RED_MIN_NUM in S.NUMS
    assert set(S.SID_KINDS) <= set(S.KINDS) and set(S.DOL_SIZE) == set(S.CTA_GROUPS)


# ---------------------------------------------------------------------------- target notes
SUPPORTED = {
    # Read from the Target ISA notes of 003 (lines cited by target_notes.yaml), with sm_101a/f
    # renamed sm_110a/f and "sm_XYf or higher in the same family" covering sm_XZa/f for Z >= Y.
    "tcgen05.mma": {"sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f"},
    "tcgen05.mma .kind::i8": {"sm_100a", "sm_110a"},
    "tcgen05.mma.sp .kind::mxf4": {"sm_100a", "sm_103a", "sm_110a"},
    "tcgen05.mma .scale_vec::2X": {"sm_100a"},
    "tcgen05.mma .block32": {"sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f"},
    "tcgen05.mma scale-input-d": {"sm_100a", "sm_100f", "sm_103a", "sm_103f"},
    "tcgen05.shift": {"sm_100a", "sm_103a", "sm_110a"},
    "tcgen05.ld.red": {"sm_103a", "sm_103f", "sm_110a", "sm_110f"},
}


@pytest.mark.parametrize("subject", sorted(SUPPORTED))
def test_target_notes_resolve_renames_and_families(subject):
    n = S.note(subject)
    assert {a for a in S.ARCHS if n.supports(a)} == SUPPORTED[subject]


def test_ptx_isa_minimums_as_printed():
    # PTX ISA Notes of S9.7.16.10.9.1 / S9.7.16.8.3: introduced in 8.6; .kind::mxf4nvf4 from 8.7;
    # .block16/.block32 and tcgen05.ld.red from 8.8.
    assert (S.PTX_TCGEN05, S.PTX_MXF4NVF4, S.PTX_BLOCKN, S.PTX_LD_RED) == ("8.6", "8.7", "8.8", "8.8")


def test_every_excepted_kind_has_its_own_note_in_the_section():
    """Why ``note()`` may ignore ``except``: the kind's own note decides (all notes must agree)."""
    for n in S.CAT.target_notes():
        for e in n.entries:
            for k in e.except_:
                assert S.has_note(f"{n.subject} {k}"), (n.subject, k)


def test_an_entrys_from_ptx_never_exceeds_its_targets_minimum():
    """Why ``note()`` may ignore an entry's ``from_ptx``: for every target a note grants, the entry
    granting it earliest needs no more than the target's own minimum PTX ISA version."""
    for n in S.CAT.target_notes():
        for a in S.ARCHS:
            granted = []
            for e in n.entries:
                name = e.renamed_to or e.arch
                sub = S.TargetNote("x", () if e.family else (name,), (name,) if e.family else ())
                if sub.supports(a):
                    granted.append(version_key(e.from_ptx or "0.0"))
            if granted:
                assert min(granted) <= version_key(min_ptx_for_target(a)), (n.subject, a)


def test_mma_notes_fall_back_to_the_section_defining_the_qualifier():
    ws_bs = S.mma_notes("mxf4nvf4", ws=True, sparse=True, block_scale=True, scale_vec="4X")
    assert [n.name for n in ws_bs] == ["tcgen05.mma.ws.sp", "tcgen05.mma.sp .kind::mxf4nvf4",
                                       "tcgen05.mma.sp .scale_vec::4X"]
    assert sum(S.is_scale_vec_nx_note(n) for n in ws_bs) == 1
    i8 = S.mma_notes("i8", ws=True)
    assert [n.name for n in i8] == ["tcgen05.mma.ws", "tcgen05.mma.ws .kind::i8"]
