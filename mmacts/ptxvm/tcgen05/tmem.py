"""Tensor-memory addressing, the tcgen05.ld/st register maps and the warp lane-quadrant rule.

TMEM of one CTA is ``np.ndarray`` (128 lanes, 512 columns) of uint32 (9.7.16.1). An address is
lane in bits 31-16, column in bits 15-0 (9.7.16.1.1).

``ld_st_map`` gives, for every (shape, num) of Table 47 (register counts taken from the catalog), the
lane and column each thread's register touches, relative to ``taddr``. The fragment figures 183-187
are missing; the maps are reading "cutlass-copy-traits" of AMB-LDST-FRAGMENTS (CUTLASS
``Copy_Traits<SM100_TMEM_LOAD_*>``, cutlass-facts §5.2):

  32x32b    thread t, register r: lane t,                          column r
  16x64b                          lane t//4 + 8*(t%2),             column (t//2)%2 + 2r
  16x128b                         lane t//4 + 8*(r%2),             column t%4 + 4*(r//2)
  16x256b                         lane t//4 + 8*((r//2)%2),        column 2*(t%4) + r%2 + 8*(r//4)
  16x32bx2                        lane t%16,                       column r + immHalfSplitoff*(t//16)

(the closed forms the ``_BASE`` bit-id derivation in ``ld_st_map`` yields; ``test_units`` checks them).
``.pack::16b`` (ld) / ``.unpack::16b`` (st): a register holds two 16-bit halves; half h lives in the
low 16 bits of column 2c + h + s, c being the unpacked column above without the split and s the
immHalfSplitoff of the register's half (an address offset, not widened; Figure 193 missing).

Access restriction (9.7.16.8.1): warp w of a warpgroup -- i.e. warp id w % 4 of the CTA -- may access
lanes 32*(w%4) .. 32*(w%4)+31 only: ``quadrant_violations``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from mmacts.spec import queries as Q

from .decode import catalog

LANES = 128
COLS = 512
SHAPES = ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")


def taddr(lane: int, col: int) -> int:
    return ((int(lane) & 0xFFFF) << 16) | (int(col) & 0xFFFF)


def split_taddr(addr: int, *, ignore_bits_30_31: bool = False, what: str = "TMEM address") -> tuple[int, int]:
    """(lane, column) of a 32-bit TMEM address; outside 128 x 512 raises ``ValueError``.

    ``ignore_bits_30_31``: the scale-factor operands' reading of AMB-SF-ADDR-BITS3031 (CUTLASS leaves
    the SF ID there; the hardware is assumed to ignore it).
    """
    a = int(addr) & 0xFFFFFFFF
    if ignore_bits_30_31:
        a &= 0x3FFFFFFF
    lane, col = a >> 16, a & 0xFFFF
    if lane >= LANES or col >= COLS:
        raise ValueError(f"{what} {int(addr):#010x}: lane {lane} / column {col} outside 128 x 512")
    return lane, col


@cache
def _table47() -> dict[tuple[str, int], int]:
    """(shape, num) -> registers per thread, Table 47 (tcgen05.ld; Table 48 st is the same set)."""
    out = {}
    for s in Q.ld_st_shapes(catalog()):
        if s.op == "ld":
            out[(s.shape.lstrip("."), int(s.num.lstrip(".x")))] = s.regs
    return out


def valid_ld_st(shape: str, num: int) -> bool:
    return (shape, int(num)) in _table47()


@dataclass(frozen=True)
class LdStMap:
    """lane (32, R) and col (32, R) offsets from taddr; with pack/unpack col is (32, R, 2): column of
    the low (h=0) and high (h=1) 16-bit half of each register."""

    lane: np.ndarray
    col: np.ndarray
    packed: bool

    @property
    def regs(self) -> int:
        return self.lane.shape[1]


#: One ``.x1`` access of each shape as CUTLASS's ``Copy_Traits<SM100_TMEM_LOAD_{32dp32b,16dp*}1x>`` state it
#: (facts only, cutlass-facts §5.2): the DstLayout maps (thread t, bit v of the thread's registers) to a
#: logical bit id ``i`` of a (W bits x L lanes) block -- ``i % W`` is the bit inside the lane, ``i // W``
#: the lane (ValID ``(W, L):(1, DP_b)``). Written here as the bit id of bit 0 of register j, thread t:
#:   shape      L   W    bit id of (t, j)                               (DstLayout)
#:   32x32b     32  32   32 t                                           (32dp32b: thread = lane)
#:   16x64b     16  64   512 (t%2) + 32 ((t//2)%2) + 64 (t//4)          ((2,2,8),32):((512,32,64),1)
#:   16x128b    16  128  32 (t%4) + 128 (t//4) + 1024 j                 ((4,8),(32,2)):((32,128),(1,1024))
#:   16x256b    16  256  64 (t%4) + 256 (t//4) + 32 (j%2) + 2048 (j//2) ((4,8),(64,2)):((64,256),(1,2048))
#:   16x32bx2   16  64   64 (t%16) + 32 (t//16)                         ((16,2),32):((64,32),1)
#: Registers per ``.x1`` (j range) = W * L / 32 / 32 = Table 47's .x1 row. ``.xN`` repeats the block N
#: times along the columns (W / 32 columns further each time; register index = block * R1 + j).
#: For .16x32bx2 the two 32-bit halves of the 64-bit logical lane are the two ``.16x32b`` accesses of
#: 9.7.16.8.3 ("taddr" and "taddr+immHalfSplitoff"): half h of every repetition is at column
#: ``rep + h * immHalfSplitoff``; each repetition advances one column (32 bits).
_BASE = {"32x32b": (32, 32), "16x64b": (16, 64), "16x128b": (16, 128), "16x256b": (16, 256), "16x32bx2": (16, 64)}


def _bit_id(shape: str, t: np.ndarray, j: np.ndarray) -> np.ndarray:
    if shape == "32x32b":
        return 32 * t + 0 * j
    if shape == "16x64b":
        return 512 * (t % 2) + 32 * ((t // 2) % 2) + 64 * (t // 4) + 0 * j
    if shape == "16x128b":
        return 32 * (t % 4) + 128 * (t // 4) + 1024 * j
    if shape == "16x256b":
        return 64 * (t % 4) + 256 * (t // 4) + 32 * (j % 2) + 2048 * (j // 2)
    return 64 * (t % 16) + 32 * (t // 16) + 0 * j


def ld_st_map(shape: str, num: int, *, pack: bool = False, half_split: int | None = None) -> LdStMap:
    """Register map of ``tcgen05.{ld,st}.<shape>.x<num>`` (the ``_BASE`` derivation above); ``half_split`` is
    the ``immHalfSplitoff`` operand of .16x32bx2 (required there, refused elsewhere).

    ``.pack::16b`` / ``.unpack::16b`` (9.7.16.8.2: "two 16-bit chunks ... from adjacent columns" per 32-bit
    register; Figure 193 missing): every 32-bit unit of the map becomes two adjacent columns, the low
    half of the register in the first. immHalfSplitoff is an *address* offset (taddr + immHalfSplitoff),
    so it is added in columns after that widening, not widened with it.
    """
    shape = shape.lstrip(".")
    num = int(str(num).lstrip(".x"))
    if shape not in SHAPES:
        raise ValueError(f"tcgen05.ld/st: unknown shape .{shape}")
    regs = _table47().get((shape, num))
    if regs is None:
        raise ValueError(f"tcgen05.ld/st: .{shape}.x{num} is not in Table 47")
    if (shape == "16x32bx2") != (half_split is not None):
        raise ValueError("tcgen05.ld/st: immHalfSplitoff is required by .16x32bx2 and only allowed there")
    lanes_per, width = _BASE[shape]
    r1 = regs // num
    if r1 * 32 * 32 != lanes_per * width:
        raise ValueError(f"tcgen05.ld/st: .{shape} registers per .x1 ({r1}) disagree with its {lanes_per} x {width}b")
    t = np.arange(32)[:, None]
    reg = np.arange(regs)[None, :]
    rep, j = reg // r1, reg % r1
    bit = _bit_id(shape, t, j)
    lane = bit // width
    unit = (bit % width) // 32  # 32-bit unit inside the lane of one repetition
    if shape == "16x32bx2":
        base, offset = rep + 0 * unit, unit * int(half_split)
    else:
        base, offset = rep * (width // 32) + unit, 0 * unit
    lane = np.broadcast_to(lane, (32, regs))
    if pack:
        col = np.stack([2 * base + offset, 2 * base + offset + 1], axis=-1)
    else:
        col = np.broadcast_to(base + offset, (32, regs))
    return LdStMap(lane=lane.astype(np.int64), col=np.asarray(col).astype(np.int64), packed=pack)


def ld_st_cells(shape: str, num: int, addr: int, *, pack: bool = False,
                half_split: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Absolute (lane, col) arrays of an access; outside TMEM raises ``ValueError``."""
    lane0, col0 = split_taddr(addr, what=f"tcgen05.ld/st .{shape.lstrip('.')} address")
    m = ld_st_map(shape, num, pack=pack, half_split=half_split)
    lane = lane0 + (m.lane[..., None] if pack else m.lane)
    col = col0 + m.col
    lane = np.broadcast_to(lane, col.shape)
    if lane.max() >= LANES or col.max() >= COLS:
        raise ValueError(f"tcgen05.ld/st .{shape}.x{num} at {int(addr):#010x} runs outside 128 x 512")
    return lane, col


def quadrant_lanes(warp_id: int) -> tuple[int, int]:
    """[lo, hi) lanes warp ``warp_id`` of the CTA may access with tcgen05.ld/st (9.7.16.8.1)."""
    q = int(warp_id) % 4
    return 32 * q, 32 * q + 32


def quadrant_violations(warp_id: int, lanes: np.ndarray) -> np.ndarray:
    """Sorted unique lanes in ``lanes`` the warp may not access (empty array: the access is legal)."""
    lo, hi = quadrant_lanes(warp_id)
    u = np.unique(np.asarray(lanes))
    return u[(u < lo) | (u >= hi)]


def tcgen05_ld(tmem: np.ndarray, shape: str, num: int, addr: int, *, warp_id: int | None = None,
               pack: bool = False, half_split: int | None = None) -> np.ndarray:
    """Registers (32 threads, R) uint32 a warp reads. ``warp_id`` given: the quadrant rule is checked."""
    lane, col = ld_st_cells(shape, num, addr, pack=pack, half_split=half_split)
    _check_quadrant(warp_id, lane, "tcgen05.ld")
    v = tmem[lane, col]
    if not pack:
        return v.astype(np.uint32)
    return ((v[..., 0] & 0xFFFF) | ((v[..., 1] & 0xFFFF) << 16)).astype(np.uint32)


def tcgen05_st(tmem: np.ndarray, regs: np.ndarray, shape: str, num: int, addr: int, *,
               warp_id: int | None = None, unpack: bool = False, half_split: int | None = None) -> None:
    """Write registers (32, R) into ``tmem`` in place; ``.unpack::16b`` writes each half into the low
    16 bits of its column with zero upper bits (AMB-LDST-FRAGMENTS reading)."""
    lane, col = ld_st_cells(shape, num, addr, pack=unpack, half_split=half_split)
    _check_quadrant(warp_id, lane, "tcgen05.st")
    regs = np.asarray(regs, dtype=np.uint32)
    want = lane.shape[:2]
    if regs.shape != want:
        raise ValueError(f"tcgen05.st: registers of shape {regs.shape}, expected {want}")
    if unpack:
        tmem[lane[..., 0], col[..., 0]] = regs & 0xFFFF
        tmem[lane[..., 1], col[..., 1]] = regs >> 16
    else:
        tmem[lane, col] = regs


def _check_quadrant(warp_id: int | None, lane: np.ndarray, op: str) -> None:
    if warp_id is None:
        return
    bad = quadrant_violations(warp_id, lane)
    if bad.size:
        lo, hi = quadrant_lanes(warp_id)
        raise ValueError(f"{op}: warp {warp_id} may access lanes {lo}-{hi - 1} only, touched lane {int(bad[0])}")
