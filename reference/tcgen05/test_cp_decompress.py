"""Tests for tcgen05.cp (9.7.16.9): decompression formats and copy shapes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .cp_decompress import (
    CP_MULTICAST,
    CP_SHAPES,
    compress_b4x16_p64,
    compress_b6x16_p32,
    cp_lane_map,
    cp_to_tmem,
    decompress_b4x16_p64,
    decompress_b6x16_p32,
)
from .smem_desc import encode_smem_desc
from .smem_image import encode_operand, encode_sf_atoms, sf_atom_desc
from .tmem_image import new_tmem, read_a, read_sf, taddr


def test_b4x16_p64_known_answer():
    chunk = np.array([0x21, 0x43] + [0] * 6 + [0xFF] * 8, dtype=np.uint8)
    out = decompress_b4x16_p64(chunk)
    assert out[:4].tolist() == [1 << 2, 2 << 2, 3 << 2, 4 << 2] and (out[4:] == 0).all()


def test_b6x16_p32_known_answer():
    word = 0x0C | (0x3F << 6) | (0x01 << 12) | (0x20 << 18)
    chunk = np.array([word & 0xFF, (word >> 8) & 0xFF, word >> 16] + [0] * 9 + [0xAA] * 4, dtype=np.uint8)
    out = decompress_b6x16_p32(chunk)
    assert out[:4].tolist() == [0x0C << 1, 0x3F << 1, 0x01 << 1, 0x20 << 1]
    assert out[0] == 0x18  # E3M2 1.0 (0x0C) lands as holder byte 0x18 under the [6:1] hypothesis


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 4), st.integers(0, 2))
def test_roundtrips(seed, s4, s6):
    rng = np.random.default_rng(seed)
    c4 = (rng.integers(0, 16, size=(5, 16)).astype(np.uint8) << s4).astype(np.uint8)
    assert (decompress_b4x16_p64(compress_b4x16_p64(c4, shift=s4), shift=s4) == c4).all()
    c6 = (rng.integers(0, 64, size=(5, 16)).astype(np.uint8) << s6).astype(np.uint8)
    assert (decompress_b6x16_p32(compress_b6x16_p32(c6, shift=s6), shift=s6) == c6).all()


def test_compress_rejects_bits_outside_payload():
    with pytest.raises(ValueError):
        compress_b4x16_p64(np.full(16, 0x01, np.uint8))


def test_lane_maps():
    assert cp_lane_map("64x128b", "warpx2::02_13")[[0, 31, 32, 63]].tolist() == [[0, 64], [31, 95], [32, 96], [63, 127]]
    assert cp_lane_map("64x128b", "warpx2::01_23")[[0, 31, 32, 63]].tolist() == [[0, 32], [31, 63], [64, 96], [95, 127]]
    assert cp_lane_map("32x128b", "warpx4")[5].tolist() == [5, 37, 69, 101]
    assert cp_lane_map("4x256b").ravel().tolist() == [0, 32, 64, 96]
    for shape, mcs in CP_MULTICAST.items():
        for mc in mcs:
            lanes = cp_lane_map(shape, mc)
            assert lanes.shape[0] == CP_SHAPES[shape][0] and len(np.unique(lanes)) == lanes.size
    with pytest.raises(ValueError):
        cp_lane_map("64x128b")


def test_sf_chain_global_layout_to_tmem_via_cp_32x128b():
    # cutlass-facts §2: SF atoms in smem, cp.32x128b.warpx4 with the CUTLASS descriptor, then
    # the MMA reading rule finds SF(x, f) at SF ID f (1X).
    rng = np.random.default_rng(7)
    sf = rng.integers(0, 256, size=(128, 4), dtype=np.uint8)
    smem = encode_sf_atoms(sf, base_address=0x400, smem_size=0x1000)
    tmem = new_tmem()
    cp_to_tmem(tmem, smem, sf_atom_desc(0x400), shape="32x128b", multicast="warpx4", addr=taddr(0, 200))
    for f in range(4):
        assert (read_sf(tmem, taddr(0, 200), f, "1X", 128, "A")[:, 0] == sf[:, f]).all()
    # a wrong descriptor (SBO off by 16 B) is caught
    tmem2 = new_tmem()
    bad = encode_smem_desc(0x400, 16, 144)
    cp_to_tmem(tmem2, smem, bad, shape="32x128b", multicast="warpx4", addr=taddr(0, 200))
    assert not (read_sf(tmem2, taddr(0, 200), 0, "1X", 128, "A")[:, 0] == sf[:, 0]).all()


@pytest.mark.parametrize("fmt, elem, bits, shift", [("b4x16_p64", "p4", 4, 2), ("b6x16_p32", "p6", 6, 1)])
def test_narrow_a_to_tmem_128x256b(fmt, elem, bits, shift):
    # A (128 x 32) in padded smem, K-major no swizzle canonical layout, cp.128x256b with
    # decompression, then the TMEM A reader gives the codes back.
    rng = np.random.default_rng(bits)
    codes = rng.integers(0, 1 << bits, size=(128, 32), dtype=np.uint8)
    smem, img = encode_operand(codes, major="K", swizzle="none", elem=elem, pad_value=0x5A)
    tmem = new_tmem()
    cp_to_tmem(tmem, smem, img.desc_word, shape="128x256b", addr=taddr(0, 64), src_fmt=fmt)
    got = read_a(tmem, taddr(0, 64), 128, 32, "fp4" if bits == 4 else "fp6", check_container=True)
    assert (got == codes).all()
    # without decompression the TMEM holds the raw padded chunk bytes (pad visible)
    tmem_raw = new_tmem()
    cp_to_tmem(tmem_raw, smem, img.desc_word, shape="128x256b", addr=taddr(0, 64))
    assert (tmem_raw[:, 64 + 3] == 0x5A5A5A5A).all()
    _ = shift


def test_cp_source_through_a_window_that_does_not_start_at_address_0():
    # the same copy from an smem array that holds shared memory from byte 1024 on (smem_base): the
    # descriptor's absolute addresses are shifted down by the base, never up
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 16, size=(128, 32), dtype=np.uint8)
    smem, img = encode_operand(codes, major="K", swizzle="none", elem="p4", base_address=1024)
    want, got = new_tmem(), new_tmem()
    cp_to_tmem(want, smem, img.desc_word, shape="128x256b", addr=taddr(0, 64), src_fmt="b4x16_p64")
    cp_to_tmem(got, smem[1024:], img.desc_word, shape="128x256b", addr=taddr(0, 64), src_fmt="b4x16_p64",
               smem_base=1024)
    assert (got == want).all() and (read_a(got, taddr(0, 64), 128, 32, "fp4", check_container=True) == codes).all()
