"""Decoders against the spec's worked examples (9.7.16.3.3, Table 53 atoms, Table 42) and error paths."""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.ptxvm.tcgen05.decode import decode_idesc, decode_smem_desc
from mmacts.ptxvm.tcgen05.smem_operand import byte_ranges, read_operand
from suites.descriptors import spec_readings as S

# (name, exact layout shape, stride, elem bytes, container, swizzle, lbo field, sbo field): 9.7.16.3.3
WORKED = [
    ("fig188 K none tf32", ((8, 2), (4, 4)), ((4, 32), (1, 64)), 4, "b32", "none", "K", 16, 8),
    # Figure 189 is not injective over its printed K=16 (AMB-FIG189-NOT-INJECTIVE): its first 8 K only
    ("fig189 K 32B tf32", ((8, 2), (4, 2)), ((8, 64), (1, 4)), 4, "b32", "32B", "K", 1, 16),
    ("fig190 MN none bf16", ((8, 1, 2), (8, 2)), ((1, 8, 64), (8, 128)), 2, "b16", "none", "MN", 16, 8),
    ("fig191 MN 32B bf16", ((8, 2, 2), (8, 2)), ((1, 8, 128), (16, 256)), 2, "b16", "32B", "MN", 16, 32),
    ("fig192 MN 64B bf16", ((8, 4, 2), (8, 2)), ((1, 8, 256), (32, 512)), 2, "b16", "64B", "MN", 32, 64),
]
B_OF = {"none": 0, "32B": 1, "64B": 2, "128B": 3}


def _image(addr_bytes: np.ndarray, elem_bytes: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """smem with element (i, j) = its linear index, little endian, at its byte addresses."""
    mn, k = addr_bytes.shape[:2]
    idx = np.arange(mn * k, dtype=np.uint32).reshape(mn, k)
    smem = np.zeros(size, dtype=np.uint8)
    for byte in range(elem_bytes):
        smem[addr_bytes[..., byte]] = (idx >> (8 * byte)) & 0xFF
    return smem, idx


@pytest.mark.parametrize("case", WORKED, ids=[w[0] for w in WORKED])
def test_worked_examples(case):
    _, shape, stride, eb, cont, sw, major, lbo_f, sbo_f = case
    base = 2048
    off = S.cute_offsets(shape, stride) * eb  # (MN, K) byte offsets
    byt = S.swizzle_bytes(off[..., None] + np.arange(eb), B_OF[sw]) + base
    smem, idx = _image(byt, eb, 8192)
    word = S.smem_desc_word(start=base, lbo_field=lbo_f, sbo_field=sbo_f, swizzle=S.SWIZZLE_CODE[sw])
    mn, k = off.shape
    codes, addr = read_operand(smem, word, mn, k, major=major, container=cont)
    np.testing.assert_array_equal(codes.astype(np.uint32), idx & ((1 << (8 * eb)) - 1))
    assert set(np.unique(addr)) == set(np.unique(byt))


T53 = [f"T53.{i}" for i in (1, 3, 4, 5, 6, 7, 8, 9, 10)]


@pytest.mark.parametrize("ref", T53)
def test_table53_atoms(ref):
    atom = S.atom_of(ref)
    eb = 4 if atom.swizzle == "128B_base32B" else 2
    tile = S.atom_plan(atom, eb, base=4096)
    byt = tile.addresses()
    smem, idx = _image(byt, eb, 4096 + 16384)
    word = S.smem_desc_word(start=tile.base, lbo_field=tile.lbo >> 4, sbo_field=tile.sbo >> 4,
                            swizzle=S.SWIZZLE_CODE[atom.swizzle])
    codes, _ = read_operand(smem, word, tile.mn, tile.k, major=atom.major, container="b32" if eb == 4 else "b16")
    np.testing.assert_array_equal(codes.astype(np.uint32), idx & ((1 << (8 * eb)) - 1))


@pytest.mark.parametrize("kind", ["f16", "tf32", "f8f6f4", "i8"])
def test_t42_base_words(kind):
    d = decode_idesc(kind, S.t42_base_word(kind, m=128, n=64))
    assert (d["m"], d["n"], d["sparse"]) == (128, 64, 0)


def test_block_scaled_idesc_fields():
    # mxf4nvf4: sparse 0, sfb_id 2 (bits 4-5), atype/btype E2M1 = 1, N = 256, UE4M3 (0), M = 256, sfa 2, K96
    w = (2 << 4) | (1 << 7) | (1 << 10) | ((256 >> 3) << 17) | ((256 >> 7) << 27) | (2 << 29) | (1 << 31)
    d = decode_idesc("mxf4nvf4", w)
    assert (d["m"], d["n"], d["sfa_id"], d["sfb_id"], d["k96"], d["scale_type_name"]) == (256, 256, 2, 2, 1, "ue4m3")
    w8 = (3 << 4) | (5 << 7) | (3 << 10) | (1 << 13) | (1 << 16) | ((8 >> 3) << 17) | (1 << 23) | (1 << 27) | (1 << 29)
    d = decode_idesc("mxf8f6f4", w8)
    assert (d["atype_name"], d["btype_name"], d["negate_a"], d["transpose_b"], d["n"], d["m"]) == \
        ("e2m1", "e2m3", 1, 1, 8, 128)


def _good(kind="mxf8f6f4"):
    return (1 << 23) | ((64 >> 3) << 17) | (1 << 27)


@pytest.mark.parametrize("bit", [0, 1, 3, 6, 24, 25, 26, 31])
def test_idesc_reserved_bits(bit):
    with pytest.raises(ValueError, match="reserved"):
        decode_idesc("mxf8f6f4", _good() | (1 << bit))


def test_idesc_illegal_values():
    with pytest.raises(ValueError, match="atype"):
        decode_idesc("mxf8f6f4", _good() | (2 << 7))  # code 2 is not in Table 43
    with pytest.raises(ValueError, match="scale_type"):
        decode_idesc("mxf8f6f4", _good() & ~(1 << 23))  # UE4M3 not allowed for mxf8f6f4
    with pytest.raises(ValueError, match="M = 0"):
        decode_idesc("mxf8f6f4", _good() & ~(3 << 27))
    with pytest.raises(ValueError, match="N = 0"):
        decode_idesc("mxf8f6f4", _good() & ~(0x3F << 17))
    with pytest.raises(ValueError, match="sfa_id"):
        decode_idesc("mxf4", (1 << 7) | (1 << 10) | (8 << 17) | (1 << 23) | (1 << 27) | (1 << 29))  # SF ID 1
    with pytest.raises(ValueError, match="transpose_a"):
        decode_idesc("mxf4", (1 << 7) | (1 << 10) | (8 << 17) | (1 << 23) | (1 << 27) | (1 << 15))
    with pytest.raises(ValueError, match="32-bit"):
        decode_idesc("mxf4", 1 << 32)


def _sdesc(**kw):
    return S.smem_desc_word(**{"start": 1024, "lbo_field": 1, "sbo_field": 64, "swizzle": 2, **kw})


def test_smem_desc_fields():
    d = decode_smem_desc(_sdesc(base_offset=3))
    assert (d["start_address"], d["lbo"], d["sbo"], d["swizzle"], d["base_offset"], d["lbo_mode"]) == \
        (1024, 16, 1024, "128B", 3, "relative")
    assert decode_smem_desc(_sdesc(swizzle=1))["swizzle"] == "128B_base32B"
    assert decode_smem_desc(_sdesc(lbo_mode=1))["lbo_mode"] == "absolute"


@pytest.mark.parametrize("kw,match", [
    ({"swizzle": 3}, "swizzle"), ({"swizzle": 5}, "swizzle"), ({"swizzle": 7}, "swizzle"),
    ({"fixed_46_48": 0}, "fixed_0b001"), ({"fixed_46_48": 3}, "fixed_0b001"), ({"fixed_53_60": 1}, "fixed_zero"),
    ({"lbo_mode": 1, "swizzle": 4}, "absolute"), ({"lbo_mode": 1, "base_offset": 1}, "absolute"),
])
def test_smem_desc_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        decode_smem_desc(_sdesc(**kw))


@pytest.mark.parametrize("bit", [14, 15, 30, 31])
def test_smem_desc_unlisted_bits(bit):
    with pytest.raises(ValueError, match="unlisted"):
        decode_smem_desc(_sdesc() | (1 << bit))


def test_operand_out_of_range_and_ranges():
    smem = np.zeros(1024, dtype=np.uint8)
    w = S.smem_desc_word(start=512, lbo_field=8, sbo_field=8, swizzle=0)
    with pytest.raises(ValueError, match="address 0x"):
        read_operand(smem, w, 128, 32, major="K", container="b8")
    assert byte_ranges(np.array([5, 3, 4, 9, 10])) == [(3, 6), (9, 11)]


def test_packed_containers():
    # one K-major 8-row group, no swizzle: p4 (16 codes in bytes 0-7), p6 (bytes 0-11), fp4x2 (low nibble first)
    rng = np.random.default_rng(1)
    w = S.smem_desc_word(start=0, lbo_field=8, sbo_field=16, swizzle=0)  # LBO 128 B, SBO 256 B
    smem = rng.integers(0, 256, 512, dtype=np.uint8)
    raw = smem[:128].reshape(8, 16)  # row r at r*16 (first K chunk)
    c4, _ = read_operand(smem, w, 8, 16, major="K", container="p4")
    assert c4[3, 5] == (raw[3, 2] >> 4) & 0xF and c4[3, 4] == raw[3, 2] & 0xF
    c6, _ = read_operand(smem, w, 8, 16, major="K", container="p6")
    bits = int.from_bytes(bytes(raw[2, :12]), "little")
    assert [int(x) for x in c6[2]] == [(bits >> (6 * e)) & 63 for e in range(16)]
    cx, _ = read_operand(smem, w, 8, 32, major="K", container="fp4x2")
    assert cx[1, 0] == raw[1, 0] & 0xF and cx[1, 1] == raw[1, 0] >> 4
    with pytest.raises(ValueError, match="K-major only"):
        read_operand(smem, w, 8, 32, major="MN", container="fp4x2")
