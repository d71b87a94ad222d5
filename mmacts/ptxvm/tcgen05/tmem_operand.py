"""MMA operands read from tensor memory, for every ``tcgen05.mma`` kind: A (``[a-tmem]``) and the sparsity
metadata (``.sp``). Which TMEM lanes hold a row is each MMA's (``mma``: the A copies of the 4x1/2x2 datapaths;
``mma_plain``: the same lane as the D cell); how a row's elements sit in its cells is stated here once.

A in TMEM (9.7.16.10.4.3/.5): elements of ``bits`` bits, ``32 // bits`` per 32-bit cell, the lowest k in the
lowest bits (16-bit f16/bf16 two per cell, tf32 one, 8-bit holders four, mxf4/mxf4nvf4 E2M1 eight as nibbles).
An E2M1/E2M3/E3M2 element of kind::mxf8f6f4 (and kind::f8f6f4, the VM's reading) sits in its 8-bit holder at
:data:`HOLDER` [AMB-FP4-HOLDER-BITS, AMB-FP6-HOLDER-BITS].

Sparsity metadata [AMB-SPARSE-META-TMEM "lane-row-nibble"]: a row's chunk c has its nibble at column
``col0 + c // 8``, bits ``4 * (c % 8)``; the nibble holds the two 2-bit positions of the chunk's two kept
elements (or pairs), low first. Nibbles outside :data:`SPARSE_META_VALID` are undefined behaviour (9.7.16.10.8).
"""

from __future__ import annotations

import numpy as np

from .datapath import tmem_cells

HOLDER = {"e4m3": (0, 8), "e5m2": (0, 8), "e2m3": (1, 6), "e3m2": (1, 6), "e2m1": (2, 4)}
"""(shift, bits) of an element inside its 8-bit holder."""
SPARSE_META_VALID = (0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b0110, 0b1110)
"""The metadata nibbles the spec lists (9.7.16.10.8)."""


def a_tmem_slot(bits: int, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(column offset, bit) of element k of an A row in TMEM: ``32 // bits`` elements per cell, lowest k lowest."""
    per = 32 // bits
    return k // per, bits * (k % per)


def a_tmem_lanes(rows: int, copy: int) -> np.ndarray:
    """TMEM lanes of A rows 0..rows-1 in copy ``copy`` of the block-scaled datapaths [AMB-A-TMEM-LAYOUT
    "duplicated-b"]: row x at lane x; the 2x2 datapath's second copy (read by D lanes 64-127) 64 lanes down."""
    return 64 * copy + np.arange(rows)


def a_tmem_codes(tmem: np.ndarray, lanes: np.ndarray, col0: int, k: int, bits: int, holder: tuple[int, int] | None,
                 mark: np.ndarray) -> np.ndarray:
    """A codes (len(lanes), k), uint64, of the rows at ``lanes`` from column ``col0``; ``holder``: the
    (shift, bits) of an element in its 8-bit holder (:data:`HOLDER`), None for a whole slot."""
    col, bit = a_tmem_slot(bits, np.arange(k))
    shift, width = holder if holder is not None else (0, bits)
    ln = np.broadcast_to(lanes[:, None], (len(lanes), k))
    cells = tmem_cells(tmem, ln, np.broadcast_to(col0 + col, ln.shape), mark, "A in tensor memory")
    return (cells.astype(np.uint64) >> (bit + shift).astype(np.uint64)) & np.uint64((1 << width) - 1)


def metadata_nibbles(tmem: np.ndarray, lanes: np.ndarray, col0: int, chunks: int, mark: np.ndarray) -> np.ndarray:
    """The metadata nibbles (len(lanes), chunks) of the rows at ``lanes`` from column ``col0``."""
    c = np.arange(chunks)
    ln = np.broadcast_to(lanes[:, None], (len(lanes), chunks))
    cells = tmem_cells(tmem, ln, np.broadcast_to(col0 + c // 8, ln.shape), mark, "sparsity metadata")
    return (cells >> (4 * (c % 8)).astype(np.uint32)) & 0xF


def first_unlisted_nibble(nib: np.ndarray) -> tuple[int, int] | None:
    """(row, chunk) of the first nibble the spec does not list (undefined behaviour), or None."""
    bad = ~np.isin(nib, SPARSE_META_VALID)
    if not bad.any():
        return None
    r, c = np.argwhere(bad)[0]
    return int(r), int(c)


def expand_sparse(packed: np.ndarray, nib: np.ndarray, k: int, pair: int) -> np.ndarray:
    """Dense (rows, k) from the packed (rows, k/2) and its metadata nibbles: chunk c (4 * ``pair`` elements)
    keeps two elements (``pair`` = 1, 2:4) or two pairs (``pair`` = 2, mxf4* 4:8) at the nibble's positions."""
    rows = packed.shape[0]
    chunk = 4 * pair
    nch = k // chunk
    c = np.arange(nch)
    pos = np.stack([nib & 3, (nib >> 2) & 3], axis=-1).astype(np.int64)  # (rows, chunks, 2)
    dense = np.zeros((rows, k), dtype=packed.dtype)
    vals = packed.reshape(rows, nch, 2, pair)
    for s in range(2):
        for p in range(pair):
            np.put_along_axis(dense, c[None, :] * chunk + pos[..., s] * pair + p, vals[:, :, s, p], axis=1)
    return dense
