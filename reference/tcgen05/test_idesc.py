"""Tests for the instruction descriptor codec (PTX Tables 42-44)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .idesc import FIELDS, KINDS, decode_idesc, encode_idesc, mma_k, reserved_mask


def _bit(lo: int, width: int = 1) -> int:
    return ((1 << width) - 1) << lo


def test_reserved_masks_match_the_tables():
    # Written from the table text, independently of FIELDS.
    t42 = _bit(6) | _bit(23) | _bit(29)
    t43 = _bit(0, 2) | _bit(3) | _bit(6) | _bit(24, 3) | _bit(31)
    t44 = _bit(0, 2) | _bit(3) | _bit(6) | _bit(12) | _bit(24, 3)
    for k in ("tf32", "f16", "f8f6f4", "i8"):
        assert reserved_mask(k) == t42
    assert reserved_mask("mxf8f6f4") == t43
    assert reserved_mask("mxf4") == t44 == reserved_mask("mxf4nvf4")


def test_known_answer_mxf8f6f4():
    # M=128, N=256, e4m3 x e2m1, ue8m0, SFA ID 3, SFB ID 1, negate B, transpose A.
    w = encode_idesc("mxf8f6f4", m=128, n=256, atype="e4m3", btype="e2m1", sfa_id=3, sfb_id=1,
                     negate_b=1, transpose_a=1)
    want = (1 << 4) | (0 << 7) | (5 << 10) | (1 << 14) | (1 << 15) | (32 << 17) | (1 << 23) | (1 << 27) | (3 << 29)
    assert w == want


def test_known_answer_mxf4nvf4_k96_ue4m3():
    w = encode_idesc("mxf4nvf4", m=256, n=128, scale_type="ue4m3", sfa_id=2, sfb_id=2, k96=1)
    want = (2 << 4) | (1 << 7) | (1 << 10) | (16 << 17) | (0 << 23) | (2 << 27) | (2 << 29) | (1 << 31)
    assert w == want


def test_known_answer_table42_f16_m_is_m_shift_4():
    w = encode_idesc("f16", m=64, n=8, atype="bf16", btype="bf16", dtype="f32")
    assert w == (1 << 4) | (1 << 7) | (1 << 10) | (1 << 17) | (4 << 24)


@pytest.mark.parametrize(
    "kind, kw, msg",
    [
        ("mxf4", {"m": 128, "n": 64, "sfa_id": 1}, "sfa_id"),
        ("mxf4nvf4", {"m": 128, "n": 64, "transpose_a": 1}, "transpose_a"),
        ("mxf4", {"m": 128, "n": 64, "scale_type": "ue4m3"}, "scale_type"),
        ("mxf8f6f4", {"m": 64, "n": 64}, "m"),  # M=64 not in Table 39 for block scaling
        ("mxf8f6f4", {"m": 128, "n": 12}, "multiple of 8"),
        ("mxf8f6f4", {"m": 128, "n": 512}, "does not fit"),
        ("mxf8f6f4", {"m": 128, "n": 64, "atype": 2}, "atype"),
        ("i8", {"m": 128, "n": 64, "negate_a": 1}, "negate_a"),
        ("mxf8f6f4", {"m": 128, "n": 64, "bogus": 1}, "unknown field"),
        ("mxf8f6f4", {"n": 64}, "required"),
    ],
)
def test_rejects_out_of_range(kind, kw, msg):
    with pytest.raises(ValueError, match=msg):
        encode_idesc(kind, **kw)


def test_non_strict_allows_probe_values_and_reserved_bits():
    w = encode_idesc("mxf4", m=128, n=64, sfa_id=1, strict=False, reserved_bits=1 << 12)
    d = decode_idesc("mxf4", w)
    assert d["sfa_id"] == 1 and d["reserved_bits"] == 1 << 12
    with pytest.raises(ValueError, match="sfa_id"):
        decode_idesc("mxf4", w, strict=True)
    w_ok_but_reserved = encode_idesc("mxf4", m=128, n=64, strict=False, reserved_bits=1 << 12)
    with pytest.raises(ValueError, match="reserved"):
        decode_idesc("mxf4", w_ok_but_reserved, strict=True)
    with pytest.raises(ValueError, match="overlap"):
        encode_idesc("mxf4", m=128, n=64, strict=False, reserved_bits=1 << 4)


def test_m_field_tables_43_44_differ_from_cutlass_cpp_only_for_m64():
    # cutlass-facts §8 #4: C++ writes M>>4 into bits 24-28; PTX M>>7 into 27-28.  Same bits for
    # M = 128/256; M = 64 would set reserved bit 26.
    for m in (128, 256):
        assert encode_idesc("mxf8f6f4", m=m, n=64) & _bit(24, 5) == (m >> 4) << 24
    assert (64 >> 4) << 24 & reserved_mask("mxf8f6f4")


@st.composite
def _kind_and_fields(draw):
    kind = draw(st.sampled_from(KINDS))
    fields = {}
    for f in FIELDS[kind]:
        if f.allowed is not None:
            fields[f.name] = draw(st.sampled_from(sorted(f.allowed)))
    return kind, fields


@settings(max_examples=300, deadline=None)
@given(_kind_and_fields())
def test_roundtrip_valid(kf):
    kind, fields = kf
    w = encode_idesc(kind, fields)
    d = decode_idesc(kind, w, strict=True)
    assert d.pop("reserved_bits") == 0
    assert d == {**d, **fields}
    assert encode_idesc(kind, d) == w


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(KINDS), st.integers(0, 2**32 - 1))
def test_roundtrip_any_word(kind, word):
    d = decode_idesc(kind, word)
    res = d.pop("reserved_bits")
    assert encode_idesc(kind, d, strict=False, reserved_bits=res) == word


@settings(max_examples=200, deadline=None)
@given(_kind_and_fields(), st.integers(0, 31))
def test_one_bit_flip_is_seen(kf, bit):
    kind, fields = kf
    w = encode_idesc(kind, fields)
    assert decode_idesc(kind, w ^ (1 << bit)) != decode_idesc(kind, w)


def test_mma_k():
    assert mma_k("mxf8f6f4") == 32 and mma_k("mxf4") == 64 and mma_k("mxf4nvf4", sparse=True) == 128
    assert mma_k("mxf4nvf4", k96=True) == 96 and mma_k("tf32") == 8
    with pytest.raises(ValueError):
        mma_k("mxf8f6f4", k96=True)


@pytest.mark.parametrize("word", [-1, 1 << 32, (1 << 32) + 5])
def test_decode_refuses_a_word_outside_32_bits(word: int) -> None:
    """The edges of the 32-bit check (the generated mutation ``<`` -> ``<=`` let 2^32 through: the fields
    of bits 0-31 alone would decode, silently dropping bit 32)."""
    with pytest.raises(ValueError, match="idesc must be a 32-bit unsigned value"):
        decode_idesc("mxf8f6f4", word)
    assert decode_idesc("mxf8f6f4", (1 << 32) - 1)["reserved_bits"] != 0
