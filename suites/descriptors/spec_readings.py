"""The expectation side of the ``descriptors`` suite: what the spec text says bits and bytes mean.

Why a module of its own: every ``expected`` value of the suite must come from the spec text, never
from the reference encoders whose decoders the cases check. So this module imports nothing from
``reference/``; it reads the catalog rows (the project's transcription of the tables, with
provenance) and the worked examples printed in the spec, and turns them into

* bit positions of each descriptor field (``field_bits``: the catalog's ``bits`` cell),
* allowed values of an instruction-descriptor cell of Table 42 (``cell_values``),
* the byte address of every element of a matrix laid out as a CuTe layout the spec prints
  (``cute_offsets``, 9.7.16.3.3 "Exact layout"), or as Table 53 swizzle atoms (``atom_plan``),
* the zero-column masks printed by the examples of 9.7.16.4.3 (``printed_bits``).

Swizzling is written in atom terms (16-byte unit ``u`` of atom row ``r`` moves to ``u ^ f(r)``),
which is the spec's ``Swizzle<B,4,3>`` of 9.7.16.3.3 on offsets inside a pattern that starts on its
Table 41 boundary; 32-byte atomicity (Table 53 row 1) permutes 32-byte units the same way
(``Swizzle<2,5,2>``, cutlass-facts §4.1: the spec gives no functor for it).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from mmacts.spec import catalog


@functools.cache
def _cat() -> catalog.Catalog:
    return catalog.load()


def row(ref: str) -> catalog.Row:
    """Catalog row ``T<table>.<row>``."""
    return _cat().row(ref)


def field_bits(ref: str) -> tuple[int, int]:
    """(lowest bit, width) of the descriptor field a Table 40/42/45 row places (its ``bits`` cell)."""
    text = str(row(ref).values["bits"]).replace("–", "-")
    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+))?\s*", text)
    if not m:
        raise ValueError(f"{ref}: bits cell {text!r} not understood")
    lo = int(m.group(1))
    hi = int(m.group(2)) if m.group(2) else lo
    return lo, hi - lo + 1


def put(ref: str, value: int) -> int:
    """``value`` placed in the field of row ``ref``; refuses values wider than the field."""
    lo, width = field_bits(ref)
    if not 0 <= value < (1 << width):
        raise ValueError(f"{value} does not fit the {width}-bit field of {ref}")
    return value << lo


def ones(ref: str) -> int:
    """All-ones value of the field of row ``ref`` (not shifted)."""
    return (1 << field_bits(ref)[1]) - 1


# ---------------------------------------------------------------------------------------------
# Table 40


def matrix_descriptor_encode(x: int) -> int:
    """Table 40 footnote, verbatim: matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4."""
    return (x & 0x3FFFF) >> 4


SWIZZLE_CODE: dict[str, int] = {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}
"""Table 40 bits 61-63 as its description lists them (0 none, 1 128-Byte with 32B atomic, 2 128-Byte,
4 64-Byte, 6 32-Byte; 3, 5, 7 invalid), keyed by this project's mode names."""


def smem_desc_word(*, start: int = 0, lbo_field: int = 0, sbo_field: int = 0, fixed_46_48: int = 0b001,
                   base_offset: int = 0, lbo_mode: int = 0, fixed_53_60: int = 0, swizzle: int = 0) -> int:
    """A 64-bit shared-memory descriptor composed field by field at the Table 40 positions.

    ``start`` is a byte address (encoded with matrix-descriptor-encode); LBO/SBO are given as the
    raw 14-bit field values, as the worked examples of 9.7.16.3.3 print them ("(LBO) >> 4 = 16").
    """
    return (put("T40.1", matrix_descriptor_encode(start)) | put("T40.2", lbo_field) | put("T40.3", sbo_field)
            | put("T40.4", fixed_46_48) | put("T40.5", base_offset) | put("T40.6", lbo_mode)
            | put("T40.7", fixed_53_60) | put("T40.8", swizzle))


# ---------------------------------------------------------------------------------------------
# Table 42


@dataclass(frozen=True)
class Cell:
    """One Table 42 cell read as data: the allowed raw values, or a formula ``X >> shift``."""

    values: frozenset[int] | None
    shift: int = 0


def cell_values(text: str) -> Cell:
    """Read a Table 42 cell: ``0-3`` (a range), ``0`` / ``0 (NA)`` (the only value), ``N >> 3`` (a
    formula: the field holds the value without its low bits), or ``Name = v ...`` lists."""
    t = " ".join(str(text).split())
    if m := re.fullmatch(r"[MN] >> (\d+)", t):
        return Cell(None, int(m.group(1)))
    if m := re.fullmatch(r"(\d+)\s*-\s*(\d+)", t):
        return Cell(frozenset(range(int(m.group(1)), int(m.group(2)) + 1)))
    if m := re.fullmatch(r"(\d+)(?: \(NA\))?", t):
        return Cell(frozenset({int(m.group(1))}))
    vals = re.findall(r"=\s*(\d+)", t)
    if not vals:
        raise ValueError(f"Table 42 cell {text!r} not understood")
    return Cell(frozenset(int(v) for v in vals))


T42_KINDS: tuple[str, ...] = ("tf32", "f16", "f8f6f4", "i8")
T42_ROWS: tuple[int, ...] = tuple(range(1, 17))


def t42_cell(index: int, kind: str) -> Cell:
    return cell_values(row(f"T42.{index}").values[f"kind::{kind}"])


def t42_is_reserved(index: int) -> bool:
    return str(row(f"T42.{index}").values["description"]).strip() == "Reserved"


def t42_base_word(kind: str, *, m: int = 128, n: int = 64) -> int:
    """A descriptor every Table 42 cell of ``kind`` allows: each listed field at its smallest listed
    value, M and N through their formulas (M = 128, N = 64 are Table 39 shapes of every kind)."""
    word = 0
    for i in T42_ROWS:
        c = t42_cell(i, kind)
        if c.values is None:
            dim = m if "M" in str(row(f"T42.{i}").values["description"]).split(",")[0] else n
            word |= put(f"T42.{i}", dim >> c.shift)
        else:
            word |= put(f"T42.{i}", min(c.values))
    return word


# ---------------------------------------------------------------------------------------------
# Table 45


def zcm_word(*, start_counts: tuple[int, int, int, int] = (0, 0, 0, 0),
             first_spans: tuple[int, int, int, int] = (0, 0, 0, 0), non_zero_mask: int = 0,
             skip_span: int = 0, use_span: int = 0, column_shift: int = 0) -> int:
    """A zero-column mask descriptor composed at the Table 45 positions; counts/spans indexed by i."""
    w = 0
    for i in range(4):
        w |= put(f"T45.{1 + i}", start_counts[i]) | put(f"T45.{5 + i}", first_spans[i])
    return (w | put("T45.10", non_zero_mask) | put("T45.11", skip_span) | put("T45.12", use_span)
            | put("T45.13", column_shift))


def printed_bits(text: str) -> np.ndarray:
    """A mask as the examples print it (``0b … 111 0000 111``, MSB first, only the low bits shown)
    -> bool array, element j = bit j (LSB first)."""
    digits = re.sub(r"[^01]", "", text.replace("0b", "", 1))
    return np.array([c == "1" for c in reversed(digits)], dtype=bool)


# ---------------------------------------------------------------------------------------------
# 9.7.16.3.3 canonical layouts: CuTe layout evaluation


def _flatten(shape, stride) -> list[tuple[int, int]]:
    if isinstance(shape, int):
        return [(shape, stride)]
    out: list[tuple[int, int]] = []
    for s, d in zip(shape, stride, strict=True):
        out += _flatten(s, d)
    return out


def cute_mode_offsets(shape, stride) -> np.ndarray:
    """Offsets of one CuTe mode for its linear coordinate 0..size-1 (colexicographic: the first
    sub-mode varies fastest), e.g. (8,2):(4,32) -> [0,4,...,28,32,36,...]."""
    modes = _flatten(shape, stride)
    size = int(np.prod([s for s, _ in modes]))
    idx = np.arange(size)
    off = np.zeros(size, dtype=np.int64)
    for s, d in modes:
        off += (idx % s) * d
        idx = idx // s
    return off


def cute_offsets(shape: tuple, stride: tuple) -> np.ndarray:
    """(rows, cols) element offsets of a rank-2 CuTe layout ``(rows_mode, cols_mode):(...)``."""
    r = cute_mode_offsets(shape[0], stride[0])
    c = cute_mode_offsets(shape[1], stride[1])
    return r[:, None] + c[None, :]


def swizzle_bytes(offset: np.ndarray, b: int, m: int = 4, s: int = 3) -> np.ndarray:
    """CuTe ``Swizzle<B,M,S>`` on byte offsets from a pattern start: bits [M, M+B) ^= bits [M+S, M+S+B)."""
    offset = np.asarray(offset, dtype=np.int64)
    return offset ^ (((offset >> (m + s)) & ((1 << b) - 1)) << m)


# ---------------------------------------------------------------------------------------------
# Table 53 swizzle atoms

ATOM_SWIZZLE: dict[str, str] = {
    "128B Swizzling with 32B atomicity": "128B_base32B",
    "128B Swizzling with 16B atomicity": "128B",
    "64B Swizzling Mode": "64B",
    "32B Swizzling Mode": "32B",
    "None": "none",
}
"""Table 53's first column -> this project's swizzle-mode names (``SWIZZLE_CODE`` keys)."""


@dataclass(frozen=True)
class Atom:
    """One Table 53 atom in bytes: ``rows`` along the strided direction, ``width`` bytes along the
    leading (contiguous) one, permuted in units of ``atomicity`` bytes."""

    swizzle: str
    major: str
    rows: int
    width: int
    atomicity: int

    @property
    def nbytes(self) -> int:
        return self.rows * self.width


def atom_of(ref: str) -> Atom:
    """Read a Table 53 row: its atom ``AxB`` is (M/N extent) x (K extent), the leading dimension in
    128-bit units (9.7.16.10.6: "multiplied along the leading dimension by 128/bits")."""
    v = row(ref).values
    mode = ATOM_SWIZZLE[str(v["swizzle"]).strip()]
    lead = str(v["leading_dimension"]).strip()
    if lead not in ("M/N", "K"):
        raise ValueError(f"{ref}: no atom (leading dimension {lead!r})")
    a_mn, a_k = (int(x) for x in str(v["atom"]).lower().split("x"))
    atomicity = 32 if "32B atomicity" in str(v["swizzle"]) else 16
    if lead == "K":
        return Atom(mode, "K", rows=a_mn, width=16 * a_k, atomicity=atomicity)
    return Atom(mode, "MN", rows=a_k, width=16 * a_mn, atomicity=atomicity)


def atom_byte(atom: Atom, r: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Byte offset inside an atom (starting on its pattern boundary) of logical row ``r`` byte ``b``.

    The unit ``b // atomicity`` of row ``r`` goes to unit ``u ^ f`` with ``f`` = the row's position
    in the 128-byte-row pattern ((r * width) >> 7, modulo the units per row): Swizzle<B,4,3> for
    16-byte atoms, Swizzle<2,5,2> for the 32-byte atoms.
    """
    units = atom.width // atom.atomicity
    f = ((r * atom.width) >> 7) % units
    u = (b // atom.atomicity) ^ f
    return r * atom.width + u * atom.atomicity + b % atom.atomicity


@dataclass(frozen=True)
class AtomTile:
    """A tile of 2 x 2 atoms (2 x 1 for swizzled K-major, whose walk never leaves one swizzle-width
    slice of K) placed with the strides of 9.7.16.3.1/9.7.16.3.2 and the examples of 9.7.16.3.3."""

    atom: Atom
    elem_bytes: int
    base: int
    rows: int
    row_bytes: int
    lbo: int
    sbo: int

    @property
    def mn(self) -> int:
        return self.rows if self.atom.major == "K" else self.row_bytes // self.elem_bytes

    @property
    def k(self) -> int:
        return self.row_bytes // self.elem_bytes if self.atom.major == "K" else self.rows

    def addresses(self) -> np.ndarray:
        """(MN, K, elem_bytes) byte address of every byte of every element."""
        a = self.atom
        mn, k = np.meshgrid(np.arange(self.mn), np.arange(self.k), indexing="ij")
        if a.major == "K":
            r, e = mn, k
        else:
            r, e = k, mn
        byte = e[..., None] * self.elem_bytes + np.arange(self.elem_bytes)
        rr = r[..., None]
        row_group, rin = rr // a.rows, rr % a.rows
        col_group, bin_ = byte // a.width, byte % a.width
        # strided direction: each atom of a.rows rows (8; 4 K rows for Table 53's 8x4 32B-atomicity
        # atom, reading "atom-512" of AMB-T53-32B-ATOM-SIZE) steps by the descriptor stride (SBO for
        # K-major and swizzled MN-major, LBO for MN-major without swizzle).
        row_stride = self.lbo if (a.major == "MN" and a.swizzle == "none") else self.sbo
        col_stride = self.sbo if (a.major == "MN" and a.swizzle == "none") else self.lbo
        atom_base = row_group * row_stride + col_group * col_stride
        return self.base + atom_base + atom_byte(a, rin, bin_)


def atom_plan(atom: Atom, elem_bytes: int, base: int = 1024) -> AtomTile:
    """The 2x2 (or 2x1) atom tile of ``atom`` and the LBO/SBO that describe it.

    K-major none: SBO = next 8 rows (128 B), LBO = next 16-byte K column (256 B).
    K-major swizzled: SBO = next 8 rows (one atom), LBO unused (16 B, "assumed 1").
    MN-major none: LBO = next 8 K rows, SBO = next 16-byte MN column (Figure 190's roles).
    MN-major swizzled: LBO = next MN atom, SBO = next atom of K rows (Figures 191/192's roles):
    8 K rows, or 4 for the 32B-atomicity atom (Table 53 8x4, 512 B; the tile is then 4 atoms of K).
    """
    group = 8 * atom.width  # one 8-row group of atom-width rows
    if atom.major == "K":
        if atom.swizzle == "none":
            return AtomTile(atom, elem_bytes, base, 16, 32, lbo=2 * group, sbo=group)
        return AtomTile(atom, elem_bytes, base, 16, atom.width, lbo=16, sbo=group)
    if atom.swizzle == "none":
        return AtomTile(atom, elem_bytes, base, 16, 32, lbo=2 * group, sbo=group)
    return AtomTile(atom, elem_bytes, base, 16, 2 * atom.width, lbo=atom.nbytes, sbo=2 * atom.nbytes)
