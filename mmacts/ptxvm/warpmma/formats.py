"""Bit-level decoders for the operand formats the warp/warpgroup MMAs read, written from the format
definitions (OCP MX v1.0 for E4M3/E5M2/E3M2/E2M3/E2M1/E8M0, IEEE 754 for f16/f32, bfloat16 =
the top half of an f32), not from ``reference.formats`` or ``reference.mma_sync.values``.

Every decoder maps an integer code array to float64 values (exact: no format here has more than
24 significand bits). Encoders of results (f32, f16) return bit patterns, NaN as the canonical NaN
of PTX (f32 0x7FFFFFFF, f16 0x7FFF).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np


@dataclass(frozen=True)
class MiniFloat:
    """A sign/exponent/mantissa format. ``specials``: ``ieee`` (all-ones exponent = Inf/NaN),
    ``fn`` (only all-ones exponent and mantissa = NaN, no Inf: OCP E4M3) or ``none``."""

    name: str
    exp_bits: int
    man_bits: int
    bias: int
    specials: str
    signed: bool = True

    @property
    def bits(self) -> int:
        return int(self.signed) + self.exp_bits + self.man_bits


ELEMENTS: dict[str, MiniFloat] = {
    "e4m3": MiniFloat("e4m3", 4, 3, 7, "fn"),
    "e5m2": MiniFloat("e5m2", 5, 2, 15, "ieee"),
    "e3m2": MiniFloat("e3m2", 3, 2, 3, "none"),
    "e2m3": MiniFloat("e2m3", 2, 3, 1, "none"),
    "e2m1": MiniFloat("e2m1", 2, 1, 1, "none"),
    "f16": MiniFloat("f16", 5, 10, 15, "ieee"),
    "bf16": MiniFloat("bf16", 8, 7, 127, "ieee"),
}
"""Element formats by PTX type name."""

UE4M3_READINGS = ("nan", "ignored", "signed")
"""What a set bit 7 of a UE4M3 scale byte means (register AMB-UE4M3-SIGN; the type is unsigned, so
the byte's top bit is outside it). ``nan`` is the project's default reading."""


def _decode_minifloat(codes: np.ndarray, f: MiniFloat) -> np.ndarray:
    c = np.asarray(codes).astype(np.int64) & ((1 << f.bits) - 1)
    man = c & ((1 << f.man_bits) - 1)
    exp = (c >> f.man_bits) & ((1 << f.exp_bits) - 1)
    sign = ((c >> (f.exp_bits + f.man_bits)) & 1) if f.signed else np.zeros_like(c)
    # normal: (1 + m/2^p) 2^(e-bias); subnormal (e = 0): (m/2^p) 2^(1-bias)
    sig = np.where(exp == 0, man, man + (1 << f.man_bits)).astype(np.float64)
    val = np.ldexp(sig, (np.maximum(exp, 1) - f.bias - f.man_bits).astype(np.int32))
    emax_code = (1 << f.exp_bits) - 1
    if f.specials == "ieee":
        val = np.where(exp == emax_code, np.where(man == 0, np.inf, np.nan), val)
    elif f.specials == "fn":
        val = np.where((exp == emax_code) & (man == (1 << f.man_bits) - 1), np.nan, val)
    return np.where(sign == 1, -val, val)


@cache
def _table(name: str) -> np.ndarray:
    f = ELEMENTS[name]
    return _decode_minifloat(np.arange(1 << f.bits), f)


def decode_element(codes: np.ndarray, etype: str) -> np.ndarray:
    """Element codes (only the type's low ``bits`` bits are read) -> float64."""
    if etype not in ELEMENTS:
        raise ValueError(f"unknown element type {etype!r}")
    f = ELEMENTS[etype]
    c = np.asarray(codes).astype(np.int64) & ((1 << f.bits) - 1)
    if f.bits <= 16:
        return _table(etype)[c]
    return _decode_minifloat(c, f)


def element_bits(etype: str) -> int:
    return ELEMENTS[etype].bits


@cache
def scale_table(stype: str, reading: str) -> np.ndarray:
    """float64 value of every 8-bit code of scale type ``stype`` under ``reading`` of AMB-UE4M3-SIGN (ue4m3)."""
    code = np.arange(256, dtype=np.int64)
    if stype == "ue8m0":
        # E8M0: 2^(code - 127); 0xFF is NaN (OCP MX); no zero, no sign.
        return np.where(code == 0xFF, np.nan, np.ldexp(1.0, (code - 127).astype(np.int32)))
    if stype == "ue4m3":
        if reading not in UE4M3_READINGS:
            raise ValueError(f"ue4m3 reading must be one of {UE4M3_READINGS}, not {reading!r}")
        mag = _decode_minifloat(code & 0x7F, ELEMENTS["e4m3"])  # an E4M3 with the sign bit clear
        top = code >= 0x80
        if reading == "nan":
            return np.where(top, np.nan, mag)
        if reading == "signed":
            return np.where(top, -mag, mag)
        return mag
    raise ValueError(f"unknown scale type {stype!r}")


def decode_scale(codes: np.ndarray, stype: str, reading: str = "nan") -> np.ndarray:
    """8-bit scale codes -> float64 scale values."""
    return scale_table(stype, reading)[np.asarray(codes).astype(np.int64) & 0xFF]


def f32_from_bits(bits: np.ndarray) -> np.ndarray:
    """f32 bit patterns -> float64. A signalling NaN (e.g. 0x7F800001) stays a NaN; the widening cast
    raises the IEEE invalid flag on it (numpy's RuntimeWarning), which is not an error here."""
    f = np.ascontiguousarray(np.asarray(bits, dtype=np.uint32)).view(np.float32)
    with np.errstate(invalid="ignore"):
        return f.astype(np.float64)


def f16_from_bits(bits: np.ndarray) -> np.ndarray:
    return decode_element(np.asarray(bits, dtype=np.uint32) & 0xFFFF, "f16")


CANONICAL_NAN_F32 = np.uint32(0x7FFFFFFF)
CANONICAL_NAN_F16 = np.uint32(0x7FFF)


def f32_to_bits(values: np.ndarray) -> np.ndarray:
    """float64 values exactly representable in f32 (or Inf/NaN) -> uint32 bits; NaN -> 0x7FFFFFFF."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        f = v.astype(np.float32)
    if np.any(np.isfinite(v) & (f.astype(np.float64) != v)):
        raise ValueError("f32_to_bits: value not exact in f32 (the arithmetic must round first)")
    bits = np.ascontiguousarray(f).view(np.uint32).copy()
    return np.where(np.isnan(v), CANONICAL_NAN_F32, bits).astype(np.uint32)


def f16_to_bits(values: np.ndarray) -> np.ndarray:
    """float64 values exactly representable in f16 (or Inf/NaN) -> 16-bit codes in uint32; NaN -> 0x7FFF."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        h = v.astype(np.float16)
    if np.any(np.isfinite(v) & (h.astype(np.float64) != v)):
        raise ValueError("f16_to_bits: value not exact in f16 (the arithmetic must round first)")
    bits = np.ascontiguousarray(h).view(np.uint16).astype(np.uint32)
    return np.where(np.isnan(v), CANONICAL_NAN_F16, bits).astype(np.uint32)
