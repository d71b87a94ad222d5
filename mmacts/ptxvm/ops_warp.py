"""Warp-level data movement: ``ldmatrix``, ``stmatrix`` (9.7.14.5.15-16) and ``elect.sync`` (9.7.13.x).

Why these matter for the peers: Triton's Blackwell kernels move the accumulator from tensor memory
through registers to shared memory with ``stmatrix`` and read tiles back with ``ldmatrix`` before the
global store; the MMA issue is guarded by ``elect.sync``. The fragment layout is the ISA's figure
for ``.m8n8`` (each 8x8 matrix of 16-bit elements: lanes ``8i..8i+7`` supply the row addresses of
matrix ``i``; lane ``t`` holds row ``t/4``, elements ``2(t%4)`` and ``2(t%4)+1`` in one 32-bit
register, low half first; ``.trans`` holds the transposed matrix the same way). ``.m16n8`` /
``.m16n16`` 8-bit forms and the packed 4-bit ``.m8n16`` form are not implemented (unsupported,
never guessed). ``ldmatrix .m8n16 .b8x16.b6x16_p32`` (sm_120a's FP6 operand load, CUTLASS example 79c) reads each
row's 16 bytes (16 packed 6-bit elements in 12 bytes, little-endian bit order as the TMA's ``.b6x16_p32`` writes
them, then 4 bytes of padding that are not read), widens every element to an 8-bit slot at
``mma_sync.FP6_SHIFT`` -- the bits the VM's ``mma.sync`` reads an FP6 element from (AMB-MMASYNC-FP6-CONTAINER:
CUTLASS feeds this ldmatrix's registers to ``mma.sync`` with no shift, so the two agree on silicon whatever the
answer) -- and hands them out as ``.m8n8 .b16`` does its 16 bytes per row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mmacts.ptxvm.errors import VmError, VmUnsupported
from mmacts.ptxvm.handlers import handler
from mmacts.ptxvm.machine import Machine
from mmacts.ptxvm.parse import Instr
from mmacts.ptxvm.ptxtypes import ptx_type
from mmacts.ptxvm.warpmma import mma_sync

U32 = ptx_type("u32")
PRED = ptx_type("pred")


def _space(ins: Instr) -> str:
    return "shared" if any(p.startswith("shared") for p in ins.parts) else "generic"


def _form(ins: Instr) -> tuple[int, bool]:
    """(number of 8x8 matrices, transposed) of an ``.m8n8 ... .b16`` ldmatrix / stmatrix."""
    if not ins.has("sync") or not ins.has("aligned"):
        raise VmUnsupported(f"{ins.opcode}: only the .sync.aligned form exists")
    if ins.has("m8n16"):
        if not (ins.has("b8x16") and ins.has("b6x16_p32")) or ins.has("trans") or ins.opcode.startswith("st"):
            raise VmUnsupported(f"{ins.opcode}: of the .m8n16 forms only ldmatrix .b8x16.b6x16_p32 is implemented")
    elif not ins.has("m8n8") or not ins.has("b16"):
        raise VmUnsupported(f"{ins.opcode}: only .m8n8 .b16 is implemented")
    num = next((int(p[1:]) for p in ins.parts if p in ("x1", "x2", "x4")), None)
    if num is None:
        raise VmUnsupported(f"{ins.opcode}: .num missing")
    return num, ins.has("trans")


def _warp_index(m: Machine, act: np.ndarray) -> tuple[np.ndarray, int]:
    gw = m.gwarp[act]
    uniq, inv = np.unique(gw, return_inverse=True)
    return inv, len(uniq)


def _matrices(m: Machine, ins: Instr, act: np.ndarray, regs: Any, role: str) -> tuple:
    """What ldmatrix and stmatrix both check and need: (.num, .trans, the registers, each thread's warp
    index among the active warps, the number of those warps, lane ids)."""
    num, trans = _form(ins)
    m.check_converged(ins, act)
    items = regs.items if regs.kind == "vec" else (regs,)
    if len(items) != num:
        raise VmError(f"{ins.opcode}: {len(items)} {role} registers for .x{num}")
    wi, nw = _warp_index(m, act)
    return num, trans, items, wi, nw, m.lane[act].astype(np.int64)


def _fragment_index(lane: np.ndarray, trans: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(row, byte) in an 8x16-byte matrix of the low and the high 16-bit half of lane's register."""
    if not trans:
        r = lane // 4
        b = (lane % 4) * 4
        return r, b, r, b + 2
    r = (lane % 4) * 2
    b = (lane // 4) * 2
    return r, b, r + 1, b


def _widen_fp6(packed: np.ndarray) -> np.ndarray:
    """(n, 12) bytes of 16 packed 6-bit elements each (element i at bits 6i..6i+5) -> (n, 16) 8-bit slots, the
    element at ``FP6_SHIFT``, the other bits zero."""
    b = packed.astype(np.uint32).reshape(len(packed), 4, 3)
    v = b[..., 0] | (b[..., 1] << 8) | (b[..., 2] << 16)
    codes = np.stack([(v >> np.uint32(6 * j)) & np.uint32(0x3F) for j in range(4)], axis=-1)
    return (codes.reshape(len(packed), 16) << np.uint32(mma_sync.FP6_SHIFT)).astype(np.uint8)


@handler("ldmatrix")
def _ldmatrix(m: Machine, ins: Instr, act: np.ndarray) -> None:
    d, a = ins.operands
    num, trans, items, wi, nw, lane = _matrices(m, ins, act, d, "destination")
    supply = lane < 8 * num
    addrs = m.address(a, act)[supply]
    rows = m.load(_space(ins), addrs, 16, act[supply])  # (n supplying, 16): one row of a matrix each
    if ins.has("b6x16_p32"):
        rows = _widen_fp6(rows[:, :12])
    table = np.zeros((nw, 8 * num, 16), dtype=np.uint8)
    table[wi[supply], lane[supply]] = rows
    r0, b0, r1, b1 = _fragment_index(lane, trans)
    for i, it in enumerate(items):
        lo = table[wi, 8 * i + r0, b0].astype(np.uint32) | (table[wi, 8 * i + r0, b0 + 1].astype(np.uint32) << 8)
        hi = table[wi, 8 * i + r1, b1].astype(np.uint32) | (table[wi, 8 * i + r1, b1 + 1].astype(np.uint32) << 8)
        m.write(it, U32, act, (lo | (hi << np.uint32(16))).astype(np.uint32))


@handler("stmatrix")
def _stmatrix(m: Machine, ins: Instr, act: np.ndarray) -> None:
    a, s = ins.operands
    num, trans, items, wi, nw, lane = _matrices(m, ins, act, s, "source")
    table = np.zeros((nw, 8 * num, 16), dtype=np.uint8)
    r0, b0, r1, b1 = _fragment_index(lane, trans)
    for i, it in enumerate(items):
        v = m.read(it, U32, act).astype(np.uint32)
        table[wi, 8 * i + r0, b0] = (v & 0xFF).astype(np.uint8)
        table[wi, 8 * i + r0, b0 + 1] = ((v >> 8) & 0xFF).astype(np.uint8)
        table[wi, 8 * i + r1, b1] = ((v >> 16) & 0xFF).astype(np.uint8)
        table[wi, 8 * i + r1, b1 + 1] = ((v >> 24) & 0xFF).astype(np.uint8)
    supply = lane < 8 * num
    addrs = m.address(a, act)[supply]
    m.store(_space(ins), addrs, table[wi[supply], lane[supply]], act[supply], ins)


@handler("elect")
def _elect(m: Machine, ins: Instr, act: np.ndarray) -> bool:
    """elect.sync d|p, membermask: the lowest lane of the mask is the leader (d = its lane id in every
    thread, p true in the leader only)."""
    if not ins.has("sync"):
        raise VmUnsupported(ins.opcode)
    dst, mm = ins.operands
    masks = m.read(mm, U32, act).astype(np.uint32)
    run = m.warp_sync(ins, act, masks)
    if len(run):
        masks = masks[np.isin(act, run)] if len(run) != len(act) else masks
        low = (masks & (~masks + np.uint32(1))).astype(np.uint64)
        leader = np.log2(low.astype(np.float64)).astype(np.uint32)
        items = dst.items if dst.kind == "vec" else (dst, )
        m.write(items[0], U32, run, leader)
        if len(items) > 1:
            m.write(items[1], PRED, run, m.lane[run].astype(np.uint32) == leader)
        m.pc[run] += 1
    return True
