"""Tests for tensor-memory images (scale factors, A, D, tcgen05.ld/st)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .tmem_image import (
    D_LAYOUTS,
    LD_SHAPES,
    SCALE_VECS,
    VALID_SF_IDS,
    ReplicaMismatch,
    d_lane_col,
    decode_d,
    encode_d,
    ld_st_map,
    new_tmem,
    read_a,
    read_sf,
    resolve_scale_vec,
    sf_cell,
    split_taddr,
    taddr,
    tcgen05_ld,
    tcgen05_st,
    write_a,
    write_sf,
)


def _cell(which, x, g, **kw):
    lanes, col, byte = sf_cell(which, np.array(x), np.array(g), **kw)
    return lanes.tolist(), int(col), int(byte)


# --- scale factors: CUTLASS computed addresses (cutlass-facts §1.1, §1.6) ------------------------


def test_sf_cutlass_examples():
    # mxf8f6f4 M128 N256 k-tile 128: MMA i -> column 0, byte i (SFA and SFB)
    for i in range(4):
        assert _cell("A", 0, i)[1:] == (0, i) and _cell("B", 0, i, n=256)[1:] == (0, i)
    # mxf8f6f4 M128 N128 k-tile 256: MMA 4..7 -> column 4
    for i in range(4, 8):
        assert _cell("A", 0, i)[1:] == (4, i - 4) and _cell("B", 0, i, n=128)[1:] == (4, i - 4)
    # mxf4nvf4 VS16 M128 N256: MMA i uses SF 4i..4i+3 -> SFA column 4i, SFB column 8i, byte 0
    for i in range(4):
        assert _cell("A", 0, 4 * i)[1:] == (4 * i, 0) and _cell("B", 0, 4 * i, n=256)[1:] == (8 * i, 0)
    # mxf4 VS32 M128 N128 k-tile 256: MMA i -> column 4*(i//2), byte 2*(i%2)
    for i in range(8):
        assert _cell("A", 0, 2 * i)[1:] == (4 * (i // 2), 2 * (i % 2))
    # K=96 (§1.6): SF index 6 -> SFA column 4 byte 2; SFB (N=256) column 8 byte 2
    assert _cell("A", 0, 6)[1:] == (4, 2) and _cell("B", 0, 6, n=256)[1:] == (8, 2)
    # rows: lane x%32 in every quadrant, column x//32
    assert _cell("A", 37, 0) == ([5, 37, 69, 101], 1, 0)


def test_sf_2x2_layout():
    # Layout B SFB (N=256): n<128 -> lanes n%32, +32; n>=128 -> 64 + ..., columns from the half
    assert _cell("B", 200, 0, datapath="2x2", n=256) == ([72, 104], 2, 0)
    assert _cell("B", 33, 5, datapath="2x2", n=256) == ([1, 33], 1 + 4, 1)
    assert _cell("A", 63, 4, datapath="2x2") == ([31, 63, 95, 127], 1 + 2, 0)


@st.composite
def _sf_case(draw):
    sv = draw(st.sampled_from(sorted(SCALE_VECS)))
    which = draw(st.sampled_from(["A", "B"]))
    datapath = draw(st.sampled_from(["4x1", "2x2"]))
    n = draw(st.sampled_from([16, 64, 128, 136, 192, 256]))
    sf_id = draw(st.sampled_from(VALID_SF_IDS[sv]))
    col0 = draw(st.integers(0, 400))
    return sv, which, datapath, n, sf_id, col0, draw(st.integers(0, 2**31))


@settings(max_examples=200, deadline=None)
@given(_sf_case())
def test_sf_roundtrip(case):
    sv, which, datapath, n, sf_id, col0, seed = case
    rng = np.random.default_rng(seed)
    v = SCALE_VECS[sv][0]
    rows = (128 if datapath == "4x1" else 64) if which == "A" else n
    sf = rng.integers(0, 256, size=(rows, sf_id + v), dtype=np.uint8)
    tmem = new_tmem()
    write_sf(tmem, sf, addr=taddr(0, col0), which=which, datapath=datapath, n=n)
    got = read_sf(tmem, taddr(0, col0), sf_id, sv, rows, which, datapath=datapath, n=n)
    assert (got == sf[:, sf_id: sf_id + v]).all()
    for q in range(4):
        if which == "B" and datapath == "2x2":
            break
        assert (read_sf(tmem, taddr(0, col0), sf_id, sv, rows, which, datapath=datapath, n=n,
                        quadrant=q) == got).all()


@settings(max_examples=100, deadline=None)
@given(_sf_case())
def test_wrong_sf_id_reads_other_scales(case):
    sv, which, datapath, n, sf_id, col0, seed = case
    others = [i for i in VALID_SF_IDS[sv] if i != sf_id]
    if not others:
        return
    rng = np.random.default_rng(seed)
    rows = (128 if datapath == "4x1" else 64) if which == "A" else n
    sf = rng.permutation(np.arange(rows * 8) % 256).reshape(rows, 8).astype(np.uint8)
    tmem = new_tmem()
    write_sf(tmem, sf, addr=taddr(0, col0), which=which, datapath=datapath, n=n)
    good = read_sf(tmem, taddr(0, col0), sf_id, sv, rows, which, datapath=datapath, n=n)
    bad = read_sf(tmem, taddr(0, col0), others[0], sv, rows, which, datapath=datapath, n=n)
    assert not (good == bad).all()


def test_single_quadrant_probe_and_replica_mismatch():
    sf = np.arange(128, dtype=np.uint8)[:, None]
    tmem = new_tmem()
    write_sf(tmem, sf, addr=0, which="A", replicas=(2,))
    with pytest.raises(ReplicaMismatch):
        read_sf(tmem, 0, 0, "1X", 128, "A")
    assert (read_sf(tmem, 0, 0, "1X", 128, "A", quadrant=2)[:, 0] == sf[:, 0]).all()
    assert (read_sf(tmem, 0, 0, "1X", 128, "A", quadrant=0) == 0).all()
    own = read_sf(tmem, 0, 0, "1X", 128, "A", quadrant="own")[:, 0]
    assert (own[64:96] == sf[64:96, 0]).all() and (own[:64] == 0).all()


@pytest.mark.parametrize("rows", [(37,), (37, 90)])
def test_replica_mismatch_names_the_first_differing_row(rows):
    # every replica written, then one (or two) SFB cells of replica 3 changed: the refusal names the first
    # differing MN index and k-block (one differing entry must not turn into an IndexError)
    sf = np.arange(1, 129, dtype=np.uint8)[:, None]
    tmem = new_tmem()
    write_sf(tmem, sf, addr=0, which="A")
    view = tmem.view(np.uint8).reshape(128, -1)
    for r in rows:
        view[96 + r % 32, 4 * (r // 32)] ^= 0xFF  # replica 3 (lanes 96-127) of row r, byte 0 of its column
    with pytest.raises(ReplicaMismatch, match=f"SFA replicas differ at MN index {rows[0]}, k-block 0$"):
        read_sf(tmem, 0, 0, "1X", 128, "A")


def test_sf_id_validation_and_dirty_address():
    tmem = new_tmem()
    with pytest.raises(ValueError):
        read_sf(tmem, 0, 2, "4X", 128, "A")
    dirty = taddr(0, 8) | (3 << 30)
    with pytest.raises(ValueError):
        read_sf(tmem, dirty, 3, "1X", 128, "A")
    assert split_taddr(dirty, high_bits="ignore") == (0, 8)
    read_sf(tmem, dirty, 3, "1X", 128, "A", high_bits="ignore")


def test_resolve_scale_vec():
    assert resolve_scale_vec("mxf8f6f4", "block32") == "1X"
    assert resolve_scale_vec("mxf4", "block32") == "2X"
    assert resolve_scale_vec("mxf4nvf4", "block16", k96=True) == "6X"
    assert resolve_scale_vec("mxf4", "block32", k96=True) == "3X"
    assert resolve_scale_vec("mxf8f6f4", None) == "1X"
    with pytest.raises(ValueError):
        resolve_scale_vec("mxf4nvf4", None)
    # the explicit spellings pass through, and K = 96 refuses them (a generated-mutation survivor inverted that)
    assert [resolve_scale_vec("mxf4nvf4", f"scale_vec::{q}") for q in ("2X", "4X")] == ["2X", "4X"]
    assert resolve_scale_vec("mxf8f6f4", ".scale_vec::1X") == "1X"
    with pytest.raises(ValueError, match="K=96 uses .block16/.block32"):
        resolve_scale_vec("mxf4", "scale_vec::2X", k96=True)


# --- A in TMEM --------------------------------------------------------------------------------------


def test_a_container_known_answers():
    tmem = new_tmem()
    codes = np.zeros((128, 8), dtype=np.uint8)
    codes[0, :4] = [0x1, 0x2, 0x3, 0xF]
    write_a(tmem, codes, addr=taddr(0, 100), elem="fp4")
    assert tmem[0, 100] == (0x1 << 2) | (0x2 << 10) | (0x3 << 18) | (0xF << 26)
    tmem = new_tmem()
    codes = np.zeros((128, 8), dtype=np.uint8)
    codes[3, :8] = np.arange(1, 9)
    write_a(tmem, codes, addr=taddr(0, 0), elem="fp4x2")
    assert tmem[3, 0] == 0x87654321


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["b8", "fp4", "fp6", "fp4x2", "b16", "b32"]),
       st.sampled_from(["4x1", "2x2", "half"]), st.integers(0, 1), st.integers(0, 2**31),
       st.integers(0, 2), st.integers(0, 2))
def test_a_roundtrip(elem, datapath, align, seed, s4, s6):
    rng = np.random.default_rng(seed)
    m = {"4x1": 128, "2x2": 64, "half": 64}[datapath]
    bits = {"b8": 8, "fp4": 4, "fp6": 6, "fp4x2": 4, "b16": 16, "b32": 32}[elem]
    codes = rng.integers(0, 1 << bits, size=(m, 64), dtype=np.uint64)
    lane = 16 * align if datapath == "half" else 0
    tmem = new_tmem()
    write_a(tmem, codes, addr=taddr(lane, 32), elem=elem, datapath=datapath, fp4_shift=s4 + 1, fp6_shift=s6)
    got = read_a(tmem, taddr(lane, 32), m, 64, elem, datapath=datapath, fp4_shift=s4 + 1, fp6_shift=s6,
                 check_container=True)
    assert (got.astype(np.uint64) == codes).all()


def test_fp6_position_hypotheses_disagree():
    codes = np.full((128, 4), 0x2A, dtype=np.uint8)
    tmem = new_tmem()
    write_a(tmem, codes, addr=0, elem="fp6", fp6_shift=1)
    assert not (read_a(tmem, 0, 128, 4, "fp6", fp6_shift=0) == codes).all()


# --- accumulator D ----------------------------------------------------------------------------------


def test_d_layout_known_positions():
    n = 64
    d = np.arange(128 * n, dtype=np.uint32).reshape(128, n)
    (img,) = encode_d(d, "D", addr=taddr(0, 10))
    assert img[5, 10 + 7] == d[5, 7]
    d256 = np.arange(256 * n, dtype=np.uint32).reshape(256, n)
    c0, c1 = encode_d(d256, "A")
    assert c1[3, 4] == d256[131, 4]
    c0, c1 = encode_d(np.arange(128 * n, dtype=np.uint32).reshape(128, n), "B")
    assert c1[64 + 2, 1] == 64 * n + 2 * n + 33  # m = 66 (CTA 1, m' = 2), n = 33 >= N/2
    (f,) = encode_d(np.arange(64 * n, dtype=np.uint32).reshape(64, n), "F", addr=taddr(16, 0))
    assert f[32 * 2 + 5 + 16, 3] == (37 * n + 3)  # m = 37 -> lane 32*2 + 5 + 16
    (g,) = encode_d(np.arange(32 * n, dtype=np.uint32).reshape(32, n), "G")
    assert g[32 * 3 + 4, 1] == 4 * n + 49  # n = 49 -> quarter 3, column 1


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(D_LAYOUTS)), st.sampled_from([16, 64, 128, 256]), st.integers(0, 200))
def test_d_roundtrip(layout, n, col0):
    m = D_LAYOUTS[layout][0]
    rng = np.random.default_rng(col0)
    d = rng.integers(0, 2**32, size=(m, n), dtype=np.uint64).astype(np.uint32)
    if col0 + n > 512:
        col0 = 0
    imgs = encode_d(d, layout, addr=taddr(0, col0))
    assert (decode_d(imgs, layout, n, addr=taddr(0, col0)) == d).all()
    # every D element has its own cell
    cta, lane, col = d_lane_col(layout, n)
    assert len(np.unique(np.stack([cta, lane, col]).reshape(3, -1), axis=1)[0]) == d.size
    assert lane.max() < 128 and col.max() < 512


# --- tcgen05.ld / st ------------------------------------------------------------------------------


def test_ld_known_mappings():
    # cutlass-facts §5.2: 32x32b thread t <- lane t, register i <- column i
    lane, col = ld_st_map("32x32b", 4)
    assert (lane[:, 2] == np.arange(32)).all() and (col[7] == np.arange(4)).all()
    # 16x256b.x1: thread t <- lanes t//4 and t//4+8, columns 2(t%4), 2(t%4)+1 (mma C fragment)
    lane, col = ld_st_map("16x256b", 1)
    assert lane[5].tolist() == [1, 1, 9, 9] and col[5].tolist() == [2, 3, 2, 3]
    lane, col = ld_st_map("16x32bx2", 2)
    assert lane[17].tolist() == [1, 1] and col[17].tolist() == [2, 3]


@pytest.mark.parametrize("shape", LD_SHAPES)
@pytest.mark.parametrize("num", [1, 2, 8, 32])
def test_ld_st_cover_distinct_cells_and_roundtrip(shape, num):
    lane, col = ld_st_map(shape, num)
    lanes_n = 32 if shape == "32x32b" else 16
    ncols = {"32x32b": 1, "16x64b": 2, "16x128b": 4, "16x256b": 8, "16x32bx2": 2}[shape] * num
    assert len(set(zip(lane.ravel().tolist(), col.ravel().tolist(), strict=True))) == lane.size == lanes_n * ncols
    assert lane.max() == lanes_n - 1 and col.max() == ncols - 1
    rng = np.random.default_rng(num)
    regs = rng.integers(0, 2**32, size=lane.shape, dtype=np.uint64).astype(np.uint32)
    tmem = new_tmem()
    tcgen05_st(tmem, regs, shape, num, taddr(32, 64), warp=1)
    assert (tcgen05_ld(tmem, shape, num, taddr(32, 64), warp=5) == regs).all()
    with pytest.raises(ValueError):
        tcgen05_ld(tmem, shape, num, taddr(32, 64), warp=0)  # warp 0 only reaches lanes 0-31


def test_pack_unpack_16b():
    tmem = new_tmem()
    regs = np.arange(32, dtype=np.uint32)[:, None] * 0x10001 + 0x00020001
    tcgen05_st(tmem, regs, "32x32b", 1, 0, unpack=True)
    assert tmem[3, 0] == (3 * 0x10001 + 0x20001) & 0xFFFF and tmem[3, 1] == (3 * 0x10001 + 0x20001) >> 16
    assert (tcgen05_ld(tmem, "32x32b", 1, 0, pack=True) == regs).all()


def test_d_then_ld_layout_d():
    n = 32
    d = np.arange(128 * n, dtype=np.uint32).reshape(128, n)
    (img,) = encode_d(d, "D")
    for q in range(4):
        regs = tcgen05_ld(img, "32x32b", 32, taddr(32 * q, 0), warp=q)
        assert (regs == d[32 * q: 32 * q + 32]).all()
