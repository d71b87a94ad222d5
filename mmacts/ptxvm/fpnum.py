"""Binary floating-point formats and exact rounding, vectorised: the one place the VM rounds a float.

Why one place: every float instruction of the PTX ISA (add/sub/mul/fma/cvt on .f16, .bf16, .f32,
.f64 and the packed x2 forms) is "compute the exact result, round it once in the instruction's mode
(.rn/.rz/.rm/.rp), then apply .ftz/.sat/.relu". Doing that per instruction in ad-hoc numpy casts
gave double roundings (numpy's float16 arithmetic goes through float32) and no directed modes.

How: an exact value travels as float64. Products and sums of half/single inputs are exact in float64,
or rounded to odd (:func:`odd_sum`), which keeps enough information to round correctly to any
format of at most 51 significand bits in any mode. :func:`round_to` then rounds that float64 to a
format by scaling to the format's quantum and rounding to an integer. Results that must be rounded to
float64 itself from an inexact value (f64 fma, directed f64 add/sub/mul, 64-bit integer to f64) go
through :func:`round_exact`, which works on Python integers (exact, per element).

NaN results are not decided here: the instruction decides (silicon's rules are per instruction and
the fuzz records pin them), see ``ops_core``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

U64 = np.uint64


@dataclass(frozen=True)
class Fmt:
    """An IEEE-style binary format: precision ``p`` (significand bits, hidden bit included), the
    smallest and largest normal exponents, and its storage width."""

    name: str
    p: int
    emin: int
    emax: int
    bits: int

    @property
    def max_finite(self) -> float:
        return math.ldexp(2.0 - math.ldexp(1.0, 1 - self.p), self.emax)

    @property
    def min_normal(self) -> float:
        return math.ldexp(1.0, self.emin)

    @property
    def udtype(self) -> np.dtype:
        return np.dtype(f"uint{self.bits}")

    @property
    def sign_bit(self) -> int:
        return 1 << (self.bits - 1)


F16 = Fmt("f16", 11, -14, 15, 16)
BF16 = Fmt("bf16", 8, -126, 127, 16)
F32 = Fmt("f32", 24, -126, 127, 32)
F64 = Fmt("f64", 53, -1022, 1023, 64)
FORMATS = {f.name: f for f in (F16, BF16, F32, F64)}
MODES = ("rn", "rz", "rm", "rp")


def decode(bits: np.ndarray, fmt: Fmt) -> np.ndarray:
    """Stored bits of ``fmt`` to their float64 values (exact). Every NaN becomes a quiet float64 NaN of
    its sign:
    a signalling NaN left in a float64 makes numpy's fmin/fmax (C's maxNum) return NaN where PTX's
    min/max return the other operand; NaN result bits are decided from the operand bits, not here."""
    b = np.asarray(bits)
    with np.errstate(invalid="ignore"):  # signalling NaNs widen quietly
        if fmt is F64:
            v = b.astype(np.uint64).view(np.float64)
        elif fmt is F32:
            v = b.astype(np.uint32).view(np.float32).astype(np.float64)
        elif fmt is F16:
            v = b.astype(np.uint16).view(np.float16).astype(np.float64)
        else:
            v = (b.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    nan = np.isnan(v)
    return np.where(nan, np.copysign(np.nan, v), v) if nan.any() else v


def encode(v: np.ndarray, fmt: Fmt) -> np.ndarray:
    """float64 values already representable in ``fmt`` (or inf/zero) to its bits (NaN -> all ones
    exponent, quiet bit; callers replace NaNs by their instruction's rule)."""
    with np.errstate(all="ignore"):
        if fmt is F64:
            return np.asarray(v, dtype=np.float64).view(np.uint64)
        if fmt is F32:
            return np.asarray(v).astype(np.float32).view(np.uint32)
        if fmt is F16:
            return np.asarray(v).astype(np.float16).view(np.uint16)
        return (np.asarray(v).astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def odd_sum(p: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``p + z`` (float64) rounded to odd: when the float64 sum is inexact its last bit is forced to 1
    on the exact value's side. Rounding that to a format of at most 51 bits, in any mode, rounds the
    exact sum."""
    with np.errstate(all="ignore"):
        s = p + z
        bp = s - z
        err = (p - bp) + (z - (s - bp))  # TwoSum: s + err == p + z exactly (s finite)
        bits = s.view(np.uint64)
        fix = (err != 0) & np.isfinite(s) & ((bits & U64(1)) == 0)
        if not fix.any():
            return s
        outward = (err > 0) == (s > 0)
        adj = np.where(outward, bits + U64(1), bits - U64(1))
        return np.where(fix, adj.view(np.float64), s)


def _round_mag(s: np.ndarray, neg: np.ndarray, mode: str) -> np.ndarray:
    if mode == "rn":
        return np.rint(s)
    if mode == "rz":
        return np.trunc(s)
    if mode == "rp":
        return np.where(neg, np.floor(s), np.ceil(s))
    if mode == "rm":
        return np.where(neg, np.ceil(s), np.floor(s))
    raise ValueError(f"rounding mode {mode}")


def round_to(v: np.ndarray, fmt: Fmt, mode: str = "rn", ftz: bool = False) -> np.ndarray:
    """float64 ``v`` (exact, or rounded to odd with at least ``fmt.p + 2`` bits) rounded once to
    ``fmt`` in ``mode``, as float64 values of ``fmt`` (overflow per mode: to infinity or the largest
    finite value). ``ftz``: results that are tiny (:func:`tiny`) become zeros of their sign. NaNs stay
    NaN."""
    v = np.asarray(v, dtype=np.float64)
    with np.errstate(all="ignore"):
        neg = np.signbit(v)
        a = np.abs(v)
        fin = np.isfinite(a) & (a != 0)
        _, e = np.frexp(np.where(fin, a, 1.0))
        q = np.maximum(e - 1, fmt.emin) - (fmt.p - 1)
        s = np.ldexp(a, -q)
        r = np.ldexp(_round_mag(s, neg, mode), q)
        big = r > fmt.max_finite
        if big.any():
            to_inf = {"rn": np.ones_like(neg), "rz": np.zeros_like(neg), "rp": ~neg, "rm": neg}[mode]
            r = np.where(big, np.where(to_inf, np.inf, fmt.max_finite), r)
        if ftz:
            r = np.where(tiny(np.where(fin, v, 1.0), fmt, mode), 0.0, r)
        r = np.where(fin, r, a)
        return np.where(neg, -r, r)


def tiny(v: np.ndarray, fmt: Fmt, mode: str) -> np.ndarray:
    """IEEE 754's tininess after rounding: ``v`` (exact or rounded to odd), rounded to ``fmt``'s
    precision with an unbounded exponent range, is nonzero and below the smallest normal. This is the
    test H100's .ftz arithmetic flushes by (fuzz records: a product just below 2^-126 that rounds to
    2^-126 only on the subnormal grid is flushed; an fma result that rounds to 2^-126 at full
    precision is kept)."""
    with np.errstate(all="ignore"):
        a = np.abs(np.asarray(v, dtype=np.float64))
        fin = np.isfinite(a) & (a != 0)
        _, e = np.frexp(np.where(fin, a, 1.0))
        q = (e - 1) - (fmt.p - 1)
        r = np.ldexp(_round_mag(np.ldexp(np.where(fin, a, 1.0), -q), np.signbit(v), mode), q)
        return fin & (r < fmt.min_normal)


def is_subnormal(v: np.ndarray, fmt: Fmt) -> np.ndarray:
    a = np.abs(v)
    return (a != 0) & (a < fmt.min_normal)


def flush(v: np.ndarray, fmt: Fmt) -> np.ndarray:
    """.ftz on inputs: subnormals of ``fmt`` become zeros of the same sign."""
    return np.where(is_subnormal(v, fmt), np.copysign(0.0, v), v)


# ------------------------------------------------------------------------------------------ exact
def _fraction(x: float) -> Fraction:
    return Fraction(*x.as_integer_ratio())


def round_fraction(v: Fraction, neg_zero: bool, fmt: Fmt, mode: str) -> float:
    """The exact rational ``v`` rounded once to ``fmt`` in ``mode`` (a float64 value of ``fmt``);
    ``neg_zero`` is the sign an exact zero takes."""
    if v == 0:
        return -0.0 if neg_zero else 0.0
    neg = v < 0
    a = -v if neg else v
    num, den = a.numerator, a.denominator
    e = num.bit_length() - den.bit_length()
    if Fraction(num, den) < Fraction(2) ** e:
        e -= 1
    q = max(e, fmt.emin) - (fmt.p - 1)
    n, d = (num << -q, den) if q < 0 else (num, den << q)
    k, rem = divmod(n, d)
    if rem:
        if mode == "rn":
            up = 2 * rem > d or (2 * rem == d and k & 1)
        elif mode == "rz":
            up = False
        else:
            up = (mode == "rp") != neg
        k += int(up)
    if k.bit_length() - 1 + q > fmt.emax:
        r = math.inf
    else:
        r = math.ldexp(float(k), q)  # exact: k has at most p + 1 bits
    if r > fmt.max_finite:
        to_inf = mode == "rn" or (mode == "rp" and not neg) or (mode == "rm" and neg)
        r = math.inf if to_inf else fmt.max_finite
    return -r if neg else r


def round_exact(op: str, xs: tuple[np.ndarray, ...], fmt: Fmt, mode: str) -> np.ndarray:
    """``op`` (``add``/``sub``/``mul``/``fma``) of finite float64 operands computed exactly (Python
    rationals, per element) and rounded once to ``fmt``. Non-finite operands give NaN here; callers
    handle infinities and NaNs (IEEE rules) before or after."""
    cols = [np.asarray(x, dtype=np.float64) for x in xs]
    out = np.empty(len(cols[0]), dtype=np.float64)
    for i in range(len(out)):
        vals = [float(c[i]) for c in cols]
        if not all(math.isfinite(x) for x in vals):
            out[i] = math.nan
            continue
        f = [_fraction(x) for x in vals]
        if op == "add":
            r, zs = f[0] + f[1], _zero_sign_sum(vals[0], vals[1], mode)
        elif op == "sub":
            r, zs = f[0] - f[1], _zero_sign_sum(vals[0], -vals[1], mode)
        elif op == "mul":
            r, zs = f[0] * f[1], math.copysign(1.0, vals[0]) * math.copysign(1.0, vals[1]) < 0
        elif op == "fma":
            p = f[0] * f[1]
            psign = math.copysign(1.0, vals[0]) * math.copysign(1.0, vals[1])
            r = p + f[2]
            zs = _zero_sign_sum(psign * 0.0 if p == 0 else (1.0 if p > 0 else -1.0), vals[2], mode)
        else:
            raise ValueError(op)
        out[i] = round_fraction(r, zs, fmt, mode)
    return out


def _zero_sign_sum(x: float, y: float, mode: str) -> bool:
    """IEEE 754 6.3: the sign of an exact zero sum: negative when both addends are -0 (or equal and
    opposite... not exactly: x + y == 0 exactly with x = -y nonzero gives -0 only under rm)."""
    if x == 0 and y == 0:
        sx, sy = math.copysign(1.0, x) < 0, math.copysign(1.0, y) < 0
        if sx == sy:
            return sx
    return mode == "rm"


def int_to_float(v: list[int], fmt: Fmt, mode: str) -> np.ndarray:
    """Python integers rounded once to ``fmt`` in ``mode`` (float64 values)."""
    return np.array([round_fraction(Fraction(x), False, fmt, mode) for x in v], dtype=np.float64)
