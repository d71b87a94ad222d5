"""tcgen05 instructions in the VM: tensor memory, its allocator, ld/st, cp, mma, commit, fences.

The arithmetic and the layouts are ``mmacts.ptxvm.tcgen05`` (a reading of the spec independent of
the host encoders); this module is the *execution model*: who may issue what, what is
asynchronous, and what a kernel must do before it may look at a result.

- Tensor memory is per CTA, 128 lanes x 512 columns of 32 bits, filled with a poison pattern
  (0xFFFFFFFF: a NaN as fp32, a NaN code as a UE8M0 scale) so a cell no one wrote shows up.
- ``tcgen05.alloc`` / ``dealloc`` / ``relinquish_alloc_permit`` are warp-collective; an allocation
  that can never be satisfied is a deadlock; a kernel that exits with columns still allocated, or
  touches columns it did not allocate, is an error.
- ``tcgen05.ld`` / ``tcgen05.st`` are warp-collective; warp w may only touch lanes of quadrant
  w % 4 (9.7.16.8.1). A ``tcgen05.ld`` destination register read before ``tcgen05.wait::ld`` is an
  error (the value is not defined until then).
- ``tcgen05.mma`` and ``tcgen05.cp`` are asynchronous: issuing one queues it on the issuing
  thread; ``tcgen05.commit`` hands the queue to an mbarrier; the operations execute, in issue
  order, when a thread first waits on that mbarrier (or at kernel exit), and then arrive on it. So
  a kernel that reads D with ``tcgen05.ld`` before the commit's mbarrier phase completed, or
  overwrites shared memory an in-flight MMA reads, is caught when the operation completes
  (:class:`VmHazard` naming both instructions). The async proxy reads shared memory: bytes written
  by the generic proxy without a later ``fence.proxy.async`` by the writer are a hazard too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mmacts.ptxvm import tcgen05 as T
from mmacts.ptxvm.errors import VmError, VmHazard, VmTimeout, VmUnsupported
from mmacts.ptxvm.handlers import handler
from mmacts.ptxvm.machine import Machine
from mmacts.ptxvm.memory import SHARED_WINDOW
from mmacts.ptxvm.ops_core import arrive
from mmacts.ptxvm.parse import Instr
from mmacts.ptxvm.ptxtypes import ptx_type
from mmacts.ptxvm.tcgen05.cp import SHAPES as CP_SHAPES

POISON = 0xFFFFFFFF
LANES, COLS = 128, 512
U32, U64, PRED = ptx_type("u32"), ptx_type("u64"), ptx_type("pred")


@dataclass
class AsyncOp:
    """One queued tcgen05.mma / tcgen05.cp: executes at completion, then its footprint is checked."""

    ins: Instr
    seq: int
    run: Any
    """Callable () -> footprint (``smem_ranges`` per CTA, ``tmem_written`` per CTA)."""
    ctas: list[int]
    tmem_reads: dict[int, np.ndarray] = field(default_factory=dict)
    """Cells of each CTA read by tcgen05.ld while this op was in flight."""
    unwaited_st: dict[int, np.ndarray] = field(default_factory=dict)
    """Per CTA at issue: source line of a tcgen05.st to each cell not yet completed by tcgen05.wait::st (0: none)."""


@dataclass
class CommitGroup:
    ops: list[AsyncOp]
    targets: list[tuple[int, int]]
    ins: Instr


class Tcgen05State:
    """Per-chunk tensor-memory state and the asynchronous tcgen05 engine."""

    def __init__(self, m: Machine) -> None:
        self.m = m
        self.alloc: dict[int, T.TmemAllocator] = {}
        self.queued: dict[int, list[AsyncOp]] = {}
        """Per issuing thread: ops issued and not yet committed."""
        self.groups: list[CommitGroup] = []
        self.seq = 0
        self._tmem_all: np.ndarray | None = None
        self._st_all: tuple[np.ndarray, np.ndarray] | None = None
        """Per CTA: line of the tcgen05.st that wrote each cell and is not yet waited for (0: none)."""
        self.stores: list[tuple[int, int, np.ndarray, int]] = []
        """Generic shared-memory stores while ops are in flight: (seq, cta, flat byte indices, line)."""

    # -- state ------------------------------------------------------------------------------
    def tmem_of(self, cta: int) -> np.ndarray:
        """The CTA's tensor memory: a view into one (CTAs, 128, 512) array, so warp-collective
        accesses of many CTAs are one numpy gather (:func:`_ld_st_fast`)."""
        return self.tmem_all()[cta]

    def tmem_all(self) -> np.ndarray:
        if self._tmem_all is None:
            self._tmem_all = np.full((len(self.m.ctas), LANES, COLS), POISON, dtype=np.uint32)
        return self._tmem_all

    def st_all(self) -> tuple[np.ndarray, np.ndarray]:
        """(line, warp) of the unwaited tcgen05.st to each (CTA, lane, column) cell; line 0: none."""
        if self._st_all is None:
            shape = (len(self.m.ctas), LANES, COLS)
            self._st_all = (np.zeros(shape, dtype=np.int32), np.zeros(shape, dtype=np.int32))
        return self._st_all

    def allocated_columns(self) -> np.ndarray:
        """bool (CTAs, 512): the columns each CTA's live allocations cover."""
        out = np.zeros((len(self.m.ctas), COLS), dtype=bool)
        for c, a in self.alloc.items():
            for start, n in a.allocations.items():
                out[c, start:start + n] = True
        return out

    def allocator(self, cta: int) -> T.TmemAllocator:
        return self.alloc.setdefault(cta, T.TmemAllocator())

    def pair(self, cta: int, cg: int) -> list[int]:
        """The CTAs a ``cta_group::cg`` operation of ``cta`` spans, even cluster rank first."""
        if cg == 1:
            return [cta]
        m = self.m
        if m.cluster_size < 2:
            raise VmError("cta_group::2 needs a cluster of at least 2 CTAs")
        rank = int(m.rank_of_cta[cta])
        base = cta - (rank % 2)
        return [base, base + 1]

    def in_flight(self) -> list[AsyncOp]:
        ops = [op for q in self.queued.values() for op in q]
        return ops + [op for g in self.groups for op in g.ops]

    # -- hooks ------------------------------------------------------------------------------
    def on_shared_store(self, m: Machine, idx: np.ndarray) -> None:
        if self.in_flight():
            flat = idx.reshape(-1)
            width = m.smem.shape[1]
            for c in np.unique(flat // width):
                sel = flat[flat // width == c] % width
                self.stores.append((self.seq, int(c), sel, 0))
            self.seq += 1

    def on_mbarrier_wait(self, m: Machine, cta: int, addr: int) -> None:
        if any((cta, addr) in g.targets for g in self.groups):
            self.complete_groups()

    def on_kernel_end(self, m: Machine) -> None:
        self.complete_groups()
        for q in self.queued.values():
            for op in q:
                self.execute(op)
        self.queued.clear()
        for cta, a in sorted(self.alloc.items()):
            try:
                a.check_exit()
            except ValueError as exc:
                raise VmError(f"CTA {m.ctas[cta]}: {exc}") from None

    # -- the engine -------------------------------------------------------------------------
    def complete_groups(self) -> None:
        groups, self.groups = self.groups, []
        for g in groups:
            for op in g.ops:
                self.execute(op)
            for cta, addr in g.targets:
                mb = self.m.mbarriers.get((cta, addr))
                if mb is None:
                    raise VmError(f"tcgen05.commit to an mbarrier at {addr:#x} of CTA {self.m.ctas[cta]} that was "
                                  f"never initialised ({g.ins.where()})")
                arrive(self.m, mb, 1)
        if not self.in_flight():
            self.stores.clear()

    def execute(self, op: AsyncOp) -> None:
        m = self.m
        try:
            fp = op.run()
        except ValueError as exc:
            raise VmError(f"{exc} ({op.ins.where()})") from None
        for i, cta in enumerate(op.ctas):
            ranges = fp.smem_ranges[i] if i < len(fp.smem_ranges) else []
            written = fp.tmem_written[i] if i < len(fp.tmem_written) else None
            read = getattr(fp, "tmem_read", None)
            read = read[i] if read is not None and i < len(read) else None
            pend = op.unwaited_st.get(cta)
            if read is not None and pend is not None and (read & (pend > 0)).any():
                lane, col = np.argwhere(read & (pend > 0))[0]
                raise VmHazard(f"the tcgen05 operation issued at {op.ins.where()} reads TMEM lane {lane} column "
                               f"{col} of CTA {m.ctas[cta]}, written by the tcgen05.st at line "
                               f"{int(pend[lane, col])} with no tcgen05.wait::st before the operation was issued")
            if written is not None and cta in op.tmem_reads and (op.tmem_reads[cta] & written).any():
                lane, col = np.argwhere(op.tmem_reads[cta] & written)[0]
                raise VmHazard(f"tcgen05.ld read lane {lane} column {col} of CTA {m.ctas[cta]} before the "
                               f"{op.ins.opcode.split('.')[1]} issued at {op.ins.where()} that writes it had "
                               f"completed (wait on its tcgen05.commit mbarrier first)")
            if ranges:
                idx = np.concatenate([np.arange(lo, hi) for lo, hi in ranges])
                later = [sel for seq, c, sel, _ in self.stores if c == cta and seq >= op.seq]
                if later:  # one byte mask of what the operation reads, looked up by each later store
                    reads = np.zeros(max(m.smem.shape[1], int(idx.max()) + 1), dtype=bool)
                    reads[idx] = True
                for sel in later:
                    hit = sel[reads[sel]]
                    if hit.size:
                        first = int(hit.min())
                        line = int(m.smem_writer_line[cta, first])
                        raise VmHazard(f"shared memory byte {first:#x} of CTA {m.ctas[cta]} was "
                                       f"overwritten (line {line}) while the tcgen05 operation issued at "
                                       f"{op.ins.where()} could still read it")
                if idx.size and idx.max() < m.smem.shape[1]:
                    m.check_async_reads(cta, idx, f"the tcgen05 operation at {op.ins.where()}")

    def issue(self, t: int, op: AsyncOp) -> None:
        if self._st_all is not None:
            for c in op.ctas:
                if self._st_all[0][c].any():
                    op.unwaited_st[c] = self._st_all[0][c].copy()
        op.seq = self.seq
        self.seq += 1
        self.queued.setdefault(t, []).append(op)

    def note_ld(self, cta: int, lanes: np.ndarray, cols: np.ndarray) -> None:
        for op in self.in_flight():
            if cta in op.ctas:
                mask = op.tmem_reads.setdefault(cta, np.zeros((LANES, COLS), dtype=bool))
                mask[lanes, cols] = True


def state(m: Machine) -> Tcgen05State:
    return m.hook("tcgen05", Tcgen05State)


def _cta_group(ins: Instr) -> int:
    for p in ins.parts:
        if p.startswith("cta_group::"):
            return int(p.split("::")[1])
    return 1


def _warps(m: Machine, act: np.ndarray) -> list[np.ndarray]:
    """Active threads grouped by warp (each array: the warp's active threads in lane order)."""
    key = m.gwarp[act]
    return [act[key == k] for k in np.unique(key)]


def _uniform(m: Machine, vals: np.ndarray, ins: Instr, what: str) -> int:
    if len(np.unique(vals)) != 1:
        raise VmError(f"{what} differs between the threads of a warp-collective {ins.opcode}")
    return int(vals[0])


def _check_cols(s: Tcgen05State, m: Machine, cta: np.ndarray | int, cols: np.ndarray, ins: Instr) -> None:
    """Every (CTA, column) pair touched lies in a live allocation of that CTA (``cta`` broadcasts with ``cols``)."""
    cta_b = np.broadcast_to(np.asarray(cta), np.shape(cols))
    ok = s.allocated_columns()[cta_b, cols]
    if not ok.all():
        i = tuple(np.argwhere(~ok)[0])
        raise VmError(f"{ins.base}.{ins.parts[1]} touches TMEM column {int(cols[i])} of CTA {m.ctas[int(cta_b[i])]}, "
                      f"which is not allocated")


# ------------------------------------------------------------------------------------------ handlers
@handler("tcgen05.alloc", "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit")
def _alloc(m: Machine, ins: Instr, act: np.ndarray) -> None:
    m.check_converged(ins, act)
    s = state(m)
    op = ins.parts[1]
    for w in _warps(m, act):
        cta = int(m.cta[w[0]])
        a = s.allocator(cta)
        try:
            if op == "alloc":
                dst = _uniform(m, m.address(ins.operands[0], w), ins, "the destination address")
                ncols = _uniform(m, m.read(ins.operands[1], U32, w), ins, "nCols")
                col = a.alloc(ncols)
                if col is T.WOULD_BLOCK:
                    raise VmTimeout(f"tcgen05.alloc of {ncols} columns in CTA {m.ctas[cta]} can never be "
                                    f"satisfied (allocated: {a.leaks()}) -- it would block forever")
                s.tmem_of(cta)
                addr = np.array([dst], dtype=np.uint64)
                m.shared_store(addr, np.array([int(col)], dtype=np.uint32).view(np.uint8).reshape(1, 4),
                               w[:1], ins)
                off = int(m.shared_target(addr, w[:1], "tcgen05.alloc")[1][0])
                m.smem_writer[cta, off:off + 4] = -1  # written by the tensor core, not the generic proxy
            elif op == "dealloc":
                in_cta = m.cta == cta
                for name, (mask, src) in m.pending_regs.items():
                    unread = mask & ~m.ld_read.get(name, np.zeros_like(mask))
                    if src.base == "tcgen05" and (unread & in_cta).any():
                        raise VmHazard(f"tcgen05.dealloc while the tcgen05.ld at {src.where()} (into {name}) of CTA "
                                       f"{m.ctas[cta]} is not completed by tcgen05.wait::ld (9.7.16.6.4.5)")
                taddr = _uniform(m, m.read(ins.operands[0], U32, w), ins, "taddr")
                ncols = _uniform(m, m.read(ins.operands[1], U32, w), ins, "nCols")
                a.dealloc(taddr, ncols)
            else:
                a.relinquish_alloc_permit()
        except ValueError as exc:
            raise VmError(str(exc)) from None


def _ld_st_form(ins: Instr) -> tuple[str, int, bool]:
    shape = next((p for p in ins.parts if p in ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")), None)
    num = next((int(p[1:]) for p in ins.parts if p.startswith("x") and p[1:].isdigit()), None)
    if shape is None or num is None:
        raise VmUnsupported(f"{ins.opcode}: shape or .num missing")
    pack = any(p in ("pack::16b", "unpack::16b") for p in ins.parts)
    return shape, num, pack


@handler("tcgen05.ld", "tcgen05.st")
def _ld_st(m: Machine, ins: Instr, act: np.ndarray) -> None:
    m.check_converged(ins, act)
    if ins.parts[2] == "red":
        raise VmUnsupported(f"{ins.opcode}: tcgen05.ld.red (sm_101a/sm_103f+, not sm_100a) is not implemented")
    s = state(m)
    shape, num, pack = _ld_st_form(ins)
    is_ld = ins.parts[1] == "ld"
    ops = ins.operands
    if is_ld:
        regs_op, addr_op = ops[0], ops[1]
        extra = ops[2:]
    else:
        addr_op = ops[0]
        extra = ops[1:-1]
        regs_op = ops[-1]
    half = None
    if shape == "16x32bx2":
        if not extra:
            raise VmError(f"{ins.opcode}: immHalfSplitoff missing")
        half = int(extra[0].value)
    items = regs_op.items if regs_op.kind == "vec" else (regs_op,)
    if not pack and len(act) % 32 == 0 and _ld_st_fast(m, s, ins, act, shape, num, half, is_ld, addr_op, items):
        return
    for w in _warps(m, act):
        if len(w) != 32:
            raise VmError(f"{ins.opcode} needs all 32 threads of the warp")
        cta = int(m.cta[w[0]])
        warp_id = int(m.warp[w[0]])
        taddr = _uniform(m, m.read(addr_op, U32, w) if addr_op.kind != "addr" else m.address(addr_op, w),
                         ins, "taddr")
        try:
            lanes, cols = T.tmem.ld_st_cells(shape, num, taddr, pack=pack, half_split=half)
            bad = T.quadrant_violations(warp_id, lanes)
            if bad.size:
                raise VmError(f"warp {warp_id} of CTA {m.ctas[cta]} accesses TMEM lane {int(bad[0])}, outside its "
                              f"lane quadrant {32 * (warp_id % 4)}-{32 * (warp_id % 4) + 31} (9.7.16.8.1)")
            _check_cols(s, m, cta, cols, ins)
            tm = s.tmem_of(cta)
            if is_ld:
                vals = T.tcgen05_ld(tm, shape, num, taddr, warp_id=warp_id, pack=pack, half_split=half)
                s.note_ld(cta, lanes.reshape(-1), cols.reshape(-1))
            else:
                regs = np.stack([m.read(it, U32, w) for it in items], axis=1)
                T.tcgen05_st(tm, regs, shape, num, taddr, warp_id=warp_id, unpack=pack, half_split=half)
                line, warp = s.st_all()
                line[cta, lanes, cols] = ins.line
                warp[cta, lanes, cols] = int(m.gwarp[w[0]])
        except ValueError as exc:
            raise VmError(str(exc)) from None
        if is_ld:
            if vals.shape[1] != len(items):
                raise VmError(f"{ins.opcode}: {len(items)} destination registers, the shape moves {vals.shape[1]}")
            for j, it in enumerate(items):
                m.write(it, U32, w, vals[:, j])
            m.mark_pending([it.name for it in items if it.kind == "reg"], w, ins)


_MAPS: dict[tuple[str, int, int | None], Any] = {}


def _ld_st_fast(m: Machine, s: Tcgen05State, ins: Instr, act: np.ndarray, shape: str, num: int, half: int | None,
                is_ld: bool, addr_op: Any, items: tuple) -> bool:
    """tcgen05.ld/st of every active warp (of every CTA) at once; False: use the per-warp path.

    Same rules as the per-warp path: warps whole and contiguous, taddr uniform per warp, the lane
    quadrant, allocated columns, the async-read log, unwaited-store tracking, pending registers."""
    nw = len(act) // 32
    a = act.reshape(nw, 32)
    if not ((a[:, 1:] - a[:, :-1]) == 1).all() or (m.lane[a[:, 0]] != 0).any():
        return False
    key = (shape, num, half)
    mp = _MAPS.get(key)
    if mp is None:
        try:
            mp = T.ld_st_map(shape, num, pack=False, half_split=half)
        except ValueError as exc:
            raise VmError(str(exc)) from None
        _MAPS[key] = mp
    tv = m.read(addr_op, U32, act) if addr_op.kind != "addr" else m.address(addr_op, act)
    tv = np.asarray(tv, dtype=np.int64).reshape(nw, 32)
    if (tv != tv[:, :1]).any():
        raise VmError(f"taddr differs between the threads of a warp-collective {ins.opcode}")
    taddr = tv[:, 0]
    lane0, col0 = (taddr >> 16) & 0xFFFF, taddr & 0xFFFF
    lanes = lane0[:, None, None] + mp.lane[None]
    cols = col0[:, None, None] + mp.col[None]
    if lanes.max() >= LANES or cols.max() >= COLS:
        return False  # the per-warp path names the fault
    cta = m.cta[a[:, 0]]
    warp_id = m.warp[a[:, 0]]
    q = lanes // 32 != (warp_id % 4)[:, None, None]
    if q.any():
        w = int(np.argwhere(q)[0][0])
        wid = int(warp_id[w])
        raise VmError(f"warp {wid} of CTA {m.ctas[int(cta[w])]} accesses TMEM lane {int(lanes[q][0])}, outside its "
                      f"lane quadrant {32 * (wid % 4)}-{32 * (wid % 4) + 31} (9.7.16.8.1)")
    _check_cols(s, m, np.broadcast_to(cta[:, None, None], cols.shape), cols, ins)
    tm = s.tmem_all()
    cidx = np.broadcast_to(cta[:, None, None], lanes.shape)
    if is_ld:
        vals = tm[cidx, lanes, cols]  # (W, 32, R)
        if vals.shape[2] != len(items):
            raise VmError(f"{ins.opcode}: {len(items)} destination registers, the shape moves {vals.shape[2]}")
        for c in np.unique(cta):
            sel = cta == c
            s.note_ld(int(c), lanes[sel].reshape(-1), cols[sel].reshape(-1))
        flat = vals.reshape(nw * 32, len(items))
        for j, it in enumerate(items):
            m.write(it, U32, act, flat[:, j])
        m.mark_pending([it.name for it in items if it.kind == "reg"], act, ins)
    else:
        regs = np.stack([m.read(it, U32, act) for it in items], axis=1).reshape(nw, 32, len(items))
        if regs.shape[2] != lanes.shape[2]:
            raise VmError(f"{ins.opcode}: {len(items)} source registers, the shape moves {lanes.shape[2]}")
        tm[cidx, lanes, cols] = regs
        line, warp = s.st_all()
        line[cidx, lanes, cols] = ins.line
        warp[cidx, lanes, cols] = np.broadcast_to(m.gwarp[a[:, 0]][:, None, None], lanes.shape)
    return True


@handler("tcgen05.wait::ld", "tcgen05.wait::st")
def _wait(m: Machine, ins: Instr, act: np.ndarray) -> None:
    m.check_converged(ins, act)
    if ins.parts[1] == "wait::st":
        s = state(m)
        if s._st_all is not None:
            line, warp = s._st_all
            line[np.isin(warp, np.unique(m.gwarp[act])) & (line > 0)] = 0
    if ins.parts[1] == "wait::ld":
        m.clear_pending([n for n, (_, src) in m.pending_regs.items() if src.base == "tcgen05"], act)


@handler("tcgen05.fence::before_thread_sync", "tcgen05.fence::after_thread_sync")
def _tc_fence(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """Ordering fences: the VM executes tcgen05 operations of one thread in issue order and
    completes asynchronous ones only through their commit, so these order nothing further."""
    return None


def _cp_form(ins: Instr) -> tuple[str, str | None, str | None]:
    shape = next((p for p in ins.parts if p in CP_SHAPES), None)
    if shape is None:
        raise VmUnsupported(f"{ins.opcode}: unknown tcgen05.cp shape")
    mc = next((p for p in ins.parts if p.startswith("warpx")), None)
    src = None
    if "b8x16" in ins.parts:
        src = next((p for p in ins.parts if p in ("b6x16_p32", "b4x16_p64")), None)
        if src is None:
            raise VmUnsupported(f"{ins.opcode}: unknown decompression source format")
    return shape, mc, src


@handler("tcgen05.cp")
def _cp(m: Machine, ins: Instr, act: np.ndarray) -> None:
    s = state(m)
    cg = _cta_group(ins)
    shape, mc, src = _cp_form(ins)
    taddr = m.address(ins.operands[0], act)
    desc = m.read(ins.operands[1], U64, act)
    for i, t in enumerate(act):
        cta = int(m.cta[t])
        ctas = s.pair(cta, cg)
        ta, dw = int(taddr[i]), int(desc[i])
        for c in ctas:
            lanes, cols = _cp_cells(shape, mc, ta)
            _check_cols(s, m, c, cols, ins)

        def run(ctas=ctas, ta=ta, dw=dw):
            return T.execute_cp([s.tmem_of(c) for c in ctas], [m.smem[c] for c in ctas], ta, dw, shape=shape,
                                multicast=mc, src_fmt=src)

        s.issue(int(t), AsyncOp(ins, 0, run, ctas))


def _cp_cells(shape: str, mc: str | None, taddr: int) -> tuple[np.ndarray, np.ndarray]:
    lanes_off = T.cp.lane_map(shape, mc)
    rows_bytes = T.cp.SHAPES[shape][1]
    lane0, col0 = T.split_taddr(taddr)
    return (lane0 + lanes_off).reshape(-1), col0 + np.arange(rows_bytes // 4)


def _mma_form(ins: Instr) -> dict[str, Any]:
    f: dict[str, Any] = {"sparse": "sp" in ins.parts[1:4], "cta_group": _cta_group(ins), "block_scale": False,
                         "scale_vec": None, "collector": None, "kind": None, "ws": "ws" in ins.parts[1:4]}
    for p in ins.parts[2:]:
        if p.startswith("kind::"):
            f["kind"] = p.split("::")[1]
        elif p == "block_scale":
            f["block_scale"] = True
        elif p.startswith("scale_vec::"):
            f["scale_vec"] = p.split("::")[1]
        elif p in ("block16", "block32"):
            f["scale_vec"] = p
        elif p.startswith("collector::"):
            f["collector"] = p
        elif p == "ashift":
            raise VmUnsupported(f"{ins.opcode}: .ashift is not implemented by the VM")
    if f["ws"] and f["block_scale"]:
        raise VmError(f"{ins.opcode}: tcgen05.mma.ws has no block-scaled kinds (Table 39)")
    return f


def _mma_operands(m: Machine, ins: Instr, f: dict[str, Any], act: np.ndarray) -> dict[str, Any]:
    """Per-thread operand values, in the order of the syntax of 9.7.16.10.9.1-.4:
    ``[d], a, b, [sp-meta]?, idesc, `` then ``[sfa], [sfb], en`` (block-scaled), ``{dol}?, en, sid?``
    (other kinds) or ``en, zcm?`` (.ws)."""
    ops = list(ins.operands)
    d_op, a_op, b_op = ops[0], ops[1], ops[2]
    rest = ops[3:]
    meta_op = rest.pop(0) if f["sparse"] else None
    idesc_op, rest = rest[0], rest[1:]
    out: dict[str, Any] = {"a_tmem": a_op.kind == "addr"}
    out["d"] = m.address(d_op, act)
    out["a"] = m.address(a_op, act) if out["a_tmem"] else m.read(a_op, U64, act)
    out["b"] = m.read(b_op, U64, act)
    out["idesc"] = m.read(idesc_op, U32, act)
    out["meta"] = m.address(meta_op, act) if meta_op is not None else None
    out["dol"] = out["sid"] = out["zcm"] = out["sfa"] = out["sfb"] = None
    bad = VmError(f"{ins.opcode}: operands do not match the syntax of 9.7.16.10.9 ({len(ops)} given)")
    if f["block_scale"]:
        if len(rest) != 3:
            raise bad  # no disable-output-lane / scale-input-d for block-scaled kinds (ptxas refuses them too)
        out["sfa"], out["sfb"] = m.address(rest[0], act), m.address(rest[1], act)
        out["en"] = m.read(rest[2], PRED, act)
    elif f["ws"]:
        if len(rest) not in (1, 2) or rest[0].kind == "vec":
            raise bad
        out["en"] = m.read(rest[0], PRED, act)
        if len(rest) == 2:
            out["zcm"] = m.read(rest[1], U64, act)
    else:
        if rest and rest[0].kind == "vec":
            out["dol"] = np.stack([m.read(it, U32, act) for it in rest[0].items], axis=1)
            rest = rest[1:]
        if len(rest) not in (1, 2):
            raise bad
        out["en"] = m.read(rest[0], PRED, act)
        if len(rest) == 2:
            if rest[1].kind != "imm":
                raise VmError(f"{ins.opcode}: scale-input-d must be an immediate (9.7.16.10.9.1)")
            out["sid"] = int(rest[1].value)
    return out


def _collectors(s: Tcgen05State, ctas: list[int]) -> list[T.Collector]:
    store = s.__dict__.setdefault("collectors", {})
    return [store.setdefault(c, T.Collector()) for c in ctas]


@handler("tcgen05.mma")
def _mma(m: Machine, ins: Instr, act: np.ndarray) -> None:
    s = state(m)
    f = _mma_form(ins)
    o = _mma_operands(m, ins, f, act)
    arith = (m.profile or {}).get("tcgen05_arithmetic", "float64") if isinstance(m.profile, dict) else "float64"
    for i, t in enumerate(act):
        cta = int(m.cta[t])
        cg = f["cta_group"]
        if cg == 2 and int(m.rank_of_cta[cta]) % 2:
            raise VmError("tcgen05.mma.cta_group::2 issued from the odd-ranked CTA of the pair (the MMA is "
                          "issued by the even-ranked peer)")
        ctas = s.pair(cta, cg)
        kw = dict(kind=f["kind"], cta_group=cg, d_taddr=int(o["d"][i]), a=int(o["a"][i]), b_desc=int(o["b"][i]),
                  idesc=int(o["idesc"][i]), enable_input_d=bool(o["en"][i]), a_is_tmem=o["a_tmem"],
                  sparse=f["sparse"], sp_meta_taddr=None if o["meta"] is None else int(o["meta"][i]),
                  collectors=_collectors(s, ctas), collector_usage=f["collector"])
        if f["block_scale"]:
            kw.update(sfa_taddr=int(o["sfa"][i]), sfb_taddr=int(o["sfb"][i]), scale_vec=f["scale_vec"],
                      arch=m.cfg.arch, arithmetic=arith,
                      k96_shapes=m.reading("AMB-K96-SHAPES", "m256-cg2-only"))
            fn = T.execute_mma
        else:
            kw.update(ws=f["ws"], scale_input_d=o["sid"],
                      disable_output_lane=None if o["dol"] is None else [int(w) for w in o["dol"][i]],
                      zero_column_mask_desc=None if o["zcm"] is None else int(o["zcm"][i]))
            fn = T.execute_mma_plain

        def run(ctas=ctas, kw=kw, fn=fn):
            return fn(tmems=[s.tmem_of(c) for c in ctas], smems=[m.smem[c] for c in ctas], **kw)

        s.issue(int(t), AsyncOp(ins, 0, run, ctas))


@handler("tcgen05.shift")
def _shift(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """tcgen05.shift.down (9.7.16.9.3): single-thread issue, asynchronous like mma/cp (``T.shift``)."""
    if not ins.has("down"):
        raise VmUnsupported(f"{ins.opcode}: only .down")
    s = state(m)
    cg = _cta_group(ins)
    taddr = m.address(ins.operands[0], act)
    for i, t in enumerate(act):
        ctas = s.pair(int(m.cta[t]), cg)
        ta = int(taddr[i])
        try:
            _, cols = T.shift_cells(ta)
        except ValueError as exc:
            raise VmError(f"{exc} ({ins.where()})") from None
        for c in ctas:
            _check_cols(s, m, c, cols, ins)

        def run(ctas=ctas, ta=ta):
            return T.execute_shift([s.tmem_of(c) for c in ctas], ta)

        s.issue(int(t), AsyncOp(ins, 0, run, ctas))


@handler("tcgen05.commit")
def _commit(m: Machine, ins: Instr, act: np.ndarray) -> None:
    s = state(m)
    if not ins.has("mbarrier::arrive::one"):
        raise VmUnsupported(f"{ins.opcode}: only .mbarrier::arrive::one")
    addrs = m.address(ins.operands[0], act)
    if not ins.has("shared::cluster"):  # a generic address
        addrs = addrs - np.uint64(SHARED_WINDOW)
    ctas, offs = m.shared_target(addrs, act, "tcgen05.commit mbarrier", True)  # the rank bits name the CTA
    multicast = ins.has("multicast::cluster")
    mask = m.read(ins.operands[1], ptx_type("u16"), act) if multicast else None
    if multicast and (mask >> np.uint16(m.cluster_size)).any():
        raise VmError(f"{ins.opcode}: ctaMask {int(mask.max()):#06x} names a rank past the cluster of "
                      f"{m.cluster_size} CTAs")
    for i, t in enumerate(act):
        cta = int(m.cta[t])
        if multicast:
            targets = [(int(m.peer[cta, r]), int(offs[i])) for r in range(m.cluster_size) if int(mask[i]) >> r & 1]
        else:
            targets = [(int(ctas[i]), int(offs[i]))]
        ops = s.queued.pop(int(t), [])
        s.groups.append(CommitGroup(ops, targets, ins))
