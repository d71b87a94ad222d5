"""The hypothesis space of block-scaled MMA numerics: what the block-scale probes decide between.

Extends the block-FMA model of numeric-models.md §1.1/§2 (global alignment to the largest term,
truncation to ``23 + neab`` fraction bits, exact integer sum, one rounding per FMA block, blocks
chained through the rounded accumulator) by what block scaling leaves open (§7.4):

* ``anchor``: ``across`` - an FMA block that spans several scale blocks aligns every *scaled*
  product to one anchor (the scales only move products in the alignment: the reading of
  ``reference.numeric_model.dot(scale_a=...)``); ``per_scale_block`` - each scale block's
  products are aligned to that block's own largest term, and the truncated block sums are then
  combined exactly (the OCP "Dot per block, then DotGeneral" reading). When an FMA block lies
  inside one scale block the two coincide; the grid then only has ``per_scale_block``.
* ``anchor_floor``: the floor of the alignment anchor (min_exp_limit), visible only with
  products from scales near 2**-254;
* ``product_range``: ``exact`` (products beyond fp32 accumulate exactly, prd_limit = 0) or
  ``overflow`` (such a product is +-Inf);
* how the special scale codes decode: UE8M0 0xFF (NaN for the whole block, NaN only where a
  product is non-zero, or the power of two 2**128), UE8M0 0x00 (2**-127 or 0), the UE4M3
  sign bit (ignored or negating) and UE4M3 0x7F (NaN or 480).

Written apart from ``reference.numeric_model`` on purpose: recovery tests plant that module's
models and recover them through this one.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import ml_dtypes
import numpy as np

from suites.probes.blockfma import round_to_format
from suites.probes.blockscale_vectors import INPUT_EMIN, BSArrays, BSForm, BSVector

ANCHORS = ("across", "per_scale_block")
UE8M0_FF = ("nan", "nan_nonzero", "pow2")
UE8M0_00 = ("pow2", "zero")
UE4M3_SIGN = ("ignored", "negates", "nan")
UE4M3_7F = ("nan", "finite")
NEG_BIG = -(10**6)


@dataclass(frozen=True)
class BSParams:
    """One complete hypothesis about a block-scaled path (fit features first, then direct ones)."""

    fma: int = 32
    anchor: str = "per_scale_block"
    neab: int = 2
    block_rounding: str = "rz"
    c_placement: str = "aligned"
    out_frac_bits: int = 23
    anchor_floor: int | None = -133
    product_range: str = "exact"
    overflow: str = "inf"
    ue8m0_ff: str = "nan"
    ue8m0_00: str = "pow2"
    ue4m3_sign: str = "ignored"
    ue4m3_7f: str = "nan"
    zero_sign: str = "plus"
    disabled_d: str = "not_read"
    """tcgen05 enable-input-d = false: D is ``not_read`` (PTX: D = A*B) or read and multiplied by
    zero (``times_zero``: NaN/Inf in D give NaN)."""

    def __post_init__(self) -> None:
        if self.anchor not in ANCHORS or self.ue8m0_ff not in UE8M0_FF or self.ue8m0_00 not in UE8M0_00:
            raise ValueError("unknown anchor or UE8M0 reading")
        if self.ue4m3_sign not in UE4M3_SIGN or self.ue4m3_7f not in UE4M3_7F:
            raise ValueError("unknown UE4M3 reading")
        if self.product_range not in ("exact", "overflow") or self.overflow not in ("inf", "satfinite"):
            raise ValueError("unknown overflow reading")
        if self.block_rounding not in ("rz", "rne") or self.c_placement not in ("aligned", "last"):
            raise ValueError("unknown rounding or C placement")

    def features(self, form: BSForm | None = None, *, tcgen05: bool = False) -> dict[str, object]:
        """The features as the recovery reports them (only those ``form`` and the path can show)."""
        d = asdict(self)
        if form is not None:
            d["anchor"] = self.effective_anchor(form)
            if form.stype == "ue8m0":
                d.pop("ue4m3_sign")
                d.pop("ue4m3_7f")
            else:
                for k in ("ue8m0_ff", "ue8m0_00", "anchor_floor", "product_range", "overflow"):
                    d.pop(k)
            if not tcgen05:
                d.pop("disabled_d")
        return d

    def effective_anchor(self, form: BSForm) -> str:
        return "per_scale_block" if self.fma <= form.vs else self.anchor


def decode_scales(codes: np.ndarray, stype: str, p: BSParams | None = None) -> np.ndarray:
    """Scale codes -> float64 values under the hypothesis ``p`` (default: the OCP readings)."""
    p = p or BSParams()
    codes = np.asarray(codes, dtype=np.int64)
    if stype == "ue8m0":
        v = np.ldexp(1.0, codes - 127)
        ff = np.nan if p.ue8m0_ff in ("nan", "nan_nonzero") else 2.0**128
        v = np.where(codes == 255, ff, v)
        return np.where(codes == 0, 0.0 if p.ue8m0_00 == "zero" else 2.0**-127, v)
    mag = (codes & 0x7F).astype(np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    mag = np.where((codes & 0x7F) == 0x7F, np.nan if p.ue4m3_7f == "nan" else 480.0, mag)
    if p.ue4m3_sign == "negates":
        return np.where((codes & 0x80) != 0, -mag, mag)
    return np.where((codes & 0x80) != 0, np.nan, mag) if p.ue4m3_sign == "nan" else mag


def _floor_log2(x: np.ndarray) -> np.ndarray:
    _, e = np.frexp(np.where(x == 0, 1.0, np.abs(x)))
    return (e - 1).astype(np.int64)


def _in_exp(x: np.ndarray, etype: str) -> np.ndarray:
    return np.maximum(_floor_log2(x), INPUT_EMIN[etype])


def _round(p: BSParams, v: np.ndarray, mode: str) -> np.ndarray:
    return round_to_format(v, p.out_frac_bits, -126, 127, mode, p.overflow)


def exact_sum(cols: list[np.ndarray]) -> np.ndarray:
    """Row sums of a few float64 terms, exact or rounded to odd (so any later rounding to <= 50
    bits is the rounding of the exact sum).

    Where a row's terms span at most 52 bits the float64 sum is exact in any order; the rare rows
    whose terms span more (products from 2**+-127 scales next to C) go through ``math.fsum``
    (correctly rounded) plus the sign of its residual, which sets the sticky last bit.
    """
    t = np.stack(cols, axis=1)
    with np.errstate(invalid="ignore", over="ignore"):
        s = t.sum(axis=1)
    nz = t != 0
    m, e = np.frexp(np.abs(t))
    mant = (m * 2.0**53).astype(np.int64)
    low = mant & -mant
    lsb = np.where(nz, e - 53 + np.log2(np.where(low == 0, 1, low)).astype(np.int64), 1 << 20)
    top = np.where(nz, e, -(1 << 20))
    slow = nz.any(axis=1) & (top.max(axis=1) - lsb.min(axis=1) + 4 > 52)
    for i in np.nonzero(slow)[0]:  # rare rows only; see the docstring
        vals = [float(x) for x in t[i]]
        r = math.fsum(vals)
        res = math.fsum(vals + [-r])
        if res != 0 and math.isfinite(r):
            mm, _ = math.frexp(r)
            if int(abs(mm) * 2.0**53) % 2 == 0:
                r = math.nextafter(r, math.inf if res > 0 else -math.inf)
        s[i] = r
    return s


def _trunc_terms(x: np.ndarray, e: np.ndarray, live: np.ndarray, extra_e: np.ndarray, w: int,
                 floor: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Anchor M per row (max of live term exponents, ``extra_e`` and the floor) and the terms
    truncated toward zero to ``w`` fraction bits below 2**M, as float64 values."""
    m = np.maximum(np.where(live, e, NEG_BIG).max(axis=1), extra_e)
    if floor is not None:
        m = np.maximum(m, floor)
    t = np.ldexp(np.trunc(np.ldexp(x, (w - m)[:, None])), (m - w)[:, None])
    return m, t


@dataclass(frozen=True)
class Prepared:
    """The part of an evaluation that the fit features do not change (decoded scales, exact
    products, their exponents, the special-value pre-check): computed once per direct-feature
    setting, reused for every hypothesis of the fit grid."""

    prod: np.ndarray
    e: np.ndarray
    live: np.ndarray
    cc: np.ndarray
    special: np.ndarray
    special_val: np.ndarray
    all_neg_zero: np.ndarray


def prepare(p: BSParams, form: BSForm, x: BSArrays) -> Prepared:
    """Decode the scales under ``p``'s readings and form the exact products (see ``evaluate``)."""
    n, k = x.a.shape
    vs = form.vs
    sa = decode_scales(x.sa, form.stype, p)[:, np.arange(k) // vs]
    sb = decode_scales(x.sb, form.stype, p)[:, np.arange(k) // vs]
    a, b = x.a, x.b
    with np.errstate(invalid="ignore", over="ignore"):
        c = np.where(x.enable_d, x.c, 0.0 * x.c if p.disabled_d == "times_zero" else 0.0)
        raw = a * b
        prod = raw * sa * sb
    nan_scale_blk = np.isnan(sa) | np.isnan(sb)
    if p.ue8m0_ff == "nan_nonzero":  # a NaN scale poisons only non-zero products
        nan_scale_blk = nan_scale_blk & (raw != 0)
    nan = np.isnan(raw).any(axis=1) | nan_scale_blk.any(axis=1) | np.isnan(c)
    big = np.isfinite(prod) & (np.abs(prod) >= 2.0**128) if p.product_range == "overflow" else np.zeros_like(
        raw, bool)
    pinf = ((prod == np.inf) | (big & (prod > 0))).any(axis=1) | (c == np.inf)
    ninf = ((prod == -np.inf) | (big & (prod < 0))).any(axis=1) | (c == -np.inf)
    special = nan | pinf | ninf
    special_val = np.where(nan | (pinf & ninf), np.nan, np.where(pinf, np.inf, -np.inf))

    fin = np.isfinite(prod)
    prod = np.where(fin, prod, 0.0)
    a0 = np.where(fin, a, 0.0)
    b0 = np.where(fin, b, 0.0)
    cc = np.where(np.isfinite(c), c, 0.0)
    e_el = _in_exp(a0, form.etype) + _in_exp(b0, form.etype)
    e_sc = _floor_log2(np.where(fin, sa, 1.0)) + _floor_log2(np.where(fin, sb, 1.0))
    neg = np.all((prod == 0) & np.signbit(prod), axis=1) & (cc == 0) & np.signbit(cc)
    return Prepared(prod, e_el + e_sc, prod != 0, cc, special, special_val, neg)


def evaluate(p: BSParams, form: BSForm, x: BSArrays, prep: Prepared | None = None) -> np.ndarray:
    """d for every vector of ``x`` under hypothesis ``p`` (float64 values exact in fp32).

    Every product a*b*SA*SB is exact in float64 (<= 16 significant bits, exponents within
    +-300), and so is every truncated term and each block's sum (the terms of one alignment
    are integers of < 40 bits on one grid); sums of terms on different grids go through
    :func:`exact_sum`. So nothing rounds except where the hypothesis says it does.
    ``prep`` (from :func:`prepare` with the same direct features) skips the decoding.
    """
    pr = prep if prep is not None else prepare(p, form, x)
    prod, e, live, cc = pr.prod, pr.e, pr.live, pr.cc
    n, k = prod.shape
    vs = form.vs
    w = 23 + p.neab
    anchor = p.effective_anchor(form)

    acc = cc.copy() if p.c_placement == "aligned" else np.zeros(n)
    ovf = np.zeros(n)  # +-Inf of a block result that overflowed: later finite blocks keep it
    none = np.full(n, NEG_BIG)
    for start in range(0, k, p.fma):
        sl = slice(start, min(start + p.fma, k))
        if start:
            ovf = np.where(np.isinf(acc), acc, ovf)
            acc = np.where(np.isinf(acc), 0.0, acc)
        e_acc = np.where(acc != 0, np.maximum(_floor_log2(acc), -126), NEG_BIG)
        if anchor == "across":
            m, t = _trunc_terms(prod[:, sl], e[:, sl], live[:, sl], e_acc, w, p.anchor_floor)
            t_acc = np.ldexp(np.trunc(np.ldexp(acc, w - m)), m - w)
            v = t.sum(axis=1) + t_acc
        else:
            # each scale block inside the FMA block is aligned on its own (the incoming
            # accumulator is a term of the first one, as C is of the first block); the
            # truncated scale-block sums are then added exactly
            parts = []
            for j0 in range(sl.start, sl.stop, vs):
                js = slice(j0, min(j0 + vs, sl.stop))
                first = j0 == sl.start
                m, t = _trunc_terms(prod[:, js], e[:, js], live[:, js], e_acc if first else none, w,
                                    p.anchor_floor)
                s_j = t.sum(axis=1)
                if first:
                    s_j = s_j + np.ldexp(np.trunc(np.ldexp(acc, w - m)), m - w)
                parts.append(s_j)
            v = exact_sum(parts)
        acc = _round(p, v, p.block_rounding)
    ovf = np.where(np.isinf(acc), acc, ovf)
    acc = np.where(ovf != 0, ovf, acc)
    if p.c_placement == "last":
        acc = np.where(ovf != 0, ovf, _round(p, exact_sum([np.where(ovf != 0, 0.0, acc), cc]), "rne"))
    zero = np.where(pr.all_neg_zero, -0.0, 0.0) if p.zero_sign == "ieee" else np.zeros(n)
    acc = np.where(acc == 0, zero, acc)
    return np.where(pr.special, pr.special_val, acc)


def exact_value(form: BSForm, v: BSVector) -> float:
    """The exact (real-number) result of a finite vector under the OCP reading of the scale codes."""
    sa = decode_scales(np.array(v.sa), form.stype)
    sb = decode_scales(np.array(v.sb), form.stype)
    terms = [x * y * sa[k // form.vs] * sb[k // form.vs] for k, (x, y) in enumerate(zip(v.a, v.b, strict=True))]
    return math.fsum(terms + [v.c])
