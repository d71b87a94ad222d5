"""Exact GEMM against an independent rational-arithmetic reference (Python fractions)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import formats as F
from reference import gemm as G
from reference import numeric_model as NM

FP = {"fp32": (23, -126, 127), "fp16": (10, -14, 15)}


def round_fraction(s: Fraction, out: str, mode: str) -> float:
    """IEEE rounding of an exact rational, written from the definition."""
    man, emin, emax = FP[out]
    if s == 0:
        return 0.0
    neg = s < 0
    x = -s if neg else s
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    q = Fraction(2) ** (max(e, emin) - man)
    n, r = divmod(x, q)
    up = {"rne": r * 2 > q or (r * 2 == q and n % 2 == 1), "rz": False,
          "ru": r > 0 and not neg, "rd": r > 0 and neg}[mode]
    n += 1 if up else 0
    v = n * q
    maxf = (2 - Fraction(2) ** -man) * Fraction(2) ** emax
    if v > maxf:
        to_inf = {"rne": True, "rz": False, "ru": not neg, "rd": neg}[mode]
        return (-1 if neg else 1) * (float("inf") if to_inf else float(maxf))
    return -float(v) if neg else float(v)


def frac_gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray, out: str, mode: str) -> np.ndarray:
    m, k = a.shape
    n = b.shape[1]
    d = np.zeros((m, n))
    for i in range(m):
        for j in range(n):
            s = sum((Fraction(a[i, t]) * Fraction(b[t, j]) for t in range(k)), Fraction(0)) + Fraction(c[i, j])
            d[i, j] = round_fraction(s, out, mode)
    return d


def rand_codes(rng: np.random.Generator, fmt: str, shape: tuple[int, ...]) -> np.ndarray:
    return rng.choice(F.finite_codes(fmt), size=shape)


def rand_c(rng: np.random.Generator, shape: tuple[int, ...], spread: int = 30) -> np.ndarray:
    v = rng.standard_normal(shape) * np.exp2(rng.integers(-spread, spread, shape))
    return v.astype(np.float32).astype(np.float64)


COMBOS = [
    # kind, a, b, scale, VS, K
    ("mxf8f6f4", "e4m3", "e4m3", "ue8m0", 32, 32),
    ("mxf8f6f4", "e5m2", "e2m1", "ue8m0", 32, 64),
    ("mxf8f6f4", "e2m3", "e3m2", "ue8m0", 32, 32),
    ("mxf8f6f4", "e3m2", "e5m2", "ue8m0", 32, 32),
    ("mxf4", "e2m1", "e2m1", "ue8m0", 32, 64),
    ("mxf4", "e2m1", "e2m1", "ue8m0", 32, 96),  # block32, K=96: 3 scale blocks
    ("mxf4nvf4", "e2m1", "e2m1", "ue8m0", 32, 64),
    ("mxf4nvf4", "e2m1", "e2m1", "ue8m0", 16, 64),
    ("mxf4nvf4", "e2m1", "e2m1", "ue4m3", 16, 64),
    ("mxf4nvf4", "e2m1", "e2m1", "ue4m3", 16, 96),  # block16, K=96: 6 scale blocks
]


@pytest.mark.parametrize("kind,af,bf,sf,vs,k", COMBOS)
@pytest.mark.parametrize("mode", ["rne", "rz", "ru", "rd"])
def test_block_scaled_matches_fractions(kind: str, af: str, bf: str, sf: str, vs: int, k: int, mode: str) -> None:
    rng = np.random.default_rng(hash((kind, af, bf, sf, vs, k)) % 2**32)
    m, n = 3, 4
    a, b = rand_codes(rng, af, (m, k)), rand_codes(rng, bf, (k, n))
    sa = rand_codes(rng, sf, (m, k // vs)).astype(np.uint8)
    sb = rand_codes(rng, sf, (k // vs, n)).astype(np.uint8)
    if sf == "ue8m0":  # keep most products near the fp32 range so rounding is exercised
        sa = rng.integers(127 - 40, 127 + 40, sa.shape).astype(np.uint8)
        sb = rng.integers(127 - 40, 127 + 40, sb.shape).astype(np.uint8)
    c = rand_c(rng, (m, n))
    d = G.block_scaled_gemm(a, b, sa, sb, c, kind=kind, a_fmt=af, b_fmt=bf, scale_fmt=sf, mode=mode)
    av = F.decode(af, a) * np.repeat(F.decode(sf, sa), vs, axis=1)
    bv = F.decode(bf, b) * np.repeat(F.decode(sf, sb), vs, axis=0)
    assert np.array_equal(d, frac_gemm(av, bv, c, "fp32", mode))


def test_scale_selection_matters() -> None:
    """Each block's scale multiplies exactly that block: swapping two scales changes D."""
    a = np.full((1, 64), F.encode("e2m1", np.array([1.0]))[0], dtype=np.uint8)
    b = a.T.copy()
    sa = F.encode("ue8m0", np.array([[1.0, 4.0]]))
    sb = F.encode("ue8m0", np.array([[2.0], [1.0]]))
    kw = dict(kind="mxf4", a_fmt="e2m1", b_fmt="e2m1", scale_fmt="ue8m0")
    assert G.block_scaled_gemm(a, b, sa, sb, **kw)[0, 0] == 32 * 1 * 2 + 32 * 4 * 1
    assert G.block_scaled_gemm(a, b, sa[:, ::-1].copy(), sb, **kw)[0, 0] == 32 * 4 * 2 + 32 * 1 * 1


def test_products_beyond_fp32_range_are_exact() -> None:
    """2^127 * 2^127 * 448 * 448 overflows fp32 alone, but cancels exactly against its partner."""
    e = lambda v: F.encode("e4m3", np.array(v))  # noqa: E731
    a = np.zeros((1, 32), np.uint8)
    b = np.zeros((32, 1), np.uint8)
    a[0, :2] = e([448.0, -448.0])
    b[:2, 0] = e([448.0, 448.0])
    a[0, 2], b[2, 0] = e([1.0])[0], e([1.0])[0]
    s = np.array([[0xFE]], np.uint8)
    kw = dict(kind="mxf8f6f4", a_fmt="e4m3", b_fmt="e4m3", scale_fmt="ue8m0")
    d = G.block_scaled_gemm(a, b, s, s, np.array([[1.0]]), **kw)
    # exact: 448^2 2^254 - 448^2 2^254 + 2^254 + 1 = 2^254 + 1 -> rounds to inf in fp32
    assert d[0, 0] == np.inf
    a[0, 2] = 0
    assert G.block_scaled_gemm(a, b, s, s, np.array([[1.5]]), **kw)[0, 0] == 1.5


def test_underflow_to_subnormal_and_zero() -> None:
    a = F.encode("e4m3", np.full((1, 32), 2.0**-9))  # min subnormal
    b = a.reshape(32, 1).copy()
    s = np.array([[0]], np.uint8)  # 2^-127
    kw = dict(kind="mxf8f6f4", a_fmt="e4m3", b_fmt="e4m3", scale_fmt="ue8m0")
    # 32 * 2^-18 * 2^-254: far below fp32 -> 0 under rne/rz, min subnormal under ru
    assert G.block_scaled_gemm(a, b, s, s, **kw)[0, 0] == 0.0
    assert G.block_scaled_gemm(a, b, s, s, mode="ru", **kw)[0, 0] == 2.0**-149
    s2 = np.array([[127 - 60]], np.uint8)
    d = G.block_scaled_gemm(a, b, s2, s2, **kw)[0, 0]
    assert d == 32 * 2.0**-18 * 2.0**-120 and d < 2.0**-126


def test_nan_and_inf_sources() -> None:
    kw = dict(kind="mxf8f6f4", a_fmt="e5m2", b_fmt="e5m2", scale_fmt="ue8m0")
    one = F.encode("e5m2", np.array([1.0]))[0]
    a = np.full((3, 32), one, np.uint8)
    b = np.full((32, 2), one, np.uint8)
    a[1, 0] = a[1, 1] = F.encode("e5m2", np.array([np.inf]))[0]
    b[0, 1] = F.encode("e5m2", np.array([-np.inf]))[0]
    sa = np.full((3, 1), 127, np.uint8)
    sa[2, 0] = 0xFF  # NaN scale: row 2 only
    sb = np.full((1, 2), 127, np.uint8)
    d = G.block_scaled_gemm(a, b, sa, sb, **kw)
    assert d[0, 0] == 32 and d[0, 1] == -np.inf
    assert d[1, 0] == np.inf and np.isnan(d[1, 1])  # -inf (k0) and +inf (k1): NaN
    assert np.isnan(d[2]).all()


def test_bad_combinations_raise() -> None:
    a = np.zeros((1, 64), np.uint8)
    with pytest.raises(ValueError):
        G.block_scaled_gemm(a, a.T, np.zeros((1, 4), np.uint8), np.zeros((4, 1), np.uint8), kind="mxf4",
                            a_fmt="e2m1", b_fmt="e2m1", scale_fmt="ue8m0")  # mxf4 has no VS=16
    with pytest.raises(ValueError):
        G.block_scaled_gemm(a, a.T, np.zeros((1, 2), np.uint8), np.zeros((2, 1), np.uint8), kind="mxf4nvf4",
                            a_fmt="e2m1", b_fmt="e2m1", scale_fmt="ue4m3")  # ue4m3 only with VS=16
    with pytest.raises(ValueError):
        G.block_scaled_gemm(a, a.T, np.zeros((1, 2), np.uint8), np.zeros((2, 1), np.uint8), kind="mxf4",
                            a_fmt="e4m3", b_fmt="e2m1", scale_fmt="ue8m0")
    with pytest.raises(ValueError):
        G.gemm(np.zeros((2, 2)), np.zeros((3, 2)), kind="f16")


@pytest.mark.parametrize("kind,out", [("f16", "fp32"), ("f16", "fp16"), ("bf16", "fp32"), ("tf32", "fp32"),
                                      ("f8f6f4", "fp32"), ("f8f6f4", "fp16")])
@pytest.mark.parametrize("mode", ["rne", "rz", "ru", "rd"])
def test_unscaled_kinds_match_fractions(kind: str, out: str, mode: str) -> None:
    rng = np.random.default_rng(7)
    fmt = G.UNSCALED_KINDS[kind][0] if kind != "f8f6f4" else "e4m3"
    a, b = rand_codes(rng, fmt, (3, 16)), rand_codes(rng, fmt, (16, 5))
    if kind in ("f16", "bf16", "tf32"):  # random codes span 2^-24..2^15: keep a sane exponent mix
        a = F.encode(fmt, rng.standard_normal((3, 16)) * np.exp2(rng.integers(-8, 8, (3, 16))))
        b = F.encode(fmt, rng.standard_normal((16, 5)) * np.exp2(rng.integers(-8, 8, (16, 5))))
    c = rand_c(rng, (3, 5), spread=6)
    if out == "fp16":
        c = c.astype(np.float16).astype(np.float64)
    d = G.gemm(a, b, c, kind=kind, a_fmt=fmt, b_fmt=fmt, out=out, mode=mode)
    assert np.array_equal(d, frac_gemm(F.decode(fmt, a), F.decode(fmt, b), c, out, mode))


def test_int_gemm_saturates_or_wraps() -> None:
    a = np.full((1, 64), 127, np.int64)
    b = np.full((64, 1), 127, np.int64)
    big = np.array([[2**31 - 1000]])
    assert G.int_gemm(a, b, big)[0, 0] == 2**31 - 1
    assert G.int_gemm(a, b, big, satfinite=False)[0, 0] == (2**31 - 1000 + 64 * 127 * 127) - 2**32
    assert G.int_gemm(np.full((1, 4), 255), np.full((4, 1), -128))[0, 0] == 4 * 255 * -128


@pytest.mark.parametrize("a_val, b_val", [(256, 1), (-129, 1), (1, 256), (1, -129)])
def test_int_gemm_refuses_each_operand_bound_alone(a_val: int, b_val: int) -> None:
    # each of the four bounds (A min / max, B min / max) on its own, the other operand in range
    a = np.full((1, 4), 1, np.int64)
    b = np.full((4, 1), 1, np.int64)
    a[0, 2], b[1, 0] = a_val, b_val
    with pytest.raises(ValueError, match="int8 or uint8"):
        G.int_gemm(a, b)


def test_exact_sum_round_vectors_against_fractions() -> None:
    rng = np.random.default_rng(11)
    t = rng.standard_normal((300, 33)).astype(np.float32).astype(np.float64) * np.exp2(
        rng.integers(-100, 100, (300, 33)))
    for mode in ("rne", "rz", "ru", "rd"):
        d = G.exact_sum_round(t, "fp32", mode)
        want = [round_fraction(sum((Fraction(x) for x in row), Fraction(0)), "fp32", mode) for row in t]
        assert np.array_equal(d, want)


def test_cancellation_to_zero_and_signs() -> None:
    a = np.array([[1.0, -1.0, 2.0**-30]])
    b = np.array([[2.0**40], [2.0**40], [1.0]])
    assert G.exact_gemm(a, b, np.array([[0.0]]))[0, 0] == 2.0**-30
    z = G.exact_gemm(np.array([[1.0, -1.0]]), np.array([[1.0], [1.0]]), np.array([[0.0]]))
    assert z[0, 0] == 0 and not np.signbit(z[0, 0])
    nz = G.exact_gemm(np.array([[-0.0]]), np.array([[1.0]]), np.array([[-0.0]]))
    assert nz[0, 0] == 0 and np.signbit(nz[0, 0])


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 4), n=st.integers(1, 4), kb=st.integers(1, 3), seed=st.integers(0, 2**31),
       mode=st.sampled_from(["rne", "rz", "ru", "rd"]), vs=st.sampled_from([16, 32]))
def test_property_random_shapes(m: int, n: int, kb: int, seed: int, mode: str, vs: int) -> None:
    rng = np.random.default_rng(seed)
    k = kb * 32
    a, b = rand_codes(rng, "e2m1", (m, k)), rand_codes(rng, "e2m1", (k, n))
    sf = "ue4m3" if vs == 16 else "ue8m0"
    sa = rand_codes(rng, sf, (m, k // vs)).astype(np.uint8)
    sb = rand_codes(rng, sf, (k // vs, n)).astype(np.uint8)
    c = rand_c(rng, (m, n), spread=10)
    d = G.block_scaled_gemm(a, b, sa, sb, c, kind="mxf4nvf4", a_fmt="e2m1", b_fmt="e2m1", scale_fmt=sf, mode=mode)
    av = F.decode("e2m1", a) * np.repeat(F.decode(sf, sa), vs, axis=1)
    bv = F.decode("e2m1", b) * np.repeat(F.decode(sf, sb), vs, axis=0)
    assert np.array_equal(d, frac_gemm(av, bv, c, "fp32", mode))


@pytest.mark.parametrize("kind,af,bf,sf,vs,k", COMBOS + [("f8f6f4", "e4m3", "e5m2", None, None, 64),
                                                       ("f16", "f16", "f16", None, None, 32)])
def test_exact_recipe_is_exact_and_order_independent(kind: str, af: str, bf: str, sf: str | None,
                                                      vs: int | None, k: int) -> None:
    data = G.exact_recipe(kind, 8, 8, k, a_fmt=af, b_fmt=bf, scale_fmt=sf, vs=vs, seed=5)
    av, bv = F.decode(af, data.a), F.decode(bf, data.b)
    if sf:
        av = av * np.repeat(F.decode(sf, data.scale_a), vs, axis=1)
        bv = bv * np.repeat(F.decode(sf, data.scale_b), vs, axis=0)
    assert G.is_exact_in_fp32(av, bv, data.c).all()
    # every rounding mode, and a plain float64 sum in two different orders, give the same D
    for mode in ("rz", "ru", "rd"):
        assert np.array_equal(G.exact_gemm(av, bv, data.c, mode=mode), data.d)
    prods = av[:, None, :] * bv.T[None, :, :]
    fwd = np.zeros(data.d.shape, np.float32) + data.c.astype(np.float32)
    for t in range(k):
        fwd = fwd + prods[:, :, t].astype(np.float32)
    bwd = np.zeros(data.d.shape, np.float32)
    for t in reversed(range(k)):
        bwd = bwd + prods[:, :, t].astype(np.float32)
    bwd = bwd + data.c.astype(np.float32)
    assert np.array_equal(fwd, data.d) and np.array_equal(bwd, data.d)
    assert (data.d != 0).any() and len(np.unique(data.d)) > 4  # not a degenerate answer


def test_exact_recipe_with_13_bit_window_agrees_with_every_model() -> None:
    data = G.exact_recipe("f8f6f4", 16, 16, 32, a_fmt="e4m3", b_fmt="e4m3", seed=9, window_bits=14)
    av, bv = F.decode("e4m3", data.a), F.decode("e4m3", data.b)
    a = np.repeat(av, 16, axis=0)
    b = np.tile(bv.T, (16, 1))
    c = data.c.reshape(-1)
    for model in NM.MODELS:
        assert np.array_equal(NM.dot(model, a, b, c, "fp32"), data.d.reshape(-1)), model


def test_is_exact_detects_inexact_data() -> None:
    a = np.array([[1.0, 2.0**-30]])
    b = np.array([[1.0], [1.0]])
    assert not G.is_exact_in_fp32(a, b)[0, 0]
    assert G.is_exact_in_fp32(np.array([[1.0, 2.0**-20]]), b)[0, 0]
    assert not G.is_exact_in_fp32(np.array([[1.0, 2.0**-20]]), b, window_bits=14)[0, 0]


# --------------------------------------------------------------------------- fast paths (performance)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 6), n=st.integers(1, 6), kb=st.integers(1, 3), seed=st.integers(0, 2**31),
       mode=st.sampled_from(["rne", "rz", "ru", "rd"]), spread=st.integers(0, 40))
def test_single_matmul_path_equals_limb_path(m: int, n: int, kb: int, seed: int, mode: str, spread: int) -> None:
    """Where ``_exact_fast`` accepts the data it must give the limb path's answer bit for bit."""
    rng = np.random.default_rng(seed)
    k = 32 * kb
    a = F.decode("e4m3", rand_codes(rng, "e4m3", (m, k)))
    b = F.decode("e5m2", rand_codes(rng, "e5m2", (k, n)))
    sa = np.exp2(rng.integers(-spread, spread + 1, (m, kb))).astype(np.float64)
    sb = np.exp2(rng.integers(-spread, spread + 1, (kb, n))).astype(np.float64)
    c = rand_c(rng, (m, n), spread=spread // 2 + 1)
    fast = G._exact_fast(a, b, sa, sb, 32, c, "fp32", mode)
    slow = G._exact_scaled(a, b, sa, sb, 32, c, "fp32", mode)
    if fast is not None:
        assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])
    if spread == 0 and not np.any(c):
        assert fast is not None  # narrow data always qualifies


def test_single_matmul_path_refuses_wide_sums_and_accepts_recipe_data() -> None:
    a = np.array([[1.0, 2.0**-60]])
    b = np.array([[1.0], [1.0]])
    ones = np.ones((1, 1))
    assert G._exact_fast(a, b, ones, ones, 2, np.zeros((1, 1)), "fp32", "rne") is None
    assert G.exact_gemm(a, b)[0, 0] == 1.0  # the limb path still answers (rounded once)
    data = G.exact_recipe("mxf8f6f4", 64, 32, 64, a_fmt="e5m2", b_fmt="e2m3", scale_fmt="ue8m0", vs=32, seed=3)
    sa, sb = F.decode("ue8m0", data.scale_a), F.decode("ue8m0", data.scale_b)
    av, bv = F.decode("e5m2", data.a), F.decode("e2m3", data.b)
    assert G._exact_fast(av, bv, sa, sb, 32, data.c, "fp32", "rne") is not None


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), spread=st.integers(0, 30))
def test_global_bound_is_sufficient_for_per_cell_exactness(seed: int, spread: int) -> None:
    rng = np.random.default_rng(seed)
    a = F.decode("e2m1", rand_codes(rng, "e2m1", (5, 16))) * np.exp2(rng.integers(-spread, 1, (5, 16)))
    b = F.decode("e2m3", rand_codes(rng, "e2m3", (16, 4)))
    c = np.zeros((5, 4))
    if G._exact_by_global_bound(a, b, c, 24):
        assert G.is_exact_in_fp32(a, b, c).all()
    if spread == 0:
        assert G._exact_by_global_bound(a, b, c, 24)


def test_all_exact_falls_back_to_the_per_cell_condition() -> None:
    b = np.array([[1.0], [1.0]])
    wide = np.array([[2.0**10, 0.0], [0.0, 2.0**-20]])  # each cell exact; one bound for all is not
    assert not G._exact_by_global_bound(wide, b, np.zeros((2, 1)), 14)
    assert G.all_exact_in_fp32(wide, b, window_bits=14)
    assert not G.all_exact_in_fp32(np.array([[1.0, 2.0**-20]]), b, window_bits=14)
    assert G.all_exact_in_fp32(np.array([[1.0, 2.0**-20]]), b)


def test_negative_zero_only_where_every_product_is_negative_zero() -> None:
    a = np.array([[-0.0, 0.0], [-0.0, -0.0], [1.0, -1.0]])
    b = np.array([[1.0, 2.0], [1.0, -1.0]])
    d = G.exact_gemm(a, b, np.full((3, 2), -0.0))
    # row 0: (-0*1 + 0*1) = +0, (-0*2 + 0*-1) = -0; row 1: -0, (-0*2 + -0*-1) = +0;
    # row 2: 1 - 1 = +0 (cancellation), 2 + 1 = 3
    assert np.array_equal(d, np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 3.0]]))
    assert np.array_equal(np.signbit(d), np.array([[False, True], [True, False], [False, False]]))
