"""Structured-sparse A for ``tcgen05.mma.sp`` (9.7.16.10.8): the dense M x K matrix from its packed
M x K/2 form and the per-chunk metadata, and the exact block-scaled product of a sparse A.

The oracle side's own reading of the text (the figures 260/261/267 are missing from the spec):

* 2:4 (``mxf8f6f4``, ``f8f6f4``, ``f16``, ``i8``; 9.7.16.10.8.2): a chunk is 4 adjacent K elements of a row;
  2 are stored, in chunk order. The chunk's 4-bit index holds two 2-bit positions, the first stored element's
  position in bits [1:0] and the second's in bits [3:2] ("the two 2-bit indices").
* 4:8 in pairs (``mxf4``, ``mxf4nvf4``; 9.7.16.10.8.3): a chunk is 8 elements = 4 two-wide sub-chunks; 2
  sub-chunks (4 values) are stored, the 2-bit positions name sub-chunks.
* Only the listed index values are meaningful (0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b0110, 0b1110); the
  rest are undefined behaviour and refused here.

Where the metadata nibbles sit in tensor memory (register AMB-SPARSE-META-TMEM) is not this module's business:
it takes the logical (row, chunk) nibbles. The scale-factor count of a sparse MMA (AMB-SPARSE-SF-COUNT) is a
parameter of :func:`sparse_block_scaled_gemm`.
"""

from __future__ import annotations

import numpy as np

from reference import formats as F
from reference import gemm as G

VALID_INDEX = (0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b0110, 0b1110)
"""9.7.16.10.8.2/3: the only meaningful 4-bit metadata values for 2:4 and pairwise 4:8."""

PAIRED_KINDS = ("mxf4", "mxf4nvf4")


def pair_width(kind: str) -> int:
    """Elements per position: 2 for the pairwise 4:8 kinds, 1 for 2:4."""
    return 2 if kind in PAIRED_KINDS else 1


def expand(packed: np.ndarray, index: np.ndarray, kind: str) -> np.ndarray:
    """Dense (M, K) from ``packed`` (M, K/2) and ``index`` (M, K/chunk) 4-bit metadata values.

    Works on codes or values alike: elements not stored are 0 of ``packed``'s dtype (code 0 is +0 in every
    MMA element format). Raises ``ValueError`` on an index outside :data:`VALID_INDEX`."""
    packed = np.asarray(packed)
    index = np.asarray(index).astype(np.int64)
    pair = pair_width(kind)
    chunk = 4 * pair
    m, half = packed.shape
    k = 2 * half
    if index.shape != (m, k // chunk):
        raise ValueError(f"metadata {index.shape} is not (M, K/{chunk}) = {(m, k // chunk)}")
    bad = ~np.isin(index, VALID_INDEX)
    if bad.any():
        r, c = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"metadata {int(index[r, c]):#06b} at row {r}, chunk {c} is not a meaningful index "
                         "(9.7.16.10.8): undefined behaviour")
    first, second = index & 3, (index >> 2) & 3
    dense = np.zeros((m, k), dtype=packed.dtype)
    vals = packed.reshape(m, k // chunk, 2, pair)
    base = np.arange(k // chunk)[None, :] * chunk
    for slot, pos in enumerate((first, second)):
        for p in range(pair):
            np.put_along_axis(dense, base + pos * pair + p, vals[:, :, slot, p], axis=1)
    return dense


def sparse_block_scaled_gemm(packed: np.ndarray, index: np.ndarray, b: np.ndarray, scale_a: np.ndarray,
                             scale_b: np.ndarray, *, kind: str, a_fmt: str, b_fmt: str, scale_fmt: str,
                             sf_count: str = "dense-count") -> np.ndarray:
    """Exact D = (expand(A) * scale_A)(B * scale_B), rounded once to fp32.

    ``packed`` (M, K/2) codes and ``index`` (M, K/chunk) as for :func:`expand`; ``b`` (K, N) codes; ``scale_a``
    (M, SF_K), ``scale_b`` (SF_K, N) codes. ``sf_count`` is the reading of AMB-SPARSE-SF-COUNT: ``dense-count``
    (a sparse MMA keeps Table 54's scale count, so one scale covers twice the dense vector size of logical K)
    or ``doubled`` (one scale per dense vector size)."""
    a = expand(packed, index, kind)
    sa, sb = np.asarray(scale_a), np.asarray(scale_b)
    k = a.shape[1]
    vs = k // sa.shape[1]
    dense_vs = {"dense-count": vs // 2, "doubled": vs}[sf_count]
    G.check_scaled_combo(kind, a_fmt, b_fmt, scale_fmt, dense_vs)
    return G.exact_gemm(F.decode(a_fmt, a), F.decode(b_fmt, np.asarray(b)), out="fp32",
                        scale_a=F.decode(scale_fmt, sa), scale_b=F.decode(scale_fmt, sb))
