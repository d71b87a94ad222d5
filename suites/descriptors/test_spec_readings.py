"""The spec readings the descriptor checks take their answers from, pinned against the spec text.

Values here are typed from the PTX text (Tables 40-45, 53, 9.7.16.3.3), not from the catalog or
the decoders, so a mistranscribed catalog row or a wrong parser fails here first.
"""

from __future__ import annotations

import numpy as np
import pytest

from suites.descriptors import spec_readings as R


@pytest.mark.parametrize("ref, lo, width", [
    ("T40.1", 0, 14), ("T40.2", 16, 14), ("T40.3", 32, 14), ("T40.4", 46, 3), ("T40.5", 49, 3),
    ("T40.6", 52, 1), ("T40.7", 53, 8), ("T40.8", 61, 3), ("T42.12", 17, 6), ("T42.14", 24, 5),
    ("T42.16", 30, 2), ("T45.4", 24, 8), ("T45.8", 35, 1), ("T45.9", 36, 3), ("T45.13", 56, 6),
])
def test_field_bits(ref, lo, width):
    assert R.field_bits(ref) == (lo, width)


def test_put_refuses_values_wider_than_the_field():
    assert R.put("T40.8", 6) == 6 << 61
    with pytest.raises(ValueError):
        R.put("T40.8", 8)


@pytest.mark.parametrize("text, values, shift", [
    ("0-3", {0, 1, 2, 3}, 0), ("0 (NA)", {0}, 0), ("0", {0}, 0), ("N >> 3", None, 3), ("M >> 4", None, 4),
    ("E4M3 = 0 E5M2 = 1 E2M3 = 3 E3M2 = 4 E2M1 = 5", {0, 1, 3, 4, 5}, 0),
    ("Unsigned 8b = 0 Signed 8b = 1", {0, 1}, 0), ("No Negate = 0", {0}, 0), ("S32 = 2", {2}, 0),
    ("no shift = 0 maximum shift of 8 = 1 maximum shift of 16 = 2 maximum shift of 32 = 3", {0, 1, 2, 3}, 0),
])
def test_cell_values(text, values, shift):
    c = R.cell_values(text)
    assert (None if c.values is None else set(c.values)) == values and c.shift == shift


def test_t42_cells_as_the_spec_prints_them():
    assert set(R.t42_cell(6, "f8f6f4").values) == {0, 1, 3, 4, 5}
    assert set(R.t42_cell(4, "i8").values) == {2}
    assert set(R.t42_cell(8, "i8").values) == {0}  # i8: "No Negate = 0" only
    assert set(R.t42_cell(3, "i8").values) == {0, 1} and set(R.t42_cell(3, "f16").values) == {0}
    assert [i for i in R.T42_ROWS if R.t42_is_reserved(i)] == [5, 13, 15]


def test_t42_base_word_fields():
    w = R.t42_base_word("tf32")
    assert (w >> 17) & 0x3F == 64 >> 3 and (w >> 24) & 0x1F == 128 >> 4
    assert (w >> 4) & 3 == 1 and (w >> 7) & 7 == 2 and (w >> 10) & 7 == 2  # F32, TF32, TF32
    assert (R.t42_base_word("i8") >> 4) & 3 == 2  # S32


def test_smem_desc_word_matches_the_figure_188_encodings():
    # Figure 188: LBO encoded 16, SBO encoded 8; fixed 0b001 at 46-48; no swizzle.
    w = R.smem_desc_word(start=0x400, lbo_field=16, sbo_field=8)
    assert w == (0x40 | (16 << 16) | (8 << 32) | (1 << 46))
    assert R.matrix_descriptor_encode(0x43450) == 0x0345  # & 0x3FFFF drops bit 18


def test_cute_mode_offsets_colexicographic():
    assert list(R.cute_mode_offsets((8, 2), (4, 32))) == [4 * i for i in range(8)] + [32 + 4 * i for i in range(8)]
    assert list(R.cute_mode_offsets((4, 2), (1, 64))) == [0, 1, 2, 3, 64, 65, 66, 67]


def test_figure_189_printed_layout_is_not_injective():
    """The finding the fig189 check works around: with k = 2 the K-major 32B layout collides."""
    printed = R.cute_offsets(((8, 2), (4, 4)), ((8, 64), (1, 4)))
    assert np.unique(printed).size < printed.size
    first_row = R.cute_offsets(((8, 2), (4, 2)), ((8, 64), (1, 4)))
    assert np.unique(first_row).size == first_row.size
    for shape, stride in ((((8, 2), (4, 4)), ((4, 32), (1, 64))), (((8, 2, 2), (8, 2)), ((1, 8, 128), (16, 256)))):
        off = R.cute_offsets(shape, stride)
        assert np.unique(off).size == off.size


def test_swizzle_bytes_128b():
    # Swizzle<3,4,3>: 16-byte unit u of 128-byte row r moves to u ^ r
    r, u = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    assert np.array_equal(R.swizzle_bytes(r * 128 + u * 16, 3), r * 128 + (u ^ r) * 16)


@pytest.mark.parametrize("ref, major, rows, width, atomicity, swizzle", [
    ("T53.1", "MN", 4, 128, 32, "128B_base32B"), ("T53.3", "MN", 8, 128, 16, "128B"),
    ("T53.4", "K", 8, 128, 16, "128B"), ("T53.5", "MN", 8, 64, 16, "64B"), ("T53.6", "K", 8, 64, 16, "64B"),
    ("T53.7", "MN", 8, 32, 16, "32B"), ("T53.8", "K", 8, 32, 16, "32B"), ("T53.9", "MN", 8, 16, 16, "none"),
    ("T53.10", "K", 8, 16, 16, "none"),
])
def test_atom_of(ref, major, rows, width, atomicity, swizzle):
    a = R.atom_of(ref)
    assert (a.major, a.rows, a.width, a.atomicity, a.swizzle) == (major, rows, width, atomicity, swizzle)
    # every atom is one Table 41 pattern (1024/512/256 B) or one core matrix / 32B-atom quarter-K
    assert a.nbytes == {"128B": 1024, "64B": 512, "32B": 256, "none": 128, "128B_base32B": 512}[swizzle]


def test_t53_row1_atom_is_4_k_rows_per_sbo_step():
    """Table 53 row 1 (8x4): 4 K rows of 128 B = 512 B per atom; the tile steps SBO every 4 K rows."""
    t = R.atom_plan(R.atom_of("T53.1"), 4)
    assert (t.rows, t.row_bytes, t.lbo, t.sbo) == (16, 256, 512, 1024)
    addr = t.addresses()[..., 0] - t.base  # (MN, K) byte 0 of each 4-byte element
    # element n = 0: K rows 0..3 128 B apart (32-byte unit 0 -> unit j), row 4 at +SBO, row 8 at +2 SBO
    assert list(addr[0, :9]) == [0, 160, 320, 480, 1024, 1184, 1344, 1504, 2048]
    assert addr[32, 0] == 512  # the second 128-byte MN slice at +LBO
    assert np.unique(t.addresses()).size == t.addresses().size == 4096


def test_t53_row2_has_no_atom():
    with pytest.raises(ValueError):
        R.atom_of("T53.2")


def test_atom_byte_is_a_permutation_of_each_row():
    for ref in ("T53.1", "T53.3", "T53.5", "T53.7", "T53.9"):
        a = R.atom_of(ref)
        r, b = np.meshgrid(np.arange(a.rows), np.arange(a.width), indexing="ij")
        off = R.atom_byte(a, r, b)
        assert np.array_equal(np.sort(off, axis=1), r * a.width + b)  # stays in its row, bijective


def test_atom_byte_64b_rows_pair_up():
    a = R.atom_of("T53.6")  # 64B: rows 2j and 2j+1 share the XOR factor j
    assert R.atom_byte(a, np.array(3), np.array(0)) == 3 * 64 + 16 * 1
    assert R.atom_byte(a, np.array(6), np.array(16)) == 6 * 64 + 16 * (1 ^ 3)


def test_atom_tile_addresses_are_injective_and_within_the_tile():
    for ref in ("T53.1", "T53.3", "T53.4", "T53.9", "T53.10"):
        t = R.atom_plan(R.atom_of(ref), 2 if ref != "T53.1" else 4)
        addr = t.addresses().reshape(-1)
        assert np.unique(addr).size == addr.size
        assert addr.min() == t.base


def test_printed_bits():
    assert list(R.printed_bits("0b … 111 0000")) == [False] * 4 + [True] * 3
    assert R.printed_bits("0b … 0000 111 0000 11").size == 13


def test_zcm_word_positions():
    w = R.zcm_word(start_counts=(0, 1, 2, 1), first_spans=(1, 1, 0, 0), non_zero_mask=1, skip_span=2, use_span=3,
                   column_shift=2)
    assert w == (1 << 8) | (2 << 16) | (1 << 24) | (1 << 32) | (1 << 33) | (1 << 39) | (2 << 40) | (3 << 48) | (2 << 56)
