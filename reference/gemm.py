"""Exact (block-scaled) GEMM: D = (A * scale_A)(B * scale_B) + C with ONE final rounding.

Why this is exact, in three steps:

1. *Every product is a float64.* An element has at most 11 significant bits (fp16/tf32;
   E4M3 4, E2M1 2), a UE4M3 scale 4 and a UE8M0 scale 1, so ``a*sa*b*sb`` has at most
   22 significant bits (16 for the block-scaled kinds) and a binary exponent within
   [-300, 300]: both far inside float64 (53 bits, exponents down to -1022). So
   ``(a*sa)`` and ``(b*sb)`` and their product are computed without rounding
   (:func:`max_significant_bits` measures the bit counts on the actual data).
2. *Every partial sum is a float64.* Elements are split by binary exponent into windows of
   W binades. All products of A-window i and B-window j are integer multiples of one
   unit 2^(W(i+j)+off) and smaller than 2^(W(i+j)+2W), so with W chosen from the bit
   counts and K (``K * 2^(2W + pa + pb - 2) <= 2^53``) the float64 matmul of the two
   window slices is exact in any summation order (BLAS included).
3. *The window sums are integers* (< 2^53 in units of their limb); they are carried into
   a little-endian array of W-bit int64 limbs, and the top limbs plus a sticky bit form a
   float64 that rounds to fp32/fp16 exactly as the infinitely precise sum would
   (round-to-odd with >= 2 spare bits), in the selected mode.

Non-finite inputs follow IEEE: NaN anywhere in a row/column pair, Inf*0, or +Inf and
-Inf together give NaN; otherwise Inf keeps its sign.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

import numpy as np

from reference import formats as F

# --------------------------------------------------------------------------- kinds (Tables 35/36, 54/55)


@dataclass(frozen=True)
class ScaledKind:
    """A block-scaled ``.kind``: element types, scale types and vector sizes allowed."""

    name: str
    elements: tuple[str, ...]
    scale_vs: Mapping[str, tuple[int, ...]]
    """Scale type -> allowed vector sizes (elements of K sharing one scale)."""
    spec: str


SCALED_KINDS: dict[str, ScaledKind] = {
    k.name: k
    for k in (
        ScaledKind("mxf8f6f4", ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1"), {"ue8m0": (32,)},
                   "T36.1 T54.1 T55.1: scale_vec::1X / block32, M x 1 scales"),
        ScaledKind("mxf4", ("e2m1",), {"ue8m0": (32,)},
                   "T36.2 T54.2 T55.2: scale_vec::2X / block32 (K=96: 3 blocks)"),
        ScaledKind("mxf4nvf4", ("e2m1",), {"ue8m0": (32, 16), "ue4m3": (16,)},
                   "T36.3-4 T54.3 T55.3-4: 2X/block32 and 4X/block16 (K=96: 3 or 6 blocks)"),
    )
}

UNSCALED_KINDS: dict[str, tuple[str, ...]] = {
    "f16": ("f16",),
    "bf16": ("bf16",),
    "tf32": ("tf32",),
    "f8f6f4": ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1"),
}
"""Non-scaled floating kinds and their element types (``i8`` is :func:`int_gemm`)."""


def scale_vec_name(kind: str, vs: int, k: int) -> str:
    """PTX ``.scale_vec`` qualifier for a kind and vector size (K/VS scale blocks)."""
    if kind == "mxf8f6f4":
        return "scale_vec::1X"
    if vs == 32:
        return "scale_vec::2X" if k != 96 else "block32"
    return "scale_vec::4X" if k != 96 else "block16"


def check_scaled_combo(kind: str, a_fmt: str, b_fmt: str, scale_fmt: str, vs: int) -> None:
    """Raise ``ValueError`` unless the combination is one of Table 36/55."""
    if kind not in SCALED_KINDS:
        raise ValueError(f"unknown block-scaled kind {kind!r}; known: {', '.join(SCALED_KINDS)}")
    sk = SCALED_KINDS[kind]
    for t in (a_fmt, b_fmt):
        if F.get(t).name not in sk.elements:
            raise ValueError(f"kind::{kind} takes elements {sk.elements}, not {t}")
    s = F.get(scale_fmt).name
    if s not in sk.scale_vs:
        raise ValueError(f"kind::{kind} takes scales {tuple(sk.scale_vs)}, not {scale_fmt}")
    if vs not in sk.scale_vs[s]:
        raise ValueError(f"kind::{kind} with {s} takes vector sizes {sk.scale_vs[s]}, not {vs}")


# --------------------------------------------------------------------------- helpers


def _values(x: np.ndarray, fmt: str | None) -> np.ndarray:
    """Codes (unsigned ints, with a format) -> float64 values; floats pass through."""
    x = np.asarray(x)
    if x.dtype.kind in "ui" and fmt is not None:
        return F.decode(fmt, x)
    if x.dtype.kind == "f":
        return x.astype(np.float64)
    raise ValueError(f"expected float values or integer codes with a format, got dtype {x.dtype}")


def max_significant_bits(x: np.ndarray) -> int:
    """Largest number of significant bits of any finite non-zero float64 in ``x`` (0 if none)."""
    v = np.abs(np.asarray(x, dtype=np.float64))
    v = v[np.isfinite(v) & (v != 0)]
    if v.size == 0:
        return 0
    m, _ = np.frexp(v)
    mant = (m * 2.0**53).astype(np.int64)
    low = mant & -mant
    _, tz1 = np.frexp(low.astype(np.float64))
    return int(53 - (tz1.min() - 1))


_BLAS_SINGLE = any(os.environ.get(v) == "1" for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"))
"""True when the process was started with single-threaded BLAS (the benchmark does this)."""

_BLAS_SERIAL_MNK = 262_144
"""OpenBLAS runs a GEMM of at most 65536 * 4 multiply-adds on the calling thread only
(``SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD`` in its interface/gemm.c)."""


def matmul64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """float64 matrix product for callers whose every summation order is exact.

    Why the dispatch: exactness never depends on it (every caller guarantees that each
    partial sum is a float64), only speed does. Multi-threaded BLAS stalls badly on a
    loaded 2-core machine (measured 19 ms vs 0.8 ms single-threaded for 256x128x256, and
    numpy's own loop 4 ms), so BLAS is used where it runs on one thread: small products,
    or a process started with ``OPENBLAS_NUM_THREADS=1``/``OMP_NUM_THREADS=1``.
    """
    if _BLAS_SINGLE or a.shape[0] * a.shape[1] * b.shape[1] <= _BLAS_SERIAL_MNK:
        return np.matmul(a, b)
    return np.einsum("ik,kj->ij", a, b)


_mm = matmul64


def _floor_log2(x: np.ndarray) -> np.ndarray:
    _, e = np.frexp(x)
    return e.astype(np.int64) - 1


def _window_index(x: np.ndarray, w: int) -> np.ndarray:
    """floor(floor(log2|x|)/w) for non-zero x; a sentinel for zeros."""
    ax = np.abs(x)
    idx = np.floor_divide(_floor_log2(np.where(ax == 0, 1.0, ax)), w)
    return np.where(ax == 0, np.iinfo(np.int64).min, idx)


def _units(v: np.ndarray, key: np.ndarray | int, w: int, off: int) -> np.ndarray:
    """float64 ``v`` in units of 2^(w*key + off) as exact int64 (raises if not an integer)."""
    k = np.asarray(key)
    iv = np.ldexp(v, (-(w * k + off)).astype(np.int32))
    ii = iv.astype(np.int64)
    if not np.array_equal(ii, iv):
        raise AssertionError("internal: window sum is not an integer of its limb")
    return ii


def _round_dense(limbs: np.ndarray, lo: int, w: int, off: int, out: str, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Round the exact value sum_j limbs[..., j] * 2^(w*(lo+j) + off) to ``out`` in ``mode``.

    ``limbs`` are int64 of any size (< 2^59); the last ``64//w + 2`` limbs must be zero
    headroom for carries. Returns (float64 result, mask of exact zeros)."""
    shape = limbs.shape[:-1]
    limbs, carry = _propagate(limbs, w)
    neg = carry < 0
    if neg.any():
        folded = limbs.copy()
        folded[..., -1] += carry << w
        limbs2, _ = _propagate(np.where(neg[..., None], -folded, 0), w)
        limbs = np.where(neg[..., None], limbs2, limbs)
    nt = -(-25 // w) + 1  # top limbs giving >= 26 significant bits
    limbs = np.concatenate([np.zeros(shape + (nt,), dtype=np.int64), limbs], axis=-1)  # limb j -> j + nt
    nz = limbs != 0
    any_nz = nz.any(axis=-1)
    h = limbs.shape[-1] - 1 - np.argmax(nz[..., ::-1], axis=-1)
    h = np.where(any_nz, h, nt)
    first = np.argmax(nz, axis=-1)
    top = np.zeros(shape, dtype=np.int64)
    for t in range(nt):
        top = (top << w) + np.take_along_axis(limbs, (h - t)[..., None], axis=-1)[..., 0]
    sticky = any_nz & (first <= h - nt)
    mant = 2 * top + sticky.astype(np.int64)
    # the lowest limb in ``top`` has padded index h-nt+1, i.e. key lo + h - 2nt + 1
    exp = w * (lo + h - 2 * nt + 1) + off - 1
    v = np.ldexp(mant.astype(np.float64), exp.astype(np.int32))
    v = np.where(neg, -v, v)
    r = F.round_float(v, out, mode)
    return np.where(any_nz, r, 0.0), ~any_nz


class _Limbs:
    """Exact integer accumulator: value = sum_s limb[s] * 2^(W*s + off), keys s per element."""

    def __init__(self, shape: tuple[int, ...], w: int, off: int) -> None:
        self.shape, self.w, self.off = shape, w, off
        self.parts: list[tuple[np.ndarray | int, np.ndarray]] = []

    def add_int(self, key: np.ndarray | int, iv: np.ndarray) -> None:
        """Add int64 ``iv`` in units of limb ``key`` (a scalar or one key per element)."""
        self.parts.append((key, iv))

    def add_float(self, key: np.ndarray | int, v: np.ndarray) -> None:
        """Add float64 ``v``, an integer multiple (< 2^53) of the unit of limb ``key``."""
        self.add_int(key, _units(v, key, self.w, self.off))

    def add_terms(self, x: np.ndarray) -> None:
        """Add one narrow float64 term per element (e.g. C)."""
        x = np.asarray(x, dtype=np.float64)
        nz = x != 0
        if not nz.any():
            return
        e = _floor_log2(np.where(nz, np.abs(x), 1.0))
        p = max_significant_bits(x)
        # a term of p bits at exponent e is a multiple of 2^(e-p+1); use the limb at or below it
        s = np.floor_divide(e - p + 1 - self.off, self.w)
        self.add_float(np.where(nz, s, 0), np.where(nz, x, 0.0))

    def round(self, out: str, mode: str) -> tuple[np.ndarray, np.ndarray]:
        """(rounded value, exact-zero mask)."""
        if not self.parts:
            return np.zeros(self.shape), np.ones(self.shape, dtype=bool)
        los, his = [], []
        for key, v in self.parts:
            k = np.asarray(key)
            sel = k[v != 0] if k.ndim else (np.array([int(k)]) if (v != 0).any() else np.array([], int))
            if sel.size:
                los.append(int(sel.min()))
                his.append(int(sel.max()))
        if not los:
            return np.zeros(self.shape), np.ones(self.shape, dtype=bool)
        lo, hi = min(los), max(his)
        n = hi - lo + 1 + 64 // self.w + 2
        limbs = np.zeros(self.shape + (n,), dtype=np.int64)
        flat = limbs.reshape(-1, n)
        rows = np.arange(flat.shape[0])
        for key, v in self.parts:
            k = np.asarray(key)
            if k.ndim == 0:
                limbs[..., int(k) - lo] += v
            else:
                kk = np.where(v != 0, k, lo).reshape(-1) - lo
                flat[rows, kk] += v.reshape(-1)
        return _round_dense(limbs, lo, self.w, self.off, out, mode)


def _propagate(limbs: np.ndarray, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Carry so every limb is in [0, 2^w); return limbs and the final (sign) carry."""
    limbs = limbs.copy()
    mask = (1 << w) - 1
    carry = np.zeros(limbs.shape[:-1], dtype=np.int64)
    for j in range(limbs.shape[-1]):
        t = limbs[..., j] + carry
        limbs[..., j] = t & mask
        carry = t >> w
    return limbs, carry


def exact_sum_round(terms: np.ndarray, out: str = "fp32", mode: str = "rne") -> np.ndarray:
    """Correctly rounded sum along the last axis of float64 ``terms`` (each term exact).

    For vectors (the numeric model's ``exact_rne``); finite terms only. The window width
    adapts to the terms' significant bits so each window sum stays exact.
    """
    t = np.asarray(terms, dtype=np.float64)
    if not np.isfinite(t).all():
        raise ValueError("exact_sum_round takes finite terms; screen NaN/Inf first")
    shape, k = t.shape[:-1], t.shape[-1]
    p = max(max_significant_bits(t), 1)
    logk = max(int(np.ceil(np.log2(max(k, 2)))), 1)
    w = min(16, 53 - p - logk)
    if w < 1:
        raise ValueError("terms too wide for exact window summation")
    acc = _Limbs(shape, w, -(p - 1))
    idx = _window_index(t, w)
    for i in np.unique(idx[t != 0]):
        acc.add_float(int(i), np.where(idx == i, t, 0.0).sum(axis=-1))
    d, zero = acc.round(out, mode)
    all_neg_zero = np.all((t == 0) & np.signbit(t), axis=-1)
    return np.where(zero & all_neg_zero, -0.0, d)


# --------------------------------------------------------------------------- GEMM


def _special_result(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mask, value) of the IEEE special result of sum_k a[m,k] b[k,n] + c[m,n]."""
    f = np.float64
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    inf_a, inf_b = np.isinf(a), np.isinf(b)
    zero_a, zero_b = a == 0, b == 0
    fin_nz_a, fin_nz_b = np.isfinite(a) & ~zero_a, np.isfinite(b) & ~zero_b
    pos_a, pos_b = ~np.signbit(a), ~np.signbit(b)
    nan = (nan_a.any(axis=1)[:, None] | nan_b.any(axis=0)[None, :]
           | (_mm(inf_a.astype(f), zero_b.astype(f)) > 0) | (_mm(zero_a.astype(f), inf_b.astype(f)) > 0)
           | np.isnan(c))
    nzb = fin_nz_b | inf_b

    def cnt(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return _mm(x.astype(f), y.astype(f))

    pinf = (cnt(inf_a & pos_a, nzb & pos_b) + cnt(inf_a & ~pos_a, nzb & ~pos_b)
            + cnt(fin_nz_a & pos_a, inf_b & pos_b) + cnt(fin_nz_a & ~pos_a, inf_b & ~pos_b)) > 0
    ninf = (cnt(inf_a & pos_a, nzb & ~pos_b) + cnt(inf_a & ~pos_a, nzb & pos_b)
            + cnt(fin_nz_a & pos_a, inf_b & ~pos_b) + cnt(fin_nz_a & ~pos_a, inf_b & pos_b)) > 0
    pinf |= np.isposinf(c)
    ninf |= np.isneginf(c)
    nan |= pinf & ninf
    mask = nan | pinf | ninf
    val = np.where(nan, np.nan, np.where(pinf, np.inf, -np.inf))
    return mask, val


def _split_scale(s: np.ndarray, w: int) -> tuple[np.ndarray, np.ndarray]:
    """s = r * 2^(q*w) with r in [1, 2^w) (q = 0, r = 0 for a zero scale)."""
    nz = s != 0
    q = np.floor_divide(_floor_log2(np.where(nz, s, 1.0)), w)
    q = np.where(nz, q, 0)
    return q, np.where(nz, np.ldexp(s, (-q * w).astype(np.int32)), 0.0)


def _exact_scaled(av: np.ndarray, bv: np.ndarray, sa: np.ndarray, sb: np.ndarray, vs: int, cc: np.ndarray,
                  out: str, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Core: finite element values, finite scales (M,SFK)/(SFK,N), vector size ``vs``.

    Per scale block j the scale splits into r * 2^(q*W): r joins the elements (still exact:
    few bits), q*W is a whole-limb shift per row/column, so the window matmuls stay small
    and their number does not grow with the spread of the scales."""
    m, k = av.shape
    n = bv.shape[1]
    pa = max(max_significant_bits(av), 1) + max(max_significant_bits(sa), 1)
    pb = max(max_significant_bits(bv), 1) + max(max_significant_bits(sb), 1)
    if pa + pb > 50:
        raise ValueError(f"operands too wide for exact products ({pa} + {pb} bits)")
    w = 16
    while w > 1 and 2 * w + pa + pb - 2 > 52:
        w -= 1
    kc = max(1, min(vs, 1 << (53 - (2 * w + pa + pb - 2))))
    off = 2 - pa - pb
    acc = _Limbs((m, n), w, off)
    qa, ra = _split_scale(sa, w)
    qb, rb = _split_scale(sb, w)
    for j in range(k // vs):
        shift = qa[:, j][:, None] + qb[j, :][None, :]
        for k0 in range(j * vs, (j + 1) * vs, kc):
            ak = av[:, k0:k0 + kc] * ra[:, j][:, None]
            bk = bv[k0:k0 + kc, :] * rb[j, :][None, :]
            ia, ib = _window_index(ak, w), _window_index(bk, w)
            wa = [int(i) for i in np.unique(ia[ak != 0])]
            wb = [int(i) for i in np.unique(ib[bk != 0])]
            if not wa or not wb:
                continue
            bparts = {i: np.where(ib == i, bk, 0.0) for i in wb}
            by_key: dict[int, np.ndarray] = {}
            for i in wa:
                ap = np.where(ia == i, ak, 0.0)
                for i2 in wb:
                    iv = _units(_mm(ap, bparts[i2]), i + i2, w, off)
                    by_key[i + i2] = by_key[i + i2] + iv if (i + i2) in by_key else iv
            for key, iv in by_key.items():
                acc.add_int(shift + key, iv)
    acc.add_terms(cc)
    return acc.round(out, mode)


def exact_gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray | float | None = None, *, out: str = "fp32",
               mode: str = "rne", scale_a: np.ndarray | None = None, scale_b: np.ndarray | None = None) -> np.ndarray:
    """Correctly rounded ``(a * scale_a) @ (b * scale_b) + c``; float64 result exact in ``out``.

    ``a`` (M,K), ``b`` (K,N): exact, narrow float64 element values (every MMA input type);
    ``scale_a`` (M,SF_K), ``scale_b`` (SF_K,N): optional block scales (vector size K/SF_K);
    ``c`` (M,N): fp32 (or fp16) values. Non-finite values follow IEEE (see module doc).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"shapes {a.shape} @ {b.shape} do not multiply")
    m, k = a.shape
    n = b.shape[1]
    sa = np.ones((m, 1)) if scale_a is None else np.asarray(scale_a, dtype=np.float64)
    sb = np.ones((1, n)) if scale_b is None else np.asarray(scale_b, dtype=np.float64)
    sfk = sa.shape[1]
    if sa.shape[0] != m or sb.shape != (sfk, n) or k % sfk:
        raise ValueError(f"scales {sa.shape}/{sb.shape} do not fit A {a.shape} and B {b.shape}")
    vs = k // sfk
    cc = np.zeros((m, n)) if c is None else np.broadcast_to(np.asarray(c, dtype=np.float64), (m, n))
    with np.errstate(invalid="ignore", over="ignore"):
        a_s = a * np.repeat(sa, vs, axis=1)
        b_s = b * np.repeat(sb, vs, axis=0)
    special = None
    if not (np.isfinite(a_s).all() and np.isfinite(b_s).all() and np.isfinite(cc).all()):
        special = _special_result(a_s, b_s, cc)
        a = np.where(np.isfinite(a_s), a, 0.0)
        b = np.where(np.isfinite(b_s), b, 0.0)
        sa = np.where(np.isfinite(sa), sa, 0.0)
        sb = np.where(np.isfinite(sb), sb, 0.0)
        cc = np.where(np.isfinite(cc), cc, 0.0)
    fast = _exact_fast(a, b, sa, sb, vs, cc, out, mode)
    d, zero = fast if fast is not None else _exact_scaled(a, b, sa, sb, vs, cc, out, mode)
    if zero.any():  # IEEE: an exact zero is -0 only if every product and c are -0
        fa, fb = np.where(np.isfinite(a_s), a_s, 1.0), np.where(np.isfinite(b_s), b_s, 1.0)
        d = np.where(zero & _neg_zero_where(fa, fb, cc, zero), -0.0, d)
    if special is not None:
        d = np.where(special[0], special[1], d)
    return d


def _all_products_neg_zero(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """True where every product a[m,k]*b[k,n] is -0."""
    f = np.float64
    nonzero_prod = _mm((a != 0).astype(f), (b != 0).astype(f)) > 0
    sa, sb = np.signbit(a).astype(f), np.signbit(b).astype(f)
    pos_zero = (_mm(1 - sa, 1 - sb) + _mm(sa, sb)) > 0
    return ~nonzero_prod & ~pos_zero


def _neg_zero_where(a: np.ndarray, b: np.ndarray, c: np.ndarray, where: np.ndarray) -> np.ndarray:
    """(M, N) mask: True at ``where`` cells whose every product a[m,k]*b[k,n] and c are -0.

    Only the ``where`` cells are examined (the exact zeros: usually few), elementwise in
    chunks, so the cost is O(zeros * K) instead of three M x K x N products."""
    out = np.zeros(where.shape, dtype=bool)
    im, jn = np.nonzero(where & (c == 0) & np.signbit(c))
    k = a.shape[1]
    step = max(1, (1 << 20) // max(k, 1))
    for s in range(0, im.size, step):
        r, q = im[s:s + step], jn[s:s + step]
        p = a[r] * b[:, q].T  # (cells, K): the products, with IEEE signed zeros
        out[r, q] = np.all((p == 0) & np.signbit(p), axis=1)
    return out


def _exact_fast(a: np.ndarray, b: np.ndarray, sa: np.ndarray, sb: np.ndarray, vs: int, cc: np.ndarray,
                out: str, mode: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(rounded D, exact-zero mask) from ONE float64 matmul when that is provably exact, else None.

    Sufficient condition, checked on the data in O(MK + KN + MN): (1) every scaled element
    ``a*sa``, ``b*sb`` is exact (significands of at most 53 bits in total, no float64
    underflow or overflow); (2) with u the smallest lowest-set-bit exponent of any product
    (min over A plus min over B) and of C, every product and C is an integer multiple of 2^u,
    so every partial sum in ANY order is too; (3) an upper bound of sum |products| + |C|
    is below 2^(u+52) (one spare bit covers the rounding of the bound itself), so every
    partial sum is an integer below 2^53 units: a float64. The float64 result is then the
    exact sum and one ``round_float`` is the correctly rounded D. Exact-by-construction
    data (``exact_recipe``) always qualifies; wide-spread scales fall back to the limbs.
    """
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        a_s = a * np.repeat(sa, vs, axis=1)
        b_s = b * np.repeat(sb, vs, axis=0)
    for x, s, xs in ((a, sa, a_s), (b, sb, b_s)):
        if not np.isfinite(xs).all():
            return None
        if max_significant_bits(x) + max_significant_bits(s) > 53:
            return None
        ax, asx = np.abs(x[x != 0]), np.abs(s[s != 0])
        if ax.size and asx.size and int(_floor_log2(ax.min())) + int(_floor_log2(asx.min())) < -1021:
            return None  # a scaled element may be a float64 subnormal (rounded)
    la, lb, lc = _lowbit_exp(a_s).min(initial=1 << 20), _lowbit_exp(b_s).min(initial=1 << 20), \
        _lowbit_exp(cc).min(initial=1 << 20)
    u = min(la + lb, lc)
    if u >= 1 << 20:  # every product and C are zero
        return np.zeros(cc.shape), np.ones(cc.shape, dtype=bool)
    if u < -1074:
        return None
    abs_a, abs_b = np.abs(a_s), np.abs(b_s)
    bound = float(abs_a.sum(axis=1).max(initial=0.0)) * float(abs_b.max(initial=0.0)) + float(
        np.abs(cc).max(initial=0.0))
    limit = np.ldexp(1.0, min(u + 52, 1023))
    if not bound < limit:  # coarse bound too big: try the per-cell one
        if not (matmul64(abs_a, abs_b) + np.abs(cc)).max(initial=0.0) < limit:
            return None
    exact = matmul64(a_s, b_s) + cc
    zero = exact == 0
    return np.where(zero, 0.0, F.round_float(exact, out, mode)), zero


def block_scaled_gemm(
    a: np.ndarray, b: np.ndarray, scale_a: np.ndarray, scale_b: np.ndarray,
    c: np.ndarray | float | None = None, *,
    kind: str, a_fmt: str, b_fmt: str, scale_fmt: str,
    mode: str = "rne", scale_reading: str | None = None,
) -> np.ndarray:
    """Exact D = (A * scale_A)(B * scale_B) + C, rounded once to fp32 in ``mode``.

    ``a`` (M,K) and ``b`` (K,N) are LOGICAL matrices: integer codes of ``a_fmt``/``b_fmt``
    or their float64 values. ``scale_a`` (M, SF_K) and ``scale_b`` (SF_K, N) are codes of
    ``scale_fmt`` or values; the vector size is K / SF_K (32 or 16; K=96 gives 3 or 6
    scale blocks). ``c`` (M,N) fp32 values (or None for 0). The combination is checked
    against Tables 36/55. ``scale_reading`` picks an OPEN_QUESTIONS reading of the scale
    codes (e.g. ``ue4m3``'s ``ignored``).
    """
    av, bv = _values(a, a_fmt), _values(b, b_fmt)
    if av.ndim != 2 or bv.ndim != 2 or av.shape[1] != bv.shape[0]:
        raise ValueError(f"A {av.shape} and B {bv.shape} are not M x K and K x N")
    sa_raw, sb_raw = np.asarray(scale_a), np.asarray(scale_b)
    if sa_raw.dtype.kind in "ui":
        sa = F.decode(scale_fmt, sa_raw, reading=scale_reading)
        sb = F.decode(scale_fmt, sb_raw, reading=scale_reading)
    else:
        sa, sb = sa_raw.astype(np.float64), sb_raw.astype(np.float64)
    m, k = av.shape
    n = bv.shape[1]
    if sa.ndim != 2 or sb.ndim != 2 or sa.shape[0] != m or sb.shape[1] != n or sa.shape[1] != sb.shape[0]:
        raise ValueError(f"scale_A {sa.shape} / scale_B {sb.shape} must be M x SF_K and SF_K x N "
                         f"for M={m}, N={n}")
    sfk = sa.shape[1]
    if k % sfk:
        raise ValueError(f"K={k} is not a multiple of SF_K={sfk}")
    vs = k // sfk
    check_scaled_combo(kind, a_fmt, b_fmt, scale_fmt, vs)
    return exact_gemm(av, bv, c, out="fp32", mode=mode, scale_a=sa, scale_b=sb)


def gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray | float | None = None, *, kind: str,
         a_fmt: str | None = None, b_fmt: str | None = None, out: str = "fp32", mode: str = "rne") -> np.ndarray:
    """Exact non-scaled D = A B + C for ``kind`` f16/bf16/tf32/f8f6f4, rounded once to ``out``."""
    if kind not in UNSCALED_KINDS:
        raise ValueError(f"unknown kind {kind!r}; known: {', '.join(UNSCALED_KINDS)} (i8: int_gemm)")
    a_fmt = a_fmt or UNSCALED_KINDS[kind][0]
    b_fmt = b_fmt or UNSCALED_KINDS[kind][0]
    for t in (a_fmt, b_fmt):
        if F.get(t).name not in UNSCALED_KINDS[kind]:
            raise ValueError(f"kind::{kind} takes {UNSCALED_KINDS[kind]}, not {t}")
    return exact_gemm(_values(a, a_fmt), _values(b, b_fmt), c, out=out, mode=mode)


def int_gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray | int | None = None, *, satfinite: bool = True) -> np.ndarray:
    """kind::i8: D = A B + C in exact integers, then saturated to s32 (``.satfinite``) or
    wrapped modulo 2^32 (no ``.satfinite``). ``a``/``b`` are int8 or uint8 values."""
    a64 = np.asarray(a).astype(np.int64)
    b64 = np.asarray(b).astype(np.int64)
    if a64.min(initial=0) < -128 or a64.max(initial=0) > 255 or b64.min(initial=0) < -128 or b64.max(initial=0) > 255:
        raise ValueError("i8 operands must be int8 or uint8 values")
    d = a64 @ b64
    if c is not None:
        d = d + np.asarray(c).astype(np.int64)
    if satfinite:
        return np.clip(d, -(2**31), 2**31 - 1).astype(np.int32)
    return ((d + 2**31) % 2**32 - 2**31).astype(np.int32)


# --------------------------------------------------------------------------- exactness and data recipes


def _lowbit_exp(x: np.ndarray) -> np.ndarray:
    """Exponent of the lowest set bit of each non-zero finite float64 (a large sentinel for 0)."""
    v = np.abs(np.asarray(x, dtype=np.float64))
    nz = (v != 0) & np.isfinite(v)
    m, e = np.frexp(np.where(nz, v, 1.0))
    mant = (m * 2.0**53).astype(np.int64)
    low = mant & -mant
    _, tz1 = np.frexp(low.astype(np.float64))
    return np.where(nz, e.astype(np.int64) - 53 + tz1.astype(np.int64) - 1, 1 << 20)


def is_exact_in_fp32(a: np.ndarray, b: np.ndarray, c: np.ndarray | float | None = None, *,
                     window_bits: int = 24, out: str = "fp32") -> np.ndarray:
    """True per (m,n) where EVERY partial sum of the products and c is exactly an ``out``
    value, so any accumulation order, block size, alignment truncation to ``window_bits``
    bits below the largest term, or rounding mode gives the exact answer.

    Sufficient condition checked: all terms are integer multiples of one power of two u
    (the smallest lowest-set-bit), sum |terms| < 2^window_bits * u, u >= the format's
    smallest subnormal and the sum below its overflow. ``a``/``b`` are float64 values with
    scales already applied (``A * scale_A``). Use ``window_bits=14`` to also cover
    accumulators that keep only 13 fraction bits (Hopper wgmma fp8, Ada QMMA).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    m, n = a.shape[0], b.shape[1]
    f = F.get(out)
    cc = np.zeros((m, n)) if c is None else np.broadcast_to(np.asarray(c, dtype=np.float64), (m, n))
    finite = (np.isfinite(a).all(axis=1)[:, None] & np.isfinite(b).all(axis=0)[None, :] & np.isfinite(cc))
    la, lb = _lowbit_exp(np.where(np.isfinite(a), a, 0)), _lowbit_exp(np.where(np.isfinite(b), b, 0))
    u = np.full((m, n), 1 << 21, dtype=np.int64)
    step = max(1, (1 << 22) // max(1, a.shape[1] * n))
    for r0 in range(0, m, step):
        u[r0:r0 + step] = (la[r0:r0 + step, :, None] + lb[None, :, :]).min(axis=1)
    u = np.minimum(u, _lowbit_exp(np.where(np.isfinite(cc), cc, 0)))
    total = _mm(np.abs(np.where(np.isfinite(a), a, 0)), np.abs(np.where(np.isfinite(b), b, 0))) + np.abs(
        np.where(np.isfinite(cc), cc, 0))
    zero = total == 0
    u_min = int(np.log2(f.min_subnormal))
    uu = np.clip(u, -2000, 2000)
    ok = (total < np.ldexp(1.0, (uu + window_bits).astype(np.int32))) & (uu >= u_min) & (total <= f.max_finite)
    return finite & (ok | zero)


def all_exact_in_fp32(a: np.ndarray, b: np.ndarray, c: np.ndarray | float | None = None, *,
                      window_bits: int = 24, out: str = "fp32") -> bool:
    """True when :func:`is_exact_in_fp32` holds for every cell: the whole-matrix bound first
    (O(MK + KN + MN), what exact-by-construction data pass), the per-cell search only if it fails."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    cc = np.zeros((a.shape[0], b.shape[1])) if c is None else np.broadcast_to(
        np.asarray(c, dtype=np.float64), (a.shape[0], b.shape[1]))
    return bool(_exact_by_global_bound(a, b, cc, window_bits, out)
                or is_exact_in_fp32(a, b, cc, window_bits=window_bits, out=out).all())


def _exact_by_global_bound(a: np.ndarray, b: np.ndarray, c: np.ndarray, window_bits: int,
                           out: str = "fp32") -> bool:
    """Cheap sufficient form of :func:`is_exact_in_fp32` for the whole matrix at once.

    One unit u for every cell (min lowest-bit exponent over A plus over B, and C) and one
    magnitude bound (max row sum of |A| times max |B|, plus max |C|): if that bound is below
    2^(u + window_bits), every cell's own condition holds (its unit is >= u, its sum <= the
    bound). O(MK + KN + MN) instead of the per-cell O(MKN) unit search."""
    f = F.get(out)
    if not (np.isfinite(a).all() and np.isfinite(b).all() and np.isfinite(c).all()):
        return False
    u = min(int(_lowbit_exp(a).min(initial=1 << 20)) + int(_lowbit_exp(b).min(initial=1 << 20)),
            int(_lowbit_exp(c).min(initial=1 << 20)))
    if u >= 1 << 20:
        return True  # all zero
    bound = float(np.abs(a).sum(axis=1).max(initial=0.0)) * float(np.abs(b).max(initial=0.0)) + float(
        np.abs(c).max(initial=0.0))
    return (u >= int(np.log2(f.min_subnormal)) and bound <= f.max_finite
            and bound < np.ldexp(1.0, min(u + window_bits, 1023)))


@dataclass
class GemmData:
    """Inputs of one GEMM case and its exact answer."""

    a: np.ndarray
    """(M, K) codes of ``a_fmt``."""
    b: np.ndarray
    scale_a: np.ndarray | None
    scale_b: np.ndarray | None
    c: np.ndarray
    """(M, N) float64 fp32 values."""
    d: np.ndarray
    """(M, N) float64: the exact D (every partial sum representable)."""
    a_fmt: str
    b_fmt: str
    scale_fmt: str | None
    vs: int | None


@cache
def _codes_with(fmt: str, lo: int, hi: int, sig_bits: int) -> np.ndarray:
    """Finite codes whose |value| has floor(log2) in [lo, hi] and at most ``sig_bits`` bits, plus 0."""
    codes = F.finite_codes(fmt)
    v = F.decode(fmt, codes)
    nz = v != 0
    e = _floor_log2(np.where(nz, np.abs(v), 1.0))
    bits = np.where(nz, e - _lowbit_exp(v) + 1, 0)
    keep = (~nz & ~np.signbit(v)) | (nz & (e >= lo) & (e <= hi) & (bits <= sig_bits))
    out = codes[keep]
    out.setflags(write=False)  # cached: shared by every caller
    return out


@cache
def _exp_range(fmt: str) -> tuple[int, int]:
    f = F.get(fmt)
    t = F.decode_table(f)
    t = np.abs(t[np.isfinite(t) & (t != 0)])
    return int(_floor_log2(t.min())), int(_floor_log2(t.max()))


def exact_recipe(kind: str, m: int, n: int, k: int, *, a_fmt: str, b_fmt: str, scale_fmt: str | None = None,
                 vs: int | None = None, seed: int = 0, window_bits: int = 24, zero_c: bool = False) -> GemmData:
    """Random data whose D is exact by construction (see :func:`is_exact_in_fp32`).

    Exponent ranges of A, B and the scales are split from a bit budget
    (``window_bits - log2 K - 1 - significand bits``) so the products stay inside one
    window; the scale bases are random per matrix so the answer still depends on picking
    the right scale for every block. Works for block-scaled kinds (with ``scale_fmt``/``vs``)
    and non-scaled ones (``scale_fmt=None``).
    """
    rng = np.random.default_rng(seed)
    scaled = scale_fmt is not None
    if scaled:
        check_scaled_combo(kind, a_fmt, b_fmt, scale_fmt, vs or 0)
        if k % vs:
            raise ValueError(f"K={k} is not a multiple of VS={vs}")
    logk = int(np.ceil(np.log2(max(k, 2))))
    ops = [a_fmt, b_fmt] + ([scale_fmt, scale_fmt] if scaled else [])
    ranges = [_exp_range(t) for t in ops]
    sig = [F.get(t).precision for t in ops]
    budget = window_bits - logk - 1
    # first trim significands if they alone overflow the budget, then share exponent range
    while sum(sig) > budget and max(sig) > 1:
        sig[int(np.argmax(sig))] -= 1
    budget -= sum(sig)
    span = [0] * len(ops)
    full = [hi - lo for lo, hi in ranges]
    while budget > 0 and any(span[i] < full[i] for i in range(len(ops))):
        for i in range(len(ops)):
            if budget > 0 and span[i] < full[i]:
                span[i] += 1
                budget -= 1
    lows = []
    for i, (lo, hi) in enumerate(ranges):
        if scaled and i >= 2:
            # scales: a random base near 1 so products stay in fp32 range
            lo_s = max(lo, -12)
            base = int(rng.integers(lo_s, max(min(hi, 12) - span[i], lo_s) + 1))
        else:
            base = int(rng.integers(lo, hi - span[i] + 1))
        lows.append(base)
    pools = [_codes_with(t, lows[i], lows[i] + span[i], sig[i]) for i, t in enumerate(ops)]
    a = rng.choice(pools[0], size=(m, k)).astype(F.get(a_fmt).code_dtype)
    b = rng.choice(pools[1], size=(k, n)).astype(F.get(b_fmt).code_dtype)
    sa = sb = None
    av, bv = F.decode(a_fmt, a), F.decode(b_fmt, b)
    if scaled:
        sa = rng.choice(pools[2][F.decode(scale_fmt, pools[2]) != 0], size=(m, k // vs)).astype(np.uint8)
        sb = rng.choice(pools[3][F.decode(scale_fmt, pools[3]) != 0], size=(k // vs, n)).astype(np.uint8)
        av = av * np.repeat(F.decode(scale_fmt, sa), vs, axis=1)
        bv = bv * np.repeat(F.decode(scale_fmt, sb), vs, axis=0)
    # c: a multiple of the smallest possible product unit, no larger than the product bound
    u_exp = int(_lowbit_exp(av[av != 0]).min() + _lowbit_exp(bv[bv != 0]).min()) if (av != 0).any() and (
        bv != 0).any() else 0
    bound = _mm(np.abs(av), np.abs(bv))
    if zero_c:
        c = np.zeros((m, n))
    else:
        cmax = np.maximum(np.floor(np.ldexp(bound, -u_exp)), 1)
        ci = np.floor(rng.random((m, n)) * cmax) * rng.choice([-1.0, 1.0], size=(m, n))
        c = np.ldexp(ci, u_exp)
        c = np.where(np.abs(c) > F.get("f32").max_finite, 0.0, c)
    if not (_exact_by_global_bound(av, bv, c, window_bits)
            or is_exact_in_fp32(av, bv, c, window_bits=window_bits).all()):
        raise AssertionError("internal: exact_recipe produced data that is not exact by construction")
    d = exact_gemm(av, bv, c)
    return GemmData(a, b, sa, sb, c, d, a_fmt, b_fmt, scale_fmt, vs)
