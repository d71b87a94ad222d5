"""Hopper wgmma operands in shared memory: descriptor, canonical layouts, D fragment.

The smem *images* are built by ``reference.tcgen05.smem_image.encode_operand``: Hopper's
canonical K-major / MN-major layouts and swizzles are the ones tcgen05 uses (same LBO/SBO
meaning). What differs is the descriptor word (PTX ISA 9.7.15.5.1.1, "Matrix Descriptor
Format", wgmma): start address bits 0-13, LBO 16-29, SBO 32-45, base offset 49-51 and the
swizzle mode in bits 62-63 (0 none, 1 128B, 2 64B, 3 32B), with no fixed "version" field.

``element_addresses`` is an independent statement of the canonical layout formulas of the
wgmma section (written from the PTX layout algebra, not from the tcgen05 module), so the
unit tests cross-check the two implementations, and the GPU run checks both against silicon.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from reference.tcgen05.smem_desc import decode_smem_desc
from reference.tcgen05.smem_image import encode_operand

HOPPER_SWIZZLE_CODE: dict[str, int] = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
SWIZZLE_WIDTH: dict[str, int] = {"none": 16, "32B": 32, "64B": 64, "128B": 128}
_SWIZZLE_BITS: dict[str, int] = {"none": 0, "32B": 1, "64B": 2, "128B": 3}


def hopper_desc(start: int, lbo: int, sbo: int, swizzle: str, base_offset: int = 0) -> int:
    """64-bit wgmma matrix descriptor from byte quantities."""
    for name, v in (("start", start), ("lbo", lbo), ("sbo", sbo)):
        if v % 16 or not 0 <= v < (1 << 18):
            raise ValueError(f"{name}={v} must be 16-byte aligned and < 2**18")
    return ((start >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | ((base_offset & 7) << 49)
            | (HOPPER_SWIZZLE_CODE[swizzle] << 62))


@dataclass(frozen=True)
class HopperDesc:
    start: int
    lbo: int
    sbo: int
    base_offset: int
    swizzle: str


def decode_hopper_desc(word: int) -> HopperDesc:
    names = {v: k for k, v in HOPPER_SWIZZLE_CODE.items()}
    return HopperDesc(start=(word & 0x3FFF) << 4, lbo=((word >> 16) & 0x3FFF) << 4,
                      sbo=((word >> 32) & 0x3FFF) << 4, base_offset=(word >> 49) & 7,
                      swizzle=names[(word >> 62) & 3])


def element_addresses(word: int, mn: int, k: int, major: str, elem_bytes: int) -> np.ndarray:
    """Byte address of element (mn, k) of the operand a descriptor describes; [mn, k] array.

    Canonical layouts in units of T = 16 / elem_bytes elements (PTX wgmma, shared memory
    matrix layout), swizzle = CuTe Swizzle<B,4,3> on absolute address bits (pattern 2^(B+7)):
      K-major,  none:  (m%8)*16 + (m//8)*SBO + (kb%16) + (kb//16)*LBO        (kb = k*bytes)
      K-major,  W:     (m%8)*W  + (m//8)*SBO + kb                             (kb < W)
      MN-major, none:  (k%8)*16 + (k//8)*LBO + (mb%16) + (mb//16)*SBO        (mb = m*bytes)
      MN-major, W:     (k%8)*W  + (k//8)*SBO + (mb%W) + (mb//W)*LBO
    """
    d = decode_hopper_desc(word)
    m = np.arange(mn, dtype=np.int64)[:, None]
    kk = np.arange(k, dtype=np.int64)[None, :]
    w = SWIZZLE_WIDTH[d.swizzle]
    if major == "K":
        kb = kk * elem_bytes
        if d.swizzle == "none":
            off = (m % 8) * 16 + (m // 8) * d.sbo + kb % 16 + (kb // 16) * d.lbo
        else:
            if k * elem_bytes > w:
                raise ValueError("a K-major swizzled operand spans at most one swizzle row per MMA")
            off = (m % 8) * w + (m // 8) * d.sbo + kb
    else:
        mb = m * elem_bytes
        if d.swizzle == "none":
            off = (kk % 8) * 16 + (kk // 8) * d.lbo + mb % 16 + (mb // 16) * d.sbo
        else:
            off = (kk % 8) * w + (kk // 8) * d.sbo + mb % w + (mb // w) * d.lbo
    addr = d.start + off
    bits = _SWIZZLE_BITS[d.swizzle]
    if bits:
        addr = addr ^ (((addr >> 7) & ((1 << bits) - 1)) << 4)
    return addr


def read_operand(smem: np.ndarray, word: int, mn: int, k: int, major: str, elem_bytes: int) -> np.ndarray:
    """Codes [mn, k] (uint8 or uint16) read from a shared-memory byte image through a descriptor."""
    addr = element_addresses(word, mn, k, major, elem_bytes)
    if elem_bytes == 1:
        return smem[addr]
    return smem[addr].astype(np.uint16) | (smem[addr + 1].astype(np.uint16) << 8)


@dataclass
class Operand:
    """One operand placed in the image: its bytes and one descriptor per MMA K-step."""

    smem: np.ndarray  # full image bytes up to this operand's end (indexed by address)
    descs: list[int]


def place_operand(codes: np.ndarray, *, major: str, swizzle: str, elem_bytes: int, base: int,
                  k_step: int, smem_size: int) -> Operand:
    """Lay (MN, K) codes at ``base`` and describe each K-step of ``k_step`` elements."""
    elem = {1: "b8", 2: "b16"}[elem_bytes]
    smem, img = encode_operand(np.asarray(codes), major=major, swizzle=swizzle, elem=elem,
                               base_address=base, smem_size=smem_size)
    descs = []
    for s in range(codes.shape[1] // k_step):
        t = decode_smem_desc(img.desc_for(k_offset=s * k_step))
        descs.append(hopper_desc(t.start_address, t.lbo, t.sbo, swizzle, t.base_offset))
    return Operand(smem, descs)


@cache
def d_layout(n: int) -> tuple[np.ndarray, np.ndarray]:
    """wgmma m64nN f32 accumulator: (row, col) of register i of thread tid, arrays [128, N/2] (made once
    per N and shared: read-only)."""
    tid = np.arange(128)[:, None]
    i = np.arange(n // 2)[None, :]
    w, lane = tid // 32, tid % 32
    g, t = lane // 4, lane % 4
    rows = np.broadcast_to(16 * w + g + 8 * ((i // 2) % 2), (128, n // 2)).copy()
    cols = np.broadcast_to(8 * (i // 4) + 2 * t + (i % 2), (128, n // 2)).copy()
    rows.setflags(write=False)
    cols.setflags(write=False)
    return rows, cols


def decode_d(regs: np.ndarray, n: int) -> np.ndarray:
    """Accumulator registers [..., 128, N/2] f32 -> logical D [..., 64, N]."""
    rows, cols = d_layout(n)
    out = np.zeros(regs.shape[:-2] + (64, n), dtype=np.float32)
    out[..., rows, cols] = regs
    return out


def encode_d(d: np.ndarray, n: int) -> np.ndarray:
    """Logical [..., 64, N] -> accumulator registers [..., 128, N/2]."""
    rows, cols = d_layout(n)
    return np.asarray(d, dtype=np.float32)[..., rows, cols]
