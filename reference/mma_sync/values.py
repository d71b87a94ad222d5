"""Code <-> value tables for the element and scale formats mma.sync block_scale reads.

Why a private table here and not only ``reference.formats``: the fragment model must decode
exactly the codes it pulled out of register images, and it must stay usable while the
formats module is being written. The tables come from ``ml_dtypes`` (an independent
implementation of the OCP MX formats); ``reference/formats.py`` is checked against the same
library, so the two agree by construction and a test cross-checks them when both exist.

Open points are decoded the way the OCP MX spec says and flagged where the PTX text is silent:
UE8M0 0xFF is NaN. The UE4M3 sign bit (register AMB-UE4M3-SIGN) is read as ``reference.formats``
reads it by default -- codes 0x80-0xFF lie outside the unsigned type and decode as NaN, so an
undefined input never yields a plausible scale -- and the other readings (``ignored``: code &
0x7F; ``signed``: a negative scale) are a parameter. The two references must not disagree on a
scale code (they did: this module used to ignore bit 7); ``test_values`` checks all 256 codes.
"""

from __future__ import annotations

from functools import cache

import ml_dtypes
import numpy as np

ELEMENT_BITS: dict[str, int] = {"e4m3": 8, "e5m2": 8, "e3m2": 6, "e2m3": 6, "e2m1": 4}
"""Payload width of each element type (its code occupies this many low bits of the code)."""

_ML = {
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e5m2": ml_dtypes.float8_e5m2,
    "e3m2": ml_dtypes.float6_e3m2fn,
    "e2m3": ml_dtypes.float6_e2m3fn,
    "e2m1": ml_dtypes.float4_e2m1fn,
}

SCALE_TYPES: tuple[str, ...] = ("ue8m0", "ue4m3")

UE4M3_READINGS: tuple[str, ...] = ("nan", "ignored", "signed")
"""Readings of a set UE4M3 sign bit (register AMB-UE4M3-SIGN), as ``reference.formats`` names them."""
UE4M3_DEFAULT_READING = "nan"
"""The reading ``reference.formats.decode`` takes when none is named."""


@cache
def element_table(etype: str) -> np.ndarray:
    """float64 value of every code of ``etype`` (length 2**bits)."""
    n = 1 << ELEMENT_BITS[etype]
    codes = np.arange(n, dtype=np.uint8)
    return codes.view(_ML[etype]).astype(np.float64)


@cache
def scale_table(stype: str, reading: str = UE4M3_DEFAULT_READING) -> np.ndarray:
    """float64 value of every 8-bit scale code (length 256).

    ``reading`` (UE4M3 only) says what a set bit 7 means: ``nan`` (outside the type, the
    default), ``ignored`` (only bits 6..0 count) or ``signed`` (the byte is a signed E4M3).
    """
    codes = np.arange(256, dtype=np.uint8)
    if stype == "ue8m0":
        return codes.view(ml_dtypes.float8_e8m0fnu).astype(np.float64)
    if stype == "ue4m3":
        if reading not in UE4M3_READINGS:
            raise ValueError(f"ue4m3 reading must be one of {', '.join(UE4M3_READINGS)}, not {reading!r}")
        magnitude = (codes & 0x7F).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
        high = codes >= 0x80
        if reading == "nan":
            return np.where(high, np.nan, magnitude)
        if reading == "signed":
            return np.where(high, -magnitude, magnitude)
        return magnitude
    raise ValueError(f"unknown scale type {stype!r}")


def decode_elements(codes: np.ndarray, etype: str) -> np.ndarray:
    """Codes (any integer array) -> float64 values."""
    return element_table(etype)[np.asarray(codes, dtype=np.int64)]


def decode_scales(codes: np.ndarray, stype: str, reading: str = UE4M3_DEFAULT_READING) -> np.ndarray:
    """Scale codes -> float64 scale values (``reading``: see :func:`scale_table`)."""
    return scale_table(stype, reading)[np.asarray(codes, dtype=np.int64)]


def _encode(values: np.ndarray, table: np.ndarray, what: str) -> np.ndarray:
    """Exact inverse lookup: every value must be representable (recipes build exact data).

    Positive zero is preferred for 0.0 (the table's first matching code is taken after
    sorting, and +0 is code 0).
    """
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(table)
    codes = np.nonzero(finite)[0]
    vals = table[finite]
    # Keep the lowest code for each value (+0 before -0) by a stable sort on value.
    order = np.lexsort((codes, vals))
    vals, codes = vals[order], codes[order]
    first = np.concatenate(([True], vals[1:] != vals[:-1]))
    vals, codes = vals[first], codes[first]
    idx = np.searchsorted(vals, values)
    idx = np.clip(idx, 0, len(vals) - 1)
    ok = vals[idx] == values
    if not np.all(ok):
        bad = values[~ok].ravel()[:4]
        raise ValueError(f"values not exactly representable in {what}: {bad}")
    return codes[idx].astype(np.uint8)


@cache
def _code_of_binary16(etype: str) -> np.ndarray:
    """int16[65536]: for each binary16 bit pattern that is a finite ``etype`` value, the lowest code with
    that value; -1 elsewhere. Every element type's finite values are binary16 values (the widest, E5M2,
    spans 2^-16 .. 57344), so a native float16 cast plus this table encodes exactly."""
    table = element_table(etype)
    codes = np.nonzero(np.isfinite(table))[0]
    half = table[codes].astype(np.float16)
    if not np.array_equal(half.astype(np.float64), table[codes]):
        raise AssertionError(f"{etype} values are not all binary16 values")
    bits, first = np.unique(half.view(np.uint16), return_index=True)  # codes ascend: first = lowest
    out = np.full(1 << 16, -1, dtype=np.int16)
    out[bits] = codes[first]
    out.setflags(write=False)
    return out


def encode_elements(values: np.ndarray, etype: str) -> np.ndarray:
    """Exactly representable float values -> codes (uint8), +0 for either zero; raises if one is not exact.

    A native binary16 cast and a table (:func:`_code_of_binary16`): the ml_dtypes casts it replaces
    cost ~50 us per 8K elements, a tenth of a case's input building on a GPU host."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(all="ignore"):
        half = v.astype(np.float16)
        codes = _code_of_binary16(etype)[half.view(np.uint16)]
        exact = bool(np.all(half.astype(np.float64) == v)) and bool(np.all(codes >= 0))  # NaN/Inf fail here
    if exact:
        codes = codes.astype(np.uint8)
        codes[v == 0] = 0  # +0 is code 0 in every element type
        return codes
    return _encode(values, element_table(etype), etype)  # says which value is not exact


def encode_scales(values: np.ndarray, stype: str) -> np.ndarray:
    """Exactly representable scale values -> codes (uint8)."""
    table = scale_table(stype).copy()
    if stype == "ue4m3":
        table[0x80:] = np.nan  # encode with the sign bit clear
    return _encode(values, table, stype)
