"""Compare what a backend returned with what the reference says.

The comparison is deliberately dumb and strict: it knows nothing about the
instruction. ``exact`` and ``model:*`` modes compare bit patterns of fp32
(NaN equals NaN; +0 and -0 are equal unless signed zeros are asked for -- the ``signed_zero``
argument, or an expectation of mode ``exact+signed-zero`` -- since the sign of an exact zero is an
open question of the register, not a verdict, except where a case pins it);
``bound`` allows an elementwise tolerance; ``observe`` is never a verdict: always ``observed``,
with the number of elements that differ from the hypothesis it was recorded against.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mmacts.core.driver import Expectation


@dataclass
class Comparison:
    """Outcome of one comparison, in report columns."""

    status: str
    mismatches: int
    max_abs_err: float
    max_ulp_err: float
    first_mismatch: str
    mask: np.ndarray | None = None
    """Boolean array of mismatching elements (for the diagnosis of patterns)."""


def ordered_int(x: np.ndarray) -> np.ndarray:
    """Map fp32 bit patterns onto integers whose difference counts ulps."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
    return np.where(bits < 0, np.int64(-(2**31)) - bits, bits)


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in fp32 ulps (0 for equal values, +0 vs -0 counts 0)."""
    d = np.abs(ordered_int(got) - ordered_int(want)).astype(np.float64)
    both_zero = (np.asarray(got) == 0) & (np.asarray(want) == 0)
    return np.where(both_zero, 0.0, d)


def _fmt_index(idx: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(int(i)) for i in idx) + ")"


def fmt_value(x: np.floating) -> str:
    """An fp32 value and its bit pattern: ``-1.5 (0xbfc00000)``, ``nan (0x7fc00001)``."""
    v = np.float32(x)
    return f"{str(v)} (0x{int(np.array(v).view(np.uint32)):08x})"  # str(): the shortest fp32 repr


SIGNED_ZERO_MODE = "exact+signed-zero"
"""The exact mode in which -0 and +0 differ: how a case (the executor passes no flags) asks for signed zeros."""


# -- what agrees, per mode: each rule a named function, so a comparator mutant replaces one by name
def values_equal(got: np.ndarray, want: np.ndarray, *, signed_zero: bool) -> np.ndarray:
    """Equal as values: +0 equals -0 (the sign of an exact zero is open, AMB-SIGNED-ZERO) unless signed
    zeros are asked for, then only the same bits are."""
    return (got == want) if not signed_zero else same_bits(got, want)


def same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """The same fp32 bit pattern."""
    return got.view(np.int32) == want.view(np.int32)


def nans_equal(nan_got: np.ndarray, nan_want: np.ndarray) -> np.ndarray:
    """Exact mode: NaN equals NaN whatever the payloads (NaN on both sides)."""
    return nan_got & nan_want


def exact_agreement(got: np.ndarray, want: np.ndarray, *, signed_zero: bool) -> np.ndarray:
    """Elements that agree in the exact modes: equal values, the same bits, or NaN on both sides."""
    return (values_equal(got, want, signed_zero=signed_zero) | same_bits(got, want)
            | nans_equal(np.isnan(got), np.isnan(want)))


def within_tolerance(diff: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """Bound mode: |got - want| <= tolerance (the bound itself is inside)."""
    return diff <= tol


def equal_within_any_bound(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Bound mode: equal values are within any bound (equal infinities too, whose difference is NaN)."""
    return got == want


def bound_agreement(got: np.ndarray, want: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """Elements that agree in bound mode: within the tolerance, NaN on both sides, or equal."""
    with np.errstate(invalid="ignore"):
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    return within_tolerance(diff, tol) | (np.isnan(got) & np.isnan(want)) | equal_within_any_bound(got, want)


def count_mismatches(bad: np.ndarray) -> int:
    """How many elements disagree."""
    return int(bad.sum())


def compare(got: np.ndarray | None, exp: Expectation, *, signed_zero: bool = False) -> Comparison:
    """Compare ``got`` with ``exp``; shapes must match exactly."""
    signed_zero = signed_zero or exp.mode == SIGNED_ZERO_MODE
    want = np.asarray(exp.want, dtype=np.float32)
    if got is None:
        return Comparison("error", int(want.size), float("nan"), float("nan"), "no output")
    got = np.asarray(got, dtype=np.float32)
    if got.shape != want.shape:
        return Comparison(
            "fail", int(want.size), float("nan"), float("nan"),
            f"shape {got.shape} != expected {want.shape}",
        )
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    if exp.mode == "bound":
        tol = np.asarray(exp.tolerance if exp.tolerance is not None else 0.0, dtype=np.float64)
        bad = ~bound_agreement(got, want, tol)
    else:
        bad = ~exact_agreement(got, want, signed_zero=signed_zero)
    with np.errstate(invalid="ignore"):
        abs_err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    finite = np.isfinite(abs_err)
    max_abs = float(abs_err[finite].max()) if finite.any() else 0.0
    ulps = ulp_distance(got, want)
    ulps = np.where(nan_g | nan_w, np.where(nan_g & nan_w, 0.0, np.inf), ulps)
    max_ulp = float(ulps.max()) if ulps.size else 0.0
    n_bad = count_mismatches(bad)
    first = ""
    if n_bad:
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        first = f"{_fmt_index(idx)} got={fmt_value(got[idx])} want={fmt_value(want[idx])}"
    if exp.mode.startswith("observe"):
        status = "observed"  # the spec leaves it open: recorded, never judged, even when it matches
    else:
        status = "pass" if n_bad == 0 else "fail"
    return Comparison(status, n_bad, max_abs, max_ulp, first, bad)
