"""Formats: every code decoded, encoding checked against ml_dtypes and an independent decoder.

The independent decoder below is written from the format definitions (OCP MX v1.0 for
FP8/FP6/FP4/E8M0, IEEE 754 for f16/bf16) with exact fractions, one code at a time, and
shares nothing with ``reference.formats`` except the format names.
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from reference import formats as F

# numpy/ml_dtypes warn when the *comparison* values overflow or are NaN in a cast; expected here
pytestmark = pytest.mark.filterwarnings("ignore:(overflow|invalid value) encountered in cast:RuntimeWarning")

# name: (sign bits, exponent bits, mantissa bits, bias, rule) -- from the definitions.
DEFS = {
    "e4m3": (1, 4, 3, 7, "fn"),
    "e5m2": (1, 5, 2, 15, "ieee"),
    "e2m3": (1, 2, 3, 1, "none"),
    "e3m2": (1, 3, 2, 3, "none"),
    "e2m1": (1, 2, 1, 1, "none"),
    "ue8m0": (0, 8, 0, 127, "e8m0"),
    "ue4m3": (0, 4, 3, 7, "fn"),
    "f16": (1, 5, 10, 15, "ieee"),
    "bf16": (1, 8, 7, 127, "ieee"),
}
ML = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "e2m3": "float6_e2m3fn",
      "e3m2": "float6_e3m2fn", "e2m1": "float4_e2m1fn", "ue8m0": "float8_e8m0fnu",
      "f16": "float16", "bf16": "bfloat16"}
SMALL = ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue8m0", "ue4m3"]


def ref_decode(name: str, code: int) -> float:
    s_bits, e_bits, m_bits, bias, rule = DEFS[name]
    width = s_bits + e_bits + m_bits
    if name == "ue4m3" and code >= 0x80:
        return math.nan  # the reading OPEN_QUESTIONS says decode() takes
    assert 0 <= code < (1 << width)
    m = code % (1 << m_bits)
    e = (code >> m_bits) % (1 << e_bits)
    neg = s_bits == 1 and (code >> (e_bits + m_bits)) == 1
    top = (1 << e_bits) - 1
    if rule == "e8m0":
        return math.nan if e == 255 else float(Fraction(2) ** (e - 127))
    if rule == "ieee" and e == top:
        return math.nan if m else (-math.inf if neg else math.inf)
    if rule == "fn" and e == top and m == (1 << m_bits) - 1:
        return math.nan
    if e == 0:
        mag = Fraction(m, 1 << m_bits) * Fraction(2) ** (1 - bias)
    else:
        mag = (1 + Fraction(m, 1 << m_bits)) * Fraction(2) ** (e - bias)
    return -float(mag) if neg else float(mag)


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values, equal zero signs, NaN where NaN."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    both_nan = np.isnan(a) & np.isnan(b)
    eq = (a == b) & (np.signbit(a) == np.signbit(b))
    return bool(np.all(both_nan | eq))


@pytest.mark.parametrize("name", SMALL + ["f16", "bf16"])
def test_decode_every_code_matches_independent_decoder(name: str) -> None:
    f = F.get(name)
    codes = np.arange(f.n_codes)
    want = np.array([ref_decode(name, int(c)) for c in codes])
    assert same(F.decode(name, codes), want)


@pytest.mark.parametrize("name", [n for n in SMALL + ["f16", "bf16"] if n in ML])
def test_decode_every_code_matches_ml_dtypes(name: str) -> None:
    f = F.get(name)
    dt = np.dtype(getattr(ml_dtypes, ML[name]) if hasattr(ml_dtypes, ML[name]) else ML[name])
    codes = np.arange(f.n_codes, dtype=f.code_dtype)
    want = codes.view(dt) if dt.itemsize == codes.itemsize else codes.astype(np.uint8).view(dt)
    assert same(F.decode(name, codes), want.astype(np.float64))


def test_tf32_decode_is_fp32_with_low_13_bits_zero() -> None:
    codes = np.arange(1 << 19, dtype=np.uint32)
    want = (codes << np.uint32(13)).view(np.float32).astype(np.float64)
    assert same(F.decode("tf32", codes), want)


@pytest.mark.parametrize(
    "name,maxf,minsub,inf,nan",
    [("e4m3", 448, 2**-9, False, True), ("e5m2", 57344, 2**-16, True, True),
     ("e2m3", 7.5, 2**-3, False, False), ("e3m2", 28, 2**-4, False, False),
     ("e2m1", 6, 0.5, False, False), ("ue8m0", 2.0**127, 2.0**-127, False, True),
     ("ue4m3", 448, 2**-9, False, True)],
)
def test_format_limits(name: str, maxf: float, minsub: float, inf: bool, nan: bool) -> None:
    f = F.get(name)
    assert (f.max_finite, f.min_subnormal, f.has_inf, f.has_nan) == (maxf, minsub, inf, nan)
    finite = F.decode_table(name)[np.isfinite(F.decode_table(name))]
    assert finite.max() == maxf
    assert np.abs(finite[finite != 0]).min() == minsub


def _probe_values(name: str) -> np.ndarray:
    """Every finite value, every midpoint, points just around midpoints, out-of-range and random."""
    vals = np.unique(F.decode_table(name)[np.isfinite(F.decode_table(name))])
    pos = vals[vals > 0]
    mids = (pos[1:] + pos[:-1]) / 2
    top = pos[-1]
    ulp_top = top - pos[-2]
    extra = np.array([top + ulp_top / 2, top + ulp_top / 2 * 0.999, top + ulp_top, top * 4, 1e30,
                      pos[0] / 2, pos[0] / 2 * 1.001, pos[0] / 2 * 0.999, pos[0] / 4, 1e-30])
    rng = np.random.default_rng(0)
    rnd = np.exp2(rng.uniform(np.log2(pos[0]) - 2, np.log2(top) + 1, 20000)).astype(np.float32)
    m32 = mids.astype(np.float32)  # ml_dtypes rounds float64 via float32: probe with fp32 values
    m = np.concatenate([pos, mids, np.nextafter(m32, np.float32(0)), np.nextafter(m32, np.float32(np.inf)),
                        extra, rnd, [0.0]])
    m = m[m.astype(np.float32).astype(np.float64) == m]
    return np.concatenate([m, -m])


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "f16", "bf16"])
def test_encode_rne_matches_ml_dtypes(name: str) -> None:
    x = _probe_values(name)
    x = x[np.abs(x) < 1e29]
    dt = np.dtype(getattr(ml_dtypes, ML[name]) if hasattr(ml_dtypes, ML[name]) else ML[name])
    want = x.astype(dt).astype(np.float64)
    got = F.decode(name, F.encode(name, x))
    assert same(got, want)


def test_encode_e8m0_matches_ml_dtypes_in_fp32_range() -> None:
    x = _probe_values("ue8m0")
    x = x[(x > 2.0**-126) & (x < 2.0**127)]
    want = x.astype(ml_dtypes.float8_e8m0fnu).view(np.uint8)
    assert np.array_equal(F.encode("ue8m0", x), want)
    assert np.array_equal(F.encode("ue8m0", np.array([0.0, -1.0, np.nan, 2.0**-140, 2.0**129])),
                          [0xFF, 0xFF, 0xFF, 0x00, 0xFF])
    assert F.encode("ue8m0", np.array([2.0**129, np.inf]), "satfinite").tolist() == [0xFE, 0xFE]


@pytest.mark.parametrize("name", SMALL + ["f16", "bf16", "tf32"])
def test_decode_encode_roundtrip_every_finite_code(name: str) -> None:
    codes = F.finite_codes(name)
    vals = F.decode(name, codes)
    back = F.encode(name, vals)
    assert same(F.decode(name, back), vals)
    assert F.representable(name, vals).all()
    # Codes are unique except that -0 and +0 both exist
    assert np.array_equal(back, codes)


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue4m3"])
def test_satfinite_clamps_and_keeps_nan(name: str) -> None:
    f = F.get(name)
    x = np.array([f.max_finite * 1.01, f.max_finite * 100, np.inf] + ([] if not f.signed else [-np.inf]))
    got = F.decode(name, F.encode(name, x, "satfinite"))
    assert np.array_equal(np.abs(got), np.full(x.size, f.max_finite))
    if f.has_nan:
        assert np.isnan(F.decode(name, F.encode(name, np.array([np.nan]), "satfinite"))).all()
    else:
        with pytest.raises(ValueError):
            F.encode(name, np.array([np.nan]))


def test_rne_overflow_follows_format() -> None:
    assert np.isinf(F.decode("e5m2", F.encode("e5m2", np.array([1e6])))).all()
    assert np.isnan(F.decode("e4m3", F.encode("e4m3", np.array([470.0])))).all()
    assert F.decode("e4m3", F.encode("e4m3", np.array([464.0]))).tolist() == [448.0]  # tie to even
    assert F.decode("e2m1", F.encode("e2m1", np.array([7.0, -100.0]))).tolist() == [6.0, -6.0]


def test_rz_mode_truncates() -> None:
    x = np.array([1.4, 1.6, -1.6, 5.9, 0.3])
    assert F.decode("e2m1", F.encode("e2m1", x, "rz")).tolist() == [1.0, 1.5, -1.5, 4.0, 0.0]


def test_ue4m3_readings_and_unsigned_encoding() -> None:
    hi = np.array([0xB8])  # bit 7 set, low bits = 1.0
    assert np.isnan(F.decode("ue4m3", hi)).all()
    assert F.decode("ue4m3", hi, reading="ignored").tolist() == [1.0]
    assert F.decode("ue4m3", hi, reading="signed").tolist() == [-1.0]
    assert F.encode("ue4m3", np.array([1.0, 448.0])).tolist() == [0x38, 0x7E]
    with pytest.raises(ValueError):
        F.encode("ue4m3", np.array([-1.0]))
    assert F.decode("ue8m0", np.array([0xFF]), reading="2^128").tolist() == [2.0**128]


def test_decode_rejects_out_of_range_codes() -> None:
    with pytest.raises(ValueError):
        F.decode("e2m1", np.array([16]))
    with pytest.raises(ValueError):
        F.get("e9m9")


def test_round_float_directed_modes() -> None:
    one = 1.0
    ulp = 2.0**-23
    x = np.array([one + ulp / 2, one + ulp / 4, -(one + ulp / 4), 2.0**128, -(2.0**128), 2.0**-150 * 1.5])
    assert F.round_float(x, "fp32", "rne").tolist() == [1.0, 1.0, -1.0, np.inf, -np.inf, 2.0**-149]
    assert F.round_float(x, "fp32", "rz").tolist()[:5] == [1.0, 1.0, -1.0, F.get("f32").max_finite,
                                                           -F.get("f32").max_finite]
    assert F.round_float(x, "fp32", "ru").tolist()[:3] == [one + ulp, one + ulp, -1.0]
    assert F.round_float(x, "fp32", "rd").tolist()[:3] == [1.0, 1.0, -(one + ulp)]
    # numpy's own float64 -> float32 cast is RNE: agree on random values
    r = np.random.default_rng(1).standard_normal(10000) * np.exp2(np.random.default_rng(2).integers(-140, 120, 10000))
    assert same(F.round_float(r, "fp32", "rne"), r.astype(np.float32).astype(np.float64))
    assert same(F.round_float(r, "fp16", "rne"), r.astype(np.float16).astype(np.float64))


def test_open_questions_are_complete() -> None:
    ids = [q.id for q in F.OPEN_QUESTIONS]
    assert len(ids) == len(set(ids))
    for q in F.OPEN_QUESTIONS:
        assert q.readings and q.question and q.why and q.probe
    # every format the spec names is covered by at least one question
    text = " ".join(q.question for q in F.OPEN_QUESTIONS)
    for name in ("UE4M3", "UE8M0", "E4M3", "E2M1"):
        assert name in text


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue4m3"])
def test_encode_satfinite_is_nearest_value_ties_to_even_code(name: str) -> None:
    """Brute force from the independent decoder: the nearest finite value, ties to the even code."""
    f = F.get(name)
    codes = np.array([c for c in range(1 << (f.value_bits or f.bits)) if math.isfinite(ref_decode(name, c))])
    vals = np.array([ref_decode(name, int(c)) for c in codes])
    x = _probe_values(name)
    if not f.signed:
        x = x[x >= 0]
    dist = np.abs(x[:, None] - vals[None, :])
    best = dist.min(axis=1, keepdims=True)
    cand = dist == best
    # prefer the even code (mantissa LSB 0); among +-0 prefer the sign of x
    score = cand * (2 + (codes[None, :] % 2 == 0) * 2 + (np.signbit(vals)[None, :] == np.signbit(x)[:, None]))
    want = vals[np.argmax(score, axis=1)]
    got = F.decode(name, F.encode(name, x, "satfinite"))
    assert same(got, want)
