"""Building probe vectors out of exact E4M3 products.

A probe is written in terms of *products* at chosen k positions ("2**16 at k0, 2**-9 at
k1") plus C; the hardware needs the two E4M3 factors of each product. :func:`factor`
splits a product into E4M3 normals (or an exact subnormal where asked), so probes state
what they mean and this module guarantees every element is representable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

K = 32
E4M3 = ml_dtypes.float8_e4m3fn
E4M3_EMIN, E4M3_EMAX = -6, 8
E4M3_NAN = float("nan")
_E4M3_FINITE: frozenset[float] = frozenset(
    float(x) for x in np.arange(256, dtype=np.uint8).view(E4M3).astype(np.float64) if np.isfinite(x))
"""Every finite E4M3 value: ``x in _E4M3_FINITE`` is :func:`is_e4m3` of one finite float, without numpy."""


def is_e4m3(x: np.ndarray) -> np.ndarray:
    """True where ``x`` is exactly an E4M3 value (NaN counts: 0x7F exists)."""
    x = np.asarray(x, dtype=np.float64)
    back = np.asarray(x.astype(E4M3), dtype=np.float64)
    return (back == x) | (np.isnan(x) & np.isnan(back)) | ((x == 0) & (back == 0))


def factor(p: float) -> tuple[float, float]:
    """Two E4M3 normals whose product is exactly ``p`` (significand of ``p`` must be E4M3's).

    The significand goes to ``a``; the power of two is split as evenly as the range allows.
    """
    if p == 0:
        return (float(np.copysign(0.0, p)), 1.0)
    m, e = np.frexp(abs(p))
    sig, ex = float(m) * 2.0, int(e) - 1  # p = sig * 2**ex, sig in [1, 2)
    if sig * 8 != int(sig * 8):
        raise ValueError(f"product {p!r}: significand {sig} needs more than 3 fraction bits")
    mid = -((-ex) // 2)
    for ea in sorted(range(E4M3_EMIN, E4M3_EMAX + 1), key=lambda e: abs(e - mid)):
        eb = ex - ea
        if E4M3_EMIN <= eb <= E4M3_EMAX and sig * 2.0**ea in _E4M3_FINITE:
            break
    else:
        raise ValueError(f"product {p!r} is outside the range of two E4M3 normals")
    a = float(np.copysign(sig * 2.0**ea, p))
    b = 2.0**eb
    assert a * b == p and a in _E4M3_FINITE and b in _E4M3_FINITE
    return a, b


@dataclass(frozen=True)
class Vector:
    """One inner product: ``a``/``b`` of length K (E4M3 values) and the addend ``c`` (fp32)."""

    a: tuple[float, ...]
    b: tuple[float, ...]
    c: float
    tag: str = ""
    meta: Mapping[str, object] = field(default_factory=dict)


def vec(products: Mapping[int, float], c: float, tag: str = "", **meta: object) -> Vector:
    """A vector with the given exact products at their k positions (others 0 * 0)."""
    a = np.zeros(K)
    b = np.zeros(K)
    for k, p in products.items():
        a[k], b[k] = factor(p)
    if np.float32(c) != c and not np.isnan(c):
        raise ValueError(f"c = {c!r} is not an fp32 value")
    return Vector(tuple(a), tuple(b), float(c), tag, dict(meta))


def raw(a: Sequence[float], b: Sequence[float], c: float, tag: str = "", **meta: object) -> Vector:
    """A vector from explicit elements (for subnormals, NaN, signed zeros)."""
    av, bv = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if av.shape != (K,) or bv.shape != (K,) or not (is_e4m3(av).all() and is_e4m3(bv).all()):
        raise ValueError(f"{tag}: a and b must be {K} E4M3 values")
    return Vector(tuple(av), tuple(bv), float(c), tag, dict(meta))


def negate(v: Vector) -> Vector:
    """The same vector with every product and C negated (separates RZ/RNE from RU/RD)."""
    return Vector(tuple(-x for x in v.a), v.b, -v.c, v.tag + "-neg", dict(v.meta))


def stack(vectors: Sequence[Vector]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Arrays a [n, K], b [n, K], c [n] (float64) of a list of vectors."""
    a = np.array([v.a for v in vectors], dtype=np.float64).reshape(len(vectors), K)
    b = np.array([v.b for v in vectors], dtype=np.float64).reshape(len(vectors), K)
    c = np.array([v.c for v in vectors], dtype=np.float64)
    return a, b, c


def e4m3_codes(x: np.ndarray) -> np.ndarray:
    """E4M3 bit patterns (uint8) of exact E4M3 values; NaN becomes 0x7F."""
    return np.asarray(np.asarray(x, dtype=np.float64).astype(E4M3)).view(np.uint8)
