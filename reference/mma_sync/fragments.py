"""Per-lane register images of the mma.sync A/B/C/D fragments (m16n8k32, m16n8k64).

The hardware never sees a matrix: it sees 32 lanes x a few 32-bit registers. These maps
say which logical element each bit field of each register holds, so the encoder can build
the exact register image a kernel loads, and the model can execute the instruction from
that image (what the hardware reads) rather than from the logical matrix.

Layouts (lane l, g = l // 4, t = l % 4; PTX ISA 9.7.14.5 fragment figures, restated in
CUTLASS ``MMA_Traits`` for SM120, see shared/reference-notes/cutlass-facts.md 6.2):

* A m16n8k32 (8-bit slots): reg r, byte e -> row g + 8*(r % 2), k = 4t + 16*(r // 2) + e
* B m16n8k32:               reg r, byte e -> k = 4t + 16*r + e, col g
* A m16n8k64 (4-bit slots): reg r, nibble e -> row g + 8*(r % 2), k = 8t + 32*(r // 2) + e
* B m16n8k64:               reg r, nibble e -> k = 8t + 32*r + e, col g
* C/D f32:                  reg r -> row g + 8*(r // 2), col 2t + r % 2
* C/D f16 (packed f16x2):   reg r, half h -> row g + 8*r, col 2t + h

Sub-byte types under ``kind::mxf8f6f4`` sit in an 8-bit slot at a *shift*: E2M1 at bits
[5:2] (CUTLASS ``fp4_shift``), E2M3/E3M2 at a shift that no source pins down (default 0 =
low bits; an open question recorded in the ambiguity register, so it is a parameter).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

LANES = 32
M, N = 16, 8
FP6_SHIFT_DEFAULT = 0
"""Bit position of a 6-bit payload inside its 8-bit slot: unconfirmed, see module docstring."""
FP4_SHIFT_MXF8F6F4 = 2
"""E2M1 payload position inside an 8-bit slot under kind::mxf8f6f4 (CUTLASS: bits [5:2])."""


@dataclass(frozen=True)
class Layout:
    """Coordinates of every slot: ``rows``/``cols`` have shape [32, nregs, slots_per_reg]."""

    name: str
    rows: np.ndarray
    cols: np.ndarray
    slot_bits: int
    shape: tuple[int, int]

    def __post_init__(self) -> None:
        # layouts are made once per shape (``functools.cache``: ~0.1 ms each, twice per case before) and
        # shared, so their maps are read-only
        self.rows.setflags(write=False)
        self.cols.setflags(write=False)

    @property
    def nregs(self) -> int:
        return self.rows.shape[1]


def _lane_grid(nregs: int, per_reg: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    lane, r, e = np.meshgrid(np.arange(LANES), np.arange(nregs), np.arange(per_reg), indexing="ij")
    return lane // 4, lane % 4, r, e


def a_row_half(r: np.ndarray) -> np.ndarray:
    """Which 8-row half of A (rows g or g + 8) register ``r`` of a lane holds: r % 2."""
    return r % 2


def a_k_half(r: np.ndarray) -> np.ndarray:
    """Which K half of A register ``r`` of a lane holds: r // 2."""
    return r // 2


def b_k_half(r: np.ndarray) -> np.ndarray:
    """Which K half of B register ``r`` of a lane holds: r."""
    return r


def cd_col_of_pair(r: np.ndarray) -> np.ndarray:
    """Which of a lane's two neighbouring columns (2t, 2t + 1) f32 C/D register ``r`` holds: r % 2."""
    return r % 2


@cache
def a_layout(k: int) -> Layout:
    """A fragment of m16n8k32 (``k=32``, byte slots) or m16n8k64 (``k=64``, nibble slots)."""
    per = {32: 4, 64: 8}[k]
    g, t, r, e = _lane_grid(4, per)
    rows = g + 8 * a_row_half(r)
    cols = per * t + (k // 2) * a_k_half(r) + e
    return Layout(f"A.m16n8k{k}", rows, cols, 32 // per, (M, k))


@cache
def b_layout(k: int) -> Layout:
    """B fragment (logical B is K x N) of m16n8k32 / m16n8k64."""
    per = {32: 4, 64: 8}[k]
    g, t, r, e = _lane_grid(2, per)
    rows = per * t + (k // 2) * b_k_half(r) + e
    cols = g
    return Layout(f"B.m16n8k{k}", rows, cols, 32 // per, (k, N))


@cache
def cd_layout() -> Layout:
    """C/D fragment with f32 elements (one element per register)."""
    g, t, r, _ = _lane_grid(4, 1)
    return Layout("CD.f32", g + 8 * (r // 2), 2 * t + cd_col_of_pair(r), 32, (M, N))


@cache
def cd_f16_layout() -> Layout:
    """C/D fragment with f16 elements (two per register, lower column in the low half)."""
    g, t, r, h = _lane_grid(2, 2)
    return Layout("CD.f16", g + 8 * r, 2 * t + h, 16, (M, N))


def container_shift(kind: str, etype: str, fp6_shift: int = FP6_SHIFT_DEFAULT) -> int:
    """Bit offset of an ``etype`` payload inside its slot for ``kind``."""
    if kind in ("mxf4", "mxf4nvf4"):
        return 0
    if etype == "e2m1":
        return FP4_SHIFT_MXF8F6F4
    if etype in ("e2m3", "e3m2"):
        return fp6_shift
    return 0


def encode(codes: np.ndarray, layout: Layout, shift: int = 0) -> np.ndarray:
    """Logical codes [..., R, C] (unsigned ints) -> register image [..., 32, nregs] uint32.

    Each code is placed at bit ``slot * slot_bits + shift`` of its register; nothing else
    is set, so the unused bits of a slot are zero.
    """
    codes = np.asarray(codes)
    if codes.shape[-2:] != layout.shape:
        raise ValueError(f"{layout.name}: expected [..., {layout.shape}], got {codes.shape}")
    gathered = codes[..., layout.rows, layout.cols].astype(np.uint64)  # [..., 32, nregs, per]
    per = layout.rows.shape[2]
    shifts = (np.arange(per, dtype=np.uint64) * np.uint64(layout.slot_bits) + np.uint64(shift))
    words = np.bitwise_or.reduce(gathered << shifts, axis=-1)
    return (words & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def decode(regs: np.ndarray, layout: Layout, payload_bits: int, shift: int = 0) -> np.ndarray:
    """Register image [..., 32, nregs] -> logical codes [..., R, C] (what the hardware reads).

    Only ``payload_bits`` bits at ``shift`` inside each slot are taken: the other bits of a
    slot are ignored, as the model assumes the hardware ignores them.
    """
    regs = np.asarray(regs, dtype=np.uint32)
    per = layout.rows.shape[2]
    shifts = np.arange(per, dtype=np.uint32) * np.uint32(layout.slot_bits) + np.uint32(shift)
    fields = (regs[..., None] >> shifts) & np.uint32((1 << payload_bits) - 1)
    out = np.zeros(regs.shape[:-2] + layout.shape, dtype=np.uint32)
    out[..., layout.rows, layout.cols] = fields
    return out


def encode_f32(values: np.ndarray, layout: Layout | None = None) -> np.ndarray:
    """Logical f32 matrix [..., 16, 8] -> C/D register image [..., 32, 4] (bit patterns)."""
    layout = layout or cd_layout()
    bits = np.ascontiguousarray(np.asarray(values, dtype=np.float32)).view(np.uint32)
    return encode(bits, layout)


def decode_f32(regs: np.ndarray, layout: Layout | None = None) -> np.ndarray:
    """C/D register image [..., 32, 4] -> logical f32 matrix [..., 16, 8]."""
    layout = layout or cd_layout()
    return decode(regs, layout, 32).astype(np.uint32).view(np.float32)


def decode_f16(regs: np.ndarray) -> np.ndarray:
    """Packed-f16 D register image [..., 32, 2] -> logical f16 matrix [..., 16, 8]."""
    return decode(regs, cd_f16_layout(), 16).astype(np.uint16).view(np.float16)


def encode_f16(values: np.ndarray) -> np.ndarray:
    """Logical f16 matrix [..., 16, 8] -> packed-f16 register image [..., 32, 2]."""
    bits = np.ascontiguousarray(np.asarray(values, dtype=np.float16)).view(np.uint16)
    return encode(bits, cd_f16_layout())
