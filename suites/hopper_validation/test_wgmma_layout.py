"""Cross-check: the tcgen05 smem-image encoder vs the independent wgmma layout formulas."""

from __future__ import annotations

import numpy as np
import pytest

from suites.hopper_validation import wgmma_layout as wl


@pytest.mark.parametrize("swizzle", ["none", "32B", "64B", "128B"])
@pytest.mark.parametrize(("major", "elem_bytes"), [("K", 1), ("K", 2), ("MN", 2)])
def test_encoder_agrees_with_wgmma_formulas(swizzle, major, elem_bytes):
    rng = np.random.default_rng(1)
    mn, kbytes = 64, 128
    k = kbytes // elem_bytes
    codes = rng.integers(0, 1 << (8 * elem_bytes), size=(mn, k))
    k_step = 32 // elem_bytes  # one wgmma: 32 bytes of K
    base = 1024
    op = wl.place_operand(codes, major=major, swizzle=swizzle, elem_bytes=elem_bytes, base=base,
                          k_step=k_step, smem_size=base + mn * kbytes)
    assert len(op.descs) == k // k_step
    for s, word in enumerate(op.descs):
        got = wl.read_operand(op.smem, word, mn, k_step, major, elem_bytes)
        assert np.array_equal(got, codes[:, s * k_step:(s + 1) * k_step]), (s, hex(word))


def test_descriptor_fields():
    w = wl.hopper_desc(0x400, 16, 1024, "128B")
    assert w >> 62 == 1 and (w >> 32) & 0x3FFF == 64 and (w >> 16) & 0x3FFF == 1 and w & 0x3FFF == 0x40
    assert wl.decode_hopper_desc(w) == wl.HopperDesc(0x400, 16, 1024, 0, "128B")
    assert wl.hopper_desc(0, 16, 256, "32B") >> 62 == 3


def test_d_layout_is_a_permutation():
    for n in (8, 64, 256):
        rows, cols = wl.d_layout(n)
        hits = np.zeros((64, n), int)
        np.add.at(hits, (rows.ravel(), cols.ravel()), 1)
        assert np.all(hits == 1)
        x = np.arange(64 * n, dtype=np.float32).reshape(64, n)
        assert np.array_equal(wl.decode_d(wl.encode_d(x, n), n), x)
    rows, cols = wl.d_layout(64)
    assert (rows[37, 5], cols[37, 5]) == (16 + 1, 8 + 2 + 1)  # warp 1, g 1, t 1, reg 5 (i%4 < 2)
    assert (rows[37, 6], cols[37, 6]) == (16 + 1 + 8, 8 + 2)  # reg 6: i%4 >= 2 -> row + 8
