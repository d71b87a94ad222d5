"""Probe vectors for block-scaled MMA: exact products placed at chosen k, spread over scale blocks.

A block-scaled inner product is ``d = sum_k a_k b_k SA_{k//VS} SB_{k//VS} + c``. A probe is
written in terms of the *products* it wants ("2**-40 at k = 33") and C; this module finds, for
each scale block, a power-of-two scale and element pairs that give those products exactly
(numeric-models.md §7.4: "use the scale factor to move a whole K-block; E8M0 is an exact power
of two, so scale_a*scale_b*a*b stays exact"). Where a probe needs a particular scale *code*
(UE8M0 0xFF, UE4M3 with the sign bit) it passes the codes directly: the vector carries codes,
not values, because what a code means is one of the hypotheses being tested.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache

import ml_dtypes
import numpy as np

ML_DTYPES: dict[str, type] = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
                              "e2m1": ml_dtypes.float4_e2m1fn}
INPUT_EMIN: dict[str, int] = {"e4m3": -6, "e5m2": -14, "e2m1": 0}
"""Smallest normal exponent of each element format (a subnormal counts at this exponent)."""
UE8M0_ONE = 127
UE4M3_ONE = 0x38


@dataclass(frozen=True)
class BSForm:
    """One block-scaled instruction form, as far as the numerics are concerned."""

    kind: str
    scale_vec: str
    stype: str
    etype: str
    k: int

    @property
    def nsf(self) -> int:
        return {"1X": 1, "2X": 2, "4X": 4}[self.scale_vec]

    @property
    def vs(self) -> int:
        """Elements of K per scale factor."""
        return self.k // self.nsf

    @property
    def tag(self) -> str:
        return f"{self.kind}.{self.scale_vec}" + (f".{self.stype}" if self.stype != "ue8m0" else "")

    def scale_exponent_range(self) -> tuple[int, int]:
        """Exponents of the power-of-two scales one SF can hold (UE4M3 subnormals included)."""
        return (-127, 127) if self.stype == "ue8m0" else (-9, 8)

    def one_code(self) -> int:
        return UE8M0_ONE if self.stype == "ue8m0" else UE4M3_ONE


FORMS: dict[str, BSForm] = {
    f.tag: f for f in (
        BSForm("mxf8f6f4", "1X", "ue8m0", "e4m3", 32),
        BSForm("mxf4", "2X", "ue8m0", "e2m1", 64),
        BSForm("mxf4nvf4", "2X", "ue8m0", "e2m1", 64),
        BSForm("mxf4nvf4", "4X", "ue8m0", "e2m1", 64),
        BSForm("mxf4nvf4", "4X", "ue4m3", "e2m1", 64),
    )
}
"""The forms the probes cover (Table 36 rows 1-4 / Tables 54-55: 1X, 2X, 4X x UE8M0, 4X x UE4M3)."""


def scale_code(stype: str, exponent: int) -> int:
    """Code of the power-of-two scale 2**exponent."""
    if stype == "ue8m0":
        if not -127 <= exponent <= 127:
            raise ValueError(f"2**{exponent} is not a finite UE8M0 value")
        return exponent + 127
    code = int(np.asarray(2.0**exponent).astype(ml_dtypes.float8_e4m3fn).view(np.uint8))
    if float(np.uint8(code).view(ml_dtypes.float8_e4m3fn)) != 2.0**exponent:
        raise ValueError(f"2**{exponent} is not a UE4M3 value")
    return code


def element_codes(values: np.ndarray, etype: str) -> np.ndarray:
    """Bit patterns (uint8, low bits) of exact element values; -0 and NaN (E4M3 0x7F) kept."""
    v = np.asarray(values, dtype=np.float64)
    codes = v.astype(ML_DTYPES[etype]).view(np.uint8)
    back = codes.view(ML_DTYPES[etype]).astype(np.float64)
    ok = (back == v) | (np.isnan(v) & np.isnan(back))
    if not ok.all():
        raise ValueError(f"values not exact in {etype}: {v[~ok][:4]}")
    if etype == "e4m3":
        codes = np.where(np.isnan(v), np.uint8(0x7F) | (codes & np.uint8(0x80)), codes)
    return codes.astype(np.uint8)


@cache
def _product_table(etype: str) -> dict[float, tuple[float, float]]:
    """|product| -> (a, b), both positive finite non-zero, the most balanced pair (normals first)."""
    codes = np.arange(1 << (8 if etype != "e2m1" else 4), dtype=np.uint8)
    vals = codes.view(ML_DTYPES[etype]).astype(np.float64)
    vals = np.unique(vals[np.isfinite(vals) & (vals > 0)])
    emin = INPUT_EMIN[etype]
    out: dict[float, tuple[float, float, float]] = {}
    for x in vals:
        for y in vals:
            p = float(x * y)
            sub = (x < 2.0**emin) + (y < 2.0**emin)
            cost = sub * 100 + abs(math.log2(x) - math.log2(y))
            if p not in out or cost < out[p][2]:
                out[p] = (float(x), float(y), cost)
    return {p: (x, y) for p, (x, y, _) in out.items()}


def factor(p: float, etype: str) -> tuple[float, float] | None:
    """Two elements of ``etype`` whose product is exactly ``p`` (None if there are none)."""
    if p == 0:
        return (float(np.copysign(0.0, p)), 1.0)
    hit = _product_table(etype).get(abs(p))
    if hit is None:
        return None
    return (math.copysign(hit[0], p), hit[1])


@dataclass(frozen=True)
class BSVector:
    """One block-scaled inner product: element values, scale codes per block, C."""

    a: tuple[float, ...]
    b: tuple[float, ...]
    sa: tuple[int, ...]
    sb: tuple[int, ...]
    c: float
    tag: str = ""
    meta: Mapping[str, object] = field(default_factory=dict)
    enable_d: bool = True
    """tcgen05 only: False issues the MMA with enable-input-d = false (C preloaded into D)."""


def _split(form: BSForm, s: int) -> tuple[int, int] | None:
    lo, hi = form.scale_exponent_range()
    xa = -((-s) // 2)
    xb = s - xa
    if lo <= xa <= hi and lo <= xb <= hi:
        return xa, xb
    return None


_OFFSETS: tuple[int, ...] = tuple(sorted(range(-40, 40), key=lambda d: (abs(d + 2), d)))
"""Scale exponents to try, relative to the top product's binade: nearest to ``top - 2`` first
(ties: the lower one); the same order for every ``top``, so sorted once."""


def _block_scale(form: BSForm, prods: Sequence[float], want: int | None) -> tuple[int, list[tuple[float, float]]]:
    """A scale exponent s for one block and the element pairs of ``prods / 2**s``: the first of
    0, then top - 2, top - 3, top - 1, top - 4, ... (``_OFFSETS``) that every product factors under."""
    nz = [abs(p) for p in prods if p != 0]
    if want is not None:
        order: Iterable[int] = (want,)
    elif not nz:
        order = (0,)
    else:
        top = math.floor(math.log2(max(nz)))
        order = itertools.chain((0,), (top + d for d in _OFFSETS))  # lazily: most blocks stop early
    for s in order:
        if _split(form, s) is None:
            continue
        pairs = []
        for p in prods:  # stop at the first product that does not factor
            pair = factor(math.ldexp(p, -s), form.etype)
            if pair is None:
                break
            pairs.append(pair)
        else:
            return s, pairs
    raise ValueError(f"{form.tag}: products {prods} cannot share one scale block")


def bsvec(form: BSForm, products: Mapping[int, float], c: float = 0.0, tag: str = "", *,
          scale_exp: Mapping[int, int] | None = None, sa_codes: Mapping[int, int] | None = None,
          sb_codes: Mapping[int, int] | None = None, **meta: object) -> BSVector:
    """A vector with exact products at their k positions (others 0 x 0) and C.

    Each scale block gets a power-of-two scale (``scale_exp[j]`` if given, else one that makes
    its products factorable), split between SF_A and SF_B. ``sa_codes``/``sb_codes`` override
    the codes of single blocks afterwards (special codes); the products of such a block are
    then stated relative to the scale the block would have had.
    """
    a = np.zeros(form.k)
    b = np.zeros(form.k)
    sa = [form.one_code()] * form.nsf
    sb = [form.one_code()] * form.nsf
    for j in range(form.nsf):
        ks = [k for k in products if k // form.vs == j]
        want = None if scale_exp is None else scale_exp.get(j)
        if not ks and want is None:
            continue
        s, pairs = _block_scale(form, [products[k] for k in ks], want)
        xa, xb = _split(form, s)  # type: ignore[misc]
        sa[j], sb[j] = scale_code(form.stype, xa), scale_code(form.stype, xb)
        for k, (x, y) in zip(ks, pairs, strict=True):
            a[k], b[k] = x, y
    for j, code in (sa_codes or {}).items():
        sa[j] = code
    for j, code in (sb_codes or {}).items():
        sb[j] = code
    if not (np.isnan(c) or np.float32(c) == c):
        raise ValueError(f"c = {c!r} is not an fp32 value")
    return BSVector(tuple(a), tuple(b), tuple(sa), tuple(sb), float(c), tag, dict(meta))


def raw_bs(form: BSForm, a: Sequence[float], b: Sequence[float], sa: Sequence[int], sb: Sequence[int], c: float,
           tag: str = "", **meta: object) -> BSVector:
    """A vector from explicit element values and scale codes (NaN elements, signed zeros)."""
    av, bv = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if av.shape != (form.k,) or bv.shape != (form.k,) or len(sa) != form.nsf or len(sb) != form.nsf:
        raise ValueError(f"{tag}: shapes do not fit {form.tag}")
    element_codes(av, form.etype)
    element_codes(bv, form.etype)
    return BSVector(tuple(av), tuple(bv), tuple(int(x) for x in sa), tuple(int(x) for x in sb), float(c), tag,
                    dict(meta))


def negate_bs(v: BSVector) -> BSVector:
    """Every product and C negated (separates RZ/RNE from RU/RD)."""
    return BSVector(tuple(-x for x in v.a), v.b, v.sa, v.sb, -v.c, v.tag + "-neg", dict(v.meta), v.enable_d)


@dataclass(frozen=True)
class BSArrays:
    """A batch of vectors as arrays: a, b [n, K] values; sa, sb [n, nsf] codes; c [n]."""

    a: np.ndarray
    b: np.ndarray
    sa: np.ndarray
    sb: np.ndarray
    c: np.ndarray
    enable_d: np.ndarray | bool = True

    def __len__(self) -> int:
        return len(self.c)


def stack_bs(form: BSForm, vectors: Sequence[BSVector]) -> BSArrays:
    n = len(vectors)
    return BSArrays(
        a=np.array([v.a for v in vectors], dtype=np.float64).reshape(n, form.k),
        b=np.array([v.b for v in vectors], dtype=np.float64).reshape(n, form.k),
        sa=np.array([v.sa for v in vectors], dtype=np.int64).reshape(n, form.nsf),
        sb=np.array([v.sb for v in vectors], dtype=np.int64).reshape(n, form.nsf),
        c=np.array([v.c for v in vectors], dtype=np.float64),
        enable_d=np.array([v.enable_d for v in vectors], dtype=bool),
    )
