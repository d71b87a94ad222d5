"""QUALIFIER SPACES AND TARGET NOTES of the compile-conformance suite -- the one place they live.

Why one place: the cases are enumerated as "every value of each qualifier space, valid ones
expected to assemble, the complement expected to be refused". The spaces are transcribed here
from the PTX text (tcgen05 chapter 9.7.16 = spec file 003; mma.sync block scaling 9.7.14.3 =
file 004) with the table/row each fact comes from. When the spec catalog
(``mmacts.spec.catalog``) covers a table, ``test_spaces.py`` cross-checks these transcriptions
against it; switching the enumeration to the catalog is then a change in this file only.

Row numbering follows the catalog's convention: rows numbered from 1 in the order the spec prints
them (Table 39 has 56 printed rows).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# ---------------------------------------------------------------------------------------------
# Architectures and Target ISA notes

ARCHS: tuple[str, ...] = (
    "sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_120a", "sm_121a", "sm_90a",
)
"""Every target a compile case is assembled for (sm_90a: a Hopper target with no tcgen05)."""

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

    def supports(self, arch: str) -> bool:
        if arch in self.exact:
            return True
        fam, minor, suffix = arch_parts(arch)
        for f in self.family:
            ffam, fminor, _ = arch_parts(f)
            if fam == ffam and minor >= fminor and suffix in ("a", "f"):
                return True
        return False


S_ALLOC, S_LD, S_ST, S_WAIT = "S9.7.16.7.1", "S9.7.16.8.3", "S9.7.16.8.4", "S9.7.16.8.5"
S_CP, S_SHIFT, S_FENCE, S_COMMIT = "S9.7.16.9.2", "S9.7.16.9.3", "S9.7.16.11.1", "S9.7.16.12.1"
S_MMA, S_MMA_SP, S_MMA_WS, S_MMA_WS_SP = "S9.7.16.10.9.1", "S9.7.16.10.9.2", "S9.7.16.10.9.3", "S9.7.16.10.9.4"
S_MMA_SYNC_BS = "S9.7.14.3"
"""(Defined before the notes that cite them.)"""
S_KSHAPE_NOTE = "S9.7.16.2.1.1"

NOTE_TCGEN05 = TargetNote("tcgen05", ("sm_100a", "sm_110a"), ("sm_100f", "sm_110f"))
"""alloc/ld/st/wait/cp/fence/commit and tcgen05.mma{.ws}{.sp}: sm_100a, sm_101a(=sm_110a), and
family sm_100f / sm_110f from PTX 8.8."""
NOTE_I8 = TargetNote("kind_i8", ("sm_100a", "sm_110a"), (), S_MMA)
"""``.kind::i8``: sm_100a, sm_110a only (all four mma sections)."""
NOTE_SP_MXF4 = TargetNote("sp_mxf4", ("sm_100a", "sm_103a", "sm_110a"), (), S_MMA_SP)
"""tcgen05.mma.sp with ``.kind::mxf4``/``.kind::mxf4nvf4``: sm_100a, sm_103a, sm_110a only."""
NOTE_SHIFT = TargetNote("shift", ("sm_100a", "sm_103a", "sm_110a"), (), S_SHIFT)
NOTE_LD_RED = TargetNote("ld_red", ("sm_110a",), ("sm_110f", "sm_103f"), S_LD)
"""tcgen05.ld.red: sm_101a(=sm_110a), sm_101f(=sm_110f), sm_103f -- *not* sm_100a/sm_100f."""
NOTE_SV_NX = TargetNote("scale_vec_NX", ("sm_100a",), (), S_MMA)
"""``.scale_vec::1X/2X/4X`` "requires sm_100a" (read literally: sm_100a only; AMBIGUITY C03)."""
NOTE_SV_BLOCK = TargetNote("scale_vec_blockN", (), ("sm_100f", "sm_110f"), S_MMA)
"""``.block16``/``.block32`` "requires sm_100f or sm_110f"."""
NOTE_SID = TargetNote("scale_input_d", ("sm_100a",), ("sm_100f",), S_MMA)
"""``scale-input-d``: sm_100a, and sm_100f or higher in the same family from PTX 8.8."""
NOTE_MMA_SYNC_BS = TargetNote("mma_sync_block_scale", ("sm_120a", "sm_121a"), ("sm_120f",), S_MMA_SYNC_BS)
"""mma.sync block scaling: the shared spec file 004 has no Target ISA note; taken from the public
PTX ISA mma section (sm_120a; sm_120f family from 8.8). AMBIGUITY C01."""

# Minimum PTX ISA versions (PTX ISA Notes of each section).
PTX_TCGEN05 = "8.6"
PTX_MXF4NVF4 = "8.7"
PTX_BLOCKN = "8.8"
PTX_LD_RED = "8.8"
PTX_MMA_SYNC_BS = "8.7"

# ---------------------------------------------------------------------------------------------
# tcgen05.mma: Table 39 (kind x .ws x cta_group x sparsity), compile-visible columns only.
# M, N, K, dtype and atype/btype live in the run-time instruction descriptor.

KINDS: tuple[str, ...] = ("f16", "tf32", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4")
BLOCK_SCALED_KINDS: tuple[str, ...] = ("mxf8f6f4", "mxf4", "mxf4nvf4")


@dataclass(frozen=True)
class T39Row:
    row: int
    kind: str
    ws: bool
    cta_groups: tuple[int, ...]
    sparse: tuple[bool, ...]
    invalid: bool


def _t39() -> tuple[T39Row, ...]:
    rows: list[T39Row] = []
    n = 0

    def add(kind: str, ws: bool, ctas: tuple[int, ...], sp: tuple[bool, ...], invalid: bool,
            times: int = 1) -> None:
        nonlocal n
        for _ in range(times):
            n += 1
            rows.append(T39Row(n, kind, ws, ctas, sp, invalid))

    # f16: two printed rows (dtype .f16 / .f32) per combination.
    for kind, per in (("f16", 2), ("tf32", 1), ("f8f6f4", 1)):
        for cta in (1, 2):
            for sp in (False, True):
                add(kind, False, (cta,), (sp,), False, per)
        for sp in (False, True):
            add(kind, True, (1,), (sp,), False, per)
        if kind == "f16":
            add(kind, True, (2,), (False, True), True, 2)
        else:
            for sp in (False, True):
                add(kind, True, (2,), (sp,), True)
    for cta in (1, 2):
        for sp in (False, True):
            add("mxf8f6f4", False, (cta,), (sp,), False)
    for cta in (1, 2):
        for sp in (False, True):
            add("mxf8f6f4", True, (cta,), (sp,), True)
    for cta in (1, 2):
        for sp in (False, True):
            add("i8", False, (cta,), (sp,), False)
    for sp in (False, True):
        add("i8", True, (1,), (sp,), False)
    for sp in (False, True):
        add("i8", True, (2,), (sp,), True)
    for kind in ("mxf4", "mxf4nvf4"):
        for cta in (1, 2):
            for sp in (False, True):
                add(kind, False, (cta,), (sp,), False)
        add(kind, True, (1, 2), (False, True), True)
    return tuple(rows)


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


# ---------------------------------------------------------------------------------------------
# Block scaling: Table 54 (scale_vectorsize x kind) and Table 55 (types); mma.sync Tables 35-37.

SCALE_VECS: tuple[str | None, ...] = (None, "1X", "2X", "4X", "block16", "block32")
"""``None`` = the qualifier omitted (the default form)."""

T54_ROWS: dict[str, tuple[int, ...]] = {
    "1X": (1,), "2X": (2,), "4X": (3,), "block16": (4, 5), "block32": (6, 7, 8),
}
"""Printed rows of Table 54 per scale_vectorsize (block16: K=96 row 4, other K row 5; block32:
mxf4/mxf4nvf4 K=96 row 6, other K row 7, mxf8f6f4 row 8)."""

TCGEN05_SCALE_VEC_VALID: dict[str, tuple[str | None, ...]] = {
    "mxf8f6f4": (None, "1X", "block32"),
    "mxf4": (None, "2X", "block32"),
    "mxf4nvf4": ("2X", "4X", "block16", "block32"),
}
"""Table 54/55 + prose: mxf4 defaults to .block32 when omitted; mxf4nvf4 must name it; for
mxf8f6f4 the syntax makes it optional and no default is stated (AMBIGUITY C02)."""


def t54_rows(kind: str, sv: str | None) -> tuple[int, ...]:
    if sv is None:
        sv = {"mxf4": "block32", "mxf8f6f4": "1X"}.get(kind)
        if sv is None:
            return ()
    if sv == "block32":
        return (8,) if kind == "mxf8f6f4" else (6, 7)
    return T54_ROWS.get(sv, ())


T55_ROW: dict[str, int] = {"mxf8f6f4": 1, "mxf4": 2, "mxf4nvf4": 3}
"""Table 55 row per kind (mxf4nvf4 + UE4M3 is row 4, tcgen05 stype is in the idesc)."""

FP8F6F4_TYPES: tuple[str, ...] = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")
STYPES: tuple[str, ...] = ("ue8m0", "ue4m3")

MMA_SYNC_VALID: tuple[tuple[str, str, tuple[str, ...], str, tuple[str | None, ...], int], ...] = (
    # (kind, shape, element types, stype, scale_vecs, Table 36 row)
    ("mxf8f6f4", "m16n8k32", FP8F6F4_TYPES, "ue8m0", ("1X",), 1),
    ("mxf4", "m16n8k64", ("e2m1",), "ue8m0", ("2X",), 2),
    ("mxf4nvf4", "m16n8k64", ("e2m1",), "ue8m0", ("2X", "4X"), 3),
    ("mxf4nvf4", "m16n8k64", ("e2m1",), "ue4m3", ("4X",), 4),
)
"""Table 36 (with the shapes from the mma.sync syntax: m16n8k32 for mxf8f6f4, m16n8k64 for the
FP4 kinds)."""

T35_ROW: dict[str, int] = {"1X": 1, "2X": 2, "4X": 3}

T37_SELECTORS: dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], int]] = {
    # scale_vec: (byte-id-a, thread-id-a, byte-id-b, thread-id-b, Table 37 row)
    "1X": ((0, 1, 2, 3), (0, 1), (0, 1, 2, 3), (0, 1, 2, 3), 1),
    "2X": ((0, 2), (0, 1), (0, 2), (0, 1, 2, 3), 2),
    "4X": ((0,), (0, 1), (0,), (0, 1, 2, 3), 3),
}
"""Table 37 as the catalog reads it (row 2/3 thread-id columns merged from row 1: AMBIGUITY A01
of the catalog)."""

SELECTOR_ENCODABLE: tuple[tuple[int, ...], ...] = ((0, 1, 2, 3), (0, 1), (0, 1, 2, 3), (0, 1, 2, 3))
"""Immediate ranges of the selector operands (bytes 0-3, thread-id-a 0-1, thread-id-b 0-3)."""

# ---------------------------------------------------------------------------------------------
# Collector / ashift / optional operands (9.7.16.10.9.1, .3)

COLLECTOR_A_OPS: tuple[str | None, ...] = (None, "fill", "use", "lastuse", "discard")
COLLECTOR_B_BUFS: tuple[str, ...] = ("b0", "b1", "b2", "b3")
COLLECTOR_B_OPS: tuple[str, ...] = ("fill", "use", "lastuse", "discard")
ASHIFT_FORBIDDEN_COLLECTORS: tuple[str, ...] = ("fill", "use")
""""It is illegal to specify either of .collector::a::use or .collector::a::fill along with .ashift"."""
DOL_SIZE: dict[int, int] = {1: 4, 2: 8}
"""Size of the disable-output-lane vector per .cta_group."""
SID_KINDS: tuple[str, ...] = ("f16", "tf32")
"""scale-input-d "is only valid for .kind::tf32 and .kind::f16"; range [0, 15]."""

# ---------------------------------------------------------------------------------------------
# tcgen05.ld / st: Table 47 / 48 (num x shape -> registers; NA cells), .red forms.

LD_ST_SHAPES: tuple[str, ...] = ("16x64b", "16x128b", "16x256b", "32x32b", "16x32bx2")
NUMS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128)
T47_COLUMN: dict[str, int] = {"16x32bx2": 1, "16x64b": 1, "32x32b": 1, "16x128b": 2, "16x256b": 4}
"""Registers per ``.x1`` for each shape column of Table 47/48."""
T47_NA: frozenset[tuple[str, int]] = frozenset(
    {("16x128b", 128), ("16x256b", 64), ("16x256b", 128)}
)
"""The NA cells of Table 47/48."""


def t47_row(num: int) -> int:
    return NUMS.index(num) + 1


def t47_valid(shape: str, num: int) -> bool:
    return (shape, num) not in T47_NA


LD_RED_SHAPES: tuple[str, ...] = ("32x32b", "16x32bx2")
LD_RED_OPS: tuple[str, ...] = ("min", "max")
LD_RED_TYPES: tuple[str, ...] = ("f32", "u32", "s32")

# ---------------------------------------------------------------------------------------------
# tcgen05.cp (9.7.16.9.2), shift, commit, fence, wait, alloc

CP_SHAPES: tuple[str, ...] = ("128x256b", "4x256b", "128x128b", "64x128b", "32x128b")
CP_MULTICASTS: tuple[str | None, ...] = (None, "warpx2::02_13", "warpx2::01_23", "warpx4")
CP_SRC_FMTS: tuple[str | None, ...] = (None, "b6x16_p32", "b4x16_p64")


def cp_valid(shape: str, multicast: str | None) -> bool:
    """``.64x128b`` requires a ``.warpx2::*``; ``.32x128b`` requires ``.warpx4``; the ``**``/``***``
    footnote marks tie each multicast to that shape, so no multicast on the other shapes."""
    if shape == "64x128b":
        return multicast in ("warpx2::02_13", "warpx2::01_23")
    if shape == "32x128b":
        return multicast == "warpx4"
    return multicast is None


FENCES: tuple[str, ...] = ("before_thread_sync", "after_thread_sync")
WAITS: tuple[str, ...] = ("ld", "st")
