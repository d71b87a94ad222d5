"""Shared-memory operand images for tcgen05.mma (and tcgen05.cp sources).

Spec: PTX ISA 9.7.16.3 (LBO/SBO definitions, 9.7.16.3.1 relative/absolute LBO, 9.7.16.3.2 SBO,
9.7.16.3.3 canonical layouts), 9.7.16.10.3 Table 52, 9.7.16.10.4.4/.6 (packing of 4/6-bit
elements), 9.7.16.10.6 Table 53 (swizzle atoms).  The figures are missing; what they show comes
from cutlass-facts §3-§4 (see AMBIGUITIES in ``reference/tcgen05/__init__.py``).

Two deliberately separate code paths:

* ``encode_operand`` builds the bytes the way a kernel author would: it cuts the matrix into
  swizzle atoms (``ATOM_ROWS`` rows x swizzle-width bytes: 8 rows, but 4 K rows x 128 B = 512 B
  for ``128B_base32B``, Table 53's 8x4), permutes 16-byte chunks inside each atom with a
  row/chunk XOR written in *atom coordinates*, and lays the atoms out in a chosen order.  It
  returns the bytes plus the canonical LBO/SBO of that placement (``OperandImage``).
* ``decode_operand`` is the hardware model: it knows nothing about atoms; it takes the 64-bit
  descriptor, computes every byte address with the canonical-layout formulas of 9.7.16.3.3 from
  start address, LBO, SBO, then applies the swizzle as an XOR on *absolute address bits*
  (CuTe Swizzle<B,M,S>, corrected by the descriptor's base offset), gathers the bytes and
  unpacks the element containers.  This is what the model backend reads operands with.

Element containers (``elem``):
  ``b8``    8-bit codes, one per byte (e4m3/e5m2/s8/u8; also e2m1/e2m3/e3m2 for kind::f8f6f4-style
            unpadded 8-bit containers)
  ``b16``   16-bit codes (f16/bf16), little endian
  ``b32``   32-bit codes (tf32/f32), little endian
  ``p4``    kind::mxf8f6f4 padded 4-bit: 16 elements -> one 16-byte chunk, element e at bits
            [4e, 4e+4) of the chunk's little-endian bytes 0-7, bytes 8-15 padding (9.7.16.10.4.4,
            Figure 202; ``.b4x16_p64``).  Layout-wise it is an 8-bit matrix.
  ``p6``    kind::mxf8f6f4 padded 6-bit: 16 elements -> bytes 0-11 (element e at bits [6e, 6e+6)),
            bytes 12-15 padding (Figure 203; ``.b6x16_p32``).
  ``fp4x2`` kind::mxf4/mxf4nvf4 dense E2M1, two per byte, even index in the low nibble
            (9.7.16.10.4.6; nibble order from CUTLASS, cutlass-facts §3.2).  K-major only.

Majorness: ``major="K"`` -- rows are MN, the contiguous direction is K; ``major="MN"`` -- rows
are K, the contiguous direction is MN.  Codes are always passed/returned as (MN, K) arrays.
Swizzles: ``none``, ``32B``, ``64B``, ``128B``, ``128B_base32B`` (MN-major only, Table 53).

``128B_base32B`` (128B swizzling with 32B atomicity, layout-type code 1) -- reading "atom-512" of
AMB-T53-32B-ATOM-SIZE (AMBIGUITIES.md SDESC-3): Table 53 gives its atom as 8x4 128-bit elements
(MN x K), i.e. 128 B along MN by 4 K rows = 512 B, where every other MN-major swizzle atom has
8 K rows.  SBO therefore steps once per 4 K rows, the pattern repeats (and the base offset is
counted) every 512 B, and K offsets that are multiples of 4 are valid MMA starts.  CUTLASS 4.2
builds the same atom (Layout_MN_SW128_32B_Atom, SBO = 512 B for a dense tile).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .smem_desc import (
    PATTERN_BYTES,
    SWIZZLE_WIDTH,
    SmemDesc,
    base_offset_for,
    decode_smem_desc,
    encode_smem_desc,
)

ELEMS = ("b8", "b16", "b32", "p4", "p6", "fp4x2")
SWIZZLES = ("none", "32B", "64B", "128B", "128B_base32B")
MAJORS = ("K", "MN")

#: rows of one atom along the strided direction (MN rows for K-major, K rows for MN-major): the
#: 8-row core-matrix group of 9.7.16.3.3 for every mode, except the 32B-atom 128B swizzle whose
#: Table 53 atom is 8x4 (MN x K) 16-byte units = 4 K rows.  SBO (LBO for MN-major without
#: swizzle) steps once per this many rows.
ATOM_ROWS: dict[str, int] = {"none": 8, "32B": 8, "64B": 8, "128B": 8, "128B_base32B": 4}

#: elements per 16-byte chunk (the spec's T = 128 / element bits, containers included)
ELEMS_PER_CHUNK: dict[str, int] = {"b8": 16, "b16": 8, "b32": 4, "p4": 16, "p6": 16, "fp4x2": 32}
#: bits of one code
CODE_BITS: dict[str, int] = {"b8": 8, "b16": 16, "b32": 32, "p4": 4, "p6": 6, "fp4x2": 4}
_CODE_DTYPE = {"b8": np.uint8, "b16": np.uint16, "b32": np.uint32, "p4": np.uint8, "p6": np.uint8, "fp4x2": np.uint8}

#: CuTe Swizzle<B, M, S> of each mode, acting on byte addresses (cutlass-facts §4.1):
#: address ^= ((address >> (M + S)) & (2**B - 1)) << M
SWIZZLE_BMS: dict[str, tuple[int, int, int]] = {
    "none": (0, 4, 3),
    "32B": (1, 4, 3),
    "64B": (2, 4, 3),
    "128B": (3, 4, 3),
    "128B_base32B": (2, 5, 2),
}


def _check(major: str, swizzle: str, elem: str) -> None:
    if major not in MAJORS:
        raise ValueError(f"major must be one of {MAJORS}, got {major!r}")
    if swizzle not in SWIZZLES:
        raise ValueError(f"swizzle must be one of {SWIZZLES}, got {swizzle!r}")
    if elem not in ELEMS:
        raise ValueError(f"elem must be one of {ELEMS}, got {elem!r}")
    if elem == "fp4x2" and major != "K":
        raise ValueError("dense two-per-byte E2M1 (mxf4/mxf4nvf4) is K-major only (Table 44: transpose = 0)")
    if swizzle == "128B_base32B" and major != "MN":
        raise ValueError("128B swizzle with 32B atomicity exists only for MN-major (Table 53)")


# ----------------------------------------------------------------------------------------------
# Encoder side: codes -> container bytes -> atoms
# ----------------------------------------------------------------------------------------------


def fp4x2_byte(even: np.ndarray, odd: np.ndarray) -> np.ndarray:
    """The byte of two E2M1 codes (uint64) of neighbouring k: the even k in the low nibble (9.7.16.10.4.6)."""
    return even | (odd << np.uint64(4))


def padded_slot(e: np.ndarray) -> np.ndarray:
    """Slot (counted from bit 0 of the chunk) of the e-th code of a padded 16-byte chunk: e, the first code
    lowest (9.7.16.10.4.4, Figures 202/203)."""
    return e


def _pack_rows(codes_rows: np.ndarray, elem: str, pad_value: int) -> np.ndarray:
    """(rows, L) codes along the contiguous direction -> (rows, bytes) container bytes."""
    rows, length = codes_rows.shape
    c = codes_rows.astype(np.uint64)
    if elem == "b8":
        return codes_rows.astype(np.uint8)
    if elem in ("b16", "b32"):
        nb = CODE_BITS[elem] // 8
        return np.ascontiguousarray(codes_rows.astype(f"<u{nb}")).view(np.uint8).reshape(rows, length * nb)
    if elem == "fp4x2":
        pairs = c.reshape(rows, length // 2, 2)
        return fp4x2_byte(pairs[..., 0], pairs[..., 1]).astype(np.uint8)
    # padded chunks: 16 codes -> one 16-byte chunk
    chunks = c.reshape(rows, length // 16, 16)
    bits = CODE_BITS[elem]
    shifts = (padded_slot(np.arange(16, dtype=np.uint64)) * np.uint64(bits))[None, None, :]
    # build the 64- or 96-bit little-endian payload as two 64-bit halves
    lo = np.zeros(chunks.shape[:2], dtype=np.uint64)
    hi = np.zeros(chunks.shape[:2], dtype=np.uint64)
    for_lo = shifts < 64
    lo |= np.bitwise_or.reduce(np.where(for_lo, chunks << np.where(for_lo, shifts, 0), 0), axis=-1)
    spill = (shifts < 64) & (shifts + np.uint64(bits) > 64)
    hi |= np.bitwise_or.reduce(np.where(spill, chunks >> np.where(spill, 64 - shifts, 0), 0), axis=-1)
    upper = shifts >= 64
    hi |= np.bitwise_or.reduce(np.where(upper, chunks << np.where(upper, shifts - 64, 0), 0), axis=-1)
    out = np.full(chunks.shape[:2] + (16,), pad_value & 0xFF, dtype=np.uint8)
    data_bytes = 8 if elem == "p4" else 12
    payload = np.concatenate([lo[..., None].view(np.uint8), hi[..., None].view(np.uint8)], axis=-1)
    out[..., :data_bytes] = payload.reshape(chunks.shape[:2] + (16,))[..., :data_bytes]
    return out.reshape(rows, length)


ATOM_CHUNK_XOR: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "128B": lambda rr: rr,
    "64B": lambda rr: rr >> 1,
    "32B": lambda rr: rr >> 2,
}
"""Table 53 in atom coordinates: what the 16-byte chunk index of atom row rr (of 8) is XORed with."""


def _atom_chunk_permutation(swizzle: str) -> np.ndarray:
    """phys[rr, c] = physical 16-byte chunk of logical chunk c in atom row rr.

    Written in atom coordinates (row rr of ATOM_ROWS, chunk c of W/16), independently of the
    address-bit XOR used by the decoder: 128B: c ^ rr; 64B: c ^ (rr >> 1); 32B: c ^ (rr >> 2)
    (rr of 8); 128B_base32B: 32-byte unit (c >> 1) ^ rr, the 16-byte half kept (rr of 4: each
    of the atom's 4 rows moves its four 32-byte units by a different amount).
    """
    w = SWIZZLE_WIDTH[swizzle] // 16
    nrows = ATOM_ROWS[swizzle]
    rr = np.arange(nrows)[:, None]
    c = np.arange(w)[None, :]
    if swizzle == "none":
        return np.broadcast_to(c, (nrows, w)).copy()
    if swizzle in ATOM_CHUNK_XOR:
        return c ^ ATOM_CHUNK_XOR[swizzle](rr)
    return (((c >> 1) ^ rr) << 1) | (c & 1)


@dataclass(frozen=True)
class OperandImage:
    """What ``encode_operand`` built: where the tile is and how to describe it.

    ``stride_rows`` / ``stride_cols``: byte distance between neighbouring atoms along the row
    direction (groups of ``ATOM_ROWS[swizzle]`` rows: 8, or 4 K rows for ``128B_base32B``) and
    along the contiguous direction (swizzle-width slices).
    ``desc`` is the descriptor for the whole tile starting at (mn=0, k=0).
    """

    major: str
    swizzle: str
    elem: str
    mn: int
    k: int
    base_address: int
    nbytes: int
    stride_rows: int
    stride_cols: int
    desc: SmemDesc

    @property
    def desc_word(self) -> int:
        return self.desc.word()

    def desc_for(self, *, k_offset: int = 0, mn_offset: int = 0) -> int:
        """Descriptor word for an MMA whose operand starts at (mn_offset, k_offset).

        Only the start address moves (as CUTLASS's descriptor iterator does, cutlass-facts
        §4.3); offsets must land on positions the canonical layout can start from: a whole atom
        along the strided direction (8 rows; 4 K rows for ``128B_base32B``).
        """
        t = ELEMS_PER_CHUNK[self.elem]
        w = SWIZZLE_WIDTH[self.swizzle]
        nrows = ATOM_ROWS[self.swizzle]
        if self.major == "K":
            along, rows_off = k_offset, mn_offset
        else:
            along, rows_off = mn_offset, k_offset
        if rows_off % nrows:
            raise ValueError(f"offset along the strided direction must be a multiple of {nrows} rows "
                             f"(one {self.swizzle} atom)")
        if (along * 16) % t:
            raise ValueError("offset along the contiguous direction must be a whole byte")
        byte_off = along * 16 // t
        if self.swizzle == "none" or self.major == "MN":
            if byte_off % w:
                raise ValueError(f"contiguous offset {byte_off} B must be a multiple of {w} B here")
        start = (
            self.base_address
            + (rows_off // nrows) * self.stride_rows
            + (byte_off // w) * self.stride_cols
            + byte_off % w
        )
        return self.desc.with_start(start).word()


def encode_operand(
    codes: np.ndarray,
    *,
    major: str = "K",
    swizzle: str = "128B",
    elem: str = "b8",
    base_address: int = 0,
    atom_order: str = "mn",
    pad_value: int = 0,
    smem_size: int | None = None,
) -> tuple[np.ndarray, OperandImage]:
    """Lay an (MN, K) matrix of codes into shared memory; return (smem bytes, OperandImage).

    The returned array is indexed by shared-memory address (index 0 = address 0) and is
    ``smem_size`` long (default: just past the tile).  ``atom_order="mn"`` puts atoms that are
    neighbours along MN next to each other (the spec's worked examples, 9.7.16.3.3); ``"k"``
    puts K neighbours together (CUTLASS's MN-major tiles, cutlass-facts §4.2).  LBO/SBO are the
    canonical values for that placement:

      K-major:  SBO = 8-row-group stride; LBO = K-chunk stride (no swizzle) or 16 ("assumed 1")
      MN-major: no swizzle: LBO = 8-K-row-group stride, SBO = MN 16-byte-chunk stride;
                swizzled:   LBO = MN swizzle-atom stride, SBO = K-atom stride (8 K rows;
                4 K rows = 512 B for ``128B_base32B``, Table 53 8x4)

    ``base_address`` must be 16-byte aligned (128 for swizzles); if it is not on the Table 41
    pattern boundary the descriptor's base offset is set from it (9.7.16.4.1).
    """
    _check(major, swizzle, elem)
    if atom_order not in ("mn", "k"):
        raise ValueError("atom_order must be 'mn' or 'k'")
    codes = np.asarray(codes)
    if codes.ndim != 2:
        raise ValueError("codes must be a 2-D (MN, K) array")
    mn, k = codes.shape
    limit = 1 << CODE_BITS[elem]
    if codes.size and (codes.min() < 0 or int(codes.max()) >= limit):
        raise ValueError(f"codes must be {CODE_BITS[elem]}-bit values for elem={elem!r}")
    rows_codes = codes if major == "K" else codes.T  # (rows, contiguous)
    rows, length = rows_codes.shape
    t = ELEMS_PER_CHUNK[elem]
    w = SWIZZLE_WIDTH[swizzle]
    nrows = ATOM_ROWS[swizzle]
    row_bytes = length * 16 // t if (length * 16) % t == 0 else None
    if rows % nrows or row_bytes is None or row_bytes % w:
        raise ValueError(
            f"{'MN' if major == 'K' else 'K'} extent {rows} must be a multiple of {nrows} and the "
            f"contiguous extent ({length} elements) a multiple of {w} bytes for swizzle {swizzle!r}"
        )
    align = 128 if swizzle != "none" else 16
    if base_address % align:
        raise ValueError(f"base_address must be {align}-byte aligned for swizzle {swizzle!r}")
    data = _pack_rows(rows_codes, elem, pad_value)  # (rows, row_bytes)
    n_row_atoms, n_col_atoms = rows // nrows, row_bytes // w
    atom_bytes = nrows * w
    rows_are_mn = major == "K"
    mn_fast = atom_order == "mn"
    if rows_are_mn == mn_fast:  # row-direction atoms are contiguous
        stride_rows, stride_cols = atom_bytes, atom_bytes * n_row_atoms
    else:
        stride_rows, stride_cols = atom_bytes * n_col_atoms, atom_bytes
    # (row_atom, rr, col_atom, chunk, byte)
    blocks = data.reshape(n_row_atoms, nrows, n_col_atoms, w // 16, 16)
    perm = _atom_chunk_permutation(swizzle)  # (nrows, chunks)
    phys = np.empty_like(blocks)
    rr = np.arange(nrows)[:, None]
    phys[:, rr, :, perm, :] = blocks[:, rr, :, np.arange(w // 16)[None, :], :]
    nbytes = n_row_atoms * n_col_atoms * atom_bytes
    size = base_address + nbytes if smem_size is None else smem_size
    if size < base_address + nbytes:
        raise ValueError("smem_size too small for the tile")
    smem = np.zeros(size, dtype=np.uint8)
    ia = np.arange(n_row_atoms)[:, None, None, None, None]
    ir = np.arange(nrows)[None, :, None, None, None]
    ja = np.arange(n_col_atoms)[None, None, :, None, None]
    jc = np.arange(w // 16)[None, None, None, :, None]
    jb = np.arange(16)[None, None, None, None, :]
    addr = base_address + ia * stride_rows + ja * stride_cols + ir * w + jc * 16 + jb
    smem[addr] = phys
    if major == "K":
        lbo = stride_cols if swizzle == "none" else 16
        sbo = stride_rows
    elif swizzle == "none":
        lbo, sbo = stride_rows, stride_cols
    else:
        lbo, sbo = stride_cols, stride_rows
    desc = SmemDesc(
        start_address=base_address,
        lbo=lbo,
        sbo=sbo,
        swizzle=swizzle,
        base_offset=base_offset_for(base_address, swizzle) if swizzle != "none" else 0,
    )
    img = OperandImage(major, swizzle, elem, mn, k, base_address, nbytes, stride_rows, stride_cols, desc)
    return smem, img


# ----------------------------------------------------------------------------------------------
# Decoder side: descriptor walk (hardware model)
# ----------------------------------------------------------------------------------------------


def swizzle_row(row_bits: np.ndarray, base_offset: int, swizzle: str) -> np.ndarray:
    """Row of the repeating swizzle pattern an address is in (before masking to B bits): its row bits
    [M+S, M+S+B) minus the descriptor's base offset -- this model's reading of 9.7.16.4.1
    (AMB-SDESC-BASEOFFSET); the same for every swizzle mode."""
    return row_bits - base_offset


def apply_swizzle(addr: np.ndarray, swizzle: str, base_offset: int = 0) -> np.ndarray:
    """Swizzle<B,M,S> on absolute byte addresses, phase-corrected by the base offset.

    The row index inside the repeating pattern is read from address bits [M+S, M+S+B) minus the
    descriptor's base offset (9.7.16.4.1: base offset = (pattern start >> 7) & 7 when the pattern
    is not on its Table 41 boundary).  The subtraction is this model's reading of that sentence.
    """
    b, m, s = SWIZZLE_BMS[swizzle]
    if b == 0:
        return addr
    mask = (1 << b) - 1
    yyy = swizzle_row(addr >> (m + s), base_offset, swizzle) & mask
    return addr ^ (yyy << m)


def mn_rows_per_sbo_step(swizzle: str) -> int:
    """K rows per SBO step of a swizzled MN-major operand (the decoder's own reading of Table 53's atom): 4
    for ``128B_base32B`` (its 8x4 atom, reading "atom-512" of AMB-T53-32B-ATOM-SIZE), 8 for every other."""
    return 4 if swizzle == "128B_base32B" else 8


def walk_addresses(desc: SmemDesc, rows: int, row_bytes: int, major: str) -> np.ndarray:
    """Byte address of every (row, byte) of the matrix a descriptor describes (9.7.16.3.3).

    K-major (rows = MN, bytes along K), 16-byte element units, T elements per unit:
      no swizzle  ((8,m),(T,2k)):((1T,SBO),(1,LBO)):  (r%8)*16 + (r//8)*SBO + (b%16) + (b//16)*LBO
      swizzle W   ((8,m),(T,2k)):((W/16 T,SBO),(1,T)): (r%8)*W + (r//8)*SBO + b
                  absolute-LBO mode (bit 52): bytes past the 128-byte row continue at the LBO
                  address (9.7.16.3.1.2)
    MN-major (rows = K, bytes along MN):
      no swizzle  ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)): (k%8)*16 + (k//8)*LBO + (b%16) + (b//16)*SBO
      swizzle W   ((T,W/16,m),(8,k)):((1,T,LBO),(W/16 T,SBO)): (k%8)*W + (k//8)*SBO + (b%W) + (b//W)*LBO
      128B_base32B ((T,8,m),(4,k)):((1,T,LBO),(8T,SBO)):     (k%4)*128 + (k//4)*SBO + (b%128) + (b//128)*LBO
                  (9.7.16.3.3 lists no canonical layout for it; Table 53's 8x4 atom has 4 K rows,
                  so SBO steps per 4 K rows -- reading "atom-512" of AMB-T53-32B-ATOM-SIZE)
    followed by ``apply_swizzle``.
    """
    r = np.arange(rows, dtype=np.int64)[:, None]
    b = np.arange(row_bytes, dtype=np.int64)[None, :]
    w = SWIZZLE_WIDTH[desc.swizzle]
    start, lbo, sbo = desc.start_address, desc.lbo, desc.sbo
    if major == "K":
        if desc.swizzle == "none":
            if desc.lbo_absolute:
                raise ValueError("absolute LBO mode is defined only for 128B swizzle (9.7.16.3.1.2.1)")
            addr = start + (r % 8) * 16 + (r // 8) * sbo + (b % 16) + (b // 16) * lbo
        elif desc.lbo_absolute:
            inrow = (start % 128) + b
            first = inrow < 128
            row_term = (r % 8) * w + (r // 8) * sbo
            addr = np.where(first, start + row_term + b, lbo + row_term + (inrow - 128))
        else:
            addr = start + (r % 8) * w + (r // 8) * sbo + b
    elif major == "MN":
        if desc.lbo_absolute:
            raise ValueError("absolute LBO mode is K-major only (9.7.16.3.1.2.1 #2)")
        if desc.swizzle == "none":
            addr = start + (r % 8) * 16 + (r // 8) * lbo + (b % 16) + (b // 16) * sbo
        else:
            g = mn_rows_per_sbo_step(desc.swizzle)
            addr = start + (r % g) * w + (r // g) * sbo + (b % w) + (b // w) * lbo
    else:
        raise ValueError(f"major must be one of {MAJORS}")
    return apply_swizzle(np.broadcast_to(addr, (rows, row_bytes)), desc.swizzle, desc.base_offset)


def _unpack_rows(raw: np.ndarray, elem: str, length: int) -> np.ndarray:
    """(rows, row_bytes) container bytes -> (rows, length) codes.  Bit extraction per element."""
    rows = raw.shape[0]
    if elem == "b8":
        return raw.copy()
    if elem in ("b16", "b32"):
        nb = CODE_BITS[elem] // 8
        return np.ascontiguousarray(raw).view(f"<u{nb}").reshape(rows, length).astype(_CODE_DTYPE[elem])
    e = np.arange(length)
    if elem == "fp4x2":
        byte = raw[:, e // 2].astype(np.uint16)
        return ((byte >> (4 * (e % 2))) & 0xF).astype(np.uint8)
    bits = CODE_BITS[elem]
    chunk_base = (e // 16) * 16
    bit_off = (e % 16) * bits
    lo_byte = chunk_base + bit_off // 8
    hi_byte = np.minimum(lo_byte + 1, chunk_base + 15)
    word = raw[:, lo_byte].astype(np.uint16) | (raw[:, hi_byte].astype(np.uint16) << 8)
    return ((word >> (bit_off % 8)) & ((1 << bits) - 1)).astype(np.uint8)


def decode_operand(
    smem: np.ndarray,
    desc_word: int,
    *,
    mn: int,
    k: int,
    major: str,
    elem: str,
    smem_base: int = 0,
) -> np.ndarray:
    """Read an (MN, K) operand the way the hardware walks the descriptor (no encoder state).

    ``smem[i]`` holds shared-memory address ``smem_base + i``.  ``mn``/``k`` are what one MMA
    reads (e.g. K = 32 for 8-bit, 64 for fp4x2; K-major swizzled descriptors describe at most one
    swizzle row of K -- step the start address for the next MMA as kernels do).  Addresses
    outside the array raise IndexError (a descriptor pointing outside the image is a finding).
    """
    if elem not in ELEMS:
        raise ValueError(f"elem must be one of {ELEMS}")
    if major not in MAJORS:
        raise ValueError(f"major must be one of {MAJORS}")
    desc = decode_smem_desc(desc_word)
    if desc.swizzle == "128B_base32B" and major == "K":
        # Table 53 row 2: the 128B swizzle with 32-byte atoms has no K-major layout.
        raise ValueError("K-major operand with the 128B-with-32B-atom swizzle: Table 53 defines no such layout")
    rows, length = (mn, k) if major == "K" else (k, mn)
    t = ELEMS_PER_CHUNK[elem]
    if (length * 16) % t:
        raise ValueError("contiguous extent must fill whole bytes")
    row_bytes = length * 16 // t
    addr = walk_addresses(desc, rows, row_bytes, major) - smem_base
    if addr.size and (addr.min() < 0 or addr.max() >= smem.shape[0]):
        raise IndexError(
            f"descriptor walk leaves the shared-memory image: addresses "
            f"{addr.min() + smem_base}..{addr.max() + smem_base}, image {smem_base}..{smem_base + smem.shape[0] - 1}"
        )
    raw = np.asarray(smem, dtype=np.uint8)[addr]
    codes = _unpack_rows(raw, elem, length)
    return codes if major == "K" else np.ascontiguousarray(codes.T)


def decode_tile(
    smem: np.ndarray, img: OperandImage, *, mma_k: int, smem_base: int = 0
) -> np.ndarray:
    """Decode a whole (MN, K) tile MMA by MMA: descriptor per K step from ``img.desc_for``.

    Mirrors a kernel's K loop; used by the round-trip tests and by models that consume whole
    tiles.
    """
    parts = [
        decode_operand(smem, img.desc_for(k_offset=k0), mn=img.mn, k=mma_k, major=img.major,
                       elem=img.elem, smem_base=smem_base)
        for k0 in range(0, img.k, mma_k)
    ]
    return np.concatenate(parts, axis=1)


def sf_atom_offsets(x: np.ndarray, f: np.ndarray, k_sf: int) -> np.ndarray:
    """Byte offset of scale factor (x, f) in CUTLASS's SF atom layout (cutlass-facts §2.1).

    16*(x mod 32) + 4*((x // 32) mod 4) + (f mod 4) + 512*(f // 4) + 512*(k_sf/4)*(x // 128),
    where k_sf = number of SF along K (a multiple of 4).  Same in global and shared memory.
    """
    x = np.asarray(x)
    f = np.asarray(f)
    return 16 * (x % 32) + 4 * ((x // 32) % 4) + (f % 4) + 512 * (f // 4) + 512 * (k_sf // 4) * (x // 128)


def encode_sf_atoms(sf: np.ndarray, *, base_address: int = 0, smem_size: int | None = None) -> np.ndarray:
    """(MN, K_sf) scale-factor bytes -> smem image in the 512-byte atom layout (MN%128, K_sf%4 == 0)."""
    sf = np.asarray(sf, dtype=np.uint8)
    mnn, ksf = sf.shape
    if mnn % 128 or ksf % 4:
        raise ValueError("SF atoms need MN a multiple of 128 and K_sf a multiple of 4")
    x, f = np.meshgrid(np.arange(mnn), np.arange(ksf), indexing="ij")
    off = sf_atom_offsets(x, f, ksf)
    size = base_address + mnn * ksf if smem_size is None else smem_size
    smem = np.zeros(size, dtype=np.uint8)
    smem[base_address + off] = sf
    return smem


def sf_atom_desc(address: int) -> int:
    """The CUTLASS SF-copy descriptor (cutlass-facts §2.3): K-major, no swizzle, LBO 16 B,
    SBO 128 B, version 1 -> raw value 0x0000400800010000 | (address >> 4)."""
    return encode_smem_desc(address, 16, 128, swizzle="none")


__all__ = [
    "ELEMS",
    "SWIZZLES",
    "MAJORS",
    "ELEMS_PER_CHUNK",
    "CODE_BITS",
    "SWIZZLE_BMS",
    "ATOM_ROWS",
    "OperandImage",
    "encode_operand",
    "decode_operand",
    "decode_tile",
    "walk_addresses",
    "apply_swizzle",
    "sf_atom_offsets",
    "encode_sf_atoms",
    "sf_atom_desc",
    "PATTERN_BYTES",
]
