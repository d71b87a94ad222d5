"""A shortcut for the ``exact`` numeric models (``exact_rne``) with an f32 result: the same bits, found with
one float64 matrix product where that product is provably exact, instead of the model's multi-limb exact sum.

Why: the SM120 block-scaled mma.sync of CUTLASS example 79a spent 80 % of its VM time in
``reference.numeric_model.dot``'s exact summation (windowed int64 limbs over every (row, column, k) term),
although for realistic data the whole dot product fits in a float64 with room to spare.

Why the bits are the same. Per D element (m, n) the model returns RNE_f32(sum_k t_k + c), the exact sum of the
terms t_k = a_mk * b_kn * sa * sb rounded once (NaN/Inf and an exact zero get special rules). Let L be an integer
with every non-zero t_k and c an integer multiple of 2^L, and let S = sum_k |t_k| + |c| < 2^(L+53). Then every
partial sum in any order is a multiple of 2^L of magnitude <= S, so it is a float64 and every float64 addition
(or fused multiply-add) on the way is exact: a float64 matmul (any BLAS, any blocking) returns the exact sum,
and float64 -> float32 conversion rounds it once to nearest-even (IEEE). Each term itself is exact in
float64: the mma.sync operand formats have at most 4 significant bits (fp8/fp6/fp4; UE8M0 1, UE4M3 4), so a
product of four has at most 16, and the range guard below keeps every product far from float64's limits.

Here L is a lower bound: min_k lowbit(a_mk sa) + min_k lowbit(b_kn sb) (lowbit of a product of two numbers is
the product of their lowbits), and S is bounded by |A*SA| @ |B*SB| + |C| computed in float64 (relative error
< 2^-40) against 2^(L+52) (a factor two of margin). An exact zero takes the model's sign rule (-0 only when
every term is -0). Elements where the guard fails, the result is outside the f32 normal range, or any input
is not finite are left to the model (``ok`` False).
"""

from __future__ import annotations

import numpy as np

_NONE = np.int64(1) << 40
"""lowbit exponent of a zero: above every real one (a zero adds nothing)."""
_F32_MIN_NORMAL = 2.0**-126
_F32_MAX = float(np.finfo(np.float32).max)
_RANGE = 2.0**400
"""Operands (value times scale) beyond 2^+-400 go to the model: their products stay inside float64's range."""


def lowbit_exponent(x: np.ndarray) -> np.ndarray:
    """e with the lowest set bit of each finite float64 ``x`` being 2^e (int64); zeros give a large value."""
    m, e = np.frexp(x)
    mant = (np.abs(m) * 2.0**53).astype(np.int64)  # the exact 53-bit integer significand: x = mant * 2^(e-53)
    low = mant & -mant
    _, t = np.frexp(low.astype(np.float64))  # low = 2^(t-1)
    out = e.astype(np.int64) + (t.astype(np.int64) - 54)
    return np.where(x == 0, _NONE, out)


def _row_min(x: np.ndarray, axis: int) -> np.ndarray:
    return lowbit_exponent(x).min(axis=axis)


def matrix_dot(a: np.ndarray, b: np.ndarray, c: np.ndarray, sa: np.ndarray | None = None,
               sb: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """D = (A*SA) @ (B*SB) + C rounded once to f32 where that is provably the exact model's answer.

    ``a`` (..., M, K), ``b`` (..., K, N), ``c`` (..., M, N) float64 values exact in their formats (at most
    4 significant bits for ``a``/``b``); ``sa`` (..., M, nsf), ``sb`` (..., nsf, N) block scales (scale j
    covers k in [j K/nsf, (j+1) K/nsf)) or both None. Returns (d, ok): d (..., M, N) float64 values exact in
    f32, meaningful where ``ok``; elsewhere the caller asks the model.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    k = a.shape[-1]
    if sa is not None and sb is not None:
        a = a * np.repeat(np.asarray(sa, dtype=np.float64), k // sa.shape[-1], axis=-1)
        b = b * np.repeat(np.asarray(sb, dtype=np.float64), k // sb.shape[-2], axis=-2)
    shape = np.broadcast_shapes(a.shape[:-1] + b.shape[-1:], c.shape)
    fa, fb = np.abs(a), np.abs(b)
    # a NaN/Inf or an out-of-range operand anywhere: the model decides every element (NaN fails <)
    if not ((fa < _RANGE).all() and (fb < _RANGE).all() and np.isfinite(c).all()):
        return np.zeros(shape), np.zeros(shape, dtype=bool)
    low_a = _row_min(a, -1)[..., :, None]  # (..., M, 1)
    low_b = _row_min(b, -2)[..., None, :]  # (..., 1, N)
    low = np.minimum(np.minimum(low_a + low_b, lowbit_exponent(c)), _NONE)
    bound = np.matmul(fa, fb) + np.abs(c)
    with np.errstate(over="ignore"):  # 2^(L+52) beyond float64 is inf: fits; a declined d beyond f32 is inf
        fits = bound < np.ldexp(1.0, np.clip(low + 52, -1100, 1100).astype(np.int32))
        d = np.matmul(a, b) + c
        ad = np.abs(d)
        ok = fits & (ad <= _F32_MAX) & ((ad >= _F32_MIN_NORMAL) | (d == 0))
        d = d.astype(np.float32).astype(np.float64)
    zero = np.nonzero(ok & (d == 0))
    if len(zero[0]):
        d[zero] = _zero_sign(a, b, c, zero)
    return d, ok


def _zero_sign(a: np.ndarray, b: np.ndarray, c: np.ndarray, at: tuple[np.ndarray, ...]) -> np.ndarray:
    """The model's exact zero at the elements ``at`` (whose exact sum is 0): -0 where every term (each
    product, and C) is a negative zero, else +0 (``reference.gemm.exact_sum_round``'s rule, IEEE's for a sum
    of zeros). The few zero elements are looked at term by term."""
    shape = np.broadcast_shapes(a.shape[:-1] + b.shape[-1:], c.shape)
    *lead, r, col = at
    rows = np.broadcast_to(a, shape[:-2] + a.shape[-2:])[(*lead, r)]  # (Z, K)
    cols = np.swapaxes(np.broadcast_to(b, shape[:-2] + b.shape[-2:]), -1, -2)[(*lead, col)]  # (Z, K)
    t = rows * cols
    cz = np.broadcast_to(c, shape)[at]
    neg = np.all((t == 0) & np.signbit(t), axis=-1) & (cz == 0) & np.signbit(cz)
    return np.where(neg, -0.0, 0.0)
