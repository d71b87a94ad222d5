"""Tests for the shared-memory descriptor codec (PTX Tables 40-41)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .smem_desc import (
    SWIZZLE_CODES,
    base_offset_for,
    decode_smem_desc,
    encode_smem_desc,
    matrix_descriptor_encode,
)


def test_cutlass_sf_copy_descriptor_raw_value():
    # cutlass-facts §2.3: K-major, no swizzle, LBO 16 B, SBO 128 B, version 1.
    for addr in (0, 0x400, 0x1230, 0x3FFF0):
        assert encode_smem_desc(addr, 16, 128) == 0x0000400800010000 | (addr >> 4)


def test_sw128_kmajor_cutlass_values():
    # cutlass-facts §4.2: LBO field 1 (16 B), SBO 1024 B, layout type 2 at bits 61-63.
    w = encode_smem_desc(0x8000, 16, 1024, swizzle="128B")
    assert (w >> 61) == 2 and (w >> 32) & 0x3FFF == 64 and (w >> 16) & 0x3FFF == 1
    assert (w >> 46) & 7 == 1 and w & 0x3FFF == 0x800


def test_swizzle_codes_table40():
    assert SWIZZLE_CODES == {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}
    for bad in (3, 5, 7):
        with pytest.raises(ValueError, match="invalid"):
            encode_smem_desc(0, 16, 16, swizzle=bad)
        with pytest.raises(ValueError, match="invalid"):
            decode_smem_desc((bad << 61) | (1 << 46))


def test_matrix_descriptor_encode_masks_18_bits():
    assert matrix_descriptor_encode(0x40010) == 1
    assert matrix_descriptor_encode(0x3FFFF) == 0x3FFF


@pytest.mark.parametrize(
    "kw",
    [
        {"start_address": 8},
        {"lbo": 1 << 18},
        {"sbo": 24},
        {"base_offset": 8},
        {"lbo_absolute": True, "swizzle": "64B"},
        {"lbo_absolute": True, "swizzle": "128B", "base_offset": 1},
        {"fixed_46_48": 0},
    ],
)
def test_strict_rejects(kw):
    args = {"start_address": 0, "lbo": 16, "sbo": 16, "swizzle": "128B"}
    args.update(kw)
    with pytest.raises(ValueError):
        encode_smem_desc(args.pop("start_address"), args.pop("lbo"), args.pop("sbo"), **args)


def test_base_offset_rule():
    assert base_offset_for(0x400, "128B") == 0
    assert base_offset_for(0x480, "128B") == 1
    assert base_offset_for(0x200, "64B") == 0  # on its 512-B boundary
    assert base_offset_for(0x280, "64B") == 5  # (0x280 >> 7) & 7
    # 128B with 32B atoms: Table 53 atom 8x4 = 512 B (AMB-T53-32B-ATOM-SIZE reading "atom-512")
    assert base_offset_for(0x200, "128B_base32B") == 0
    assert base_offset_for(0x480, "128B_base32B") == 1


_al16 = st.integers(0, (1 << 14) - 1).map(lambda v: v << 4)


@settings(max_examples=300, deadline=None)
@given(_al16, _al16, _al16, st.sampled_from(sorted(SWIZZLE_CODES)), st.integers(0, 7), st.booleans())
def test_roundtrip(start, lbo, sbo, sw, bo, absolute):
    strict = not absolute or (sw == "128B" and bo == 0)
    w = encode_smem_desc(start, lbo, sbo, swizzle=sw, base_offset=bo, lbo_absolute=absolute, strict=strict)
    d = decode_smem_desc(w, strict=True)
    assert (d.start_address, d.lbo, d.sbo, d.swizzle, d.base_offset, d.lbo_absolute) == (
        start, lbo, sbo, sw, bo, absolute)
    assert d.word(strict=strict) == w


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**64 - 1))
def test_roundtrip_any_word_with_valid_swizzle(word):
    if (word >> 61) & 7 in (3, 5, 7):
        word ^= 1 << 61
    d = decode_smem_desc(word)
    assert d.word(strict=False) == word


@settings(max_examples=200, deadline=None)
@given(_al16, _al16, st.integers(0, 63))
def test_one_bit_flip_is_seen(start, sbo, bit):
    w = encode_smem_desc(start, 16, sbo, swizzle="128B")
    flipped = w ^ (1 << bit)
    if (flipped >> 61) & 7 in (3, 5, 7):
        with pytest.raises(ValueError):
            decode_smem_desc(flipped)
    else:
        assert decode_smem_desc(flipped) != decode_smem_desc(w)
