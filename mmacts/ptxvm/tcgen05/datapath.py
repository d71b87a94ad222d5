"""What every ``tcgen05.mma`` kind shares, stated once: K of the instruction (Table 39), its datapath layout and
the TMEM cell of every D element (9.7.16.10.5), the bounds-checked TMEM read, the MMA's footprint and the
write-back of D with the ``disable-output-lane`` mask (9.7.16.10.9.1).

Datapath layouts (9.7.16.10.5 table; the figures are missing, the lane/column maps are CUTLASS's
``UMMA::tmem_frg_1sm/2sm`` and ``tmem_frg_ws`` atoms, cutlass-facts §5.1 for A/B/D):

  D  M=128 ::1 (ws or not)  D(m, n) -> lane m, column n
  A  M=256 ::2              CTA m // 128, lane m % 128, column n
  B  M=128 ::2 dense        CTA m // 64, lane m % 64 + 64 h, column n - h N/2, h = n // (N/2)
  F  M=64  ::1 not ws       lane 32 (m // 16) + m % 16 + a, column n; a = D address lane (0 or 16)
  E  M=64  ::1 ws ("2x3")   lane m + 64 h, column n - h N/2, h = n // (N/2)
  G  M=32  ::1 ws ("1x4")   lane m + 32 q, column n - q N/4, q = n // (N/4)
  C  M=128 ::2 sparse       not modelled (VmUnsupported through ValueError text)

The block-scaled kinds have only D, A and B (Table 39 gives them M = 128 ::1 and M = 128/256 ::2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from mmacts.spec import queries as Q

from .decode import catalog
from .tmem import COLS, LANES, split_taddr

K96_SHAPES_READINGS = ("m256-cg2-only", "also-m128")
"""Readings of AMB-K96-SHAPES. ``m256-cg2-only`` (the default): K = 96 only where Table 39 prints it (256xNxK1,
cta_group::2). ``also-m128``: a dense M = 128 MMA of a kind that Table 39 gives K1 = 96 also takes K = 96, with
either cta_group (CUTLASS's SM103 kernels issue ``cta_group::1`` M = 128 K = 96); opt-in through the VM
profile's ``readings`` (``{"AMB-K96-SHAPES": "also-m128"}``) so that such a run says which reading it rests on."""

LANE_ALIGNMENTS = {"F": (0, 16)}
"""D address lanes a layout admits (9.7.16.10.5: the half-datapath Layout F at 0 or 16); every other layout: 0."""


@cache
def table39(kind: str) -> tuple:
    """Table 39's shape rows of ``kind`` (from the spec catalog)."""
    return tuple(Q.tcgen05_shapes(catalog(), kind))


def mma_k(kind: str, cta_group: int, sparse: bool, m: int, k96: bool = False, k96_shapes: str = "m256-cg2-only",
          *, ws: bool = False, n: int | None = None) -> int:
    """K of the Table 39 row matching kind / ``.ws`` / cta_group / sparsity / M (``ValueError`` when there is none).

    ``n``: also check N against the row (the block-scaled kinds check N in the idesc decoder). ``k96``: idesc bit
    31 asks for K = 96, admitted as ``k96_shapes`` reads AMB-K96-SHAPES (:data:`K96_SHAPES_READINGS`)."""
    if k96_shapes not in K96_SHAPES_READINGS:
        raise ValueError(f"AMB-K96-SHAPES reading must be one of {K96_SHAPES_READINGS}, not {k96_shapes!r}")
    rows = [s for s in table39(kind) if s.ws == ws and s.cta_group == cta_group and s.sparse == sparse and s.M == m]
    form = f"tcgen05.mma{'.ws' if ws else ''} kind::{kind}"
    which = f"cta_group::{cta_group}, {'sparse' if sparse else 'dense'}"
    if not rows:
        raise ValueError(f"{form}: M = {m}, {which} is not a Table 39 shape")
    if n is not None and not any(n in s.N for s in rows):
        raise ValueError(f"{form}: N = {n} not allowed with M = {m}, {which} (Table 39)")
    ks = {s.K for s in rows}
    if k96:
        if 96 in ks:
            return 96
        k96_somewhere = any(s.K == 96 and not s.ws for s in table39(kind))
        if k96_shapes == "also-m128" and not sparse and m == 128 and k96_somewhere:
            return 96
        raise ValueError(f"{form}: K = 96 (idesc bit 31) not in Table 39 for M = {m}, "
                         f"cta_group::{cta_group} [AMB-K96-SHAPES, reading {k96_shapes}]")
    ks.discard(96)
    return ks.pop()


def layout_of(m: int, cta_group: int, sparse: bool, ws: bool = False) -> str:
    """The datapath layout (module docstring) of an MMA of M rows (Table 39 has checked the shape)."""
    if ws and m in (32, 64, 128):
        return {32: "G", 64: "E", 128: "D"}[m]
    if not ws and cta_group == 1 and m in (64, 128):
        return "F" if m == 64 else "D"
    if cta_group == 2 and m == 256:
        return "A"
    if cta_group == 2 and m == 128:
        if sparse:
            raise ValueError("tcgen05.mma: M = 128 cta_group::2 sparse (Layout C, Figure 209 missing) is not modelled")
        return "B"
    raise ValueError(f"tcgen05.mma: no datapath layout for M = {m}, cta_group::{cta_group}")


def d_cells(layout: str, m: int, n: int, lane_align: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cta, lane, column offset), each (M, N), of every D(m, n) (module docstring); ``lane_align``: the D
    address lane (Layout F only)."""
    mm, nn = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    zero = np.zeros_like(mm)
    if layout == "D":
        return zero, mm, nn
    if layout == "A":
        return mm // 128, mm % 128, nn
    if layout == "B":
        h = nn // (n // 2)
        return mm // 64, mm % 64 + 64 * h, nn - h * (n // 2)
    if layout == "F":
        return zero, 32 * (mm // 16) + mm % 16 + lane_align, nn
    if layout == "E":
        h = nn // (n // 2)
        return zero, mm + 64 * h, nn - h * (n // 2)
    if layout == "G":
        q = nn // (n // 4)
        return zero, mm + 32 * q, nn - q * (n // 4)
    raise ValueError(f"tcgen05.mma: unknown layout {layout}")


def d_address(d_taddr: int, layout: str) -> tuple[int, int]:
    """(lane, column) of the D address; a lane the layout does not admit (:data:`LANE_ALIGNMENTS`) raises."""
    lane0, col0 = split_taddr(d_taddr, what="tcgen05.mma D address")
    aligns = LANE_ALIGNMENTS.get(layout, (0,))
    if lane0 not in aligns:
        raise ValueError(f"tcgen05.mma: D address lane {lane0}; Layout {layout} needs lane alignment "
                         f"{' or '.join(map(str, aligns))} (9.7.16.10.5)")
    return lane0, col0


def d_columns(col0: int, dcol: np.ndarray) -> np.ndarray:
    """TMEM columns of D: the address column plus the layout's column offsets; past column 511 raises."""
    dc = col0 + dcol
    if int(dc.max()) >= COLS:
        raise ValueError(f"tcgen05.mma: D runs past column 511 (column {col0} + {int(dcol.max())})")
    return dc


def tmem_cells(tmem: np.ndarray, lane: np.ndarray, col: np.ndarray, mark: np.ndarray, what: str) -> np.ndarray:
    """The cells ``tmem[lane, col]``, marked read in ``mark``; a cell outside 128 x 512 raises naming ``what``."""
    if col.size and (int(col.max()) >= COLS or int(lane.max()) >= LANES or int(col.min()) < 0 or int(lane.min()) < 0):
        raise ValueError(f"tcgen05.mma: {what} runs outside 128 x 512 (lane {int(lane.max())}, "
                         f"column {int(col.max())})")
    mark[lane, col] = True
    return tmem[lane, col]


@dataclass(frozen=True)
class DecodedMma:
    """What every tcgen05.mma decodes from its idesc and qualifiers, every rule on them checked (each MMA's own
    record adds the fields only it has)."""

    kind: str
    cg: int
    f: dict[str, Any]
    """The idesc fields (``decode_idesc``)."""
    m: int
    n: int
    k: int
    layout: str
    afmt: str
    bfmt: str
    sparse: bool
    a_is_tmem: bool

    @property
    def ka(self) -> int:
        """A's K as stored: half of K when sparse."""
        return self.k // 2 if self.sparse else self.k

    @property
    def a_sig(self) -> tuple:
        """What a collector buffer filled with this MMA's A holds (a later use must need the same)."""
        return ("A", self.kind, self.afmt, self.m, self.ka, self.cg, self.layout)

    def major(self, operand: str) -> str:
        """Major-ness of operand ``a``/``b`` in shared memory (idesc transpose bit)."""
        return "MN" if self.f[f"transpose_{operand}"] else "K"


# --------------------------------------------------------------------------------------------- footprint


@dataclass
class MmaFootprint:
    smem_ranges: list[list[tuple[int, int]]]
    """per CTA: merged [start, end) shared-memory byte ranges read (A if from smem, B)."""
    tmem_read: list[np.ndarray]
    """per CTA: bool (128, 512) cells read (A in TMEM, SFA, SFB, metadata, D if enable-input-d)."""
    tmem_written: list[np.ndarray]
    """per CTA: bool (128, 512) cells written (D minus disabled lanes)."""
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def blank(cls, cta_group: int, smem_ranges: list | None = None) -> MmaFootprint:
        """Nothing read or written yet in the ``cta_group`` CTAs."""
        def cells() -> list[np.ndarray]:
            return [np.zeros((LANES, COLS), bool) for _ in range(cta_group)]

        return cls([] if smem_ranges is None else smem_ranges, cells(), cells())


# --------------------------------------------------------------------------------------------- D


def read_old_d(tmems: list[np.ndarray], fp: MmaFootprint, cta: np.ndarray, lane: np.ndarray,
               col: np.ndarray) -> np.ndarray:
    """The D cells (uint32, shape (M, N)) at (cta, lane, col) before the MMA (enable-input-d)."""
    old = np.empty(cta.shape, dtype=np.uint32)
    for v in range(len(tmems)):
        sel = cta == v
        old[sel] = tmem_cells(tmems[v], lane[sel], col[sel], fp.tmem_read[v], "D")
    return old


def dol_bit(lane: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(word, bit) of the ``disable-output-lane`` vector that masks TMEM lane ``lane`` of the CTA pair (bit i of
    the vector, word 0 first, least significant bit first; with cta_group::2 lanes 128-255 are the peer's)."""
    return lane // 32, lane % 32


def write_d(tmems: list[np.ndarray], fp: MmaFootprint, out: np.ndarray, cta: np.ndarray, lane: np.ndarray,
            col: np.ndarray, disable_output_lane: list[int] | None) -> None:
    """Store D (uint32 cells, shape (M, N)) at (cta, lane, col) in every CTA of the group, except the lanes
    ``disable-output-lane`` masks (:func:`dol_bit`; with cta_group::2, words 4-7 are the peer CTA's)."""
    cg = len(tmems)
    keep = np.ones(out.shape, dtype=bool)
    if disable_output_lane is not None:
        words = [int(w) & 0xFFFFFFFF for w in disable_output_lane]
        if len(words) != 4 * cg:
            raise ValueError(f"tcgen05.mma: disable-output-lane needs {4 * cg} words for cta_group::{cg}")
        word, bit = dol_bit(np.arange(128 * cg))
        bits = ((np.array(words, dtype=np.int64)[word] >> bit) & 1).astype(bool)
        keep = ~bits[cta * 128 + lane]
    for v in range(cg):
        sel = (cta == v) & keep
        tmems[v][lane[sel], col[sel]] = out[sel]
        fp.tmem_written[v][lane[sel], col[sel]] = True
