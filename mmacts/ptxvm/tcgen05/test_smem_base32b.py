"""128B swizzling with 32B atomicity (``128B_base32B``, Table 40 code 1), MN-major, from first principles.

Table 53 gives its swizzle atom as 8x4 in 128-bit elements, (M/N extent) x (K extent): 8 x 16 B =
128 B along MN by 4 K rows, one 512-byte atom (AMB-T53-32B-ATOM-SIZE, reading "atom-512"; CUTLASS 4.2's
``Layout_MN_SW128_32B_Atom`` and its ``make_umma_desc`` SBO = 512 B agree). So consecutive K rows are
128 B apart, SBO steps once per 4 K rows, LBO once per 128 B along MN; then Swizzle<2,5,2> on the
absolute address permutes the four 32-byte units of each 128-byte row by the row's phase
(address bits 7-8). Descriptor words are built here bit by bit from Table 40, not by any encoder.
"""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.ptxvm.tcgen05.decode import decode_smem_desc
from mmacts.ptxvm.tcgen05.smem_operand import byte_ranges, read_operand, walk

# CUTLASS 4.2 descriptors for Layout_MN_SW128_32B_Atom (peers suite, AMB-T53-32B-ATOM-SIZE)
CUTLASS_LBO_8192 = 0x2000402002000800
CUTLASS_LBO_4096 = 0x2000402001000800


def _word(start: int, lbo: int, sbo: int, swizzle_code: int, base_offset: int = 0) -> int:
    """Table 40 by hand: start/LBO/SBO ((x & 0x3FFFF) >> 4) at bits 0/16/32, 0b001 at 46-48, base offset
    at 49-51, LBO mode 0 (bit 52), swizzle at 61-63."""
    return ((start >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (1 << 46) | (base_offset << 49)
            | (swizzle_code << 61))


def _unswizzle(a: np.ndarray) -> np.ndarray:
    """Undo Swizzle<2,5,2> (an involution: bits 5-6 ^= bits 7-8, which it leaves alone)."""
    return a ^ (((a >> 7) & 3) << 5)


@pytest.mark.parametrize("word,lbo", [(CUTLASS_LBO_8192, 8192), (CUTLASS_LBO_4096, 4096)])
def test_cutlass_words_decode(word, lbo):
    assert word == _word(0x8000, lbo, 512, 1)
    d = decode_smem_desc(word)
    assert (d["swizzle"], d["start_address"], d["lbo"], d["sbo"], d["base_offset"], d["lbo_mode"]) == \
        ("128B_base32B", 0x8000, lbo, 512, 0, "relative")


def test_four_k_rows_per_sbo_step():
    d = decode_smem_desc(CUTLASS_LBO_4096)
    start, lbo, sbo = 0x8000, 4096, 512
    a = walk(d, 12, 256, "MN")  # 12 K rows, 256 bytes along MN (two 128-byte atoms)
    pre = _unswizzle(a)
    # K rows 0..3 inside one atom, 128 B apart; k = 4 one SBO on, k = 8 two SBOs on (CuTe: n=0, k=8 at 1024)
    assert [int(x) - start for x in pre[:4, 0]] == [0, 128, 256, 384]
    assert int(pre[4, 0]) == start + sbo and int(pre[5, 0]) == start + sbo + 128
    assert int(pre[8, 0]) == start + 2 * sbo == start + 1024
    # along MN: bytes contiguous within 128 B, the next 128 B at LBO
    assert int(pre[0, 127]) == start + 127 and int(pre[0, 128]) == start + lbo
    assert int(pre[9, 130]) == start + 2 * sbo + 128 + lbo + 2
    k = np.arange(12)[:, None]
    b = np.arange(256)[None, :]
    np.testing.assert_array_equal(pre, start + (k % 4) * 128 + (k // 4) * sbo + b % 128 + (b // 128) * lbo)
    # with SBO = one 512-byte atom the walk is injective and dense: 12 rows x 128 B per MN atom
    assert np.unique(a).size == a.size
    assert byte_ranges(a) == [(start, start + 3 * 512), (start + lbo, start + lbo + 3 * 512)]


def test_swizzle_permutes_32_byte_units_by_row_phase():
    d = decode_smem_desc(CUTLASS_LBO_8192)
    a = walk(d, 8, 128, "MN")
    pre = _unswizzle(a)
    np.testing.assert_array_equal(a ^ pre, ((pre >> 7) & 3) << 5)  # only bits 5-6 move
    units = (a[:, ::32] % 128) // 32  # where logical 32-byte unit u of each K row lands in its 128-byte row
    # start 0x8000 is 512-aligned: row phase = k % 4, unit u -> u ^ (k % 4)
    assert units.tolist() == [[0, 1, 2, 3], [1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]] * 2
    # a 32-byte unit stays whole (32B atomicity): bytes j = 0..31 follow its first byte
    u32 = a.reshape(8, 4, 32)
    np.testing.assert_array_equal(u32 - u32[..., :1], np.broadcast_to(np.arange(32), (8, 4, 32)))


def test_read_tf32_mn_major_operand():
    # Table 52: 32-bit MN-major operands use only this mode. Lay out (MN=64, K=12) 32-bit elements atom by
    # atom: atom (kb, nb) at start + kb*SBO + nb*LBO; its row k (0..3) is 128 B at +128k; logical 32-byte
    # unit u of that row (elements nb*32 + 8u .. +7) stored at unit u ^ k (512-aligned atoms: phase = k).
    start, lbo, sbo = 0x8000, 4096, 512
    mn, kk = 64, 12
    val = (np.arange(mn * kk, dtype=np.uint64).reshape(mn, kk) * 2654435761 % (1 << 32)).astype(np.uint32)
    smem = np.zeros(0xA000, dtype=np.uint8)
    for kb in range(kk // 4):
        for nb in range(mn // 32):
            atom = start + kb * sbo + nb * lbo
            for k in range(4):
                for u in range(4):
                    e = val[nb * 32 + 8 * u: nb * 32 + 8 * u + 8, kb * 4 + k].astype("<u4")
                    at = atom + 128 * k + 32 * (u ^ k)
                    smem[at:at + 32] = e.view(np.uint8)
    codes, addr = read_operand(smem, CUTLASS_LBO_4096, mn, kk, major="MN", container="b32")
    np.testing.assert_array_equal(codes.astype(np.uint32), val)
    assert byte_ranges(addr) == [(start, start + 3 * sbo), (start + lbo, start + lbo + 3 * sbo)]


def test_base32b_is_mn_major_only_and_other_swizzles_keep_8_rows():
    with pytest.raises(ValueError, match="K-major"):
        walk(decode_smem_desc(CUTLASS_LBO_4096), 8, 128, "K")
    # 128B with 16B atoms (code 2): 8 K rows per SBO step, unchanged
    d = decode_smem_desc(_word(0x8000, 8192, 1024, 2))
    pre = walk(d, 16, 128, "MN")
    pre = pre ^ (((pre >> 7) & 7) << 4)
    assert [int(x) - 0x8000 for x in pre[[1, 7, 8, 9], 0]] == [128, 896, 1024, 1152]
