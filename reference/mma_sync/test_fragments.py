"""Fragment maps against the PTX ISA element-index formulas (written independently here)."""

from __future__ import annotations

import numpy as np
import pytest

from reference.mma_sync import fragments as fr


def _ptx_a_k32(lane: int, i: int) -> tuple[int, int]:
    """PTX 9.7.14.5.x, m16n8k32 8-bit A: element a_i (i = 0..15) of a lane."""
    g, t = lane >> 2, lane % 4
    row = g if (i < 4 or 8 <= i < 12) else g + 8
    col = t * 4 + (i & 3) + (16 if i >= 8 else 0)
    return row, col


def _ptx_a_k64(lane: int, i: int) -> tuple[int, int]:
    """m16n8k64 4-bit A: element a_i (i = 0..31)."""
    g, t = lane >> 2, lane % 4
    row = g if (i < 8 or 16 <= i < 24) else g + 8
    col = t * 8 + (i & 7) + (32 if i >= 16 else 0)
    return row, col


def _ptx_b(lane: int, i: int, per: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    return t * per + (i % per) + (4 * per if i >= per else 0), g


def _ptx_c(lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    return (g if i < 2 else g + 8), t * 2 + (i & 1)


@pytest.mark.parametrize(
    ("layout", "ref", "per_lane"),
    [
        (fr.a_layout(32), _ptx_a_k32, 16),
        (fr.a_layout(64), _ptx_a_k64, 32),
        (fr.b_layout(32), lambda l, i: _ptx_b(l, i, 4), 8),
        (fr.b_layout(64), lambda l, i: _ptx_b(l, i, 8), 16),
        (fr.cd_layout(), _ptx_c, 4),
    ],
)
def test_layout_matches_ptx_formula(layout, ref, per_lane):
    rows = layout.rows.reshape(32, -1)
    cols = layout.cols.reshape(32, -1)
    assert rows.shape[1] == per_lane
    for lane in range(32):
        for i in range(per_lane):
            assert (rows[lane, i], cols[lane, i]) == ref(lane, i), (layout.name, lane, i)


@pytest.mark.parametrize("layout", [fr.a_layout(32), fr.a_layout(64), fr.b_layout(32), fr.b_layout(64),
                                    fr.cd_layout(), fr.cd_f16_layout()])
def test_every_element_exactly_once(layout):
    hits = np.zeros(layout.shape, dtype=int)
    np.add.at(hits, (layout.rows.ravel(), layout.cols.ravel()), 1)
    assert np.all(hits == 1)


@pytest.mark.parametrize(("k", "bits", "shift"), [(32, 8, 0), (32, 4, 2), (32, 6, 0), (32, 6, 1), (64, 4, 0)])
def test_roundtrip(k, bits, shift):
    rng = np.random.default_rng(k + bits + shift)
    for layout in (fr.a_layout(k), fr.b_layout(k)):
        codes = rng.integers(0, 1 << bits, size=(3,) + layout.shape)
        regs = fr.encode(codes, layout, shift)
        assert regs.shape == (3, 32, layout.nregs)
        assert np.array_equal(fr.decode(regs, layout, bits, shift), codes)


def test_e2m1_sits_in_bits_5_2_under_mxf8f6f4():
    shift = fr.container_shift("mxf8f6f4", "e2m1")
    codes = np.zeros((16, 32), dtype=np.uint8)
    codes[0, 0] = 0xF  # lane 0, register 0, byte 0
    regs = fr.encode(codes, fr.a_layout(32), shift)
    assert regs[0, 0] == 0x3C and regs.sum() == 0x3C


def test_packed_e2m1_low_nibble_is_lower_k():
    codes = np.zeros((16, 64), dtype=np.uint8)
    codes[0, 0], codes[0, 1] = 0x3, 0x5
    regs = fr.encode(codes, fr.a_layout(64), fr.container_shift("mxf4", "e2m1"))
    assert regs[0, 0] == 0x53


def test_f32_and_f16_roundtrip():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    assert np.array_equal(fr.decode_f32(fr.encode_f32(x)), x)
    h = x.astype(np.float16)
    regs = fr.encode_f16(h)
    assert regs.shape == (32, 2)
    assert np.array_equal(fr.decode_f16(regs), h)
    # lane 1 register 0 = row 0, columns 2 (low half) and 3 (high half)
    lo, hi = regs[1, 0] & 0xFFFF, regs[1, 0] >> 16
    assert lo == h[0, 2].view(np.uint16) and hi == h[0, 3].view(np.uint16)
