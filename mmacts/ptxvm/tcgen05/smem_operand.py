"""MMA operands (and tcgen05.cp sources) read from shared memory through a matrix descriptor.

Spec: 9.7.16.3 (LBO/SBO per major-ness), 9.7.16.3.3 (canonical layouts, CuTe notation), Table 40
(descriptor), Table 41 (pattern start), Table 52/53 (valid swizzles per major-ness and atom shapes),
9.7.16.10.4.4 / .6 (4/6-bit packing). Addresses are shared::cta byte addresses; ``smem[i]`` is the
byte at address ``i``.

The canonical layouts, with T = elements per 16-byte unit and W = swizzle width in bytes, give the
byte address of (row r, byte b) -- rows are MN indices for K-major and K indices for MN-major, b runs
along the contiguous direction:

  K-major  none : start + (r%8)*16 + (r//8)*SBO + (b%16) + (b//16)*LBO      ((8,m),(T,2k)):((1T,SBO),(1,LBO))
  K-major  W    : start + (r%8)*W  + (r//8)*SBO + b                         ((8,m),(T,2k)):((W/16 T,SBO),(1,T))
  MN-major none : start + (r%8)*16 + (r//8)*LBO + (b%16) + (b//16)*SBO      ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
  MN-major W    : start + (r%8)*W  + (r//8)*SBO + (b%W) + (b//W)*LBO        ((T,W/16,m),(8,k)):((1,T,LBO),(W/16 T,SBO))
  MN-major 128B_base32B (AMB-T53-32B-ATOM-SIZE "atom-512"): atoms of 4 K rows, not 8
                : start + (r%4)*128 + (r//4)*SBO + (b%128) + (b//128)*LBO  ((T,8,m),(4,k)):((1,T,LBO),(8T,SBO))

then ``Swizzle<B,M,S>`` on the absolute address: addr ^= (((addr >> (M+S)) - base_offset) & (2^B-1)) << M
(a pattern of 2^(B+M+S) bytes: 256 B for 32B, 512 B for 64B and 128B_base32B, 1024 B for 128B).

Open readings (register ids):
* AMB-SDESC-BASEOFFSET -- reading "subtract-phase": the base offset is subtracted from the row
  phase (address bits [M+S, M+S+B)) before the XOR.
* AMB-T53-32B-ATOM-SIZE -- reading "atom-512": 128B swizzle with 32B atoms is Swizzle<2,5,2>
  (cutlass-facts §4.1), MN-major only; its atom is Table 53's 8x4 (128-bit elements, MN x K): 8 x 16 B
  = 128 B along MN by 4 K rows = 512 B, so SBO steps once per 4 K rows, not 8. CUTLASS 4.2 agrees:
  ``UMMA::Layout_MN_SW128_32B_Atom_Bits`` = Swizzle<2,5,2> o (1024,4):(1,1024) in bits (K rows 128 B
  apart), ``make_umma_desc`` uses SwizzleAtomKSize = 4 and builds SBO = 512 B (peers descriptor
  0x2000402002000800), and CuTe puts element (n=0, k=8) at 2 * SBO. The swizzle pattern repeats
  every 512 B (Table 41 lists no alignment for this mode).
* AMB-ABSOLUTE-LBO-CHUNKS -- absolute LBO mode (bit 52, K-major 128B): the bytes of a row past the
  128-byte row boundary continue at the LBO address with the same row term.
* AMB-PADDED-SMEM-TRANSPOSE -- the padded 4/6-bit containers of kind::mxf8f6f4 are also accepted
  MN-major (chunks of 16 elements along MN), laid out as an 8-bit matrix.
* AMB-PADDED-SMEM-PADDING -- the padding bytes of a padded chunk are not read into values (but they
  are part of the footprint: the chunk is one 16-byte unit).
* AMB-FP4-NIBBLE-ORDER -- kind::mxf4/mxf4nvf4 two E2M1 per byte, the lower index in the low nibble.
* AMB-SDESC-LBO-SWIZZLED-KMAJOR -- LBO of a swizzled K-major descriptor is ignored.
"""

from __future__ import annotations

import numpy as np

from .decode import decode_smem_desc

#: container -> (elements per 16-byte unit T, bits per code)
CONTAINERS: dict[str, tuple[int, int]] = {
    "b8": (16, 8),
    "b16": (8, 16),
    "b32": (4, 32),
    "p4": (16, 4),  # mxf8f6f4 E2M1: 16 x 4 bit in bytes 0-7 of a 16-byte chunk, 8 bytes padding
    "p6": (16, 6),  # mxf8f6f4 E2M3/E3M2: 16 x 6 bit in bytes 0-11, 4 bytes padding
    "fp4x2": (32, 4),  # mxf4/mxf4nvf4 E2M1, two per byte
}

#: swizzle name -> (CuTe Swizzle B, M, S) and width W in bytes
SWIZZLES: dict[str, tuple[int, int, int, int]] = {
    "none": (0, 4, 3, 16),
    "32B": (1, 4, 3, 32),
    "64B": (2, 4, 3, 64),
    "128B": (3, 4, 3, 128),
    "128B_base32B": (2, 5, 2, 128),
}

#: MN-major swizzled layouts: K rows per atom, i.e. per SBO step (Table 53's K extent; 8 unless listed).
#: 128B_base32B: Table 53's 8x4 atom (AMB-T53-32B-ATOM-SIZE "atom-512").
MN_ATOM_ROWS: dict[str, int] = {"128B_base32B": 4}


def swizzle(addr: np.ndarray, name: str, base_offset: int = 0) -> np.ndarray:
    """Apply the swizzle of ``name`` to absolute byte addresses (AMB-SDESC-BASEOFFSET subtract-phase)."""
    b, m, s, _ = SWIZZLES[name]
    if b == 0:
        return addr
    phase = ((addr >> (m + s)) - int(base_offset)) & ((1 << b) - 1)
    return addr ^ (phase << m)


def walk(desc: dict, rows: int, row_bytes: int, major: str) -> np.ndarray:
    """Byte address of each (row, byte) of the matrix ``desc`` describes (module docstring)."""
    sw = desc["swizzle"]
    w = SWIZZLES[sw][3]
    start, lbo, sbo = desc["start_address"], desc["lbo"], desc["sbo"]
    r = np.arange(rows, dtype=np.int64)[:, None]
    b = np.arange(row_bytes, dtype=np.int64)[None, :]
    absolute = desc["lbo_mode"] == "absolute"
    if major == "K":
        if sw == "128B_base32B":
            raise ValueError("smem operand: K-major with the 128B/32B-atom swizzle (Table 53 lists M/N only)")
        if sw == "none":
            addr = start + (r % 8) * 16 + (r // 8) * sbo + (b % 16) + (b // 16) * lbo
        elif absolute:
            row = (r % 8) * w + (r // 8) * sbo
            inrow = start % 128 + b
            addr = np.where(inrow < 128, start + row + b, lbo + row + (inrow - 128))
        else:
            addr = start + (r % 8) * w + (r // 8) * sbo + b
    elif major == "MN":
        if absolute:
            raise ValueError("smem operand: absolute LBO mode with an MN-major operand (9.7.16.3.1.2.1)")
        if sw == "none":
            addr = start + (r % 8) * 16 + (r // 8) * lbo + (b % 16) + (b // 16) * sbo
        else:
            g = MN_ATOM_ROWS.get(sw, 8)
            addr = start + (r % g) * w + (r // g) * sbo + (b % w) + (b // w) * lbo
    else:
        raise ValueError(f"smem operand: major must be 'K' or 'MN', got {major!r}")
    return swizzle(np.broadcast_to(addr, (rows, row_bytes)), sw, desc["base_offset"])


def fp4x2_slot(e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(byte, bit) of element e of a row of two-per-byte E2M1 (kind::mxf4/mxf4nvf4): byte e // 2, the lower
    index in the low nibble [AMB-FP4-NIBBLE-ORDER]."""
    return e // 2, 4 * (e % 2)


def padded_bit(e: np.ndarray, bits: int) -> np.ndarray:
    """Bit offset of element e inside its padded 16-byte chunk's little-endian payload (16 elements of ``bits``
    bits per chunk, the first element lowest; 9.7.16.10.4.4)."""
    return (e % 16) * bits


def unpack(raw: np.ndarray, container: str, length: int) -> np.ndarray:
    """(rows, row_bytes) container bytes -> (rows, length) integer codes."""
    rows = raw.shape[0]
    if container == "b8":
        return raw.astype(np.uint8)
    if container == "b16":
        return np.ascontiguousarray(raw).view("<u2").reshape(rows, length).astype(np.uint16)
    if container == "b32":
        return np.ascontiguousarray(raw).view("<u4").reshape(rows, length).astype(np.uint32)
    e = np.arange(length)
    if container == "fp4x2":
        byte, bit = fp4x2_slot(e)
        return ((raw[:, byte] >> bit.astype(np.uint8)) & 0xF).astype(np.uint8)
    bits = CONTAINERS[container][1]
    bit = padded_bit(e, bits)
    byte = (e // 16) * 16 + bit // 8
    nxt = np.minimum(byte + 1, (e // 16) * 16 + 15)
    word = raw[:, byte].astype(np.uint16) | (raw[:, nxt].astype(np.uint16) << 8)
    return ((word >> (bit % 8).astype(np.uint16)) & ((1 << bits) - 1)).astype(np.uint8)


def byte_ranges(addr: np.ndarray, size: int | None = None) -> list[tuple[int, int]]:
    """Sorted, merged half-open [start, end) ranges covering every address in ``addr`` (all >= 0)."""
    a = np.asarray(addr).ravel()
    if a.size == 0:
        return []
    # a mask over [lo, hi] only (an operand spans a few KiB of a window of hundreds)
    lo = int(a.min())
    n = (int(a.max()) + 1 if size is None else int(size)) - lo
    mask = np.zeros(n + 2, dtype=np.int8)
    mask[a - lo + 1] = 1
    edges = np.flatnonzero(np.diff(mask)) + lo
    return [(int(s), int(e)) for s, e in zip(edges[0::2], edges[1::2], strict=True)]


def gather(smem: np.ndarray, addr: np.ndarray, what: str = "smem operand") -> np.ndarray:
    """Bytes at ``addr``; an address outside ``smem`` raises ``ValueError`` naming it."""
    lo, hi = int(addr.min()), int(addr.max())
    if lo < 0 or hi >= smem.shape[0]:
        bad = lo if lo < 0 else hi
        raise ValueError(f"{what}: shared-memory address {bad:#x} outside the CTA window [0, {smem.shape[0]:#x})")
    return smem[addr]


def read_operand(smem: np.ndarray, desc_word: int, mn: int, k: int, *, major: str, container: str,
                 desc: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Codes (mn, k) of an operand whose descriptor is ``desc_word``; also the (rows, row_bytes)
    byte addresses read (for the footprint: ``byte_ranges(addresses)``).

    ``major``: "K" (rows are MN, K contiguous) or "MN" (rows are K, MN contiguous). ``container``:
    one of ``CONTAINERS``. The fp4x2 container (mxf4/mxf4nvf4) is K-major only (Table 44: transpose 0).
    """
    if container not in CONTAINERS:
        raise ValueError(f"smem operand: unknown container {container!r}")
    if container == "fp4x2" and major != "K":
        raise ValueError("smem operand: two-per-byte E2M1 (mxf4/mxf4nvf4) is K-major only")
    d = desc if desc is not None else decode_smem_desc(desc_word)
    rows, length = (mn, k) if major == "K" else (k, mn)
    t, _ = CONTAINERS[container]
    if (length * 16) % t or (container in ("p4", "p6") and length % 16):
        raise ValueError(f"smem operand: contiguous extent {length} does not fill whole {container} units")
    row_bytes = length * 16 // t
    addr = walk(d, rows, row_bytes, major)
    raw = gather(np.asarray(smem), addr)
    codes = unpack(raw, container, length)
    return (codes if major == "K" else np.ascontiguousarray(codes.T)), addr
