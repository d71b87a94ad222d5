"""The numeric probes: purpose-built E4M3 inner products whose results tell hypotheses apart.

After the test-vector methodology of Fasi et al. 2021 and Khattak & Mikaitis (HPEC'25),
moved to E4M3 the way shared/reference-notes/numeric-models.md §7.4-7.5 suggests: C (an
fp32) carries the large magnitude 2**J and the products sit at chosen depths below it.
J = 16 keeps every product between 2**-12 and 2**16, i.e. a product of two E4M3 normals.

Two kinds of probe:

* **fit** probes feed the hypothesis fit of :mod:`suites.probes.recover`: their answer is
  the set of values of their target feature(s) consistent with what was measured;
* **direct** probes answer by a closed-form rule (NaN in, NaN out?) and set features the
  fit then holds fixed.

Every probe also names the ambiguity-register entries it informs; its case id is
``probes.<name>.<path>``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from suites.probes.vectors import K, Vector, negate, raw, vec

J = 16
"""Binade of C and of the large products: 2**16 = 2**8 * 2**8 is the largest power-of-two product."""


_VECTOR_CACHE: dict[str, tuple[Vector, ...]] = {}


@dataclass(frozen=True)
class Probe:
    """One probe: its vectors, what it targets, and (direct probes) how it answers."""

    name: str
    title: str
    register: tuple[str, ...]
    features: tuple[str, ...]
    build: Callable[[], list[Vector]]
    classify: Callable[[list[Vector], np.ndarray], tuple[str, dict[str, object]]] | None = None
    """Direct probes: (answer, {feature: value}) from the measured values."""
    note: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return "direct" if self.classify is not None else "fit"

    def vectors(self) -> list[Vector]:
        """The probe's vectors (built once per process; they are constants)."""
        if self.name not in _VECTOR_CACHE:
            _VECTOR_CACHE[self.name] = tuple(self.build())
        return list(_VECTOR_CACHE[self.name])


def _with_neg(vs: Sequence[Vector]) -> list[Vector]:
    return [x for v in vs for x in (v, negate(v))]


# ------------------------------------------------------------------------------------- fit probes


def _window() -> list[Vector]:
    """Is a term 2**(J-d) below the largest term kept by the alignment? (d = 9..28).

    RZ form: p0 = 2**J, c = 2**(J-q) - 2**(J-d), p1 = 2**(J-d); exact = 2**J + 2**(J-q).
    A window of w < d bits drops p1 and the low bits of c, and the loss is visible because
    the result has only q (<= 13) significant fraction bits. Tie form: c = half an output
    ulp + 2**(J-d), so under RNE the result rounds up only if the tiny part survived.
    """
    out = []
    for d in range(9, 29):
        q = max(1, d - 24)
        out.append(vec({0: 2.0**J, 1: 2.0 ** (J - d)}, 2.0 ** (J - q) - 2.0 ** (J - d), f"window-d{d}"))
        for m in (13, 23):
            if d >= m + 2:
                out.append(vec({0: 2.0**J}, 2.0 ** (J - m - 1) + 2.0 ** (J - d), f"window-tie{m}-d{d}"))
        # C = 0 forms (C placement cannot matter): a small negative term pulls the sum below
        # 2**J only if it survived the alignment; a 1.5 / 1.25 / 1.75 term shows under RNE.
        out.append(vec({0: 2.0**J, 1: -(2.0 ** (J - d))}, 0.0, f"window-cancel-d{d}"))
        for f in (1.25, 1.5, 1.75):
            out.append(vec({0: 2.0**J, 1: f * 2.0 ** (J - d)}, 0.0, f"window-round{f}-d{d}"))
    return _with_neg(out)


def _block_structure() -> list[Vector]:
    """Which k positions share a block with k = 0 and 1 (always together in every grouping).

    Order form (C = 0, so C placement cannot matter): two small negative terms at k0, k1
    and the large 2**J at k. Same block: each small term is truncated against 2**J. Later
    block: the two small terms are summed exactly first, then truncated once - a different
    last bit. Done for a 25-bit and a 13-bit window. HPEC form (C aligned): c = 2**J + ulp,
    2**J at k0 and ulp at k; a block boundary between them loses the ulp.
    """
    out = []
    for depth in (13, 14, 22, 23, 24, 25, 26, 27, 28):
        small = -1.5 * 2.0 ** (J - depth)
        for k in range(2, K):
            out.append(vec({0: small, 1: small, k: 2.0**J}, 0.0, f"order{depth}-k{k}", k=k))
    for m in (23, 13):
        for k in range(1, K):
            out.append(vec({0: 2.0**J, k: 2.0 ** (J - m)}, 2.0**J + 2.0 ** (J - m), f"hpec{m}-k{k}", k=k))
    return out


def _c_placement() -> list[Vector]:
    """C aligned with the products or added last (numeric-models §7.5 row 4).

    c = 2**J (1 + 2**-m), one product 1.5 * 2**(J-m-1) at k0: 25-bit window gives +1 ulp,
    13-bit window 0, C added last by RNE +2. Also with the product at k = 16 (second block).
    """
    out = []
    for m in (23, 13):
        for k in (0, 2, 16):
            out.append(vec({k: 1.5 * 2.0 ** (J - m - 1)}, 2.0**J + 2.0 ** (J - m), f"cplace{m}-k{k}", k=k))
        # sticky: C = half an ulp + a tiny tail. Added last by one RNE add, the tail breaks the
        # tie upwards; aligned with the products it is truncated away and the tie goes to even.
        for d in (4, 8, 16):
            out.append(vec({0: 2.0**J}, 2.0 ** (J - m - 1) + 2.0 ** (J - m - 1 - d), f"sticky{m}-d{d}"))
    return _with_neg(out)


def _final_rounding() -> list[Vector]:
    """RZ vs RNE of a block result: exact sum 0.75 / 0.5 / 0.25 output ulp above a grid point.

    Products 2**15 at k0 and 2**16 at k1 (same block everywhere), c = 2**15 + f ulp(2**17)
    (HPEC test 4 with two products). Then the block-combination form (HPEC test 7): a second
    block receives c + products and one more term.
    """
    out = []
    j = J - 1
    for m in (23, 13):
        ulp = 2.0 ** (j + 2 - m)
        for f in (0.75, 0.5, 0.25, 1.5):
            out.append(vec({0: 2.0**j, 1: 2.0 ** (j + 1)}, 2.0**j + f * ulp, f"final{m}-{f}"))
            # C = 0: a block of two products whose sum needs rounding (fraction f of an ulp of 2**J)
            out.append(vec({0: 2.0**J, 1: f * 2.0 ** (J - m)}, 0.0, f"final{m}-c0-{f}"))
            # a carried sum 2**(J+1) + f ulp: rounding at the output precision (13 or 23 bits)
            out.append(vec({0: 2.0**J, 1: f * 2.0 ** (J + 1 - m)}, 2.0**J, f"final{m}-carry-{f}"))
            # the same carried sum from three products (k = 2 shares the block of k0/k1 in
            # contiguous blocks of >= 4, k = 4 in the k mod 4 split), C = 0
            for k in (2, 4):
                out.append(vec({0: 2.0**J, 1: 2.0**J, k: f * 2.0 ** (J + 1 - m)}, 0.0, f"final{m}-carry3-{f}-k{k}"))
            # ... and in the last block, so no later block re-aligns the result (k 28-30 end the
            # last contiguous block of any size; k 27, 30, 31 the second k mod 4 block)
            for ks in ((28, 29, 30), (30, 31, 27)):
                out.append(vec({ks[0]: 2.0**J, ks[1]: 2.0**J, ks[2]: f * 2.0 ** (J + 1 - m)}, 0.0,
                               f"final{m}-carrylast-{f}-k{ks[0]}"))
        # block combination: an exact first block, then a term that needs rounding later
        for k in (2, 4, 8, 16):
            out.append(vec({0: 2.0**J, k: 1.5 * 2.0 ** (J - m - 1)}, 2.0 ** (J - m), f"combine{m}-k{k}", k=k))
    return _with_neg(out)


def _out_precision() -> list[Vector]:
    """How many fraction bits the result keeps: a carried sum 2**(J+1) + 2**(J-d)."""
    out = []
    for d in (12, 13, 14, 16, 20, 22):
        out.append(vec({0: 2.0**J, 1: 2.0 ** (J - d)}, 2.0**J, f"outprec-d{d}"))
        out.append(vec({0: 2.0**J}, 2.0**J + 2.0 ** (J - d), f"outprec-c-d{d}"))
    return _with_neg(out)


def _carry() -> list[Vector]:
    """Carry-out (Fasi D4, scaled by 2**15): three 2**15 and one 2**-8 at every position."""
    j = 15
    out = []
    for pos in range(4):
        prods = {k: 2.0**j for k in range(4)}
        prods[pos] = 2.0 ** (j - 23)
        out.append(vec(prods, 2.0**j * (1 + 2.0**-22 + 2.0**-23), f"carry-pos{pos}"))
    out.append(vec({0: 2.0**j, 1: 1.5 * 2.0**j, 2: 1.75 * 2.0**j, 3: 1.875 * 2.0**j}, 1.875 * 2.0**j, "carry-third"))
    out.append(vec({k: 2.0**j for k in range(4)}, 2.0**j * (1 + 2.0**-22 + 2.0**-23), "carry-trunc"))
    return _with_neg(out)


def _monotonicity() -> list[Vector]:
    """Pairs (c = 2**J, c = 2**J - 2**(J-24)) with two small products: D(c-) > D(c) is non-monotonic."""
    out = []
    for t in (23, 24, 25, 26, 27):
        for c in (2.0**J, 2.0**J - 2.0 ** (J - 24)):
            out.append(vec({0: 2.0 ** (J - t), 1: 2.0 ** (J - t)}, c, f"mono-t{t}-{'lo' if c < 2.0**J else 'hi'}", t=t))
    return out


def _classify_monotonic(vs: list[Vector], d: np.ndarray) -> tuple[str, dict[str, object]]:
    tags = [v.tag for v in vs]
    bad = []
    for t in (23, 24, 25, 26, 27):
        hi, lo = d[tags.index(f"mono-t{t}-hi")], d[tags.index(f"mono-t{t}-lo")]
        if lo > hi:
            bad.append(t)
    return ("non-monotonic" if bad else "monotonic"), {"monotonic": not bad, "violations_at_depth": bad}


def _classify_carry(vs: list[Vector], d: np.ndarray) -> tuple[str, dict[str, object]]:
    exact = np.array([math.fsum([x * y for x, y in zip(v.a, v.b, strict=True)] + [v.c]) for v in vs])
    kept = np.abs(d - exact) < np.abs(exact) * 2.0**-22
    return ("carries-kept" if kept.all() else "carries-lost-or-truncated"), {"carry_exact": int(kept.sum())}


def _subnormal_c() -> list[Vector]:
    """A lone subnormal / tiny C with no products: passed through, truncated or flushed."""
    cs = [2.0**-149, 2.0**-140, 1.5 * 2.0**-127, 2.0**-126 * (1 - 2.0**-23)]
    return _with_neg([vec({}, c, f"subc-{i}") for i, c in enumerate(cs)])


# ----------------------------------------------------------------------------------- direct probes


def _zeros() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(K), np.zeros(K)


def _subnormal_in() -> list[Vector]:
    out = []
    for i, (x, y) in enumerate(((2.0**-9, 1.0), (0.875 * 2.0**-6, 8.0), (2.0**-9, 2.0**-9), (-(2.0**-8), 448.0))):
        a, b = _zeros()
        a[0], b[0] = x, y
        out.append(raw(a, b, 0.0, f"subin-{i}", exact=x * y))
    return out


def _classify_subnormal_in(vs: list[Vector], d: np.ndarray) -> tuple[str, dict[str, object]]:
    exact = np.array([v.meta["exact"] for v in vs])
    if np.array_equal(d, exact):
        return "kept", {"in_subnormals": True}
    if np.all(d == 0):
        return "flushed", {"in_subnormals": False}
    return "other", {"in_subnormals": None}


def _signed_zero() -> list[Vector]:
    out = []
    a, b = _zeros()
    out.append(raw(-a - 0.0, b, -0.0, "zero-all-negative"))  # every product -0, c = -0
    out.append(raw(a, b, -0.0, "zero-c-negative"))  # products +0, c = -0: IEEE gives +0
    a2, b2 = _zeros()
    a2[0], b2[0], a2[1], b2[1] = 1.0, 1.0, -1.0, 1.0
    out.append(raw(a2, b2, 0.0, "zero-cancel"))  # 1 - 1 + 0: +0 under RZ/RNE
    out.append(raw(a2, b2, -0.0, "zero-cancel-negc"))
    return out


def _classify_signed_zero(vs: list[Vector], d: np.ndarray) -> tuple[str, dict[str, object]]:
    if not np.all(d == 0):
        return "nonzero", {"zero_sign": None}
    neg = np.signbit(d)
    if neg[0] and not neg[1:].any():
        return "ieee", {"zero_sign": "ieee"}
    if not neg.any():
        return "plus", {"zero_sign": "plus"}
    return "other:" + "".join("-" if s else "+" for s in neg), {"zero_sign": None}


def _nan_element() -> list[Vector]:
    out = []
    for pos, other in ((0, 1.0), (7, 0.0), (31, 2.0)):
        a, b = _zeros()
        a[pos], b[pos] = float("nan"), other
        a[3], b[3] = 1.0, 1.0
        out.append(raw(a, b, 1.0, f"nan-a-k{pos}-times-{other}"))
    return out


def _classify_nan(vs: list[Vector], d: np.ndarray) -> tuple[str, dict[str, object]]:
    n = np.isnan(d)
    if n.all():
        return "nan", {"nan_propagates": True}
    if not n.any():
        return "finite", {"nan_propagates": False}
    return "mixed:" + "".join("N" if x else "f" for x in n), {"nan_propagates": None}


def _nan_c() -> list[Vector]:
    a, b = _zeros()
    a[0], b[0] = 1.0, 1.0
    return [raw(a, b, float("nan"), "nan-c"), raw(np.zeros(K), np.zeros(K), float("nan"), "nan-c-alone")]


def _inf_c() -> list[Vector]:
    a, b = _zeros()
    a[0], b[0] = 448.0, -448.0
    return [raw(a, b, float("inf"), "inf-c"), raw(a, b, float("-inf"), "neg-inf-c"),
            raw(np.zeros(K), np.zeros(K), float("inf"), "inf-c-alone")]


def _classify_inf(vs: list[Vector], d: np.ndarray) -> tuple[str, dict[str, object]]:
    want = np.array([v.c for v in vs])
    if np.array_equal(d, want):
        return "inf-propagates", {"inf_propagates": True}
    return "other:" + ",".join(str(x) for x in d), {"inf_propagates": False}


PROBES: tuple[Probe, ...] = (
    Probe("neab", "extra alignment bits / alignment window width", ("AMB-ACC-PRECISION",), ("neab",), _window),
    Probe("block_size", "effective block (FMA) size and which k form a block",
          ("AMB-ACC-BLOCKSIZE", "AMB-HOPPER-FP8-MMASYNC-LOWERING"), ("block_size", "grouping"), _block_structure),
    Probe("c_placement", "C aligned with the products or added last",
          ("AMB-C-PLACEMENT", "AMB-HOPPER-FP8-MMASYNC-LOWERING"), ("c_placement",), _c_placement),
    Probe("final_rounding", "rounding of block results (RZ / RNE)", ("AMB-ACC-ROUNDING",),
          ("block_rounding",), _final_rounding),
    Probe("out_precision", "fraction bits kept in the result (23 or 13)", ("AMB-ACC-PRECISION",),
          ("out_frac_bits",), _out_precision),
    Probe("subnormal_c", "subnormal C with no products", ("AMB-SUBNORMALS",), ("out_subnormals",), _subnormal_c),
    Probe("carry", "carry-out bits of the multi-term adder", ("AMB-CARRY-BITS",), (), _carry,
          classify=_classify_carry),
    Probe("monotonicity", "monotonicity in C", ("AMB-MONOTONICITY",), (), _monotonicity,
          classify=_classify_monotonic),
    Probe("subnormal_in", "subnormal E4M3 inputs", ("AMB-SUBNORMALS",), ("in_subnormals",), _subnormal_in,
          classify=_classify_subnormal_in),
    Probe("signed_zero", "sign of an exactly-zero result", ("AMB-SIGNED-ZERO",), ("zero_sign",), _signed_zero,
          classify=_classify_signed_zero),
    Probe("nan_element", "E4M3 NaN (0x7F) element", ("AMB-E4M3-7F", "AMB-NAN-INF"), (), _nan_element,
          classify=_classify_nan),
    Probe("nan_c", "NaN in C", ("AMB-NAN-INF",), (), _nan_c, classify=_classify_nan),
    Probe("inf_c", "Inf in C", ("AMB-NAN-INF",), (), _inf_c, classify=_classify_inf),
)
"""Every probe, in report order. Direct probes with ``features`` set fit-held features."""

FIT_FEATURES: tuple[str, ...] = (
    "block_size", "grouping", "neab", "block_rounding", "c_placement", "out_frac_bits", "out_subnormals",
)
DIRECT_FEATURES: tuple[str, ...] = ("in_subnormals", "zero_sign")


def probe(name: str) -> Probe:
    for p in PROBES:
        if p.name == name:
            return p
    raise KeyError(f"no probe {name!r}")


def fit_probes() -> tuple[Probe, ...]:
    """Probes whose vectors enter the hypothesis fit (the fit probes and the numeric direct ones)."""
    return tuple(p for p in PROBES if p.kind == "fit" or p.name in ("carry", "monotonicity"))
