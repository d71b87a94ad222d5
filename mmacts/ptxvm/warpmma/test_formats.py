"""The VM's own format decoders against ml_dtypes and the project's tables (tests may import those)."""

from __future__ import annotations

import ast
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from mmacts.ptxvm.warpmma import formats as fm

ML = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2, "e3m2": ml_dtypes.float6_e3m2fn,
      "e2m3": ml_dtypes.float6_e2m3fn, "e2m1": ml_dtypes.float4_e2m1fn}


@pytest.mark.parametrize("etype", sorted(ML))
def test_elements_match_ml_dtypes(etype):
    n = 1 << fm.element_bits(etype)
    mine = fm.decode_element(np.arange(n), etype)
    theirs = np.arange(n, dtype=np.uint8).view(ML[etype]).astype(np.float64)
    assert np.array_equal(mine, theirs, equal_nan=True)
    assert np.array_equal(np.signbit(mine), np.signbit(theirs))


def test_f16_bf16_all_codes():
    codes = np.arange(1 << 16)
    assert np.array_equal(fm.decode_element(codes, "f16"),
                          codes.astype(np.uint16).view(np.float16).astype(np.float64), equal_nan=True)
    with np.errstate(invalid="ignore"):
        want = (codes.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    assert np.array_equal(fm.decode_element(codes, "bf16"), want, equal_nan=True)


@pytest.mark.parametrize("stype,reading", [("ue8m0", "nan"), ("ue4m3", "nan"), ("ue4m3", "ignored"),
                                           ("ue4m3", "signed")])
def test_scales_match_project_tables(stype, reading):
    from reference.mma_sync.values import scale_table

    assert np.array_equal(fm.decode_scale(np.arange(256), stype, reading), scale_table(stype, reading),
                          equal_nan=True)


def test_result_bits_and_canonical_nan():
    v = np.array([1.5, -0.0, np.inf, np.nan, 2.0**-149])
    bits = fm.f32_to_bits(v)
    assert bits[3] == 0x7FFFFFFF and bits[1] == 0x80000000
    assert np.array_equal(fm.f32_from_bits(bits), v, equal_nan=True)
    h = fm.f16_to_bits(np.array([65504.0, np.nan, -2.0**-24]))
    assert list(h) == [0x7BFF, 0x7FFF, 0x8001]
    with pytest.raises(ValueError):
        fm.f32_to_bits(np.array([1 + 2.0**-30]))


FORBIDDEN = ("reference.mma_sync", "reference.tcgen05", "reference.formats", "suites", "mmacts.ptx")


def test_non_test_modules_are_independent_of_the_encoders():
    """The point of the package: a second reading. Only numpy, ml_dtypes, mmacts.spec,
    reference.numeric_model / reference.gemm and the package itself may be imported."""
    here = Path(__file__).parent
    for path in here.glob("*.py"):
        if path.name.startswith("test_"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [f"{node.module}.{a.name}" for a in node.names]
            for name in names:
                bad = [f for f in FORBIDDEN if name == f or name.startswith(f + ".")]
                assert not bad, f"{path.name} imports {name}"


def test_f32_from_bits_signalling_nan_is_nan_without_a_warning():
    """A C operand holding a signalling NaN (the fuzz draws 0x7F800001, 0x7FA5A5A5) decodes to NaN silently:
    the widening cast raises the IEEE invalid flag, which numpy turned into a RuntimeWarning (formats.py)."""
    import warnings

    words = np.array([0x7F800001, 0x7FA5A5A5, 0xFFFFFFFF, 0x7FC00000, 0x3F800000, 0xFF800000], np.uint32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fm.f32_from_bits(words)
    assert np.isnan(got[:4]).all() and got[4] == 1.0 and got[5] == -np.inf
