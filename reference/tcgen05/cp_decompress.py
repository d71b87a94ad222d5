"""tcgen05.cp: shared memory -> tensor memory copies, with optional 4/6-bit -> 8-bit decompression.

Spec: PTX ISA 9.7.16.9.1 (decompression; Figures 194-198 missing) and 9.7.16.9.2 (tcgen05.cp:
shapes .128x256b, .4x256b, .128x128b, .64x128b with .warpx2::02_13 / .warpx2::01_23, .32x128b
with .warpx4; optional ``.b8x16.b4x16_p64`` / ``.b8x16.b6x16_p32``).

Decompression (one 16-byte source chunk -> 16 destination bytes):
  .b4x16_p64: 16 x 4-bit in bytes 0-7 (element e at bits [4e, 4e+4), little endian), 8 bytes pad
  .b6x16_p32: 16 x 6-bit in bytes 0-11 (element e at bits [6e, 6e+6)), 4 bytes pad
  destination byte e = element e << shift, shift = 2 for FP4 (``00xxxx00``) and 1 for FP6
  (``0xxxxxx0``) per the CuTe DSL note (cutlass-facts §3.4); both are parameters because
  Figures 195/197/198 are missing (Figures 197/198 are separate for E3M2 and E2M3, so the two
  6-bit types might even differ).

Copy geometry (rows x row-bits; CUTLASS UTCCP Copy_Traits, cutlass-facts §2.2):
  128x256b            source row r -> lane base+r, 8 columns
  128x128b            source row r -> lane base+r, 4 columns
  4x256b              source row r -> lane base+32r (CUTLASS: "refresh the last 4 lanes of each
                      subpartition" -- with base lane 28..31 that is one lane per quadrant)
  64x128b ::02_13     row r -> lanes base+r and base+r+64
  64x128b ::01_23     row r -> lanes base+(r%32)+64*(r//32) and +32
  32x128b .warpx4     row r -> lanes base+r+32q, q = 0..3
Byte j of a destination row -> column base + j//4, byte j%4.

How the source rows are found from the descriptor is not spelled out for tcgen05.cp; this model
walks it as a K-major operand whose "K" is the row's bytes (``smem_image.walk_addresses``), i.e.
row r, byte b at start + (r%8)*16 + (r//8)*SBO + (b%16) + (b//16)*LBO without swizzle.  The
CUTLASS SF copy (LBO 16, SBO 128, 32 rows x 16 B) then reads row r at start + 16r, as CUTLASS's
data placement requires (cutlass-facts §2.2/2.3).

cta_group::2 writes the same data into both CTAs' TMEM (each from its own shared memory at the
same offset -- inference, cutlass-facts §2.4): call ``cp_to_tmem`` once per CTA image.
"""

from __future__ import annotations

import numpy as np

from .smem_desc import decode_smem_desc
from .smem_image import _pack_rows, _unpack_rows, walk_addresses
from .tmem_image import COLS, LANES, _bytes_view, split_taddr

CP_SHAPES: dict[str, tuple[int, int]] = {
    "128x256b": (128, 32),
    "4x256b": (4, 32),
    "128x128b": (128, 16),
    "64x128b": (64, 16),
    "32x128b": (32, 16),
}
#: shape -> multicast qualifiers it accepts (9.7.16.9.2: .64x128b needs a .warpx2, .32x128b .warpx4)
CP_MULTICAST: dict[str, tuple[str | None, ...]] = {
    "128x256b": (None,),
    "4x256b": (None,),
    "128x128b": (None,),
    "64x128b": ("warpx2::02_13", "warpx2::01_23"),
    "32x128b": ("warpx4",),
}
SRC_FMTS = (None, "b4x16_p64", "b6x16_p32")


def decompress_b4x16_p64(chunks: np.ndarray, *, shift: int = 2) -> np.ndarray:
    """(..., 16) source chunks -> (..., 16) 8-bit containers (element << shift)."""
    chunks = np.asarray(chunks, dtype=np.uint8)
    flat = chunks.reshape(-1, 16)
    codes = _unpack_rows(flat, "p4", 16)
    return (codes.astype(np.uint16) << shift).astype(np.uint8).reshape(chunks.shape)


def decompress_b6x16_p32(chunks: np.ndarray, *, shift: int = 1) -> np.ndarray:
    """(..., 16) source chunks -> (..., 16) 8-bit containers (element << shift)."""
    chunks = np.asarray(chunks, dtype=np.uint8)
    flat = chunks.reshape(-1, 16)
    codes = _unpack_rows(flat, "p6", 16)
    return (codes.astype(np.uint16) << shift).astype(np.uint8).reshape(chunks.shape)


def _compress(containers: np.ndarray, elem: str, bits: int, shift: int, pad_value: int) -> np.ndarray:
    containers = np.asarray(containers, dtype=np.uint8)
    flat = containers.reshape(-1, 16)
    payload_mask = ((1 << bits) - 1) << shift
    if (flat & ~np.uint8(payload_mask)).any():
        raise ValueError(f"8-bit containers have bits outside the {bits}-bit payload at shift {shift}")
    codes = (flat >> shift) & ((1 << bits) - 1)
    return _pack_rows(codes, elem, pad_value).reshape(containers.shape)


def compress_b4x16_p64(containers: np.ndarray, *, shift: int = 2, pad_value: int = 0) -> np.ndarray:
    """Inverse of ``decompress_b4x16_p64`` (how a kernel author prepares the source chunks)."""
    return _compress(containers, "p4", 4, shift, pad_value)


def compress_b6x16_p32(containers: np.ndarray, *, shift: int = 1, pad_value: int = 0) -> np.ndarray:
    """Inverse of ``decompress_b6x16_p32``."""
    return _compress(containers, "p6", 6, shift, pad_value)


def cp_lane_map(shape: str, multicast: str | None = None) -> np.ndarray:
    """Destination lane offsets (rows, copies) of each source row (module docstring table)."""
    if shape not in CP_SHAPES:
        raise ValueError(f"shape must be one of {tuple(CP_SHAPES)}")
    if multicast not in CP_MULTICAST[shape]:
        raise ValueError(f".{shape} accepts multicast {CP_MULTICAST[shape]}, got {multicast!r}")
    rows = CP_SHAPES[shape][0]
    r = np.arange(rows)[:, None]
    if shape in ("128x256b", "128x128b"):
        return r
    if shape == "4x256b":
        return 32 * r
    if shape == "32x128b":
        return r + 32 * np.arange(4)[None, :]
    if multicast == "warpx2::02_13":
        return r + np.array([0, 64])[None, :]
    return (r % 32) + 64 * (r // 32) + np.array([0, 32])[None, :]


def read_cp_source(smem: np.ndarray, desc_word: int, shape: str, *, smem_base: int = 0) -> np.ndarray:
    """The (rows, row_bytes) source bytes a tcgen05.cp reads through its descriptor."""
    rows, row_bytes = CP_SHAPES[shape]
    desc = decode_smem_desc(desc_word)
    addr = walk_addresses(desc, rows, row_bytes, "K") - smem_base
    if addr.min() < 0 or addr.max() >= smem.shape[0]:
        raise IndexError("tcgen05.cp descriptor walk leaves the shared-memory image")
    return np.asarray(smem, dtype=np.uint8)[addr]


def cp_to_tmem(
    tmem: np.ndarray,
    smem: np.ndarray,
    desc_word: int,
    *,
    shape: str,
    addr: int,
    multicast: str | None = None,
    src_fmt: str | None = None,
    smem_base: int = 0,
    fp4_shift: int = 2,
    fp6_shift: int = 1,
) -> np.ndarray:
    """Model one ``tcgen05.cp.<shape>{.multicast}{.b8x16.src_fmt} [addr], desc`` into ``tmem``.

    Modifies ``tmem`` in place and returns it.
    """
    if src_fmt not in SRC_FMTS:
        raise ValueError(f"src_fmt must be one of {SRC_FMTS}")
    lanes_off = cp_lane_map(shape, multicast)
    src = read_cp_source(smem, desc_word, shape, smem_base=smem_base)
    rows, row_bytes = src.shape
    if src_fmt == "b4x16_p64":
        src = decompress_b4x16_p64(src.reshape(rows, -1, 16), shift=fp4_shift).reshape(rows, row_bytes)
    elif src_fmt == "b6x16_p32":
        src = decompress_b6x16_p32(src.reshape(rows, -1, 16), shift=fp6_shift).reshape(rows, row_bytes)
    lane0, col0 = split_taddr(addr)
    lanes = lane0 + lanes_off
    if lanes.max() >= LANES or col0 + row_bytes // 4 > COLS:
        raise ValueError("tcgen05.cp destination runs outside tensor memory")
    view = _bytes_view(tmem)
    bcols = col0 * 4 + np.arange(row_bytes)
    for c in range(lanes.shape[1]):
        view[lanes[:, c][:, None], bcols[None, :]] = src
    return tmem
