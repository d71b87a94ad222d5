"""Tests for shared-memory operand images (PTX 9.7.16.3, Tables 52/53, 9.7.16.10.4)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .smem_desc import PATTERN_BYTES, base_offset_for, decode_smem_desc, encode_smem_desc
from .smem_image import (
    ATOM_ROWS,
    CODE_BITS,
    ELEMS,
    SWIZZLE_WIDTH,
    SWIZZLES,
    decode_operand,
    decode_tile,
    encode_operand,
    encode_sf_atoms,
    sf_atom_desc,
    sf_atom_offsets,
    walk_addresses,
)

_DT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 4: np.uint8, 6: np.uint8}
_MMA_K = {"b8": 32, "b16": 16, "b32": 8, "p4": 32, "p6": 32, "fp4x2": 64}


def _codes(rng, mn, k, elem):
    bits = CODE_BITS[elem]
    return rng.integers(0, 1 << bits, size=(mn, k), dtype=np.uint64).astype(_DT[bits])


# --- a tiny CuTe layout evaluator, written for the tests only ------------------------------


def _mode_offset(idx: np.ndarray, shape, stride) -> np.ndarray:
    if isinstance(shape, int):
        return idx * stride
    off = np.zeros_like(idx)
    for s, d in zip(shape, stride, strict=True):
        size = int(np.prod(s)) if not isinstance(s, int) else s
        off = off + _mode_offset(idx % size, s, d)
        idx = idx // size
    return off


def _cute(shape, stride, mn, k, swz_b=0):
    """Byte-free element offset of Swizzle<B,4,3> o (shape):(stride) at (mn, k) (element units)."""
    return _mode_offset(mn, shape[0], stride[0]) + _mode_offset(k, shape[1], stride[1])


def _swz_bytes(byte_off: np.ndarray, b: int) -> np.ndarray:
    return byte_off ^ (((byte_off >> 7) & ((1 << b) - 1)) << 4)


# --- spec worked examples (9.7.16.3.3) ---------------------------------------------------------


@pytest.mark.parametrize(
    "major, swizzle, elem, mn, k, shape, stride, swz_b, lbo, sbo",
    [
        # K-major, no swizzle, tf32: LBO 64*4 B (encoded 16), SBO 32*4 B (encoded 8)
        ("K", "none", "b32", 16, 16, ((8, 2), (4, 4)), ((4, 32), (1, 64)), 0, 256, 128),
        # MN-major, no swizzle, bf16: LBO 128*2 B (16), SBO 64*2 B (8)
        ("MN", "none", "b16", 16, 16, ((8, 1, 2), (8, 2)), ((1, 8, 64), (8, 128)), 0, 256, 128),
        # MN-major, 32B swizzle, bf16: LBO 128*2 B (16), SBO 256*2 B (32)
        ("MN", "32B", "b16", 32, 16, ((8, 2, 2), (8, 2)), ((1, 8, 128), (16, 256)), 1, 256, 512),
        # MN-major, 64B swizzle, bf16: LBO 256*2 B (32), SBO 512*2 B (64)
        ("MN", "64B", "b16", 64, 16, ((8, 4, 2), (8, 2)), ((1, 8, 256), (32, 512)), 2, 512, 1024),
    ],
)
def test_spec_worked_examples(major, swizzle, elem, mn, k, shape, stride, swz_b, lbo, sbo):
    nbytes = CODE_BITS[elem] // 8
    codes = np.arange(mn * k).reshape(mn, k).astype(_DT[CODE_BITS[elem]])
    smem, img = encode_operand(codes, major=major, swizzle=swizzle, elem=elem, atom_order="mn")
    d = decode_smem_desc(img.desc_word)
    assert (d.lbo, d.sbo) == (lbo, sbo)
    assert (img.desc_word >> 16) & 0x3FFF == lbo >> 4 and (img.desc_word >> 32) & 0x3FFF == sbo >> 4
    # Independent placement check: the spec's exact CuTe layout says where every element lives.
    mm, kk = np.meshgrid(np.arange(mn), np.arange(k), indexing="ij")
    off = _swz_bytes(_cute(shape, stride, mm, kk) * nbytes, swz_b)
    got = smem.view(np.uint8)[off[..., None] + np.arange(nbytes)].copy().view(f"<u{nbytes}")[..., 0]
    assert (got == codes).all()


def test_spec_example_k32b_tf32_descriptor_and_overlap():
    # K-major 32B tf32: SBO 64*4 B (encoded 16), LBO "1 (assumed)".
    codes = np.arange(16 * 16, dtype=np.uint32).reshape(16, 16)
    _, img = encode_operand(codes, major="K", swizzle="32B", elem="b32")
    assert (img.desc_word >> 32) & 0x3FFF == 16 and (img.desc_word >> 16) & 0x3FFF == 1
    # The printed exact layout ((8,2),(4,4)):((8,64),(1,4)) maps two coordinates to one offset
    # (row 1 vs k 8): the example is internally inconsistent (see AMBIGUITIES.md, SMEM-2).
    mm, kk = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    off = _cute(((8, 2), (4, 4)), ((8, 64), (1, 4)), mm, kk)
    assert len(np.unique(off)) < off.size


# --- CUTLASS numbers (cutlass-facts §4.2, §4.3) ---------------------------------------------------


@pytest.mark.parametrize(
    "swizzle, lbo, sbo", [("128B", 16, 1024), ("64B", 16, 512), ("32B", 16, 256), ("none", 2048, 128)]
)
def test_cutlass_kmajor_128_rows(swizzle, lbo, sbo):
    codes = np.zeros((128, 128), dtype=np.uint8)
    _, img = encode_operand(codes, major="K", swizzle=swizzle, elem="b8")
    d = decode_smem_desc(img.desc_word)
    assert (d.lbo, d.sbo) == (lbo, sbo)


def test_cutlass_kmajor_k_steps():
    codes = np.zeros((128, 128), dtype=np.uint8)
    for swizzle, steps in (("128B", [0, 32, 64, 96]), ("64B", [0, 32, 8192, 8192 + 32]),
                           ("32B", [0, 4096, 8192, 12288]), ("none", [0, 4096, 8192, 12288])):
        _, img = encode_operand(codes, major="K", swizzle=swizzle, elem="b8")
        starts = [decode_smem_desc(img.desc_for(k_offset=32 * i)).start_address for i in range(4)]
        assert starts == steps, swizzle
    # packed FP4 (K=64 per MMA) steps by 32 B too
    _, img = encode_operand(np.zeros((128, 256), np.uint8), major="K", swizzle="128B", elem="fp4x2")
    assert [decode_smem_desc(img.desc_for(k_offset=64 * i)).start_address for i in range(4)] == [0, 32, 64, 96]


@pytest.mark.parametrize(
    "swizzle, mn, lbo, sbo, kstep",
    [("128B", 128, 16384, 1024, 4096), ("128B", 256, 16384, 1024, 4096), ("64B", 128, 8192, 512, 2048),
     ("32B", 128, 4096, 256, 1024), ("none", 128, 128, 2048, 512)],
)
def test_cutlass_mnmajor_k_first(swizzle, mn, lbo, sbo, kstep):
    codes = np.zeros((mn, 128), dtype=np.uint8)
    _, img = encode_operand(codes, major="MN", swizzle=swizzle, elem="b8", atom_order="k")
    d = decode_smem_desc(img.desc_word)
    if not (swizzle == "128B" and mn == 128):  # one MN atom: CUTLASS writes LBO 0 (unused)
        assert d.lbo == lbo
    assert d.sbo == sbo
    assert decode_smem_desc(img.desc_for(k_offset=32)).start_address == kstep


# --- containers ------------------------------------------------------------------------------------


def test_padded_4bit_chunk_known_answer():
    codes = np.arange(16, dtype=np.uint8)[None, :].repeat(8, 0)
    smem, _ = encode_operand(codes, major="K", swizzle="none", elem="p4", pad_value=0xEE)
    row0 = smem[:16]
    assert list(row0[:8]) == [0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE]
    assert (row0[8:] == 0xEE).all()


def test_padded_6bit_chunk_known_answer():
    # cutlass-facts §3.3: four 6-bit codes form c0 | c1<<6 | c2<<12 | c3<<18 in 3 bytes
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 64, size=(8, 16), dtype=np.uint8)
    smem, _ = encode_operand(codes, major="K", swizzle="none", elem="p6")
    c = codes[0].astype(np.uint32)
    for g in range(4):
        word = c[4 * g] | c[4 * g + 1] << 6 | c[4 * g + 2] << 12 | c[4 * g + 3] << 18
        assert list(smem[3 * g: 3 * g + 3]) == [word & 0xFF, (word >> 8) & 0xFF, word >> 16]
    assert (smem[12:16] == 0).all()


def test_fp4x2_even_k_low_nibble():
    codes = np.zeros((8, 32), dtype=np.uint8)
    codes[0, 0], codes[0, 1] = 0x1, 0x2
    smem, _ = encode_operand(codes, major="K", swizzle="none", elem="fp4x2")
    assert smem[0] == 0x21


def test_sw128_known_positions():
    # row r, 16-byte chunk c -> physical chunk c ^ (r % 8) (Swizzle<3,4,3>)
    codes = np.zeros((8, 128), dtype=np.uint8)
    codes[1, 0] = 0xA1  # row 1, chunk 0 -> chunk 1
    codes[5, 16 * 6 + 3] = 0xB2  # row 5, chunk 6 -> chunk 3
    smem, _ = encode_operand(codes, major="K", swizzle="128B", elem="b8")
    assert smem[128 + 16] == 0xA1
    assert smem[5 * 128 + 16 * 3 + 3] == 0xB2


def test_128b_base32b_known_position():
    # Swizzle<2,5,2>: 32-byte unit u of K row j -> unit u ^ (j % 4), 16-byte half kept
    codes = np.zeros((128, 8), dtype=np.uint8)
    codes[32 + 16 + 5, 3] = 0xC3  # MN byte 53 = unit 1, half 1, byte 5; K row 3
    smem, _ = encode_operand(codes, major="MN", swizzle="128B_base32B", elem="b8")
    assert smem[3 * 128 + ((1 ^ 3) * 32) + 16 + 5] == 0xC3


# --- 128B swizzle with 32B atomicity: Table 53 atom 8x4 = 4 K rows x 128 B = 512 B ----------------
#
# Facts pinned here (reading "atom-512" of AMB-T53-32B-ATOM-SIZE, AMBIGUITIES.md SDESC-3):
#  * PTX ISA Table 53: atom "8x4" in 128-bit elements, (MN extent) x (K extent), i.e. 128 B along MN
#    by 4 K rows; every other MN-major atom (8x8, 4x8, 2x8, 1x8) has 8 K rows.
#  * Inside the atom the 32-byte units of K row j are XORed with j (Swizzle<2,5,2>: address bits
#    [5,7) ^= bits [7,9)), so the pattern repeats every 512 B.
#  * CUTLASS 4.2 (make_umma_desc on Layout_MN_SW128_32B_Atom) builds SBO = 512 B for a dense tile,
#    and puts element (n=0, k=8) at byte 1024; the peers suite saw descriptor 0x2000402001000800
#    (start 0x8000, LBO 4096, SBO 512) for a b16 MN-major tile of K = 32 (register entry).


def _swz252(byte_off: np.ndarray) -> np.ndarray:
    """Swizzle<2,5,2> on byte offsets from a 512-byte pattern boundary (test-side, from the facts)."""
    return byte_off ^ (((byte_off >> 7) & 3) << 5)


def _sw32_oracle(mn, k, eb, lbo, sbo):
    """Byte offset of element (n, kk): rows of 128 B, 4 K rows per SBO step, 128-B MN slices LBO apart."""
    n, kk = np.meshgrid(np.arange(mn), np.arange(k), indexing="ij")
    byte = n * eb
    return _swz252((kk % 4) * 128 + (kk // 4) * sbo + (byte % 128) + (byte // 128) * lbo)


def test_128b_base32b_atom_constants():
    assert ATOM_ROWS["128B_base32B"] == 4
    assert all(ATOM_ROWS[sw] == 8 for sw in SWIZZLES if sw != "128B_base32B")
    assert PATTERN_BYTES["128B_base32B"] == 512
    assert base_offset_for(0x200, "128B_base32B") == 0  # on its 512-B boundary
    assert base_offset_for(0x600, "128B_base32B") == 0
    assert base_offset_for(0x280, "128B_base32B") == 5  # (0x280 >> 7) & 7
    assert base_offset_for(0x100, "128B_base32B") == 2


@pytest.mark.parametrize("elem, eb", [("b32", 4), ("b16", 2)])
def test_128b_base32b_k_rows_step_sbo_every_4(elem, eb):
    # one MN atom wide (128 B), K = 16 rows = four 4-row atoms, K neighbours together (CUTLASS)
    mn, k = 128 // eb, 16
    codes = np.arange(mn * k).reshape(mn, k).astype(_DT[8 * eb])
    smem, img = encode_operand(codes, major="MN", swizzle="128B_base32B", elem=elem, atom_order="k")
    d = decode_smem_desc(img.desc_word)
    assert d.sbo == 512 and (img.desc_word >> 32) & 0x3FFF == 512 >> 4
    assert d.swizzle == "128B_base32B" and (img.desc_word >> 61) == 1 and d.base_offset == 0
    assert img.stride_rows == 512 and img.nbytes == 4 * 512
    # element (n=0, k=j): K rows 0..3 are 128 B apart (the 32-B unit 0 moves to unit j), row 4
    # starts the next atom at +SBO, row 8 at +2*SBO (CuTe: k = 8 at byte 1024)
    col0 = [int(np.flatnonzero(smem.view(f"<u{eb}") == codes[0, j])[0]) * eb for j in range(k)]
    assert col0[:4] == [0, 128 + 32, 256 + 64, 384 + 96]
    assert col0[4] == 512 and col0[8] == 1024 and col0[12] == 1536
    assert col0[5] == 512 + 128 + 32
    off = _sw32_oracle(mn, k, eb, d.lbo, d.sbo)
    got = smem[off[..., None] + np.arange(eb)].copy().view(f"<u{eb}")[..., 0]
    assert (got == codes).all()


@pytest.mark.parametrize("order, lbo, sbo", [("k", 4 * 512, 512), ("mn", 512, 2 * 512)])
def test_128b_base32b_two_mn_atoms_oracle(order, lbo, sbo):
    # b32, MN = 64 (two 128-B MN slices), K = 16 (four 4-row atoms)
    rng = np.random.default_rng(7)
    codes = _codes(rng, 64, 16, "b32")
    smem, img = encode_operand(codes, major="MN", swizzle="128B_base32B", elem="b32", atom_order=order)
    d = decode_smem_desc(img.desc_word)
    assert (d.lbo, d.sbo) == (lbo, sbo)
    off = _sw32_oracle(64, 16, 4, lbo, sbo)
    got = smem[off[..., None] + np.arange(4)].copy().view("<u4")[..., 0]
    assert (got == codes).all()
    assert (decode_tile(smem, img, mma_k=8) == codes).all()
    assert (decode_tile(smem, img, mma_k=4) == codes).all()


def test_128b_base32b_cutlass_descriptor_word():
    # the peers suite's CUTLASS 4.2 descriptor for a b16 MN-major SW128_32B tile (K = 32)
    codes = np.zeros((128, 32), dtype=np.uint16)
    _, img = encode_operand(codes, major="MN", swizzle="128B_base32B", elem="b16", base_address=0x8000,
                            atom_order="k")
    assert img.desc_word == 0x2000402001000800


def test_128b_base32b_k_offsets_of_4():
    codes = np.zeros((32, 16), dtype=np.uint32)
    _, img = encode_operand(codes, major="MN", swizzle="128B_base32B", elem="b32", atom_order="k")
    starts = [decode_smem_desc(img.desc_for(k_offset=kk)).start_address for kk in (0, 4, 8, 12)]
    assert starts == [0, 512, 1024, 1536]
    with pytest.raises(ValueError):
        img.desc_for(k_offset=2)
    # the 16B-atom modes keep their 8-row atoms
    _, img128 = encode_operand(np.zeros((32, 16), np.uint32), major="MN", swizzle="128B", elem="b32")
    with pytest.raises(ValueError):
        img128.desc_for(k_offset=4)
    # a K extent of one 4-row atom is a whole tile for this mode only
    encode_operand(np.zeros((32, 4), np.uint32), major="MN", swizzle="128B_base32B", elem="b32")
    with pytest.raises(ValueError):
        encode_operand(np.zeros((32, 4), np.uint32), major="MN", swizzle="128B", elem="b32")


def test_128b_base32b_decoder_walk():
    # the hardware-model walk alone: start 0, LBO 4096, SBO 512; byte 0 of K row j
    d = decode_smem_desc(encode_smem_desc(0, 4096, 512, swizzle="128B_base32B"))
    addr = walk_addresses(d, 12, 256, "MN")
    assert list(addr[:, 0]) == [0, 160, 320, 480, 512, 672, 832, 992, 1024, 1184, 1344, 1504]
    assert addr[0, 128] == 4096 and addr[4, 128] == 4096 + 512
    # a 512-byte pattern: the same walk from 512 B on is the first one shifted by 512
    d2 = decode_smem_desc(encode_smem_desc(512, 4096, 512, swizzle="128B_base32B"))
    assert (walk_addresses(d2, 12, 256, "MN") == addr + 512).all()


@pytest.mark.parametrize("base", [128, 256, 384, 640, 1536 + 384])
def test_128b_base32b_base_offset_roundtrip(base):
    rng = np.random.default_rng(base)
    codes = _codes(rng, 64, 12, "b32")
    smem, img = encode_operand(codes, major="MN", swizzle="128B_base32B", elem="b32", base_address=base,
                               atom_order="k")
    assert img.desc.base_offset == (0 if base % 512 == 0 else (base >> 7) & 7)
    assert (decode_tile(smem, img, mma_k=4) == codes).all()


# --- absolute LBO mode (9.7.16.3.1.2) ---------------------------------------------------------------


def test_absolute_lbo_48_byte_k():
    rng = np.random.default_rng(2)
    codes = _codes(rng, 8, 512, "fp4x2")  # two 128-B SW128 slices along K, 1024 B apart
    smem, img = encode_operand(codes, major="K", swizzle="128B", elem="fp4x2")
    start = img.desc_for(k_offset=192)  # third K=96 MMA: bytes 96..143 straddle the 128-B row
    d = decode_smem_desc(start)
    word = encode_smem_desc(d.start_address, 1024, d.sbo, swizzle="128B", lbo_absolute=True)
    got = decode_operand(smem, word, mn=8, k=96, major="K", elem="fp4x2")
    assert (got == codes[:, 192:288]).all()
    # the same descriptor in relative mode reads the wrong bytes for the tail
    rel = decode_operand(smem, start, mn=8, k=96, major="K", elem="fp4x2")
    assert not (rel == codes[:, 192:288]).all()


# --- round trips -------------------------------------------------------------------------------------


@st.composite
def _layout_case(draw):
    major = draw(st.sampled_from(["K", "MN"]))
    swizzle = draw(st.sampled_from(SWIZZLES))
    elem = draw(st.sampled_from(ELEMS))
    if elem == "fp4x2" and major == "MN":
        major = "K"
    if swizzle == "128B_base32B" and major == "K":
        swizzle = "128B"
    w = SWIZZLE_WIDTH[swizzle]
    per_byte = {"b8": 1, "p4": 1, "p6": 1, "b16": 0.5, "b32": 0.25, "fp4x2": 2}[elem]
    contig = int(w * per_byte) * draw(st.integers(1, 3))
    strided = ATOM_ROWS[swizzle] * draw(st.integers(1, 4))
    if major == "K":
        mn, k = strided, contig
        mma = _MMA_K[elem]
        k = max(k, mma) // mma * mma
    else:
        mn, k = contig, strided
        mma = ATOM_ROWS[swizzle] if strided % 8 else 8
    base = 128 * draw(st.integers(0, 24))
    order = draw(st.sampled_from(["mn", "k"]))
    return major, swizzle, elem, mn, k, mma, base, order, draw(st.integers(0, 2**31))


@settings(max_examples=250, deadline=None)
@given(_layout_case())
def test_roundtrip(case):
    major, swizzle, elem, mn, k, mma, base, order, seed = case
    rng = np.random.default_rng(seed)
    codes = _codes(rng, mn, k, elem)
    smem, img = encode_operand(codes, major=major, swizzle=swizzle, elem=elem, base_address=base,
                               atom_order=order, pad_value=int(rng.integers(0, 256)))
    assert (decode_tile(smem, img, mma_k=mma) == codes).all()
    # and through a window of shared memory that does not start at address 0
    lo = base
    assert (decode_tile(smem[lo:], img, mma_k=mma, smem_base=lo) == codes).all()


@settings(max_examples=150, deadline=None)
@given(_layout_case(), st.sampled_from(["start", "sbo", "lbo", "swizzle", "base_offset"]), st.integers(0, 2))
def test_wrong_descriptor_is_seen(case, field, bit):
    major, swizzle, elem, mn, k, mma, base, order, seed = case
    rng = np.random.default_rng(seed)
    codes = _codes(rng, mn, k, elem)
    smem, img = encode_operand(codes, major=major, swizzle=swizzle, elem=elem, base_address=base,
                               atom_order=order)
    word = img.desc_for()
    kk = mma if major == "K" else k
    t = {"b8": 16, "p4": 16, "p6": 16, "b16": 8, "b32": 4, "fp4x2": 32}[elem]
    w = SWIZZLE_WIDTH[swizzle]
    if major == "K":
        sbo_used, lbo_used = mn > 8, swizzle == "none"
    elif swizzle == "none":
        sbo_used, lbo_used = mn * 16 // t > 16, k > 8
    else:
        sbo_used, lbo_used = k > ATOM_ROWS[swizzle], mn * 16 // t > w
    if (field == "sbo" and not sbo_used) or (field == "lbo" and not lbo_used):
        return  # the descriptor never consults this field for this shape (9.7.16.3.1/2)
    if field == "start":
        bad = word ^ (1 << bit)
    elif field == "sbo":
        bad = word ^ (1 << (32 + bit))
    elif field == "lbo":
        bad = word ^ (1 << (16 + bit))
    elif field == "swizzle":
        bad = (word & ~(7 << 61)) | ((2 if swizzle != "128B" else 4) << 61)
    else:
        if swizzle == "none":
            return  # base offset only moves swizzle phases
        bad = word ^ (1 << 49)
    try:
        got = decode_operand(smem, bad, mn=mn, k=kk, major=major, elem=elem)
    except (IndexError, ValueError):
        return
    assert not (got == codes[:, :kk]).all(), (field, bit)


def test_decoder_refuses_to_read_outside_the_image():
    codes = np.zeros((8, 32), dtype=np.uint8)
    smem, img = encode_operand(codes, major="K", swizzle="none", elem="b8")
    with pytest.raises(IndexError):
        decode_operand(smem, img.desc_for() + 4096, mn=8, k=32, major="K", elem="b8")


# --- scale-factor atoms (cutlass-facts §2.1) ----------------------------------------------------


def test_sf_atom_offset_known_answer():
    assert int(sf_atom_offsets(37, 5, 8)) == 597


def test_sf_atom_offsets_are_a_bijection():
    x, f = np.meshgrid(np.arange(256), np.arange(8), indexing="ij")
    off = sf_atom_offsets(x, f, 8)
    assert sorted(off.ravel().tolist()) == list(range(256 * 8))


def test_sf_atoms_and_descriptor():
    sf = np.arange(128 * 4, dtype=np.uint32).reshape(128, 4).astype(np.uint8)
    smem = encode_sf_atoms(sf, base_address=0x200)
    assert smem[0x200 + 16 * 5 + 4 * 1 + 2] == sf[32 + 5, 2]
    assert sf_atom_desc(0x200) == 0x0000400800010000 | (0x200 >> 4)
    # the image is exactly base + MN x K_sf bytes (the atoms tile it: a generated-mutation survivor made it
    # base + MN ** K_sf, 268 MB), or smem_size when given
    assert smem.size == 0x200 + 128 * 4 and encode_sf_atoms(sf, smem_size=4096).size == 4096


def test_all_combinations_encode_or_reject_cleanly():
    # every (major, swizzle, elem) either builds a round-tripping image or raises ValueError
    rng = np.random.default_rng(3)
    for major, swizzle, elem in itertools.product(["K", "MN"], SWIZZLES, ELEMS):
        mn, k = (16, 256) if major == "K" else (256, 16)
        codes = _codes(rng, mn, k, elem)
        try:
            smem, img = encode_operand(codes, major=major, swizzle=swizzle, elem=elem)
        except ValueError:
            assert (elem == "fp4x2" and major == "MN") or (swizzle == "128B_base32B" and major == "K")
            continue
        mma = _MMA_K[elem] if major == "K" else 8
        assert (decode_tile(smem, img, mma_k=mma) == codes).all()


def test_k_major_with_32b_atoms_is_refused() -> None:
    """Table 53 row 2 (T53.2): no K-major layout exists for the 128B swizzle with 32-byte atoms."""
    import pytest as _pytest

    from reference.tcgen05.smem_desc import encode_smem_desc

    word = encode_smem_desc(0, 16, 1024, swizzle="128B_base32B")
    with _pytest.raises(ValueError, match="Table 53"):
        decode_operand(np.zeros(4096, np.uint8), word, mn=8, k=32, major="K", elem="b8")
