"""The VM's rounding core against an independent exact rounding (Python integers), and the qualifier guard.

``fpnum.round_to`` (numpy: scale to the quantum, round to an integer) and ``fpnum.round_fraction`` (exact
rationals, integer division) are two implementations of one rule; they must agree on every format and
mode, on values near every boundary (ties, the subnormal range, overflow). The fuzz records check both
against an H100 (mmacts/validation/fuzz/test_replay.py); this pins them to each other where silicon cannot reach.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from mmacts.ptxvm import fpnum


def _values(rng: np.random.Generator, fmt: fpnum.Fmt, n: int) -> np.ndarray:
    """float64 values around ``fmt``'s interesting places: ties and near-ties at random exponents
    (subnormal and overflow ranges included)."""
    e = rng.integers(fmt.emin - fmt.p - 3, fmt.emax + 2, size=n)
    k = rng.integers(1 << (fmt.p - 1), 1 << fmt.p, size=n).astype(np.float64)
    frac = rng.choice([0.0, 0.5, 0.25, 0.75, 0.5 + 2.0**-20, 0.5 - 2.0**-20], size=n)
    v = np.ldexp(k + frac, e - (fmt.p - 1))
    return np.where(rng.random(n) < 0.5, -v, v)


@pytest.mark.parametrize("fmt", [fpnum.F16, fpnum.BF16, fpnum.F32])
@pytest.mark.parametrize("mode", fpnum.MODES)
def test_round_to_agrees_with_exact_rationals(fmt: fpnum.Fmt, mode: str) -> None:
    rng = np.random.default_rng([fmt.p, fpnum.MODES.index(mode)])
    v = _values(rng, fmt, 400)
    got = fpnum.round_to(v, fmt, mode)
    want = [fpnum.round_fraction(Fraction(float(x)), bool(np.signbit(x)), fmt, mode) for x in v]
    bad = [(float(x), float(g), w) for x, g, w in zip(v, got, want, strict=True) if g != w]
    assert not bad, bad[:5]


def test_round_to_planted_fault_is_caught() -> None:
    """Plant: ties to away instead of to even."""
    v = np.array([1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11])  # f16 ties (p = 11)
    good = fpnum.round_to(v, fpnum.F16, "rn")
    away = np.floor(v * 2**10 + 0.5) / 2**10
    assert list(good) == [1.0, 1.0 + 2 * 2.0**-10] and list(away) != list(good)


def test_f64_exact_ops_round_once() -> None:
    a = np.array([1.0, 2.0**-1074, 1e308])
    b = np.array([2.0**-60, 2.0**-1074, 1e308])
    # 1 + 2^-60 toward +inf is the next double; subnormal sums exact; overflow toward zero is max
    r = fpnum.round_exact("add", (a, b), fpnum.F64, "rp")
    assert r[0] == np.nextafter(1.0, 2.0) and r[1] == 2.0**-1073 and r[2] == np.inf
    r = fpnum.round_exact("add", (a, b), fpnum.F64, "rz")
    assert r[0] == 1.0 and r[2] == np.finfo(np.float64).max
    r = fpnum.round_exact("fma", (np.array([3.0]), np.array([1 / 3]), np.array([-1.0])), fpnum.F64, "rn")
    assert r[0] == 3.0 * (1 / 3) - 1.0 or r[0] == float(Fraction(3) * Fraction(1 / 3) - 1)


def test_tininess_after_rounding() -> None:
    """H100's .ftz flushes by tininess after rounding (unbounded exponent): a value that only reaches
    2^-126 on the subnormal grid is tiny; one that reaches it at full precision is not."""
    just_below = 2.0**-126 * (1 - 2.0**-24)  # exactly representable with 24 bits: tiny
    nearly = 2.0**-126 * (1 - 2.0**-40)  # rounds (rn) to 2^-126 at 24 bits: not tiny
    assert fpnum.tiny(np.array([just_below]), fpnum.F32, "rn")[0]
    assert not fpnum.tiny(np.array([nearly]), fpnum.F32, "rn")[0]
    assert fpnum.tiny(np.array([nearly]), fpnum.F32, "rz")[0]


def _run(body: str, regs: str, values: list[int]) -> list[int]:
    from mmacts.ptxvm.runtime import load_module

    ptx = f""".version 8.4
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p) {{
  .reg .b64 %rd<2>;
  {regs}
  ld.param.u64 %rd0, [p];
{body}
  ret;
}}"""
    mod = load_module(ptx)
    buf = mod.rt.to_device(np.array(values, dtype=np.uint32))
    out = mod.launch("k", 1, 1, [buf])
    assert out.status == "ok", out.message
    return [int(x) for x in mod.rt.to_host(buf)]


def test_int_max_relu_clamps_negative_results() -> None:
    body = """  ld.global.u32 %r1, [%rd0];
  ld.global.u32 %r2, [%rd0+4];
  max.relu.s32 %r3, %r1, %r2;
  st.global.u32 [%rd0+8], %r3;"""
    got = _run(body, ".reg .b32 %r<4>;", [0xFFFFFFF0, 0xFFFFFFFE, 7])
    assert got[2] == 0


@pytest.mark.parametrize("op", ["add.cc.u32 %r3, %r1, %r2;", "cvt.rna.f32.f32 %r3, %r1;"])
def test_an_unimplemented_qualifier_is_refused_by_name(op: str) -> None:
    from mmacts.ptxvm.runtime import load_module

    ptx = f""".version 8.4
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p) {{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd0, [p];
  ld.global.u32 %r1, [%rd0];
  ld.global.u32 %r2, [%rd0];
  {op}
  st.global.u32 [%rd0], %r3;
  ret;
}}"""
    mod = load_module(ptx)
    out = mod.launch("k", 1, 1, [mod.rt.to_device(np.zeros(4, np.uint32))])
    assert out.status == "error" and "PTX VM unsupported" in out.message
    assert ("qualifier .cc" in out.message) or ("qualifier .rna" in out.message), out.message
