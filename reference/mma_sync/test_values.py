"""The mma.sync value tables agree with ``reference.formats`` on every scale and element code.

Why: the fragment model decodes scales through ``values`` while the GEMM reference and the probes
use ``reference.formats``; if the two read a code differently, the project's two references
disagree about what the hardware should return (they did for UE4M3 codes with bit 7 set).
``reference.formats`` is built from the bit fields, ``values`` from ``ml_dtypes``, so agreement
is an independent check of both.
"""

from __future__ import annotations

import numpy as np
import pytest

from reference import formats as F
from reference.mma_sync import values as V

ALL_BYTES = np.arange(256, dtype=np.uint16)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values, NaN where NaN, and the same sign of zero."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    nan = np.isnan(a)
    return bool(np.array_equal(nan, np.isnan(b)) and np.array_equal(a[~nan], b[~nan])
                and np.array_equal(np.signbit(a[~nan]), np.signbit(b[~nan])))


def test_default_ue4m3_reading_is_the_one_reference_formats_takes():
    # no reading named on either side: all 256 codes must decode identically
    assert _same(V.decode_scales(ALL_BYTES, "ue4m3"), F.decode("ue4m3", ALL_BYTES))


@pytest.mark.parametrize("reading", V.UE4M3_READINGS)
def test_every_ue4m3_reading_agrees_on_all_256_codes(reading):
    assert _same(V.scale_table("ue4m3", reading), F.decode_table("ue4m3", reading))


def test_ue4m3_sign_bit_readings_differ_where_they_should():
    # 0x38 is 1.0; 0xB8 is the same magnitude with bit 7 set
    got = {r: V.decode_scales(np.array([0x38, 0xB8]), "ue4m3", r) for r in V.UE4M3_READINGS}
    assert got["ignored"].tolist() == [1.0, 1.0]
    assert got["signed"].tolist() == [1.0, -1.0]
    assert got["nan"][0] == 1.0 and np.isnan(got["nan"][1])
    assert np.isnan(V.decode_scales(np.array([0x7F]), "ue4m3")).all()  # E4M3 NaN pattern, bit 7 clear


def test_unknown_ue4m3_reading_is_refused():
    with pytest.raises(ValueError, match="ue4m3 reading"):
        V.scale_table("ue4m3", "absolute")


def test_ue8m0_agrees_on_all_256_codes():
    assert _same(V.decode_scales(ALL_BYTES, "ue8m0"), F.decode("ue8m0", ALL_BYTES))


@pytest.mark.parametrize("etype", sorted(V.ELEMENT_BITS))
def test_element_tables_agree(etype):
    codes = np.arange(1 << V.ELEMENT_BITS[etype], dtype=np.uint16)
    assert _same(V.decode_elements(codes, etype), F.decode(etype, codes))


def test_scale_encoding_never_uses_the_sign_bit():
    # every finite UE4M3 value encodes with bit 7 clear and decodes back exactly
    finite = V.scale_table("ue4m3")[:0x80]
    finite = finite[np.isfinite(finite)]
    codes = V.encode_scales(finite, "ue4m3")
    assert (codes < 0x80).all()
    assert np.array_equal(V.decode_scales(codes, "ue4m3"), finite)


@pytest.mark.parametrize("etype", sorted(V.ELEMENT_BITS))
def test_element_encoding_gives_the_lookups_codes_and_refuses_what_is_not_exact(etype):
    """The binary16 fast path gives exactly the sorted-table lookup's codes (``_encode``: the lowest code
    of each value, +0 for both zeros) on every finite value and on random arrays of them, and refuses
    a value between two codes, NaN and infinity as the lookup does."""
    table = V.element_table(etype)
    values = table[np.isfinite(table)]
    want = V._encode(values, table, etype)
    got = V.encode_elements(values, etype)
    assert got.dtype == np.uint8 and np.array_equal(got, want)
    rng = np.random.default_rng(7)
    grid = rng.choice(values, size=(64, 128))
    assert np.array_equal(V.encode_elements(grid, etype), V._encode(grid, table, etype))
    between = (values[values > 0].min() + np.sort(values[values > 0])[1]) / 2
    for bad in (between, np.nan, np.inf, 1e-30):
        with pytest.raises(ValueError, match="not exactly representable"):
            V.encode_elements(np.array([1.0, bad]), etype)
