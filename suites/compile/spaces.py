"""QUALIFIER SPACES AND TARGET NOTES of the compile-conformance suite -- the one place they live.

Why one place: the cases are enumerated as "every value of each qualifier space, valid ones
expected to assemble, the complement expected to be refused". A valid set typed by hand tests
what its author read; so every space a spec table (or a Target ISA / PTX ISA note) holds is
DERIVED here from the spec catalog (``mmacts.spec.catalog`` and its typed queries), and the
complement is taken inside a qualifier UNIVERSE.

Two kinds of data, kept apart:

* DERIVED (from the catalog, at import): Tables 35-37 (mma.sync combos, shapes, selectors),
  Table 39 (kind x .ws x cta_group x sparsity, Invalid rows), Tables 47/48 (shape x num, NA
  cells, register counts), Table 49 (transpose/negate per kind), Table 50 (N for 8-bit transpose
  B), Tables 54/55 (scale_vec x kind x K, aliases), the Target ISA notes (archs, family targets,
  renames, minimum PTX ISA per instruction and qualifier) and the syntax/prose rules the catalog
  transcribes in ``sections.yaml`` (ld/st/cp qualifier lists, multicast requirement,
  disable-output-lane size, scale-input-d, .scale_vectorsize spellings and defaults).
* HAND-WRITTEN (marked ``# HAND-WRITTEN`` below, each with the ``S<section>`` it comes from): what
  no table holds -- the universes complements are taken in (targets, .kind list, type names,
  collector usages, wait/fence qualifiers), the mma.sync facts file 004 does not print (shapes,
  Target ISA note, PTX ISA version, default .scale_vec), and syntax-level prose rules the catalog
  has no entry for. ``test_spaces.py`` checks that every universe contains every value the
  catalog names, so a complement is never silently empty or wrong.

Row numbering follows the catalog's convention: rows numbered from 1 in the order the spec prints
them (Table 39 has 56 printed rows).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mmacts.spec.catalog import load as _load_catalog
from mmacts.spec.queries import canon_kind, canon_scale_vec, canon_type

CAT = _load_catalog()
"""The spec catalog every derived space below is read from."""


def _bare(s: str) -> str:
    """'.scale_vec::1X' -> '1X'; '.block16' -> 'block16'; '.x4' -> 'x4'; '.32x32b' -> '32x32b'."""
    return canon_scale_vec(s).removeprefix("scale_vec::")


def _rule(rule_id: str) -> dict:
    return CAT.rule(rule_id).data


# =============================================================================================
# Architectures and Target ISA notes

# HAND-WRITTEN (universe): every target a compile case is assembled for. The notes of
# S9.7.16 name sm_100a/f, sm_101a/f (renamed sm_110a/f), sm_103a/f; sm_120a/sm_121a are the
# mma.sync block-scale targets; sm_90a is a Hopper target with no tcgen05 (every case refused).
ARCHS: tuple[str, ...] = (
    "sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_120a", "sm_121a", "sm_90a",
)

PRIMARY_TCGEN05 = "sm_100a"
PRIMARY_MMA_SYNC = "sm_120a"

_ARCH_RE = re.compile(r"^sm_(\d+)(\d)([af]?)$")


def arch_parts(arch: str) -> tuple[str, int, str]:
    """``sm_103f`` -> (family ``"10"``, minor 3, suffix ``"f"``)."""
    m = _ARCH_RE.match(arch)
    if not m:
        raise ValueError(f"bad arch {arch!r}")
    return m.group(1), int(m.group(2)), m.group(3)


@dataclass(frozen=True)
class TargetNote:
    """One Target ISA note: arch-specific targets (exact) and family targets ("sm_XYf or higher
    in the same family": same family, minor >= Y, suffix a or f), with its PTX ISA minimum."""

    name: str
    exact: tuple[str, ...] = ()
    family: tuple[str, ...] = ()
    ref: str = ""
    """Spec section the note is in, e.g. ``S9.7.16.10.9.1``."""
    ptx_isa: str | None = None
    """Minimum PTX ISA version the note's section gives (None: the section states none)."""

    def supports(self, arch: str) -> bool:
        if arch in self.exact:
            return True
        fam, minor, suffix = arch_parts(arch)
        for f in self.family:
            ffam, fminor, _ = arch_parts(f)
            if fam == ffam and minor >= fminor and suffix in ("a", "f"):
                return True
        return False


def note(subject: str) -> TargetNote:
    """The catalog's Target ISA note for ``subject`` (e.g. ``"tcgen05.mma.sp .kind::mxf4"``).

    Renamed targets are taken under their new name (sm_101a -> sm_110a: "Renamed to ... from
    PTX ISA 9.0"). An entry's ``except`` list ("sm_100f or higher in the same family, except
    .kind::i8") is not applied: every kind it names has a note of its own in the same section
    (checked by ``test_spaces``), and a form must satisfy ALL its notes, so the kind's own list
    decides -- also against the top-level "sm_110f or higher" bullet the except does not bind
    (register AMB-TARGET-NOTE-EXCEPT-SCOPE; ptxas 13.5 agrees). (Dropping the excepted entry
    and intersecting would be wrong: the .sp mxf4 note names sm_103a, which only the excepted
    family entry of the base note reaches.) An entry's own ``from_ptx`` is not
    applied either: ``test_spaces`` checks it never exceeds the minimum PTX ISA of the targets
    the entry grants.
    """
    n = CAT.target_note(subject)
    exact: list[str] = []
    family: list[str] = []
    for e in n.entries:
        arch = e.renamed_to or e.arch
        dest = family if e.family else exact
        if arch not in dest:
            dest.append(arch)
    return TargetNote(subject, tuple(exact), tuple(family), n.ref, n.ptx_isa)


def has_note(subject: str) -> bool:
    return any(n.subject == subject for n in CAT.target_notes())


# Section of each instruction = the section its Target ISA note is in.
S_ALLOC, S_LD, S_ST, S_WAIT = (note(s).ref for s in ("tcgen05.alloc", "tcgen05.ld", "tcgen05.st", "tcgen05.wait"))
S_CP, S_SHIFT, S_FENCE, S_COMMIT = (note(s).ref for s in ("tcgen05.cp", "tcgen05.shift", "tcgen05.fence",
                                                           "tcgen05.commit"))
MMA_VARIANTS: dict[tuple[bool, bool], str] = {
    (False, False): "tcgen05.mma", (False, True): "tcgen05.mma.sp",
    (True, False): "tcgen05.mma.ws", (True, True): "tcgen05.mma.ws.sp",
}
"""(ws, sparse) -> the instruction (and note subject) of the four tcgen05.mma sections."""
S_MMA, S_MMA_SP, S_MMA_WS, S_MMA_WS_SP = (note(MMA_VARIANTS[k]).ref for k in
                                          ((False, False), (False, True), (True, False), (True, True)))
S_KSHAPE_NOTE = note("tcgen05.mma K = 96").ref
S_MMA_SYNC_BS = "S" + CAT.table(36).section
"""Section of Tables 35-37 (mma.sync block scaling)."""

NX_SPELLINGS: tuple[str, ...] = ("1X", "2X", "4X")
BLOCKN_SPELLINGS: tuple[str, ...] = ("block16", "block32")


def mma_notes(kind: str, ws: bool = False, sparse: bool = False, block_scale: bool = False,
              scale_vec: str | None = None, sid: bool = False) -> list[TargetNote]:
    """Every Target ISA note a tcgen05.mma form falls under; the form assembles where all agree.

    The qualifier notes are looked up in the form's own section, then (for a form the syntax of
    its section does not have, e.g. .ws with block scaling) in the dense section of the same
    sparsity, then in the dense section: so an invalid form still gets the PTX ISA version and
    section of the qualifier it spells.
    """
    base = MMA_VARIANTS[(ws, sparse)]
    out = [note(base)]
    chain = dict.fromkeys((base, MMA_VARIANTS[(False, sparse)], MMA_VARIANTS[(False, False)]))

    def qual(q: str) -> None:
        for v in chain:
            if has_note(f"{v} {q}"):
                out.append(note(f"{v} {q}"))
                return

    qual(f".kind::{kind}")
    if block_scale and scale_vec in NX_SPELLINGS:
        qual(f".scale_vec::{scale_vec}")
    if block_scale and scale_vec in BLOCKN_SPELLINGS:
        qual(f".{scale_vec}")
    if sid:
        qual("scale-input-d")
    return out


def is_scale_vec_nx_note(n: TargetNote) -> bool:
    """True for the ".scale_vec::NX requires sm_100a" notes (register AMB-SCALEVEC-TARGETS)."""
    return n.name.endswith(tuple(f".scale_vec::{s}" for s in NX_SPELLINGS))


NOTE_TCGEN05 = note("tcgen05.mma")
NOTE_LD_RED = note("tcgen05.ld.red")
NOTE_SHIFT = note("tcgen05.shift")

# Minimum PTX ISA versions (PTX ISA Notes of each section, via the catalog's notes).
PTX_TCGEN05 = NOTE_TCGEN05.ptx_isa
PTX_MXF4NVF4 = note("tcgen05.mma .kind::mxf4nvf4").ptx_isa
PTX_BLOCKN = note("tcgen05.mma .block16").ptx_isa
PTX_LD_RED = NOTE_LD_RED.ptx_isa

# HAND-WRITTEN (S9.7.14.3): file 004 has no Target ISA / PTX ISA note (catalog ambiguity A16,
# register AMB-MMASYNC-TARGETS); taken from the public PTX ISA mma section: sm_120a (and
# sm_121a), sm_120f family from PTX 8.8; block scaling from PTX ISA 8.7.
PTX_MMA_SYNC_BS = "8.7"
NOTE_MMA_SYNC_BS = TargetNote("mma_sync_block_scale", ("sm_120a", "sm_121a"), ("sm_120f",), S_MMA_SYNC_BS,
                              PTX_MMA_SYNC_BS)

# =============================================================================================
# tcgen05.mma: Table 39 (kind x .ws x cta_group x sparsity), compile-visible columns only.
# M, N, K, dtype and atype/btype live in the run-time instruction descriptor.

# HAND-WRITTEN (universe, S9.7.16.10.9.1 syntax: ".kind = {.kind::f16, .kind::tf32,
# .kind::f8f6f4}", the .kind::i8 form, ".kind = {.kind::mxf8f6f4, .kind::mxf4, .kind::mxf4nvf4}").
KINDS: tuple[str, ...] = ("f16", "tf32", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4")
BLOCK_SCALED_KINDS: tuple[str, ...] = tuple(canon_kind(k) for k in _rule("block_scale_forms")["kinds"])
"""The kinds of the .block_scale syntax forms (S9.7.16.10.9.1)."""
CTA_GROUPS: tuple[int, ...] = tuple(int(c.rsplit("::", 1)[1]) for c in _rule("block_scale_forms")["cta_group"])


@dataclass(frozen=True)
class T39Row:
    row: int
    kind: str
    ws: bool
    cta_groups: tuple[int, ...]
    sparse: tuple[bool, ...]
    invalid: bool


def _t39() -> tuple[T39Row, ...]:
    """One entry per printed row: the valid rows from ``tcgen05_shapes`` (grouped by the row
    they cite), the Invalid rows from ``tcgen05_invalid_combos``."""
    acc: dict[int, dict] = {}
    for s in CAT.tcgen05_shapes():
        (ref,) = s.refs
        r = acc.setdefault(int(ref.split(".")[1]), {"kind": s.kind, "ws": s.ws, "cta": [], "sp": [],
                                                    "invalid": False})
        r["cta"] += [s.cta_group] if s.cta_group not in r["cta"] else []
        r["sp"] += [s.sparse] if s.sparse not in r["sp"] else []
    for inv in CAT.tcgen05_invalid_combos():
        (ref,) = inv.refs
        acc[int(ref.split(".")[1])] = {"kind": inv.kind, "ws": inv.ws, "cta": list(inv.cta_group),
                                       "sp": list(inv.sparse), "invalid": True}
    return tuple(T39Row(n, r["kind"], r["ws"], tuple(r["cta"]), tuple(r["sp"]), r["invalid"])
                 for n, r in sorted(acc.items()))


T39: tuple[T39Row, ...] = _t39()
"""Table 39, one entry per printed row (56), compile-visible columns."""


def t39_rows(kind: str, ws: bool, cta_group: int, sparse: bool) -> tuple[int, ...]:
    """Printed rows of Table 39 describing this combination."""
    return tuple(r.row for r in T39 if r.kind == kind and r.ws == ws and cta_group in r.cta_groups
                 and sparse in r.sparse)


def t39_valid(kind: str, ws: bool, cta_group: int, sparse: bool) -> bool:
    """True when Table 39 gives shapes for the combination (not 'Invalid')."""
    rows = [r for r in T39 if r.kind == kind and r.ws == ws and cta_group in r.cta_groups
            and sparse in r.sparse]
    return bool(rows) and not any(r.invalid for r in rows)


# =============================================================================================
# Block scaling: Table 54 (scale_vectorsize x kind) and Table 55 (types); mma.sync Tables 35-37.

SCALE_VECS: tuple[str | None, ...] = (None,) + tuple(
    _bare(s) for s in _rule("block_scale_forms")["scale_vectorsize"])
"""Universe of the tcgen05 .scale_vectorsize qualifier (S9.7.16.10.9.1 syntax); ``None`` = the
qualifier omitted (the default form)."""

_ALIASES = _rule("scale_vectorsize_aliases")
TCGEN05_SCALE_VEC_DEFAULT: dict[str, str] = {
    canon_kind(k): _bare(v) for k, v in _ALIASES["default_when_omitted"].items()}
# HAND-WRITTEN reading (register AMB-SCALEVEC-DEFAULT-MXF8F6F4, reading implied-1x): the syntax
# makes .scale_vectorsize optional for mxf8f6f4 too, but S9.7.16.10.9.1 states no default; the
# only spelling Table 54 allows for every mxf8f6f4 K is .scale_vec::1X (alias .block32).
TCGEN05_SCALE_VEC_DEFAULT.setdefault("mxf8f6f4", "1X")
TCGEN05_SCALE_VEC_MUST_NAME: tuple[str, ...] = tuple(canon_kind(k) for k in _ALIASES["must_be_explicit"])

T54: tuple[tuple[int, str, tuple[str, ...]], ...] = tuple(
    (r.index, _bare(r["scale_vectorsize"]), tuple(canon_kind(k) for k in r["kinds"])) for r in CAT.table(54))
"""Table 54: (printed row, spelling, kinds)."""
T54_ROWS: dict[str, tuple[int, ...]] = {
    sv: tuple(row for row, s, _k in T54 if s == sv) for sv in dict.fromkeys(s for _r, s, _k in T54)}
"""Printed rows of Table 54 per scale_vectorsize."""


def _t54_valid() -> dict[str, tuple[str | None, ...]]:
    valid: dict[str, list[str | None]] = {}
    for rule in CAT.scale_vec_rules():
        sv = _bare(rule.scale_vec)
        lst = valid.setdefault(rule.kind, [])
        if sv not in lst:
            lst.append(sv)
    for kind, lst in valid.items():
        if kind not in TCGEN05_SCALE_VEC_MUST_NAME and TCGEN05_SCALE_VEC_DEFAULT.get(kind) in lst:
            lst.insert(0, None)
    return {k: tuple(v) for k, v in valid.items()}


TCGEN05_SCALE_VEC_VALID: dict[str, tuple[str | None, ...]] = _t54_valid()
"""Valid .scale_vectorsize per block-scaled kind: Table 54 x Table 55 (``scale_vec_rules``), plus
the omitted form where a default exists (mxf4: .block32; mxf8f6f4: see the HAND-WRITTEN reading);
mxf4nvf4 must name it."""


def t54_rows(kind: str, sv: str | None) -> tuple[int, ...]:
    """Table 54 rows judging (kind, spelling): the rows of that spelling naming the kind, else every
    row of the spelling (the rows a negative case rules against). ``None`` = the kind's default."""
    if sv is None:
        sv = TCGEN05_SCALE_VEC_DEFAULT.get(kind)
        if sv is None:
            return ()
    mine = tuple(row for row, s, kinds in T54 if s == sv and kind in kinds)
    return mine or T54_ROWS.get(sv, ())


T55: tuple[tuple[int, str, tuple[str, ...]], ...] = tuple(
    (r.index, canon_kind(r["kind"]), tuple(_bare(s) for pair in r["scale_vectorsize"] for s in pair))
    for r in CAT.table(55))
"""Table 55: (printed row, kind, every spelling the row allows)."""
T55_ROW: dict[str, int] = {k: min(row for row, kk, _s in T55 if kk == k) for _r, k, _s in T55}
"""First Table 55 row per kind."""


def t55_rows(kind: str, sv: str | None) -> tuple[int, ...]:
    """Table 55 rows allowing (kind, spelling); the kind's first row when none does."""
    eff = sv if sv is not None else TCGEN05_SCALE_VEC_DEFAULT.get(kind)
    mine = tuple(row for row, k, svs in T55 if k == kind and eff in svs)
    return mine or (T55_ROW[kind],)


# HAND-WRITTEN (universes, S9.7.14.3 / the public PTX ISA mma syntax): .atype/.btype and .stype
# names of mma.sync block scaling, in the order the enumeration walks them.
FP8F6F4_TYPES: tuple[str, ...] = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")
STYPES: tuple[str, ...] = ("ue8m0", "ue4m3")
# HAND-WRITTEN (public PTX ISA mma syntax; file 004 prints no shape): m16n8k32 for mxf8f6f4,
# m16n8k64 for the FP4 kinds. Universe of .shape for the mma.sync cases.
MMA_SYNC_SHAPE: dict[str, str] = {"mxf8f6f4": "m16n8k32", "mxf4": "m16n8k64", "mxf4nvf4": "m16n8k64"}
MMA_SYNC_SHAPES: tuple[str, ...] = ("m16n8k32", "m16n8k64")
# HAND-WRITTEN reading (register AMB-MMASYNC-SCALEVEC-DEFAULT): the omitted .scale_vec_size of
# mma.sync defaults like tcgen05's -- 1X for mxf8f6f4, 2X for mxf4; mxf4nvf4 must name it.
MMA_SYNC_SCALE_VEC_DEFAULT: dict[str, str] = {"mxf8f6f4": "1X", "mxf4": "2X"}

T35_ROW: dict[str, int] = {_bare(r["scale_vec"]): r.index for r in CAT.table(35)}
"""Table 35 row per .scale_vec_size."""
MMA_SYNC_SCALE_VECS: tuple[str | None, ...] = (None,) + tuple(T35_ROW)
"""Universe of the mma.sync .scale_vec_size qualifier (Table 35 lists every spelling); ``None`` =
omitted."""


def _mma_sync_valid() -> tuple[tuple[str, str, tuple[str, ...], str, tuple[str, ...], int], ...]:
    out: dict[int, list] = {}
    for c in CAT.mma_sync_blockscale_combos():
        row = int(c.refs[0].split(".")[1])
        e = out.setdefault(row, [c.kind, MMA_SYNC_SHAPE[c.kind], [], c.stype, [], row])
        for t in (c.atype, c.btype):
            if t not in e[2]:
                e[2].append(t)
        sv = _bare(c.scale_vec)
        if sv not in e[4]:
            e[4].append(sv)
    return tuple((k, sh, tuple(ts), st, tuple(svs), row) for k, sh, ts, st, svs, row in
                 (out[r] for r in sorted(out)))


MMA_SYNC_VALID: tuple[tuple[str, str, tuple[str, ...], str, tuple[str, ...], int], ...] = _mma_sync_valid()
"""Table 36 via ``mma_sync_blockscale_combos``: (kind, shape, element types, stype, scale_vecs,
Table 36 row), in printed order; the shape from ``MMA_SYNC_SHAPE``."""


def _t37() -> dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], int]]:
    out = {}
    for sv, _row in T35_ROW.items():
        s = CAT.mma_sync_selectors(sv)
        out[sv] = (s.byte_id_a, s.thread_id_a, s.byte_id_b, s.thread_id_b, int(s.refs[0].split(".")[1]))
    return out


T37_SELECTORS: dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], int]] = _t37()
"""Table 37 via ``mma_sync_selectors``: scale_vec -> (byte-id-a, thread-id-a, byte-id-b,
thread-id-b, row) (rows 2/3 thread-id columns merged from row 1: register AMB-T37-BLANK-THREADID)."""

SELECTOR_ENCODABLE: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted(set().union(*(sel[i] for sel in T37_SELECTORS.values())))) for i in range(4))
"""Range of each selector operand: the union over Table 37's rows (bytes 0-3, thread-id-a 0-1,
thread-id-b 0-3). Inside it and outside a row's set is "undefined behaviour" (register
AMB-MMASYNC-SELECTOR-UB); one past it is the out-of-range negative."""

# =============================================================================================
# Collector / ashift / optional operands (S9.7.16.10.9.1, .3)

# HAND-WRITTEN (S9.7.16.10.9.1 / S9.7.16.10.9.3 syntax, .collector_usage; not in the catalog).
COLLECTOR_A_OPS: tuple[str | None, ...] = (None, "fill", "use", "lastuse", "discard")
COLLECTOR_B_BUFS: tuple[str, ...] = ("b0", "b1", "b2", "b3")
COLLECTOR_B_OPS: tuple[str, ...] = ("fill", "use", "lastuse", "discard")
# HAND-WRITTEN prose rule (S9.7.16.10.9.1): "It is illegal to specify either of
# .collector::a::use or .collector::a::fill along with .ashift".
ASHIFT_FORBIDDEN_COLLECTORS: tuple[str, ...] = ("fill", "use")

DOL_SIZE: dict[int, int] = {int(k.strip(":")): v for k, v in _rule("disable_output_lane_size").items()}
"""Size of the disable-output-lane vector per .cta_group (S9.7.16.10.9.1)."""
SID_KINDS: tuple[str, ...] = tuple(canon_kind(k) for k in _rule("scale_input_d")["kinds"])
"""scale-input-d "is only valid for .kind::tf32 and .kind::f16"."""
SID_RANGE: tuple[int, int] = tuple(_rule("scale_input_d")["range"])  # type: ignore[assignment]
"""Inclusive range of scale-input-d ([0, 15])."""

# =============================================================================================
# tcgen05.ld / st: Table 47 / 48 (num x shape -> registers; NA cells), .red forms.

_LDQ = _rule("tcgen05_ld_qualifiers")
LD_ST_SHAPES: tuple[str, ...] = tuple(_bare(s) for s in _LDQ["shape1"] + _LDQ["shape2"])
"""Universe of .shape of tcgen05.ld/st (S9.7.16.8.3 syntax)."""
NUMS: tuple[int, ...] = tuple(int(_bare(n).lstrip("x")) for n in _LDQ["num"])
"""Universe of .num (.x1 ... .x128)."""

_LDST_TABLE = {"ld": 47, "st": 48}
_LDST_REGS: dict[tuple[str, str, int], int] = {
    (s.op, _bare(s.shape), int(_bare(s.num).lstrip("x"))): s.regs for s in CAT.ld_st_shapes()}
"""(op, shape, num) -> register count, for every cell of Tables 47/48 that is not NA."""
_LDST_ROW: dict[tuple[str, int], int] = {
    (op, int(_bare(r["num"]).lstrip("x"))): r.index for op, t in _LDST_TABLE.items() for r in CAT.table(t)}


def ld_st_valid(op: str, shape: str, num: int) -> bool:
    """True when Table 47 (ld) / 48 (st) gives a register count for (shape, num) (not NA)."""
    return (op, shape, num) in _LDST_REGS


def ld_st_row(op: str, num: int) -> int:
    """Printed row of Table 47 (ld) / 48 (st) for ``.num``."""
    return _LDST_ROW[(op, num)]


def ld_st_regs_per_x1(shape: str) -> int:
    """Registers per ``.x1`` of a shape column: the .x1 cell (every column has one)."""
    return _LDST_REGS[("ld", shape, 1)]


T47_COLUMN: dict[str, int] = {s: ld_st_regs_per_x1(s) for s in LD_ST_SHAPES}
"""Registers per ``.x1`` for each shape column of Table 47/48."""
T47_NA: frozenset[tuple[str, int]] = frozenset(
    (s, n) for s in LD_ST_SHAPES for n in NUMS if not ld_st_valid("ld", s, n))
"""The NA cells of Table 47: the complement of its valid cells in LD_ST_SHAPES x NUMS."""

LD_RED_SHAPES: tuple[str, ...] = tuple(_bare(s) for s in _LDQ["red_shape3"] + _LDQ["red_shape4"])
LD_RED_OPS: tuple[str, ...] = tuple(_bare(s) for s in _LDQ["redOp"])
LD_RED_TYPES: tuple[str, ...] = (canon_type(_LDQ["red_float_type"]),) + tuple(
    canon_type(t) for t in _LDQ["red_int_types"])
LD_RED_FLOAT_TYPES: tuple[str, ...] = (canon_type(_LDQ["red_float_type"]),)
"""Types that take .abs / .NaN (S9.7.16.8.3: "only with .f32")."""
LD_RED_MIN_NUM: int = int(_bare(_LDQ["red_min_num"]).lstrip("x"))

# =============================================================================================
# Table 49 / 50 (run-time idesc bits; spelled with an immediate idesc)

T49: tuple[tuple[int, str, bool, bool], ...] = tuple(
    (int(tn.refs[0].split(".")[1]), tn.kind, tn.transpose, tn.negate)
    for tn in (CAT.transpose_negate(canon_kind(r["kind"])) for r in CAT.table(49)))
"""Table 49 via ``transpose_negate``: (row, kind, transpose ok, negate ok) in printed order."""


def idesc_put(kind: str, field: str, value: int) -> int:
    """``value`` placed in the instruction-descriptor field of ``kind`` whose name starts with
    ``field`` (Tables 42-44 via ``idesc_fields``), applying the field's formula (``N >> 3``)."""
    f = next(x for x in CAT.idesc_fields(kind) if x.name.startswith(field))
    if f.formula:
        m = re.fullmatch(r"[MN] >> (\d+)", f.formula)
        if not m:
            raise ValueError(f"idesc field {f.name!r}: formula {f.formula!r} not understood")
        value >>= int(m.group(1))
    if not 0 <= value < 1 << f.width:
        raise ValueError(f"{value} does not fit idesc field {f.name!r} ({f.width} bits)")
    return value << f.lo


def _t50() -> tuple[tuple[int, int, int, int], ...]:
    out = []
    for rule in CAT.transpose_b_n_rule():
        m = 128 * rule.cta_group  # the M the idesc of these cases names (128 / 256)
        universe = sorted({n for s in CAT.tcgen05_shapes("f8f6f4") if not s.ws and not s.sparse
                           and s.cta_group == rule.cta_group and s.M == m for n in s.N})
        bad = min(n for n in universe if n not in rule.N)
        out.append((rule.cta_group, min(rule.N), bad, int(rule.refs[0].split(".")[1])))
    return tuple(out)


T50: tuple[tuple[int, int, int, int], ...] = _t50()
"""Table 50 via ``transpose_b_n_rule``: (cta_group, smallest allowed N, smallest N of Table 39's
f8f6f4 dense shape (M = 128 * cta_group) outside the row, row)."""

# =============================================================================================
# tcgen05.cp (S9.7.16.9.2), shift, commit, fence, wait, alloc

_CP = _rule("tcgen05_cp_forms")
CP_SHAPES: tuple[str, ...] = tuple(_bare(s) for s in _CP["shapes"])
CP_MULTICASTS: tuple[str | None, ...] = (None,) + tuple(_bare(s) for s in _CP["multicast"])
CP_SRC_FMTS: tuple[str | None, ...] = (None,) + tuple(_bare(s) for s in _CP["src_fmt"])
CP_MULTICAST_REQUIRED: dict[str, tuple[str, ...]] = {
    _bare(k): tuple(_bare(m) for m in v) for k, v in _CP["multicast_required"].items()}


def cp_valid(shape: str, multicast: str | None) -> bool:
    """``.64x128b`` requires a ``.warpx2::*``; ``.32x128b`` requires ``.warpx4``; the ``**``/``***``
    footnote marks tie each multicast to that shape, so no multicast on the other shapes (the
    catalog rule's ``inference``)."""
    if shape in CP_MULTICAST_REQUIRED:
        return multicast in CP_MULTICAST_REQUIRED[shape]
    return multicast is None


# HAND-WRITTEN (universes; S9.7.16.11.1 / S9.7.16.8.5 syntax, not in the catalog).
FENCES: tuple[str, ...] = ("before_thread_sync", "after_thread_sync")
WAITS: tuple[str, ...] = ("ld", "st")
