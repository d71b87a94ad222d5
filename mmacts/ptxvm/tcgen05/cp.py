"""tcgen05.cp: shared memory -> tensor memory, optionally decompressing 4/6-bit to 8-bit (9.7.16.9).

Shapes (rows x bits per row): .128x256b, .4x256b, .128x128b, .64x128b (needs .warpx2::02_13 or
.warpx2::01_23), .32x128b (needs .warpx4). Byte j of a copied row goes to column taddr.col + j//4,
byte j%4 of that cell.

Open readings (register ids):
* AMB-CP-SOURCE-WALK ("k-major-canonical"): the source rows are found by walking the descriptor as a
  K-major operand whose K is the row's bytes: row r, byte b at the canonical K-major address (with
  the descriptor's swizzle, if any).
* Row -> lane maps (cutlass-facts §2.2, UTCCP Copy_Traits; the multicast prose of 9.7.16.9.2):
  128x256b / 128x128b: row r -> lane r;  .32x128b.warpx4: row r -> lanes r + 32q, q = 0..3;
  .64x128b.warpx2::02_13: row r -> lanes r, r + 64 (warps 0&2, 1&3);
  .64x128b.warpx2::01_23: row r -> lanes (r%32) + 64*(r//32) + {0, 32} (warps 0&1, 2&3);
  .4x256b: row r -> lane 32r (AMB-CP-4X256B-LANES: one row per lane quadrant);
  all offsets from taddr's lane.
* AMB-CP-DECOMP / AMB-FP4-HOLDER-BITS / AMB-FP6-HOLDER-BITS: .b4x16_p64: a 16-byte source unit holds
  16 x 4 bit in bytes 0-7 (element e at bits [4e, 4e+4)), the rest padding; each becomes byte e of the
  destination unit at bits [5:2]. .b6x16_p32: 16 x 6 bit in bytes 0-11 -> bits [6:1].
* AMB-SF-CP-2CTA: cta_group::2 writes both CTAs' TMEM, each from its own shared memory at the same
  address.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .decode import decode_smem_desc
from .smem_operand import byte_ranges, gather, unpack, walk
from .tmem import LANES, split_taddr

SHAPES: dict[str, tuple[int, int]] = {
    "128x256b": (128, 32),
    "4x256b": (4, 32),
    "128x128b": (128, 16),
    "64x128b": (64, 16),
    "32x128b": (32, 16),
}
MULTICAST: dict[str, tuple[str | None, ...]] = {
    "128x256b": (None,),
    "4x256b": (None,),
    "128x128b": (None,),
    "64x128b": ("warpx2::02_13", "warpx2::01_23"),
    "32x128b": ("warpx4",),
}
SRC_FMTS: dict[str | None, tuple[str, int] | None] = {
    None: None,
    "b4x16_p64": ("p4", 2),  # (packed container, holder shift)
    "b6x16_p32": ("p6", 1),
}
FP4_HOLDER_SHIFT = 2
FP6_HOLDER_SHIFT = 1


def _canon(s: str | None) -> str | None:
    if s is None:
        return None
    return s.strip().lstrip(".").replace("b8x16.", "")


def lane_map(shape: str, multicast: str | None) -> np.ndarray:
    """Lane offsets (rows, copies) each source row is written to."""
    shape, multicast = _canon(shape), _canon(multicast)
    if shape not in SHAPES:
        raise ValueError(f"tcgen05.cp: unknown shape .{shape}")
    if multicast not in MULTICAST[shape]:
        raise ValueError(f"tcgen05.cp: .{shape} with multicast {multicast!r} (allowed {MULTICAST[shape]})")
    r = np.arange(SHAPES[shape][0])[:, None]
    if shape in ("128x256b", "128x128b"):
        return r
    if shape == "4x256b":
        return 32 * r
    if shape == "32x128b":
        return r + 32 * np.arange(4)[None, :]
    if multicast == "warpx2::02_13":
        return r + np.array([0, 64])[None, :]
    return r % 32 + 64 * (r // 32) + np.array([0, 32])[None, :]


def decompress(src: np.ndarray, src_fmt: str | None) -> np.ndarray:
    """(rows, row_bytes) source bytes -> destination bytes (identity without a source format)."""
    spec = SRC_FMTS[src_fmt]
    if spec is None:
        return src
    container, shift = spec
    rows, nbytes = src.shape
    codes = unpack(src, container, nbytes)  # 16 elements per 16-byte unit -> nbytes codes
    return (codes.astype(np.uint16) << shift).astype(np.uint8)


@dataclass
class CpFootprint:
    smem_ranges: list[list[tuple[int, int]]]
    """per CTA: merged [start, end) shared-memory byte ranges read."""
    tmem_written: list[np.ndarray]
    """per CTA: bool (128, 512) cells written."""


def execute_cp(tmems: list[np.ndarray], smems: list[np.ndarray], taddr: int, desc_word: int, *, shape: str,
               multicast: str | None = None, src_fmt: str | None = None) -> CpFootprint:
    """Run one ``tcgen05.cp.cta_group::<len(tmems)>.<shape>{.multicast}{.b8x16.<src_fmt>} [taddr], s-desc``.

    ``tmems``/``smems``: the CTA's own (cta_group::1) or the pair's, issuing CTA first (cta_group::2).
    Writes in place and returns the footprint.
    """
    src_fmt = _canon(src_fmt)
    if src_fmt not in SRC_FMTS:
        raise ValueError(f"tcgen05.cp: unknown source format {src_fmt!r}")
    if len(tmems) not in (1, 2) or len(smems) != len(tmems):
        raise ValueError("tcgen05.cp: one (cta_group::1) or two (cta_group::2) CTAs")
    lanes_off = lane_map(shape, multicast)
    rows, row_bytes = SHAPES[_canon(shape)]
    lane0, col0 = split_taddr(taddr, what="tcgen05.cp taddr")
    lanes = lane0 + lanes_off
    ncols = row_bytes // 4
    if lanes.max() >= LANES or col0 + ncols > 512:
        raise ValueError(f"tcgen05.cp .{_canon(shape)} at {int(taddr):#010x} runs outside 128 x 512")
    desc = decode_smem_desc(desc_word)
    addr = walk(desc, rows, row_bytes, "K")
    written = np.zeros((LANES, 512), dtype=bool)
    written[lanes.reshape(-1)[:, None], col0 + np.arange(ncols)[None, :]] = True
    fp = CpFootprint([], [])
    for tmem, smem in zip(tmems, smems, strict=True):
        src = gather(np.asarray(smem), addr, "tcgen05.cp source")
        dst = np.ascontiguousarray(decompress(src, src_fmt)).view("<u4").reshape(rows, ncols)
        for c in range(lanes.shape[1]):
            tmem[lanes[:, c][:, None], col0 + np.arange(ncols)[None, :]] = dst
        fp.smem_ranges.append(byte_ranges(addr))
        fp.tmem_written.append(written.copy())
    return fp
