"""Tests for the zero-column mask descriptor: all four worked examples of PTX 9.7.16.4.3."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .zero_col_mask import (
    b_columns,
    decode_zero_col_mask,
    encode_zero_col_mask,
    generate_mask,
    sub_masks,
)


def _tail(bits: np.ndarray, pattern: str) -> bool:
    """Does the spec's ``0b ... <pattern>`` (MSB first, LSB last) match the low bits of ``bits``?"""
    p = pattern.replace(" ", "")
    low = "".join("1" if b else "0" for b in bits[: len(p)][::-1])
    return low == p


def test_example1_non_zero_mask_off():
    w = encode_zero_col_mask(non_zero_mask=0, skip_span=4, use_span=3)
    assert not generate_mask(w, 128, 128).any()  # "Output zero-column mask: 0x0"


def test_example2_m128():
    w = encode_zero_col_mask(start_counts=(0, 0, 0, 0), first_spans=(0, 0, 0, 0), skip_span=2, use_span=3)
    (m0,) = sub_masks(w, 128, 128)
    assert _tail(m0, "111 0000 111 0000")
    # periodic continuation of the printed "..."
    assert _tail(m0, "111 0000 " * 9 + "111 0000")


def test_example3_m64():
    w = encode_zero_col_mask(start_counts=(0, 0, 0, 0), first_spans=(1, 0, 0, 0), skip_span=2, use_span=3)
    m0, m1 = sub_masks(w, 64, 64)
    assert _tail(m0, "111 0000 111 0000 111")
    assert _tail(m1, "0000 111 0000 111 0000")


def test_example4_m32_with_start_counts_and_shift():
    # spec prints {sc3, sc2, sc1, sc0} = {1, 2, 1, 0}, {fs3, fs2, fs1, fs0} = {0, 0, 1, 1}
    w = encode_zero_col_mask(start_counts=(0, 1, 2, 1), first_spans=(1, 1, 0, 0), skip_span=2, use_span=3,
                             column_shift=2)
    m0, m1, m2, m3 = sub_masks(w, 32, 128)
    assert _tail(m0, "0000 111 0000 111")
    assert _tail(m1, "0000 111 0000 11")
    assert _tail(m2, "111 0000 111 00")
    assert _tail(m3, "111 0000 111 000")
    cols = b_columns(w, 128)
    assert cols[0] == 2 and cols[-1] == 129  # "columns from 2 to 129"


def test_description_reading_contradicts_example2():
    w = encode_zero_col_mask(skip_span=2, use_span=3)
    (m0,) = sub_masks(w, 128, 64, reading="descriptions")
    assert not _tail(m0, "111 0000 111 0000")
    assert _tail(m0, "1111 000 1111 000")


def test_submask_coverage_concatenates_in_column_order():
    w = encode_zero_col_mask(first_spans=(1, 0, 1, 0), skip_span=0, use_span=0)
    full = generate_mask(w, 32, 32)
    parts = sub_masks(w, 32, 32)
    assert full.shape == (32,)
    for i, p in enumerate(parts):
        assert (full[8 * i: 8 * (i + 1)] == p).all()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 255), min_size=4, max_size=4),
    st.lists(st.integers(0, 1), min_size=4, max_size=4),
    st.integers(0, 1), st.integers(0, 255), st.integers(0, 255), st.integers(0, 63),
)
def test_roundtrip(sc, fs, nzm, skip, use, shift):
    w = encode_zero_col_mask(start_counts=sc, first_spans=fs, non_zero_mask=nzm, skip_span=skip,
                             use_span=use, column_shift=shift)
    d = decode_zero_col_mask(w)
    assert d["start_counts"] == tuple(sc) and d["first_spans"] == tuple(fs)
    assert (d["non_zero_mask"], d["skip_span"], d["use_span"], d["column_shift"]) == (nzm, skip, use, shift)
    assert d["reserved"] == 0
    assert encode_zero_col_mask(**{k: v for k, v in d.items()}) == w


@pytest.mark.parametrize("shift", [0, 1, 62, 63])
def test_column_shift_field_edges(shift):
    # bits 56-61, every one of them set at 63 (the roundtrip's random draw need not reach the edge)
    w = encode_zero_col_mask(start_counts=(255, 255, 255, 255), first_spans=(1, 1, 1, 1), non_zero_mask=1,
                             skip_span=255, use_span=255, column_shift=shift)
    assert (w >> 56) & 0x3F == shift
    d = decode_zero_col_mask(w)
    assert d["column_shift"] == shift and (d["skip_span"], d["use_span"]) == (255, 255)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 3), st.integers(1, 8), st.integers(0, 7), st.integers(0, 7))
def test_run_lengths_are_span_plus_one(sc, fs_unused, skip, use):
    w = encode_zero_col_mask(start_counts=(0, 0, 0, 0), skip_span=skip, use_span=use)
    (m,) = sub_masks(w, 128, 128)
    period = skip + use + 2
    assert (~m[: use + 1]).all() and m[use + 1: period].all()
    assert (m[period: 2 * period] == m[:period]).all()


def test_rejects_bad_fields():
    with pytest.raises(ValueError):
        encode_zero_col_mask(skip_span=256)
    with pytest.raises(ValueError):
        encode_zero_col_mask(first_spans=(2, 0, 0, 0))
    with pytest.raises(ValueError):
        sub_masks(encode_zero_col_mask(), 256, 64)
