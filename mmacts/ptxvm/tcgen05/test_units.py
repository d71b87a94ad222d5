"""tmem (ld/st maps, quadrant rule), alloc, cp: unit tests and error paths."""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.ptxvm.tcgen05 import alloc as A
from mmacts.ptxvm.tcgen05 import cp as CP
from mmacts.ptxvm.tcgen05 import tmem as T
from mmacts.ptxvm.tcgen05.smem_operand import read_operand
from mmacts.spec.catalog import load
from mmacts.spec.queries import ld_st_shapes
from suites.descriptors import spec_readings as S

LD = sorted({(s.shape.lstrip("."), int(s.num.lstrip(".x")), s.regs) for s in ld_st_shapes(load()) if s.op == "ld"})


@pytest.mark.parametrize("shape,num,regs", LD)
def test_ld_st_every_table47_entry(shape, num, regs):
    split = num if shape == "16x32bx2" else None
    m = T.ld_st_map(shape, num, half_split=split)
    assert m.lane.shape == m.col.shape == (32, regs)
    lanes = 32 if shape == "32x32b" else 16
    assert set(np.unique(m.lane)) == set(range(lanes))
    # every (lane, column) cell is touched by exactly one (thread, register): the maps are bijective
    cells = m.lane * 4096 + m.col
    assert np.unique(cells).size == cells.size
    assert cells.size == lanes * (m.col.max() + 1) or shape == "16x32bx2"
    p = T.ld_st_map(shape, num, pack=True, half_split=split)
    assert p.col.shape == (32, regs, 2) and (p.col[..., 1] == p.col[..., 0] + 1).all()


def test_ld_st_roundtrip_and_pack():
    tm = np.zeros((128, 512), np.uint32)
    regs = np.arange(32 * 8, dtype=np.uint32).reshape(32, 8) + 7
    T.tcgen05_st(tm, regs, "16x256b", 2, T.taddr(32, 40), warp_id=1)
    np.testing.assert_array_equal(T.tcgen05_ld(tm, "16x256b", 2, T.taddr(32, 40), warp_id=5), regs)
    T.tcgen05_st(tm, np.full((32, 1), 0xBEEF1234, np.uint32), "32x32b", 1, T.taddr(0, 0), unpack=True)
    assert tm[3, 0] == 0x1234 and tm[3, 1] == 0xBEEF
    assert T.tcgen05_ld(tm, "32x32b", 1, 0, pack=True)[3, 0] == 0xBEEF1234


def test_ld_st_errors():
    with pytest.raises(ValueError, match="Table 47"):
        T.ld_st_map("16x256b", 64)
    with pytest.raises(ValueError, match="immHalfSplitoff"):
        T.ld_st_map("16x32bx2", 1)
    with pytest.raises(ValueError, match="outside"):
        T.ld_st_cells("32x32b", 128, T.taddr(0, 400))
    with pytest.raises(ValueError, match="lanes 0-31"):
        T.tcgen05_ld(np.zeros((128, 512), np.uint32), "32x32b", 1, T.taddr(32, 0), warp_id=4)
    assert list(T.quadrant_violations(2, np.array([63, 64, 95, 96, 96]))) == [63, 96]
    assert T.quadrant_violations(6, np.arange(64, 96)).size == 0
    assert T.split_taddr(0xC0000010, ignore_bits_30_31=True) == (0, 16)
    with pytest.raises(ValueError, match="outside"):
        T.split_taddr(0xC0000010)


def test_alloc():
    a = A.TmemAllocator()
    assert a.alloc(256) == 0 and a.alloc(128) == 256 and a.alloc(128) == 384
    assert a.alloc(32) is A.WOULD_BLOCK
    with pytest.raises(ValueError, match="not the address"):
        a.dealloc(32, 32)
    with pytest.raises(ValueError, match="has 128"):
        a.dealloc(256, 64)
    a.dealloc(256, 128)
    assert a.alloc(64) == 256
    with pytest.raises(ValueError, match="increases"):
        a.alloc(128)
    with pytest.raises(ValueError, match="power of 2"):
        a.alloc(48)
    with pytest.raises(ValueError, match="power of 2"):
        a.alloc(1024)
    assert a.leaks() == [(0, 256), (256, 64), (384, 128)]
    with pytest.raises(ValueError, match="not deallocated"):
        a.check_exit()
    a.relinquish_alloc_permit()
    with pytest.raises(ValueError, match="relinquish"):
        a.alloc(32)
    for s, c in a.leaks():
        a.dealloc(s, c)
    a.check_exit()


def _sf_desc(addr):
    return S.smem_desc_word(start=addr, lbo_field=1, sbo_field=8, swizzle=0)


@pytest.mark.parametrize("shape,mc,lanes", [
    ("128x256b", None, [[r] for r in range(128)]),
    ("128x128b", None, [[r] for r in range(128)]),
    ("4x256b", None, [[32 * r] for r in range(4)]),
    ("32x128b", "warpx4", [[r, r + 32, r + 64, r + 96] for r in range(32)]),
    ("64x128b", "warpx2::02_13", [[r, r + 64] for r in range(64)]),
    ("64x128b", "warpx2::01_23", [[r % 32 + 64 * (r // 32), r % 32 + 64 * (r // 32) + 32] for r in range(64)]),
])
def test_cp_shapes(shape, mc, lanes):
    rows, rb = CP.SHAPES[shape]
    smem = np.random.default_rng(0).integers(0, 256, 65536, dtype=np.uint8)
    tm = np.zeros((128, 512), np.uint32)
    w = S.smem_desc_word(start=1024, lbo_field=8 * rows // 8 * 1, sbo_field=8, swizzle=0)  # LBO = rows*16 B
    fp = CP.execute_cp([tm], [smem], T.taddr(0, 8), w, shape=shape, multicast=mc)
    for r, ls in enumerate(lanes):
        want = np.concatenate([smem[1024 + (r % 8) * 16 + (r // 8) * 128 + c * rows * 16:][:16]
                               for c in range(rb // 16)])
        for lane in ls:
            assert tm[lane, 8:8 + rb // 4].view(np.uint8).tolist() == want.tolist()
    assert fp.tmem_written[0].sum() == sum(len(x) for x in lanes) * rb // 4


def test_cp_decompress_and_errors():
    smem = np.zeros(4096, np.uint8)
    smem[0:8] = [0x21, 0x43, 0x65, 0x87, 0xA9, 0xCB, 0xED, 0x0F]  # codes 1,2,...,15,0
    smem[8:16] = 0xFF  # padding, dropped
    tm = np.zeros((128, 512), np.uint32)
    fp = CP.execute_cp([tm], [smem], 0, _sf_desc(0), shape="32x128b", multicast="warpx4", src_fmt="b4x16_p64")
    assert tm[0, :4].view(np.uint8).tolist() == [((e + 1) % 16) << 2 for e in range(16)]
    assert tm[96, :4].view(np.uint8).tolist() == tm[0, :4].view(np.uint8).tolist()
    assert fp.smem_ranges[0] == [(0, 512)]
    six = sum(e << (6 * e) for e in range(16)).to_bytes(12, "little")
    smem[:12] = list(six)
    CP.execute_cp([tm], [smem], 0, _sf_desc(0), shape="32x128b", multicast="warpx4", src_fmt=".b8x16.b6x16_p32")
    assert tm[0, :4].view(np.uint8).tolist() == [e << 1 for e in range(16)]
    with pytest.raises(ValueError, match="multicast"):
        CP.execute_cp([tm], [smem], 0, _sf_desc(0), shape="64x128b")
    with pytest.raises(ValueError, match="outside"):
        CP.execute_cp([tm], [smem], T.taddr(100, 0), _sf_desc(0), shape="32x128b", multicast="warpx4")
    with pytest.raises(ValueError, match="address"):
        CP.execute_cp([tm], [smem], 0, _sf_desc(4000), shape="128x256b")
    two = [np.zeros((128, 512), np.uint32) for _ in range(2)]
    CP.execute_cp(two, [smem, np.ones(4096, np.uint8)], 0, _sf_desc(0), shape="128x128b")
    assert two[1][5, 0] == 0x01010101 and two[0][0, 0] == tm[0, 0] * 0 + int.from_bytes(bytes(smem[:4]), "little")


def test_two_per_byte_e2m1_is_read_k_major_only() -> None:
    """Table 44 fixes transpose at 0 for kind::mxf4/mxf4nvf4: the VM refuses an MN-major two-per-byte E2M1
    operand by name (a refusal no GPU case can run; generated mutation found `major < "K"` alive, since "MN" does
    not sort below "K")."""
    with pytest.raises(ValueError, match="K-major only"):
        read_operand(np.zeros(1 << 16, np.uint8), 0, 128, 64, major="MN", container="fp4x2")
