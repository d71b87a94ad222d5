"""Block-scale probes: purpose-built block-scaled inner products whose results tell hypotheses apart.

The methodology of the E4M3 probes (:mod:`suites.probes.catalog`, after Fasi et al. 2021 and
Khattak & Mikaitis HPEC'25), moved to block-scaled MMA as numeric-models.md §7.4 suggests: C
(fp32) carries the large magnitude 2**J and the **scale factors** move whole K-blocks to the
depths a test needs, which FP4 elements (products 0.25 .. 36) cannot reach on their own.

Every probe is built per form (:data:`suites.probes.blockscale_vectors.FORMS`): a vector the
form cannot express (two products 2**25 apart inside one FP4 scale block) is left out, and a
probe with no vectors for a form has no case there (UE4M3 scales cannot reach 2**+-127). Which
forms those are is stated per probe (``ue8m0_only``, ``ue4m3_only``, ``expressible``), so listing
the cases never builds a vector; ``test_blockscale_probes`` pins the statement to the build.

* **fit** probes feed the hypothesis grid of :mod:`suites.probes.blockscale_recover`: FMA size
  across one instruction's K, anchor global across scale blocks or per scale block, extra
  alignment bits, block rounding, output precision, C placement, anchor floor;
* **direct** probes answer by rule (what a special scale code does, products beyond the fp32
  range, RZ overflow, signed zero, NaN elements, enable-input-d = false with NaN in D).

Case ids are ``probes.<name>.<path>``; every probe names the register entries it informs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from suites.probes.blockscale_model import exact_value
from suites.probes.blockscale_vectors import BSForm, BSVector, bsvec, negate_bs, raw_bs

J = 16
NAN = float("nan")
Classify = Callable[[BSForm, list[BSVector], np.ndarray], tuple[str, dict[str, object], str]]
"""(form, vectors, measured) -> (answer, {feature: value}, register reading it supports)."""


@dataclass(frozen=True)
class BSProbe:
    name: str
    title: str
    register: tuple[str, ...]
    features: tuple[str, ...]
    build: Callable[[BSForm], list[BSVector]]
    classify: Classify | None = None
    tcgen05_only: bool = False
    ue8m0_only: bool = False
    ue4m3_only: bool = False
    expressible: Callable[[BSForm], bool] | None = None
    """False for a form on which ``build`` returns no vector (None: every form); says so without
    building them (``test_blockscale_probes`` checks it against ``build`` on every path)."""

    @property
    def kind(self) -> str:
        return "direct" if self.classify is not None else "fit"

    def applies(self, form: BSForm, tcgen05: bool) -> bool:
        """Whether the probe has a case on ``form`` (cheap: no vector is built)."""
        if self.tcgen05_only and not tcgen05:
            return False
        if (self.ue8m0_only and form.stype != "ue8m0") or (self.ue4m3_only and form.stype != "ue4m3"):
            return False
        return self.expressible is None or self.expressible(form)


_CACHE: dict[tuple[str, str], tuple[BSVector, ...]] = {}


def vectors(p: BSProbe, form: BSForm) -> list[BSVector]:
    """The probe's vectors for ``form`` (built once per process)."""
    key = (p.name, form.tag)
    if key not in _CACHE:
        _CACHE[key] = tuple(p.build(form))
    return list(_CACHE[key])


def _try(out: list[BSVector], form: BSForm, products: dict[int, float], c: float, tag: str, **kw: object) -> bool:
    """Append the vector if ``form`` can express it; say whether it could."""
    try:
        out.append(bsvec(form, products, c, tag, **kw))  # type: ignore[arg-type]
        return True
    except ValueError:
        return False


def _with_neg(vs: list[BSVector]) -> list[BSVector]:
    return [x for v in vs for x in (v, negate_bs(v))]


def _positions(form: BSForm) -> list[int]:
    """Second-term positions: same scale block, mid-K, next scale block(s), last k."""
    cand = [1, 8, 16, form.vs, form.vs + 1, 2 * form.vs, form.k - 1]
    return sorted({p for p in cand if 0 < p < form.k})


def _positions_few(form: BSForm) -> list[int]:
    """Fewer second-term positions for the long sweeps: k1, the next scale block, the last k."""
    return sorted({p for p in (1, form.vs, form.k - 1) if 0 < p < form.k})


# ------------------------------------------------------------------------------------ fit probes


def _window(form: BSForm) -> list[BSVector]:
    """Extra alignment bits: is a term 2**(J-d) below the largest kept? (d = 9 .. 28).

    Cancel form (C = 0): 2**J and -2**(J-d) give 2**J - 2**(J-d), which RZ truncates to the
    binade below only if the small term survived the alignment; round form: 1.5 * 2**(J-d).
    C form: c = 2**(J-d') - 2**(J-d) with the 2**J product (C placement independent low bits).
    """
    out: list[BSVector] = []
    for d in range(9, 29):
        for pos in _positions_few(form):
            _try(out, form, {0: 2.0**J, pos: -(2.0 ** (J - d))}, 0.0, f"win-cancel-d{d}-k{pos}")
            _try(out, form, {0: 2.0**J, pos: 1.5 * 2.0 ** (J - d)}, 0.0, f"win-round-d{d}-k{pos}")
        for m in (13, 23):  # tie form: the tiny part of C breaks an RNE tie only if it survived
            if d >= m + 2:
                _try(out, form, {0: 2.0**J}, 2.0 ** (J - m - 1) + 2.0 ** (J - d), f"win-tie{m}-d{d}")
        q = max(1, d - 24)
        _try(out, form, {0: 2.0**J}, 2.0 ** (J - q) - 2.0 ** (J - d), f"win-c-d{d}")
        _try(out, form, {0: 2.0**J, 1: 2.0**J}, -(2.0 ** (J - d)), f"win-c2-d{d}")
    return _with_neg(out)


def _block_size(form: BSForm) -> list[BSVector]:
    """FMA size across one instruction's K (HPEC test 2 with C carrying 2**J).

    c = 2**J + u (u = 2**(J-m)), 0.75 u at k0 and at k: in one block the exact 2**J + 2.5 u is
    rounded once; across a block boundary 2**J + 1.75 u is rounded first (RZ: u lost, RNE: a
    different tie). Order form (C = 0): two small negative terms at k0, k1 and 2**J at k.
    """
    out: list[BSVector] = []
    for m in (23, 13):
        u = 2.0 ** (J - m)
        for k in range(1, form.k):
            for f in (0.75, 0.5):
                _try(out, form, {0: f * u, k: f * u}, 2.0**J + u, f"bs-hpec{m}-f{f}-k{k}", k=k)
            # carry form: c = 2**(J+1) - 2u; 3u at k0 and at k. One block: 2**(J+1) + 4u exact;
            # a boundary rounds 2**(J+1) + u to the next binade's grid first (visible with 13 bits too)
            _try(out, form, {0: 3 * u, k: 3 * u}, 2.0 ** (J + 1) - 2 * u, f"bs-carry{m}-k{k}", k=k)
    for depth in (13, 24, 26):
        small = -1.5 * 2.0 ** (J - depth)
        for k in range(2, form.k):
            _try(out, form, {0: small, 1: small, k: 2.0**J}, 0.0, f"bs-order{depth}-k{k}", k=k)
    return out


def _several_scale_blocks(form: BSForm) -> bool:
    """The anchor probe needs two scale blocks (1X has one)."""
    return form.nsf >= 2


def _scale_anchor(form: BSForm) -> list[BSVector]:
    """Anchor global across scale blocks or per scale block (numeric-models §7.4 (a)).

    Scale block A holds P and -P (they cancel exactly); block B holds small terms whose exact
    sum needs bits d below P. Aligned to one anchor (P's) they are truncated away or cut; aligned
    to their own block's anchor they survive. Both orders of the blocks; also P alone.
    """
    out: list[BSVector] = []
    if form.nsf < 2:
        return out
    vs = form.vs
    for d in range(18, 34):
        for blk_big, blk_small in sorted({(0, 1), (1, 0), (0, form.nsf - 1)}):
            kb, ks = blk_big * vs, blk_small * vs
            for small in ((1.5,), (1.5, 1.5), (1.125, 1.5)):
                prods = {kb: 2.0**J, kb + 1: -(2.0**J)}
                for i, f in enumerate(small):
                    prods[ks + i] = f * 2.0 ** (J - d)
                _try(out, form, prods, 0.0, f"anchor-d{d}-big{blk_big}-n{len(small)}")
                prods.pop(kb + 1)
                _try(out, form, prods, 0.0, f"anchor-alone-d{d}-big{blk_big}-n{len(small)}")
    return _with_neg(out)


def _c_placement(form: BSForm) -> list[BSVector]:
    """C aligned with the products or added last (§7.5 row 4), one product at several k."""
    out: list[BSVector] = []
    for m in (23, 13):
        for k in _positions(form) + [0]:
            _try(out, form, {k: 1.5 * 2.0 ** (J - m - 1)}, 2.0**J + 2.0 ** (J - m), f"cpl{m}-k{k}")
        for d in (4, 8, 16):
            _try(out, form, {0: 2.0**J}, 2.0 ** (J - m - 1) + 2.0 ** (J - m - 1 - d), f"sticky{m}-d{d}")
    return _with_neg(out)


def _final_rounding(form: BSForm) -> list[BSVector]:
    """RZ vs RNE of block results and how many fraction bits the result keeps (23 or 13)."""
    out: list[BSVector] = []
    j = J - 1
    for m in (23, 13):
        ulp = 2.0 ** (j + 2 - m)
        for f in (0.75, 0.5, 0.25, 1.5):
            _try(out, form, {0: 2.0**j, 1: 2.0 ** (j + 1)}, 2.0**j + f * ulp, f"final{m}-{f}")
            for pos in _positions(form):
                _try(out, form, {0: 2.0**J, pos: f * 2.0 ** (J - m)}, 0.0, f"final{m}-c0-{f}-k{pos}")
                _try(out, form, {0: 2.0**J, pos: f * 2.0 ** (J + 1 - m)}, 2.0**J, f"final{m}-carry-{f}-k{pos}")
            # the carried sum in the last k (no later block re-aligns the result), C = 0
            k = form.k
            _try(out, form, {k - 3: 2.0**J, k - 2: 2.0**J, k - 1: f * 2.0 ** (J + 1 - m)}, 0.0,
                 f"final{m}-carrylast-{f}")
            if form.nsf > 1:  # ... with the small term in the previous scale block
                _try(out, form, {k - 2: 2.0**J, k - 1: 2.0**J, k - form.vs - 1: f * 2.0 ** (J + 1 - m)}, 0.0,
                     f"final{m}-carrylast-split-{f}")
    for d in (12, 13, 14, 16, 20, 22):
        _try(out, form, {0: 2.0**J}, 2.0**J + 2.0 ** (J - d), f"outprec-c-d{d}")
    return _with_neg(out)


def _tiny_products(form: BSForm) -> list[BSVector]:
    """Products below the fp32 normal range from tiny scales: where the anchor floor cuts.

    A term 2**-t1 with a second term -+2**-t2 (t2 > t1) elsewhere in K: the result is a subnormal
    2**-t1 - 2**-t2 truncated to the fp32 quantum 2**-149 only if the second term survived the
    alignment, whose window ends 23 + neab bits below max(anchor, floor).
    """
    out: list[BSVector] = []
    for t1 in (134, 141, 147):
        for t2 in range(t1 + 1, t1 + 29):
            for pos in _positions_few(form):
                _try(out, form, {0: 2.0**-t1, pos: -(2.0**-t2)}, 0.0, f"tiny-{t1}-{t2}-k{pos}")
                if (t2 - t1) % 3 == 0:
                    _try(out, form, {0: 2.0**-t1, pos: 1.5 * 2.0**-t2}, 0.0, f"tiny-r-{t1}-{t2}-k{pos}")
    for t1 in (134, 140):  # RNE form: 2**-150 is half the subnormal quantum; a tiny third term breaks the tie
        for t2 in range(t1 + 17, t1 + 29):
            _try(out, form, {0: 2.0**-t1, 1: 2.0**-150, 2: 2.0**-t2}, 0.0, f"tiny-tie-{t1}-{t2}")
            _try(out, form, {0: 2.0**-t1, 1: 2.0**-150, 2: -(2.0**-t2)}, 0.0, f"tiny-tie-neg-{t1}-{t2}")
    for t in (140, 150, 160, 200, 240):
        _try(out, form, {0: 2.0**-t}, 2.0**-149, f"tiny-c-{t}")
    return _with_neg(out)


# --------------------------------------------------------------------------------- direct probes


def _ones(form: BSForm) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(form.k), np.zeros(form.k)


def _codes(form: BSForm, **blocks: int) -> list[int]:
    out = [form.one_code()] * form.nsf
    for key, code in blocks.items():
        out[int(key[1:])] = code
    return out


def _scale_nan(form: BSForm) -> list[BSVector]:
    """UE8M0 0xFF in SF_A (or SF_B): NaN for the block, NaN only for non-zero products, or 2**128."""
    out = []
    a, b = _ones(form)
    a[0], b[0] = 1.0, 1.0
    out.append(raw_bs(form, a, b, _codes(form, j0=0xFF), _codes(form, j0=0x00), 0.0, "ff-times-min",
                      pow2=2.0, note="2**128 * 2**-127 * 1 = 2 if 0xFF is a power of two"))
    out.append(raw_bs(form, b, a, _codes(form, j0=0x00), _codes(form, j0=0xFF), 0.0, "min-times-ff-b",
                      pow2=2.0))
    out.append(raw_bs(form, a, b, _codes(form, j0=0xFF), _codes(form), 1.0, "ff-times-one",
                      pow2=math.inf))
    z, _ = _ones(form)
    last = form.nsf - 1
    a2, b2 = _ones(form)
    if form.nsf > 1:
        a2[last * form.vs], b2[last * form.vs] = 1.0, 1.0
    out.append(raw_bs(form, a2, b2, _codes(form, j0=0xFF), _codes(form), 1.0, "ff-zero-elements",
                      pow2=1.0 + (1.0 if form.nsf > 1 else 0.0)))
    return out


def _classify_scale_nan(form: BSForm, vs: list[BSVector], d: np.ndarray) -> tuple[str, dict[str, object], str]:
    pow2 = np.array([v.meta["pow2"] for v in vs])
    nan = np.isnan(d)
    if nan.all():
        return "nan (0xFF poisons its block, zero elements too)", {"ue8m0_ff": "nan"}, "ocp-nan"
    if nan[:3].all() and np.array_equal(d[3:], pow2[3:]):
        return "nan for non-zero products only", {"ue8m0_ff": "nan_nonzero"}, "ocp-nan"
    fin = np.isfinite(pow2)
    if np.array_equal(d[fin], pow2[fin]) and (np.abs(d[~fin]) >= 2.0**127).all():
        return "power of two 2**128", {"ue8m0_ff": "pow2"}, "power-of-two"
    return "other: " + ",".join(f"{x:g}" for x in d), {"ue8m0_ff": None}, ""


def _scale_min(form: BSForm) -> list[BSVector]:
    """UE8M0 0x00: 2**-127 (OCP) or zero. 2**-127 * 2**127 * 1 = 1; with C = 0.5."""
    a, b = _ones(form)
    a[0], b[0] = 1.0, 1.0
    out = [raw_bs(form, a, b, _codes(form, j0=0x00), _codes(form, j0=0xFE), 0.0, "min-times-max", pow2=1.0),
           raw_bs(form, a, b, _codes(form, j0=0xFE), _codes(form, j0=0x00), 0.5, "max-times-min-c", pow2=1.5)]
    a3, b3 = _ones(form)
    a3[1], b3[1] = 1.5, 1.0
    out.append(raw_bs(form, a3, b3, _codes(form, j0=0x00), _codes(form, j0=0x85), 0.0, "min-times-2^6",
                      pow2=1.5 * 2.0**-121))
    return out


def _classify_scale_min(form: BSForm, vs: list[BSVector], d: np.ndarray) -> tuple[str, dict[str, object], str]:
    pow2 = np.array([v.meta["pow2"] for v in vs])
    zero = np.array([v.c for v in vs])
    if np.array_equal(d, pow2):
        return "2**-127", {"ue8m0_00": "pow2"}, "zero-byte"
    if np.array_equal(d, zero):
        return "zero", {"ue8m0_00": "zero"}, ""
    return "other: " + ",".join(f"{x:g}" for x in d), {"ue8m0_00": None}, ""


def _ue4m3_sign(form: BSForm) -> list[BSVector]:
    """UE4M3 scale codes with bit 7 set (1.0 | 0x80, 2.0 | 0x80) and 0x7F / 0xFF."""
    a, b = _ones(form)
    a[0], b[0] = 1.0, 1.0
    out = []
    for code, mag in ((0xB8, 1.0), (0xC0, 2.0)):
        out.append(raw_bs(form, a, b, _codes(form, j0=code), _codes(form), 0.25, f"sign-{code:02x}", mag=mag))
        out.append(raw_bs(form, a, b, _codes(form), _codes(form, j0=code), 0.25, f"sign-b-{code:02x}", mag=mag))
    out.append(raw_bs(form, a, b, _codes(form, j0=0x7F), _codes(form), 0.25, "code-7f", mag=480.0))
    out.append(raw_bs(form, a, b, _codes(form, j0=0xFF), _codes(form), 0.25, "code-ff", mag=480.0))
    return out


def _classify_ue4m3(form: BSForm, vs: list[BSVector], d: np.ndarray) -> tuple[str, dict[str, object], str]:
    mag = np.array([v.meta["mag"] for v in vs])
    sign, f7 = d[:4], d[4]
    if np.array_equal(sign, mag[:4] + 0.25):
        s, reading = "ignored", "ignored"
    elif np.array_equal(sign, -mag[:4] + 0.25):
        s, reading = "negates", "negates"
    elif np.isnan(sign).all():
        s, reading = "nan", "undefined"
    else:
        s, reading = None, ""
    f = "nan" if np.isnan(f7) else ("finite" if f7 == 480.25 else None)
    answer = f"sign bit {s or 'other'}; 0x7F {'NaN' if f == 'nan' else (f7 if f is None else '480 (finite)')}"
    if f == "nan" and reading in ("", "ignored"):
        reading = reading or "nan-7f"
    return answer, {"ue4m3_sign": s, "ue4m3_7f": f}, reading


def _overflow(form: BSForm) -> list[BSVector]:
    """Products beyond the fp32 range (2**127 scales): alone, with a cancelling twin, with the twin
    in another scale block; and a sum of in-range products beyond fp32 max (RZ overflow)."""
    out: list[BSVector] = []
    big = 2.0**250
    out.append(bsvec(form, {0: big, 1: -big}, 0.0, "huge-cancel", kind="cancel"))
    out.append(bsvec(form, {0: big}, 0.0, "huge-alone", kind="alone"))
    if form.nsf > 1:
        out.append(bsvec(form, {0: big, form.vs: -big}, 0.0, "huge-cancel-across", kind="across"))
    out.append(bsvec(form, {0: 1.5 * 2.0**127, 1: 1.5 * 2.0**127}, 0.0, "rz-overflow", kind="rz"))
    out.append(bsvec(form, {0: -1.5 * 2.0**127, 1: -1.5 * 2.0**127}, 0.0, "rz-overflow-neg", kind="rz"))
    return out


def _classify_overflow(form: BSForm, vs: list[BSVector], d: np.ndarray) -> tuple[str, dict[str, object], str]:
    kinds = [v.meta["kind"] for v in vs]
    cancel = d[kinds.index("cancel")]
    prange = "overflow" if np.isnan(cancel) else ("exact" if cancel == 0 else None)
    rz = d[[i for i, k in enumerate(kinds) if k == "rz"]]
    if np.isinf(rz).all():
        ovf = "inf"
    elif np.isfinite(rz).all() and (np.abs(rz) >= 2.0**127).all():
        ovf = "satfinite"
    else:
        ovf = None
    answer = f"products beyond fp32: {prange or f'other ({cancel:g})'}; RZ overflow: {ovf or rz.tolist()}"
    if "across" in kinds:
        answer += f"; twin in the next scale block: {d[kinds.index('across')]:g}"
    return answer, {"product_range": prange, "overflow": ovf}, {"exact": "exact", "overflow": "overflow"}.get(
        prange or "", "")


def _nan_elements(form: BSForm) -> bool:
    """Only E4M3 has a NaN element (E2M1 has none)."""
    return form.etype == "e4m3"


def _nan_element(form: BSForm) -> list[BSVector]:
    """E4M3 NaN (0x7F) elements through scales 1, 2**-127, 2**127, and NaN x 0."""
    out = []
    for code, other in ((form.one_code(), 1.0), (0x00, 1.0), (0xFE, 1.0), (form.one_code(), 0.0)):
        a, b = _ones(form)
        a[0], b[0] = NAN, other
        a[3], b[3] = 1.0, 1.0
        out.append(raw_bs(form, a, b, _codes(form, j0=code), _codes(form), 1.0, f"nan-el-s{code:02x}-x{other:g}"))
    return out


def _classify_nan(form: BSForm, vs: list[BSVector], d: np.ndarray) -> tuple[str, dict[str, object], str]:
    n = np.isnan(d)
    if n.all():
        return "nan", {"nan_propagates": True}, "nan"
    if not n.any():
        return "finite", {"nan_propagates": False}, "max-finite"
    return "mixed:" + "".join("N" if x else "f" for x in n), {"nan_propagates": None}, ""


def _signed_zero(form: BSForm) -> list[BSVector]:
    """Exactly-zero results: every product -0 (through scales 1, 2**-127, 2**127) and C = -0."""
    out = []
    for code in (form.one_code(), 0x00, 0xFE) if form.stype == "ue8m0" else (form.one_code(), 0x01):
        a, b = _ones(form)
        out.append(raw_bs(form, -a - 0.0, b, _codes(form, j0=code), _codes(form), -0.0, f"zero-neg-s{code:02x}"))
    a, b = _ones(form)
    out.append(raw_bs(form, a, b, _codes(form), _codes(form), -0.0, "zero-c-negative"))
    a2, b2 = _ones(form)
    a2[0], b2[0], a2[1], b2[1] = 1.0, 1.0, -1.0, 1.0
    out.append(raw_bs(form, a2, b2, _codes(form), _codes(form), -0.0, "zero-cancel-negc"))
    return out


def _classify_zero(form: BSForm, vs: list[BSVector], d: np.ndarray) -> tuple[str, dict[str, object], str]:
    if not np.all(d == 0):
        return "nonzero", {"zero_sign": None}, ""
    neg = np.signbit(d)
    n_all_neg = len(vs) - 2
    if neg[:n_all_neg].all() and not neg[n_all_neg:].any():
        return "ieee", {"zero_sign": "ieee"}, "ieee"
    if not neg.any():
        return "plus", {"zero_sign": "plus"}, "plus"
    return "other:" + "".join("-" if s else "+" for s in neg), {"zero_sign": None}, ""


def _enable_d_nan(form: BSForm) -> list[BSVector]:
    """tcgen05 enable-input-d = false with NaN / Inf / -Inf already in D."""
    out = []
    for c, prods in ((NAN, {0: 1.0}), (math.inf, {0: 1.0}), (-math.inf, {0: 2.0}), (NAN, {})):
        v = bsvec(form, prods, 0.0, f"disabled-d-{c}-{len(prods)}")
        out.append(BSVector(v.a, v.b, v.sa, v.sb, c, v.tag, {"want": float(sum(prods.values()))}, enable_d=False))
    return out


def _classify_enable_d(form: BSForm, vs: list[BSVector], d: np.ndarray) -> tuple[str, dict[str, object], str]:
    want = np.array([v.meta["want"] for v in vs])
    if np.array_equal(d, want):
        return "D not read", {"disabled_d": "not_read"}, "not-read"
    if np.isnan(d).all():
        return "D read and multiplied by zero (NaN)", {"disabled_d": "times_zero"}, "multiplied-by-zero"
    return "other: " + ",".join(f"{x:g}" for x in d), {"disabled_d": None}, ""


BS_PROBES: tuple[BSProbe, ...] = (
    BSProbe("bs_window", "extra alignment bits with block scales", ("AMB-ACC-PRECISION",), ("neab",), _window),
    BSProbe("bs_block_size", "FMA block size across one instruction's K", ("AMB-ACC-BLOCKSIZE",), ("fma",),
            _block_size),
    BSProbe("bs_scale_anchor", "alignment anchor across scale blocks or per scale block",
            ("AMB-SCALE-APPLICATION",), ("anchor",), _scale_anchor, expressible=_several_scale_blocks),
    BSProbe("bs_c_placement", "C aligned with the scaled products or added last", ("AMB-C-PLACEMENT",),
            ("c_placement",), _c_placement),
    BSProbe("bs_final_rounding", "rounding and precision of block results", ("AMB-ACC-ROUNDING", "AMB-ACC-PRECISION"),
            ("block_rounding", "out_frac_bits"), _final_rounding),
    BSProbe("bs_tiny_products", "products below the fp32 normal range (2**-127 scales): anchor floor",
            ("AMB-ANCHOR-FLOOR", "AMB-SUBNORMALS"), ("anchor_floor",), _tiny_products, ue8m0_only=True),
    BSProbe("bs_overflow", "products beyond fp32 (2**127 scales) and RZ overflow",
            ("AMB-PRODUCT-RANGE", "AMB-RZ-OVERFLOW"), ("product_range", "overflow"), _overflow,
            classify=_classify_overflow, ue8m0_only=True),
    BSProbe("bs_scale_nan", "UE8M0 0xFF scale", ("AMB-UE8M0-FF", "AMB-NAN-INF"), ("ue8m0_ff",), _scale_nan,
            classify=_classify_scale_nan, ue8m0_only=True),
    BSProbe("bs_scale_min", "UE8M0 0x00 scale (2**-127 or zero)", ("AMB-UE8M0-FF",), ("ue8m0_00",), _scale_min,
            classify=_classify_scale_min, ue8m0_only=True),
    BSProbe("bs_ue4m3_sign", "UE4M3 scale sign bit and 0x7F", ("AMB-UE4M3-SIGN",), ("ue4m3_sign", "ue4m3_7f"),
            _ue4m3_sign, classify=_classify_ue4m3, ue4m3_only=True),
    BSProbe("bs_nan_element", "E4M3 NaN elements through scales", ("AMB-NAN-INF", "AMB-E4M3-7F"), (),
            lambda f: _nan_element(f) if f.etype == "e4m3" else [], classify=_classify_nan,
            expressible=_nan_elements),
    BSProbe("bs_signed_zero", "sign of an exactly-zero block-scaled result", ("AMB-SIGNED-ZERO",), ("zero_sign",),
            _signed_zero, classify=_classify_zero),
    BSProbe("tc05_enable_input_d_nan", "enable-input-d = false with NaN/Inf in D", ("AMB-ENABLE-INPUT-D-NAN",),
            ("disabled_d",), _enable_d_nan, classify=_classify_enable_d, tcgen05_only=True),
)
"""Every block-scale probe, in report order."""

FIT_FEATURES: tuple[str, ...] = ("fma", "anchor", "neab", "block_rounding", "c_placement", "out_frac_bits",
                                 "anchor_floor")


def bs_probe(name: str) -> BSProbe:
    for p in BS_PROBES:
        if p.name == name:
            return p
    raise KeyError(f"no block-scale probe {name!r}")


def exact_values(form: BSForm, vs: list[BSVector]) -> np.ndarray:
    """Exact results (OCP scale readings) of finite vectors, for reports."""
    return np.array([exact_value(form, v) for v in vs])
