"""Warp-level ``mma.sync`` and warpgroup ``wgmma`` in the VM.

The arithmetic, fragment maps and descriptor walks are ``mmacts.ptxvm.warpmma`` (an independent
reading of the PTX ISA); this module gathers each warp's (or warpgroup's) registers, enforces the
``.sync.aligned`` convergence rule, the selector / descriptor uniformity the ISA requires, and the
wgmma asynchrony: accumulator registers are pending from ``wgmma.mma_async`` until the
``wgmma.wait_group`` that completes its group (a read before that is a :class:`VmHazard`), and an
``mma_async`` needs a ``wgmma.fence`` first. Shared memory read by wgmma (the async proxy) must
have been fenced with ``fence.proxy.async`` by the threads that wrote it.
"""

from __future__ import annotations

import numpy as np

from mmacts.ptxvm import warpmma as W
from mmacts.ptxvm.errors import VmError, VmHazard
from mmacts.ptxvm.handlers import handler
from mmacts.ptxvm.machine import Machine
from mmacts.ptxvm.parse import Instr, Operand
from mmacts.ptxvm.ptxtypes import ptx_type

U16, U32, U64, PRED = ptx_type("u16"), ptx_type("u32"), ptx_type("u64"), ptx_type("pred")


def _regs(m: Machine, items: tuple[Operand, ...], act: np.ndarray, nw: int, width: int) -> np.ndarray:
    """(groups, width, len(items)) uint32 register bits, bypassing the pending-register check (the
    MMA itself consumes its pending accumulators)."""
    cols = []
    for it in items:
        if it.kind == "reg" and it.name in m.regs:
            raw = m.regs[it.name][act]
            cols.append(raw.astype(np.uint32) if raw.dtype.itemsize <= 4 else raw.astype(np.uint32))
        else:
            cols.append(m.read(it, U32, act))
    return np.stack(cols, axis=1).reshape(nw, width, len(items)).astype(np.uint32)


def _uniform_per_group(vals: np.ndarray, nw: int, what: str, ins: Instr) -> np.ndarray:
    v = vals.reshape(nw, -1)
    if (v != v[:, :1]).any():
        raise VmError(f"{what} of {ins.opcode.split('.')[0]} differs between the threads of one warp/warpgroup")
    return v[:, 0]


def _one(op: Operand, ins: Instr) -> Operand:
    """A scale-factor operand: a register, or the same register in braces (``{%r}``, as CUTLASS and the
    suite's ``brace_scale`` spell it); a brace of several is not one scale-factor register."""
    if op.kind != "vec":
        return op
    if len(op.items) != 1:
        raise VmError(f"{ins.opcode}: a scale-factor operand is one register, not {op}")
    return op.items[0]


@handler("mma")
def _mma_sync(m: Machine, ins: Instr, act: np.ndarray) -> None:
    if not ins.has("sync") or not ins.has("aligned"):
        raise VmError(f"{ins.opcode}: only mma.sync.aligned is modelled")
    m.check_converged(ins, act)
    if len(act) % 32:
        raise VmError(f"{ins.opcode} needs whole warps")
    try:
        q = W.parse_mma_sync(ins.opcode)
    except ValueError as exc:
        raise VmError(str(exc)) from None
    ops = ins.operands
    d, a, b, c = ops[:4]
    nw = len(act) // 32
    A = _regs(m, a.items, act, nw, 32)
    B = _regs(m, b.items, act, nw, 32)
    Cc = _regs(m, c.items, act, nw, 32)
    kw: dict = {}
    groups = [(np.arange(nw), (0, 0), (0, 0))]
    if len(ops) > 4:  # block_scale: scale-a, {byte-id-a, thread-id-a}, scale-b, {byte-id-b, thread-id-b}
        sfa = m.read(_one(ops[4], ins), U32, act).reshape(nw, 32)
        sfb = m.read(_one(ops[6], ins), U32, act).reshape(nw, 32)
        sel = [_uniform_per_group(m.read(x, U16, act).astype(np.int64), nw, "a selector", ins)
               for x in (*ops[5].items, *ops[7].items)]
        key = sel[0] * 1_000_000 + sel[1] * 10_000 + sel[2] * 100 + sel[3]
        groups = [(np.flatnonzero(key == k), (int(sel[0][i]), int(sel[1][i])), (int(sel[2][i]), int(sel[3][i])))
                  for k, i in ((k, int(np.flatnonzero(key == k)[0])) for k in np.unique(key))]
        kw = {"sfa": sfa, "sfb": sfb}
    D = np.empty((nw, 32, len(d.items)), dtype=np.uint32)
    model = (m.profile or {}).get("mma_sync_model") if isinstance(m.profile, dict) else None
    for idx, sa, sb in groups:
        extra = {k: v[idx] for k, v in kw.items()}
        try:
            D[idx] = W.execute_mma_sync(q, A[idx], B[idx], Cc[idx], sel_a=sa, sel_b=sb, arch=m.cfg.arch,
                                        model=model, **extra)
        except ValueError as exc:
            raise VmError(str(exc)) from None
    flat = D.reshape(nw * 32, len(d.items))
    for j, it in enumerate(d.items):
        rty = m.reg_types.get(it.name)
        ty = rty if rty is not None and rty.bits == 32 else U32
        m.write(it, ty, act, flat[:, j].view(ty.dtype))


class WgmmaState:
    def __init__(self) -> None:
        self.groups: dict[int, W.AsyncGroups] = {}


def _wg_state(m: Machine) -> WgmmaState:
    return m.hook("wgmma", lambda _: WgmmaState())


def _warpgroups(m: Machine, act: np.ndarray) -> list[np.ndarray]:
    key = m.cta[act] * 100000 + m.tid[act] // 128
    return [act[key == k] for k in np.unique(key)]


@handler("wgmma")
def _wgmma(m: Machine, ins: Instr, act: np.ndarray) -> None:
    m.check_converged(ins, act, width=128)
    s = _wg_state(m)
    try:
        q = W.parse_wgmma(ins.text if ins.parts[1] == "wait_group" else ins.opcode)
    except ValueError as exc:
        raise VmError(str(exc)) from None
    for wg in _warpgroups(m, act):
        if len(wg) != 128:
            raise VmError(f"{ins.opcode} needs all 128 threads of the warpgroup")
        key = int(m.cta[wg[0]]) * 100000 + int(m.tid[wg[0]]) // 128
        g = s.groups.setdefault(key, W.AsyncGroups())
        if isinstance(q, W.WgmmaSyncOp):
            if q.op == "fence":
                g.fence()
            elif q.op == "commit_group":
                g.commit()
            else:
                m.clear_pending(g.wait(int(ins.operands[0].value)), wg)
            continue
        _wgmma_issue(m, ins, wg, q, g)


def _wgmma_issue(m: Machine, ins: Instr, wg: np.ndarray, q: object, g: W.AsyncGroups) -> None:
    ops = ins.operands
    d = ops[0]
    names = tuple(it.name for it in d.items)
    a_desc = _uniform_per_group(m.read(ops[1], U64, wg), 1, "the A descriptor", ins)[0]
    b_desc = _uniform_per_group(m.read(ops[2], U64, wg), 1, "the B descriptor", ins)[0]
    scale_d = bool(_uniform_per_group(m.read(ops[3], PRED, wg), 1, "scale-d", ins)[0])
    imms = [int(o.value) for o in ops[4:]]
    D = _regs(m, d.items, wg, 1, 128)[0]
    cta = int(m.cta[wg[0]])
    model = (m.profile or {}).get("wgmma_model") if isinstance(m.profile, dict) else None
    msg = g.issue(names)
    if msg:
        raise VmHazard(msg)
    try:
        new, ranges = W.execute_wgmma(q, m.smem[cta], int(a_desc), int(b_desc), D, scale_d, *imms,
                                      arch=m.cfg.arch, model=model)
    except ValueError as exc:
        raise VmError(str(exc)) from None
    if ranges:
        idx = np.concatenate([np.arange(lo, hi) for lo, hi in ranges])
        m.check_async_reads(cta, idx, f"wgmma at {ins.where()}")
    for j, it in enumerate(d.items):
        m.regs[it.name][wg] = np.asarray(new)[:, j].astype(m.regs[it.name].dtype)
    m.mark_pending(names, wg, ins)
