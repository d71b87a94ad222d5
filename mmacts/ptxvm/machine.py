"""SIMT execution of one kernel launch: threads, registers, the scheduler, barriers.

How threads run. All threads of a group of CTAs (whole clusters; as many CTAs as fit a thread
budget) are one set of numpy arrays: a register is an array with one element per thread. The
scheduler repeatedly picks the smallest program counter among the runnable threads and executes
that instruction for every thread standing there (the *active* set). This is how divergent threads
reconverge: a thread that skipped ahead waits until the others reach it; a loop with a
data-dependent trip count runs until its last thread leaves. Warp-collective ``.aligned``
instructions require every live thread of the warp in the active set, as the ISA requires.

Barriers are real: ``bar.sync`` blocks a thread until every live thread of its CTA (or the
requested count) has arrived at that barrier id, wherever in the program it did so;
``barrier.cluster`` likewise over the cluster; a ``.sync`` warp instruction with a ``membermask``
(``shfl.sync``, ``vote.sync``, ``bar.warp.sync``) waits until every thread of the mask stands at it.
A thread spinning on an ``mbarrier.try_wait`` that
fails yields to the other threads, and virtual time (``%globaltimer``) advances, so a bounded wait
in the kernel expires as on a GPU. When nothing can run and threads are still blocked, the launch
is a deadlock: :class:`VmTimeout` naming the barrier, the line and the threads. A step budget
bounds everything else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mmacts.ptxvm.errors import VmError, VmHazard, VmMemoryFault, VmTimeout, VmUnsupported
from mmacts.ptxvm.handlers import HANDLERS, Handler, handler, handler_names  # noqa: F401 -- handler: old home
from mmacts.ptxvm.memory import (
    CLUSTER_RANK_SHIFT,
    LOCAL_WINDOW,
    PARAM_WINDOW,
    SHARED_OFFSET_MASK,
    SHARED_WINDOW,
    WINDOW_SIZE,
    GlobalMemory,
    SharedLayout,
    check_aligned,
)
from mmacts.ptxvm.parse import Entry, Instr, Module, Operand
from mmacts.ptxvm.ptxtypes import PtxType, from_bits, ptx_type, to_bits

RUN, BLOCKED, EXITED = 0, 1, 2
CLUSTER_BARRIER, WARP_SYNC = -2, -3
"""``bar_id`` of a thread blocked in ``barrier.cluster.wait``, or waiting for the other threads of
its ``membermask`` at a ``.sync`` warp instruction (``shfl.sync``, ``vote.sync``, ``bar.warp.sync``)."""

MAX_SHARED_BYTES = 232448
"""Largest shared memory per CTA on sm_90 / sm_100 (227 KiB): a launch asking for more fails."""

STEP_NS = 4
"""Virtual nanoseconds per scheduler step (``%globaltimer``)."""
SUSPEND_NS = 10_000_000
"""Virtual time a failing ``mbarrier.try_wait`` suspends for when no other thread can run."""
LD_OVERWRITE_REGISTER = "AMB-TCGEN05-LD-NO-WAIT-OVERWRITE"
"""Register entry: may a tcgen05.ld destination register, read since the load, be overwritten before
tcgen05.wait::ld? The VM's default reading is wait-required; ``{"readings": {LD_OVERWRITE_REGISTER:
"register-read-completes"}}`` in a launch's profile allows it (:meth:`Machine._ld_overwrite`)."""


@dataclass
class MbarrierState:
    """An mbarrier object (9.7.13.15): arrival counts and the current phase."""

    expected: int
    pending: int
    phase: int = 0
    tx: int = 0


@dataclass
class LaunchConfig:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cluster: tuple[int, int, int]
    shared_dynamic: int
    arch: str


@dataclass
class Machine:
    """One chunk of a launch (whole clusters of CTAs) executing together."""

    module: Module
    entry: Entry
    cfg: LaunchConfig
    gmem: GlobalMemory
    params: np.ndarray
    param_offsets: dict[str, int]
    ctas: list[int]
    """Linear CTA ids of this chunk (whole clusters, in order)."""
    profile: Any = None
    trace: Any = None
    max_steps: int = 3_000_000
    vtime: int = 1_700_000_000_000_000_000
    steps: int = 0
    thread_instructions: int = 0
    hooks: dict[str, Any] = field(default_factory=dict)
    """Per-launch state of instruction families (tensor memory, async queues, ...)."""

    def __post_init__(self) -> None:
        bx, by, bz = self.cfg.block
        self.nthreads_cta = bx * by * bz
        C = len(self.ctas)
        T = C * self.nthreads_cta
        self.T = T
        t = np.arange(T)
        self.cta = t // self.nthreads_cta
        self.tid = t % self.nthreads_cta
        self.tid_x = self.tid % bx
        self.tid_y = (self.tid // bx) % by
        self.tid_z = self.tid // (bx * by)
        gx, gy, gz = self.cfg.grid
        lin = np.asarray(self.ctas)
        self.cta_x, self.cta_y, self.cta_z = lin % gx, (lin // gx) % gy, lin // (gx * gy)
        cx, cy, cz = self.cfg.cluster
        self.ncluster = (gx // cx, gy // cy, gz // cz)
        cl_x, cl_y, cl_z = self.cta_x // cx, self.cta_y // cy, self.cta_z // cz
        self.cluster_of_cta = cl_x + self.ncluster[0] * (cl_y + self.ncluster[1] * cl_z)
        self.rank_of_cta = (self.cta_x % cx) + cx * ((self.cta_y % cy) + cy * (self.cta_z % cz))
        self.cluster_size = cx * cy * cz
        order = np.lexsort((self.rank_of_cta, self.cluster_of_cta))  # a chunk holds whole clusters
        group = np.empty(C, dtype=np.int64)
        group[order] = np.arange(C) // self.cluster_size
        self.peer = order.reshape(-1, self.cluster_size)[group]
        """``peer[c, r]``: the chunk index of the CTA of rank ``r`` in chunk CTA ``c``'s cluster."""
        self.warp = self.tid // 32
        self.lane = self.tid % 32
        self.gwarp = self.cta * ((self.nthreads_cta + 31) // 32) + self.warp
        self.pc = np.zeros(T, dtype=np.int64)
        self.status = np.zeros(T, dtype=np.int8)
        self.bar_id = np.full(T, -1, dtype=np.int64)
        self.bar_count = np.zeros(T, dtype=np.int64)
        self.cl_arrive = np.zeros(T, dtype=np.int64)
        self.cl_wait = np.zeros(T, dtype=np.int64)
        self.regs: dict[str, np.ndarray] = {}
        self.reg_types: dict[str, PtxType] = {}
        for name, decl in self.entry.regs.items():
            ty = ptx_type(decl.type)
            self.reg_types[name] = ty
            # a .b128 register: two little-endian 64-bit words per thread (numpy has no 128-bit integer)
            wide = ty.bits == 128
            self.regs[name] = np.zeros((T, 2) if wide else T, dtype=np.uint64 if wide else ty.udtype)
        self.bar_arrived: dict[tuple[int, int], int] = {}
        """(chunk CTA, barrier id) -> threads that arrived there with ``bar.arrive`` in its current phase."""
        self.bar_expect: dict[tuple[int, int], int] = {}
        """(chunk CTA, barrier id) -> the thread count those ``bar.arrive`` gave."""
        self.spin_addr = np.full(T, -1, dtype=np.int64)
        """Per thread, the shared::cta address of the mbarrier its last failing wait polled (-1: none)."""
        self.spin_line = np.zeros(T, dtype=np.int64)
        """Per thread, the code index of the instruction its last failing wait was."""
        self.time_read = False
        """A time source (``%globaltimer``, ``%clock``) was read since the last suspension."""
        self._spin_seen: tuple[Any, Any] | None = None
        # shared memory: module-level variables first, then the entry's, then the dynamic array
        self.shared_layout = SharedLayout.build([*self.module.variables, *self.entry.shared])
        self.smem_size = self.shared_layout.dynamic_offset + self.cfg.shared_dynamic
        if self.smem_size > MAX_SHARED_BYTES:
            raise VmError(f"launch needs {self.smem_size} bytes of shared memory per CTA; the limit is "
                          f"{MAX_SHARED_BYTES}")
        self.smem = np.zeros((C, max(self.smem_size, 1)), dtype=np.uint8)
        self.smem_writer = np.full((C, max(self.smem_size, 1)), -1, dtype=np.int32)
        """Thread (chunk index) whose generic-proxy write to each byte is not yet fenced for the async
        proxy (``fence.proxy.async``), or -1."""
        self.smem_writer_line = np.zeros((C, max(self.smem_size, 1)), dtype=np.int32)
        # local memory: each thread's own copy of the .local variables
        self.local_layout = SharedLayout.build([*self.module.variables, *self.entry.local], "local")
        self.local_size = self.local_layout.static_bytes
        self.lmem = np.zeros((T, self.local_size), dtype=np.uint8) if self.local_size else None
        self.sync_mask = np.zeros(T, dtype=np.uint32)
        """membermask of a thread waiting at a ``.sync`` warp instruction (``bar_id`` WARP_SYNC)."""
        self.mbarriers: dict[tuple[int, int], MbarrierState] = {}
        self.spin_pc: np.ndarray | None = None
        """Threads whose last mbarrier wait failed (they yield, see :meth:`spin`)."""
        self.pending_regs: dict[str, tuple[np.ndarray, Instr]] = {}
        self.ld_read: dict[str, np.ndarray] = {}
        """Per pending tcgen05.ld destination register, the threads that have read it since the load: their
        part of the load has read Tensor Memory (a later dealloc need not wait for it), though the register
        stays pending for an overwrite (AMB-TCGEN05-LD-NO-WAIT-DEALLOC)."""
        """Registers written by an asynchronous load (``tcgen05.ld``) not yet waited for."""
        self.code = self.entry.code
        self.labels = self.entry.labels
        self._group_cache: dict[int, tuple[np.ndarray, int]] = {}

    # ------------------------------------------------------------------------------ errors
    def where(self, ins: Instr, act: np.ndarray | None = None, i: int = 0) -> str:
        s = f"{ins.where()}"
        if act is not None and len(act):
            t = int(act[min(i, len(act) - 1)])
            s += f" [CTA {int(self.ctas[self.cta[t]])}, thread {int(self.tid[t])}]"
        return s

    # ------------------------------------------------------------------------------ operands
    def special(self, name: str, act: np.ndarray) -> np.ndarray:
        """Special registers (10.x): values for the active threads, as uint32 / uint64."""
        base, _, comp = name.partition(".")
        ci = {"x": 0, "y": 1, "z": 2}.get(comp, 0)
        bx, by, bz = self.cfg.block
        n = len(act)
        if base == "%tid":
            return (self.tid_x, self.tid_y, self.tid_z)[ci][act].astype(np.uint32)
        if base == "%ntid":
            return np.full(n, (bx, by, bz)[ci], dtype=np.uint32)
        if base == "%ctaid":
            return (self.cta_x, self.cta_y, self.cta_z)[ci][self.cta[act]].astype(np.uint32)
        if base == "%nctaid":
            return np.full(n, self.cfg.grid[ci], dtype=np.uint32)
        if base == "%laneid":
            return self.lane[act].astype(np.uint32)
        if base == "%warpid":
            return self.warp[act].astype(np.uint32)
        if base == "%nwarpid":
            return np.full(n, (self.nthreads_cta + 31) // 32, dtype=np.uint32)
        if base in ("%clusterid",):
            cx = self.cta_x[self.cta[act]] // self.cfg.cluster[0]
            cy = self.cta_y[self.cta[act]] // self.cfg.cluster[1]
            cz = self.cta_z[self.cta[act]] // self.cfg.cluster[2]
            return (cx, cy, cz)[ci].astype(np.uint32)
        if base == "%nclusterid":
            return np.full(n, self.ncluster[ci], dtype=np.uint32)
        if base == "%cluster_ctaid":
            c = self.cta[act]
            return ((self.cta_x[c] % self.cfg.cluster[0]), (self.cta_y[c] % self.cfg.cluster[1]),
                    (self.cta_z[c] % self.cfg.cluster[2]))[ci].astype(np.uint32)
        if base == "%cluster_nctaid":
            return np.full(n, self.cfg.cluster[ci], dtype=np.uint32)
        if base == "%cluster_ctarank":
            return self.rank_of_cta[self.cta[act]].astype(np.uint32)
        if base == "%cluster_nctarank":
            return np.full(n, self.cluster_size, dtype=np.uint32)
        if base == "%is_explicit_cluster":
            return np.full(n, "explicitcluster" in self.entry.directives, dtype=bool)
        if base in ("%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%clock", "%clock64"):
            self.time_read = True
        if base in ("%globaltimer", "%globaltimer_lo", "%globaltimer_hi"):
            v = np.full(n, self.vtime + self.steps * STEP_NS, dtype=np.uint64)
            if base.endswith("_lo"):
                return v.astype(np.uint32)
            if base.endswith("_hi"):
                return (v >> np.uint64(32)).astype(np.uint32)
            return v
        if base in ("%clock", "%clock64"):
            v = np.full(n, self.steps * 2, dtype=np.uint64)
            return v if base == "%clock64" else v.astype(np.uint32)
        if base == "%smid":
            return np.zeros(n, dtype=np.uint32)
        if base == "%nsmid":
            return np.full(n, 132, dtype=np.uint32)
        if base.startswith("%lanemask_"):
            ln = self.lane[act].astype(np.uint64)
            one = np.uint64(1)
            eq = (one << ln).astype(np.uint32)
            rel = base[len("%lanemask_"):]
            full = np.uint64(0xFFFFFFFF)
            lt = ((one << ln) - one).astype(np.uint32)
            return {"eq": eq, "lt": lt, "le": (lt | eq), "gt": (~(lt | eq)).astype(np.uint32) & np.uint32(full),
                    "ge": (~lt).astype(np.uint32)}[rel]
        if base == "%dynamic_smem_size":
            return np.full(n, self.cfg.shared_dynamic, dtype=np.uint32)
        if base == "%total_smem_size":
            return np.full(n, self.smem_size, dtype=np.uint32)
        raise VmUnsupported(f"special register {name} is not implemented")

    def is_special(self, name: str) -> bool:
        return name not in self.regs and name.split(".")[0] in (
            "%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%clusterid", "%nclusterid",
            "%cluster_ctaid", "%cluster_nctaid", "%cluster_ctarank", "%cluster_nctarank", "%is_explicit_cluster",
            "%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%clock", "%clock64", "%smid", "%nsmid",
            "%lanemask_eq", "%lanemask_lt", "%lanemask_le", "%lanemask_gt", "%lanemask_ge", "%dynamic_smem_size",
            "%total_smem_size")

    def mark_pending(self, names: Any, threads: np.ndarray, src: Instr) -> None:
        """Registers ``names`` of ``threads`` are written by the asynchronous ``src`` (tcgen05.ld, wgmma) and
        not complete until its wait (:meth:`clear_pending`); :meth:`reg_bits` / :meth:`write` police them."""
        for name in names:
            mask, _ = self.pending_regs.get(name, (np.zeros(self.T, dtype=bool), src))
            mask[threads] = True
            self.pending_regs[name] = (mask, src)
            if name in self.ld_read:
                self.ld_read[name][threads] = False

    def clear_pending(self, names: Any, threads: np.ndarray) -> None:
        """The wait that completes ``names`` of ``threads`` has executed."""
        for name in list(names):
            if name in self.pending_regs:
                mask, _ = self.pending_regs[name]
                mask[threads] = False
                if not mask.any():
                    del self.pending_regs[name]

    def reg_bits(self, name: str, act: np.ndarray) -> np.ndarray:
        """Raw stored bits of a register for the active threads (checks async-pending reads)."""
        if name in self.pending_regs:
            mask, src = self.pending_regs[name]
            # tcgen05.ld: a true register dependency is honoured without tcgen05.wait::ld (9.7.16.6.4.5);
            # wgmma accumulators may not be read before their wgmma.wait_group (9.7.15.x)
            if src.base != "tcgen05" and mask[act].any():
                raise VmHazard(f"register {name} read before {src.base}'s wait completed the operation at "
                               f"{src.where()}")
            if src.base == "tcgen05":
                # the read waits for the load's value, so this register of these threads has been read from
                # Tensor Memory: a later dealloc need not wait for it (reading register-read-completes of
                # AMB-TCGEN05-LD-NO-WAIT-DEALLOC, the one CUTLASS's SM100 epilogue relies on); an overwrite
                # before tcgen05.wait::ld stays a hazard (write)
                read = self.ld_read.setdefault(name, np.zeros(self.T, dtype=bool))
                read[act] = True
        try:
            reg = self.regs[name]
        except KeyError:
            raise VmError(f"undeclared register {name}") from None
        n = len(act)
        if n and int(act[-1]) - int(act[0]) + 1 == n:  # a contiguous run of threads: a slice is cheaper
            return reg[int(act[0]):int(act[0]) + n].copy()
        return reg[act]

    def read(self, op: Operand, ty: PtxType, act: np.ndarray) -> np.ndarray:
        """Operand value as ``ty`` values (numpy dtype ``ty.dtype``) for the active threads."""
        n = len(act)
        if ty.bits == 128:
            raise VmUnsupported(f".b128 operand {op}: the VM implements .b128 for mov, ld and st only")
        if op.kind == "reg":
            if self.is_special(op.name):
                v = self.special(op.name, act)
                return _convert_int(v, ty)
            bits = self.reg_bits(op.name, act)
            rty = self.reg_types[op.name]
            if rty.bits == 128:
                raise VmUnsupported(f".b128 register {op.name} read as .{ty.name}: the VM implements .b128 "
                                    f"registers for mov, ld and st only")
            if ty.kind == "pred" or rty.kind == "pred":
                if not (ty.kind == rty.kind == "pred"):
                    raise VmError(f"register {op.name} (.{rty.name}) used as .{ty.name}")
                return ~bits if op.neg else bits
            if rty.bits == ty.bits:
                return bits.view(ty.dtype)
            return _resize(bits, rty, ty)
        if op.kind == "imm":
            if ty.kind == "f":
                return np.full(n, op.value, dtype=ty.dtype)
            if ty.kind == "pred":
                return np.full(n, bool(op.value))
            mask = (1 << ty.bits) - 1
            return np.full(n, op.value & mask, dtype=ty.udtype).view(ty.dtype)
        if op.kind == "fimm":
            if op.bits == 32:
                val = np.array([op.value], dtype=np.uint32).view(np.float32)[0]
            else:
                val = np.array([op.value], dtype=np.uint64).view(np.float64)[0]
            if ty.kind == "f":
                return np.full(n, val, dtype=ty.dtype)
            if ty.bits == op.bits:
                return np.full(n, op.value, dtype=ty.udtype).view(ty.dtype)
            raise VmError(f"float immediate {op} used as .{ty.name}")
        if op.kind == "sym":
            return self.symbol_values(op.name, act).astype(ty.udtype).view(ty.dtype)
        raise VmError(f"operand {op} cannot be read as a value")

    def write(self, op: Operand, ty: PtxType, act: np.ndarray, values: np.ndarray) -> None:
        if op.kind == "sink":
            return
        if op.kind != "reg":
            raise VmError(f"cannot write to operand {op}")
        if op.name not in self.regs:
            raise VmError(f"write to undeclared or read-only register {op.name}")
        rty = self.reg_types[op.name]
        if rty.bits == 128 or ty.bits == 128:
            raise VmUnsupported(f".b128 register {op.name} written as .{ty.name}: the VM implements .b128 "
                                f"registers for mov, ld and st only")
        n = len(act)
        sel = slice(int(act[0]), int(act[0]) + n) if n and int(act[-1]) - int(act[0]) + 1 == n else act
        if rty.kind == "pred":
            self.regs[op.name][sel] = np.asarray(values, dtype=bool)
            return
        bits = to_bits(values, ty) if ty.kind != "pred" else np.asarray(values).astype(np.uint8)
        if rty.bits != ty.bits:
            bits = _resize(bits, ty, rty)
        self.regs[op.name][sel] = bits.view(rty.udtype) if bits.dtype != rty.udtype else bits
        if self.pending_regs and op.name in self.pending_regs:
            mask, src = self.pending_regs[op.name]
            if src.base == "tcgen05" and mask[act].any():
                self._ld_overwrite(op.name, src, mask, act)
            mask[act] = False

    def reading(self, entry: str, default: str = "") -> str:
        """The reading of register ``entry`` the launch's profile names (``{"readings": {entry: reading}}``), or
        ``default``: how a caller tells the VM which reading of an open question to take."""
        readings = self.profile.get("readings", {}) if isinstance(self.profile, dict) else {}
        return readings.get(entry, default)

    def _ld_overwrite(self, name: str, src: Any, mask: np.ndarray, act: np.ndarray) -> None:
        """Register ``name`` of threads ``act`` is overwritten while the tcgen05.ld ``src`` that loads it has not
        been completed by tcgen05.wait::ld: a hazard (9.7.16.6.4.5), unless the caller named the reading
        register-read-completes of :data:`LD_OVERWRITE_REGISTER` and every such thread has read the register since
        the load (the true dependency the spec orders). Why a reading: the CuTe DSL's epilogue loops its
        tcgen05.ld into the same registers with no tcgen05.wait::ld at all; the spec text leaves open whether its
        wait is needed for the registers or only for Tensor Memory ordering."""
        pending = act[mask[act]]
        read = self.ld_read.get(name)
        named = self.reading(LD_OVERWRITE_REGISTER)
        unread = pending if read is None else pending[~read[pending]]
        if named == "register-read-completes" and not unread.size:
            return
        why = ("" if unread.size else f"; the register was read since the load: reading register-read-completes "
               f"of {LD_OVERWRITE_REGISTER} would allow it, default reading wait-required")
        raise VmHazard(f"register {name} written while the tcgen05.ld at {src.where()} that loads it is not "
                       f"completed by tcgen05.wait::ld (an anti-dependency, 9.7.16.6.4.5){why}")

    def symbol_values(self, name: str, act: np.ndarray) -> np.ndarray:
        """The address (uint64, per active thread) of a variable or parameter named in an operand: its offset in
        its space; a shared variable's carries the CTA's cluster rank (:data:`CLUSTER_RANK_SHIFT`)."""
        if name in self.shared_layout.offsets:
            off = np.uint64(self.shared_layout.offsets[name])
            if self.cluster_size == 1:
                return np.full(len(act), off, dtype=np.uint64)
            return off + (self.rank_of_cta[self.cta[act]].astype(np.uint64) << np.uint64(CLUSTER_RANK_SHIFT))
        for table in (self.local_layout.offsets, self.param_offsets):
            if name in table:
                return np.full(len(act), table[name], dtype=np.uint64)
        raise VmError(f"unknown symbol {name}")

    def address(self, op: Operand, act: np.ndarray) -> np.ndarray:
        """Effective address (uint64) of an address operand ``[base+offset]``."""
        if op.kind != "addr":
            raise VmError(f"expected an address operand, got {op}")
        if op.base is None:
            return np.full(len(act), op.offset & (2**64 - 1), dtype=np.uint64)
        b = op.base
        if b.kind == "sym":
            base = self.symbol_values(b.name, act)
        elif b.kind == "reg":
            rty = self.reg_types.get(b.name)
            if rty is None:
                raise VmError(f"undeclared register {b.name}")
            base = self.reg_bits(b.name, act).astype(np.uint64)
        else:
            raise VmError(f"cannot address through {b}")
        return base + np.uint64(op.offset & (2**64 - 1))

    # ------------------------------------------------------------------------------ shared memory
    def shared_target(self, addrs: np.ndarray, act: np.ndarray, what: str,
                      cluster: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(chunk CTA, byte offset in its shared memory) of each shared address of the active threads: the rank
        bits (:data:`CLUSTER_RANK_SHIFT`) name the CTA in the thread's cluster. A ``.shared::cta`` access
        (``cluster`` False) may only name the executing CTA; a ``.shared::cluster`` one any CTA of the cluster.
        A launch without clusters keeps plain offsets (rank 0), exactly as before clusters had addresses."""
        own = self.cta[act]
        if self.cluster_size == 1:
            return own, addrs.astype(np.uint64)
        a = addrs.astype(np.uint64)
        rank = (a >> np.uint64(CLUSTER_RANK_SHIFT)).astype(np.int64)
        off = a & np.uint64(SHARED_OFFSET_MASK)
        mine = self.rank_of_cta[own]
        bad = (rank != mine) if not cluster else (rank >= self.cluster_size)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            if cluster:
                raise VmMemoryFault(f"shared::cluster {what} at address {int(a[i]):#x} names cluster rank "
                                    f"{int(rank[i])}; the cluster has {self.cluster_size} CTAs@thread{i}")
            raise VmMemoryFault(f"shared::cta {what} at address {int(a[i]):#x} names the CTA of cluster rank "
                                f"{int(rank[i])}, not the executing CTA (rank {int(mine[i])}); only a "
                                f".shared::cluster access may reach another CTA@thread{i}")
        return self.peer[own, rank], off

    def shared_index(self, addrs: np.ndarray, nbytes: int, act: np.ndarray, what: str,
                     cluster: bool = False) -> np.ndarray:
        """Flat index into ``self.smem`` of (active thread, byte) pairs, bounds-checked."""
        ctas, off = self.shared_target(addrs, act, what, cluster)
        bad = off + np.uint64(nbytes) > np.uint64(self.smem_size)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            sp = "shared::cluster" if cluster else "shared::cta"
            raise VmMemoryFault(f"out-of-bounds shared {what} of {nbytes} bytes at {sp} "
                                f"address {int(addrs[i]):#x} (CTA window is {self.smem_size} bytes)@thread{i}")
        rows = ctas.astype(np.int64) * self.smem.shape[1]
        return rows[:, None] + off.astype(np.int64)[:, None] + np.arange(nbytes)

    def shared_load(self, addrs: np.ndarray, nbytes: int, act: np.ndarray, cluster: bool = False) -> np.ndarray:
        check_aligned(addrs, nbytes, "shared")
        idx = self.shared_index(addrs, nbytes, act, "load", cluster)
        return self.smem.reshape(-1)[idx]

    def shared_store(self, addrs: np.ndarray, data: np.ndarray, act: np.ndarray, ins: Instr,
                     cluster: bool = False) -> None:
        nbytes = data.shape[1]
        idx = self.shared_index(addrs, nbytes, act, "store", cluster)
        self.smem.reshape(-1)[idx] = data
        self.smem_writer.reshape(-1)[idx] = act[:, None]
        self.smem_writer_line.reshape(-1)[idx] = ins.line
        self.notify("shared_store", idx)

    # ------------------------------------------------------------------------------ local memory
    def local_index(self, addrs: np.ndarray, nbytes: int, act: np.ndarray, what: str) -> np.ndarray:
        """Flat index into ``self.lmem`` of (active thread, byte) pairs, bounds-checked."""
        bad = addrs + np.uint64(nbytes) > np.uint64(self.local_size)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise VmMemoryFault(f"out-of-bounds local {what} of {nbytes} bytes at local address "
                                f"{int(addrs[i]):#x} (the thread's .local window is {self.local_size} bytes)@thread{i}")
        return (act.astype(np.int64) * self.local_size)[:, None] + addrs.astype(np.int64)[:, None] + np.arange(nbytes)

    def local_load(self, addrs: np.ndarray, nbytes: int, act: np.ndarray) -> np.ndarray:
        check_aligned(addrs, nbytes, "local")
        idx = self.local_index(addrs, nbytes, act, "load")
        assert self.lmem is not None
        return self.lmem.reshape(-1)[idx]

    def local_store(self, addrs: np.ndarray, data: np.ndarray, act: np.ndarray) -> None:
        check_aligned(addrs, data.shape[1], "local")
        idx = self.local_index(addrs, data.shape[1], act, "store")
        assert self.lmem is not None
        self.lmem.reshape(-1)[idx] = data

    # ------------------------------------------------------------------------------ state spaces
    def load(self, space: str, addrs: np.ndarray, nbytes: int, act: np.ndarray) -> np.ndarray:
        """``(len(act), nbytes)`` bytes read at ``addrs`` of ``space`` (``global``, ``shared``,
        ``local``, ``param`` or ``generic``: a generic address in the shared / local / param window is that
        space's)."""
        if space == "generic":
            parts = self._generic_split(addrs)
            if parts is not None:
                out = np.empty((len(act), nbytes), dtype=np.uint8)
                for sp, sel, a in parts:
                    out[sel] = self.load(sp, a, nbytes, act[sel])
                return out
            space = "global"
        if space == "global":
            check_aligned(addrs, nbytes, "global")
            return self.gmem.load(addrs, nbytes)
        if space in ("shared", "shared::cluster"):
            return self.shared_load(addrs, nbytes, act, space == "shared::cluster")
        if space == "local":
            return self.local_load(addrs, nbytes, act)
        if space == "param":
            return self.param_load(addrs, nbytes)
        raise VmUnsupported(f"loads from the .{space} state space are not implemented")

    def param_load(self, addrs: np.ndarray, nbytes: int) -> np.ndarray:
        """``(len(addrs), nbytes)`` bytes of the kernel parameter block at parameter-space ``addrs``
        (``ld.param``, or a generic load in :data:`PARAM_WINDOW`), bounds-checked. Not alignment-checked: the
        parser reads ``.ptr .align 1`` (the pointee's alignment) as the parameter's, so Triton's pointer
        parameters sit at unaligned offsets of the VM's block (host and kernel agree; see issue 23's report)."""
        bad = addrs + np.uint64(nbytes) > np.uint64(self.params.size)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise VmMemoryFault(f"out-of-bounds param load of {nbytes} bytes at parameter offset {int(addrs[i]):#x} "
                                f"(the parameter block is {self.params.size} bytes)@thread{i}")
        return self.params[addrs.astype(np.int64)[:, None] + np.arange(nbytes)]

    def store(self, space: str, addrs: np.ndarray, data: np.ndarray, act: np.ndarray, ins: Instr) -> None:
        if space == "generic":
            parts = self._generic_split(addrs)
            if parts is not None:
                for sp, sel, a in parts:
                    self.store(sp, a, data[sel], act[sel], ins)
                return
            space = "global"
        if space == "global":
            check_aligned(addrs, data.shape[1], "global")
            self.gmem.store(addrs, data)
        elif space in ("shared", "shared::cluster"):
            check_aligned(addrs, data.shape[1], "shared")
            self.shared_store(addrs, data, act, ins, space == "shared::cluster")
        elif space == "local":
            self.local_store(addrs, data, act)
        elif space == "param":
            raise VmMemoryFault(f"store of {data.shape[1]} bytes into the kernel parameter space (parameter offset "
                                f"{int(addrs[0]):#x}), which is read-only@thread0")
        else:
            raise VmUnsupported(f"stores to the .{space} state space are not implemented")

    def _generic_split(self, addrs: np.ndarray) -> list[tuple[str, np.ndarray, np.ndarray]] | None:
        """None when every generic address is global; else ``(space, selector, space address)``. A generic
        shared address may name any CTA of the cluster (distributed shared memory)."""
        in_sh = (addrs - np.uint64(SHARED_WINDOW)) < np.uint64(WINDOW_SIZE)
        in_lo = (addrs - np.uint64(LOCAL_WINDOW)) < np.uint64(WINDOW_SIZE)
        in_pa = (addrs - np.uint64(PARAM_WINDOW)) < np.uint64(WINDOW_SIZE)
        if not (in_sh.any() or in_lo.any() or in_pa.any()):
            return None
        glob = ~(in_sh | in_lo | in_pa)
        out = []
        for sp, sel, base in (("shared::cluster", in_sh, SHARED_WINDOW), ("local", in_lo, LOCAL_WINDOW),
                              ("param", in_pa, PARAM_WINDOW), ("global", glob, 0)):
            if sel.any():
                out.append((sp, np.flatnonzero(sel), addrs[sel] - np.uint64(base)))
        return out

    def hook(self, name: str, make: Callable[[Machine], Any]) -> Any:
        """The per-chunk state of instruction family ``name`` (tensor memory, async queues, ...), made by
        ``make(self)`` on first use; its ``on_<event>`` methods receive :meth:`notify` events."""
        s = self.hooks.get(name)
        if s is None:
            s = self.hooks[name] = make(self)
        return s

    def notify(self, event: str, *args: Any) -> None:
        for h in self.hooks.values():
            fn = getattr(h, "on_" + event, None)
            if fn is not None:
                fn(self, *args)

    def check_async_reads(self, cta: int, lo: np.ndarray, what: str) -> None:
        """The async proxy reads shared bytes ``lo`` (indices into the CTA window): every one must have
        been fenced (``fence.proxy.async``) by the thread that wrote it with the generic proxy."""
        w = self.smem_writer[cta, lo]
        bad = w >= 0
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            line = int(self.smem_writer_line[cta, lo[i]])
            raise VmHazard(f"{what} reads shared memory byte {int(lo[i]):#x} of CTA {self.ctas[cta]} written at line "
                           f"{line} by thread {int(self.tid[w[i]])} with no fence.proxy.async since")

    # ------------------------------------------------------------------------------ scheduling
    def _handler_of(self, ins: Instr) -> Handler:
        for name in handler_names(ins.parts):
            fn = HANDLERS.get(name)
            if fn is not None:
                return fn
        raise VmUnsupported(f"instruction {ins.opcode} is not implemented by the VM ({ins.where()})")

    def run(self) -> None:
        code = self.code
        ncode = len(code)
        fns: list[Handler | None] = [None] * ncode  # each instruction's handler, looked up once
        while True:
            runnable = self.status == RUN
            if not runnable.any():
                if (self.status == EXITED).all():
                    break
                self._release_barriers()
                if not (self.status == RUN).any():
                    self.deadlock()
                continue
            pcs = self.pc
            if self.spin_pc is not None:  # threads whose wait failed yield to every other runnable thread
                other = runnable & ~self.spin_pc
                if other.any():
                    runnable = other
                else:  # nobody else can run: the waiters sleep (virtual time passes), then poll again
                    self._check_spin_cycle()
                    self.vtime += SUSPEND_NS
                    self.spin_pc = None
            minpc = int(pcs[runnable].min())
            act = np.flatnonzero(runnable & (pcs == minpc))
            if minpc >= ncode:
                self.status[act] = EXITED
                continue
            ins = code[minpc]
            self.steps += 1
            if self.steps > self.max_steps:
                raise VmTimeout(f"step budget of {self.max_steps} exhausted at {self.where(ins, act)}")
            try:  # every error, the guard's and the lookup's included, names the instruction, CTA and thread
                if ins.guard is not None:
                    g = self.reg_bits(ins.guard, act)
                    if ins.guard_neg:
                        g = ~g
                    skip = act[~g]
                    self.pc[skip] += 1
                    act = act[g]
                    if not len(act):
                        continue
                fn = fns[minpc]
                if fn is None:
                    fn = fns[minpc] = self._handler_of(ins)
                self.thread_instructions += len(act)
                if self.trace is not None:
                    self.trace.before(self, ins, act)
                moved = fn(self, ins, act)
                if not moved:
                    self.pc[act] += 1
                if self.trace is not None:
                    self.trace.after(self, ins, act)
            except VmError as exc:
                raise self._located(exc, ins, act) from None
            except Exception as exc:  # noqa: BLE001 -- a VM bug: still one line naming the instruction
                raise VmError(f"VM internal error ({type(exc).__name__}: {exc}) at {self.where(ins, act)}") from exc

    def _located(self, exc: VmError, ins: Instr, act: np.ndarray) -> VmError:
        """``exc`` naming the instruction, the CTA and the thread: a handler marks the culprit's index in
        ``act`` with ``@thread<i>``; otherwise the first thread of ``act`` is named."""
        s = str(exc)
        if "@thread" in s:
            msg, _, i = s.rpartition("@thread")
            return type(exc)(f"{msg} at {self.where(ins, act, int(i))}")
        if ins.where() in s:
            if "[CTA " in s or not len(act):
                return exc
            t = int(act[0])
            return type(exc)(f"{s} [CTA {int(self.ctas[self.cta[t]])}, thread {int(self.tid[t])}]")
        return type(exc)(f"{s} at {self.where(ins, act)}")

    def spin(self, threads: np.ndarray) -> None:
        """``threads`` polled something that is not ready (a failing ``mbarrier.try_wait``): they
        yield until no other thread can run, then virtual time advances by :data:`SUSPEND_NS`. What
        they polled is kept for the deadlock report (:meth:`_check_spin_cycle`)."""
        if self.spin_pc is None:
            self.spin_pc = np.zeros(self.T, dtype=bool)
        self.spin_pc[threads] = True
        if not len(threads):
            return
        pc = int(self.pc[threads[0]])
        self.spin_line[threads] = pc
        ins = self.code[pc] if pc < len(self.code) else None
        if ins is not None and ins.base == "mbarrier" and len(ins.operands) > 1 and ins.operands[1].kind == "addr":
            addrs = self.address(ins.operands[1], threads)
            self.spin_addr[threads] = self.shared_target(addrs, threads, "mbarrier wait")[1].astype(np.int64)
        else:
            self.spin_addr[threads] = -1

    # ------------------------------------------------------------------------------ spin deadlock
    def _check_spin_cycle(self) -> None:
        """Called when every runnable thread spins on a wait that failed. If the machine is in the same
        state as at the previous such point (program counters, registers, memory, mbarriers, barriers)
        and no thread read a time source in between, the scheduler is deterministic, so it will cycle
        forever: a deadlock, reported now naming the mbarriers and the waiting warps, rather than after
        the step budget (minutes). A bounded wait reads ``%globaltimer``, so it is never taken for one."""
        if self.time_read:
            self.time_read = False
            self._spin_seen = None
            return
        cheap = self._cheap_state()
        prev = self._spin_seen
        if prev is None or prev[0] != cheap:
            self._spin_seen = (cheap, None)
            return
        full = self._full_state()
        if prev[1] is None:
            self._spin_seen = (cheap, full)
            return
        if prev[1] == full:
            self.spin_deadlock()
        self._spin_seen = (cheap, full)

    def _cheap_state(self) -> tuple[Any, ...]:
        mbs = tuple(sorted((k, (v.expected, v.pending, v.phase, v.tx)) for k, v in self.mbarriers.items()))
        return (self.pc.tobytes(), self.status.tobytes(), self.bar_id.tobytes(), mbs,
                tuple(sorted(self.bar_arrived.items())), self.cl_arrive.tobytes(), self.cl_wait.tobytes())

    def _full_state(self) -> bytes:
        import hashlib

        h = hashlib.blake2b(digest_size=32)
        for name in sorted(self.regs):
            h.update(name.encode())
            h.update(np.ascontiguousarray(self.regs[name]).tobytes())
        h.update(self.smem.tobytes())
        if self.lmem is not None:
            h.update(self.lmem.tobytes())
        for b in self.gmem.buffers:
            h.update(np.ascontiguousarray(b.host).view(np.uint8).tobytes())
        return h.digest()

    def spin_deadlock(self) -> None:
        """Raise the deadlock of :meth:`_check_spin_cycle`: per mbarrier polled, its CTA, address, phase
        and what it still waits for, and the warps (with one thread) that poll it."""
        spinning = np.flatnonzero((self.status == RUN) & (self.spin_pc if self.spin_pc is not None
                                                          else np.zeros(self.T, dtype=bool)))
        groups: dict[tuple[int, int, int], list[int]] = {}
        for t in spinning:
            groups.setdefault((int(self.cta[t]), int(self.spin_addr[t]), int(self.spin_line[t])), []).append(int(t))
        parts = []
        for (c, addr, pc), ts in sorted(groups.items()):
            warps = sorted({int(self.warp[t]) for t in ts})
            ins = self.code[pc]
            who = (f"CTA {self.ctas[c]} warp{'s' if len(warps) > 1 else ''} {_ranges(warps)} "
                   f"({len(ts)} threads, e.g. thread {int(self.tid[ts[0]])})")
            if addr >= 0:
                mb = self.mbarriers.get((c, addr))
                st = (f"phase {mb.phase}, {mb.pending} of {mb.expected} arrivals and {mb.tx} tx bytes pending"
                      if mb is not None else "not initialised")
                parts.append(f"{who} poll the mbarrier at shared::cta {addr:#x} of CTA {self.ctas[c]} ({st}) "
                             f"in {ins.opcode} (line {ins.line})")
            else:
                parts.append(f"{who} spin in {ins.opcode} (line {ins.line})")
        blocked = np.flatnonzero(self.status == BLOCKED)
        if len(blocked):
            t = int(blocked[0])
            parts.append(f"{len(blocked)} threads wait at barriers (e.g. CTA {self.ctas[self.cta[t]]} thread "
                         f"{int(self.tid[t])} at line {self.code[int(self.pc[t])].line})")
        raise VmTimeout("deadlock: every live thread waits and nothing can change what it waits for: "
                        + "; ".join(parts))

    # ------------------------------------------------------------------------------ named barriers
    def bar_arrive(self, act: np.ndarray, bar: int, count: int) -> None:
        """``bar.arrive``: ``act`` arrive at barrier ``bar`` of their CTAs (completing at ``count``
        threads) without waiting; a barrier that completes releases its waiters and starts over."""
        for c in np.unique(self.cta[act]):
            key = (int(c), bar)
            expect = self.bar_expect.get(key)
            if expect is not None and expect != count and self.bar_arrived.get(key, 0):
                raise VmError(f"bar.arrive at barrier {bar} with thread count {count}, but {expect} was given "
                              f"for this phase (CTA {self.ctas[int(c)]})")
            self.bar_expect[key] = count
            self.bar_arrived[key] = self.bar_arrived.get(key, 0) + int((self.cta[act] == c).sum())
        self._release_barriers()
        for key, n in list(self.bar_arrived.items()):  # completed by arrivals alone: no thread waits there
            if n >= self.bar_expect[key]:
                waiting = (self.status == BLOCKED) & (self.cta == key[0]) & (self.bar_id == key[1])
                if not waiting.any():  # as many phases complete as the count fits; the rest open the next
                    self.bar_arrived[key] = n % self.bar_expect[key]

    def block(self, act: np.ndarray, bar: int, count: int = 0) -> None:
        self.status[act] = BLOCKED
        self.bar_id[act] = bar
        self.bar_count[act] = count
        self._release_barriers()

    def _release_barriers(self) -> None:
        blocked = self.status == BLOCKED
        if not blocked.any():
            return
        live = self.status != EXITED
        for c in np.unique(self.cta[blocked]):
            in_cta = self.cta == c
            for b in np.unique(self.bar_id[blocked & in_cta]):
                waiting = blocked & in_cta & (self.bar_id == b)
                if b == WARP_SYNC:
                    self._release_warp_sync(waiting)
                    continue
                if b == CLUSTER_BARRIER:  # cluster barrier: every live thread of the cluster arrived for this phase
                    cl = self.cluster_of_cta[c]
                    in_cl = self.cluster_of_cta[self.cta] == cl
                    floor = self.cl_arrive[in_cl & live].min()
                    rel = waiting & (self.cl_wait < floor)
                    if rel.any():
                        self.cl_wait[rel] += 1
                        self._release(rel)
                    continue
                need = int(self.bar_count[waiting].max())
                key = (int(c), int(b))
                arrived = self.bar_arrived.get(key, 0)
                if arrived:
                    expect = self.bar_expect[key]
                    if need and need != expect:
                        t = int(np.flatnonzero(waiting)[0])
                        raise VmError(f"barrier {int(b)} of CTA {self.ctas[int(c)]}: bar.sync by thread "
                                      f"{int(self.tid[t])} gives thread count {need}, bar.arrive gave {expect}")
                    need = expect
                if need == 0:
                    need = int((live & in_cta).sum())
                n_wait = int(waiting.sum())
                if n_wait + arrived >= need:
                    if arrived:  # arrivals beyond the count (warps that arrived together) open the next phase
                        self.bar_arrived[key] = max(0, arrived - max(0, need - n_wait))
                    self._release(waiting)

    # ------------------------------------------------------------------------------ warp sync
    def warp_sync(self, ins: Instr, act: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``.sync`` warp instructions with a ``membermask`` (9.7.8.x: shfl.sync, vote.sync,
        bar.warp.sync): a thread executes once every thread its mask names has arrived at the
        instruction; until then it waits (blocked, its PC unchanged). Returns the threads of ``act``
        that execute now. Undefined per the ISA, hence errors: an executing thread missing from its
        own mask, a mask naming a thread that has exited or does not exist."""
        lane_bit = np.left_shift(np.uint32(1), self.lane[act].astype(np.uint32))
        if ((masks & lane_bit) == 0).any():
            i = int(np.flatnonzero((masks & lane_bit) == 0)[0])
            raise VmError(f"{ins.opcode}: membermask {int(masks[i]):#010x} does not include the executing "
                          f"lane {int(self.lane[act[i]])} (undefined behaviour)@thread{i}")
        gw = self.gwarp[act]
        if gw[0] == gw[-1]:
            present = np.bitwise_or.reduce(lane_bit)
            need = masks & ~present
        else:
            uniq, inv = np.unique(gw, return_inverse=True)
            pres = np.zeros(len(uniq), dtype=np.uint32)
            np.bitwise_or.at(pres, inv, lane_bit)
            need = masks & ~pres[inv]
        wait = need != 0
        if not wait.any():
            return act
        for i in np.flatnonzero(wait):
            t = int(act[i])
            gone = int(need[i]) & ~self._warp_live_bits(t)
            if gone:
                lane = (gone & -gone).bit_length() - 1
                raise VmError(f"{ins.opcode}: membermask {int(masks[i]):#010x} names lane {lane}, which has "
                              f"exited or does not exist (undefined behaviour)@thread{i}")
        self.sync_mask[act[wait]] = masks[wait]
        self.block(act[wait], WARP_SYNC)
        return act[~wait]

    def _warp_live_bits(self, t: int) -> int:
        """Lanes of thread ``t``'s warp that exist and have not exited, as a bit mask."""
        first = t - int(self.lane[t])
        last = min(first + 32, t - int(self.tid[t]) + self.nthreads_cta)
        bits = 0
        for k in range(first, last):
            if self.status[k] != EXITED:
                bits |= 1 << (k - first)
        return bits

    def _release_warp_sync(self, waiting: np.ndarray) -> None:
        """Threads waiting at a warp-sync instruction run again (PC unchanged, so they execute it
        together) once every thread of their membermask waits at the same instruction."""
        idx = np.flatnonzero(waiting)
        key = self.gwarp[idx] * (len(self.code) + 1) + self.pc[idx]
        for k in np.unique(key):
            grp = idx[key == k]
            present = np.bitwise_or.reduce(np.left_shift(np.uint32(1), self.lane[grp].astype(np.uint32)))
            ready = grp[(self.sync_mask[grp] & ~present) == 0]
            if len(ready):
                self.status[ready] = RUN
                self.bar_id[ready] = -1

    def _release(self, mask: np.ndarray) -> None:
        idx = np.flatnonzero(mask)
        self.status[idx] = RUN
        self.bar_id[idx] = -1
        self.pc[idx] += 1

    def deadlock(self) -> None:
        """Nothing can run and threads are blocked: name, for the first CTA with blocked threads, every
        barrier they wait at (threads, warps, first thread, line, arrivals by ``bar.arrive``)."""
        blocked = np.flatnonzero(self.status == BLOCKED)
        c = int(self.cta[int(blocked[0])])
        in_cta = self.cta == c
        n_exit = int((in_cta & (self.status == EXITED)).sum())
        mine = np.flatnonzero(in_cta & (self.status == BLOCKED))
        groups: dict[tuple[int, int], list[int]] = {}
        for t in mine:
            groups.setdefault((int(self.bar_id[t]), int(self.pc[t])), []).append(int(t))
        parts = []
        for (b, pc), ts in sorted(groups.items(), key=lambda kv: kv[1][0]):
            t = ts[0]
            what = {CLUSTER_BARRIER: "barrier.cluster.wait",
                    WARP_SYNC: f"a warp-sync instruction for membermask {int(self.sync_mask[t]):#010x}"}.get(
                b, f"barrier {b}")
            arrived = self.bar_arrived.get((c, b), 0)
            extra = f" ({arrived} arrived with bar.arrive)" if arrived else ""
            warps = sorted({int(self.warp[x]) for x in ts})
            parts.append(f"{len(ts)} threads (warp{'s' if len(warps) > 1 else ''} {_ranges(warps)}; first thread "
                         f"{int(self.tid[t])}) wait at {what}{extra} ({self.code[pc].where()})")
        raise VmTimeout(f"deadlock in CTA {self.ctas[c]}: " + "; ".join(parts) + f"; {n_exit} exited, none can arrive")

    def check_converged(self, ins: Instr, act: np.ndarray, width: int = 32) -> None:
        """``.sync.aligned`` warp (or warpgroup, width 128) collectives: every live thread of each
        group executes the instruction together."""
        if not len(act):
            return
        gid, ngroups = self._groups(width)
        live = self.status != EXITED
        n_act = np.bincount(gid[act], minlength=ngroups)
        n_live = np.bincount(gid[live], minlength=ngroups)
        bad = (n_act > 0) & (n_act != n_live)
        if not bad.any():
            return
        g = int(np.flatnonzero(bad)[0])
        members = np.flatnonzero((gid == g) & live)
        t = int(members[~np.isin(members, act)][0])
        raise VmError(f"{ins.opcode} is .aligned but thread {int(self.tid[t])} of its "
                      f"{'warp' if width == 32 else 'warpgroup'} (CTA {self.ctas[self.cta[t]]}) is at "
                      f"line {self.code[int(self.pc[t])].line if self.pc[t] < len(self.code) else 'exit'}")

    def _groups(self, width: int) -> tuple[np.ndarray, int]:
        """Per thread, the index of its group of ``width`` consecutive threads of a CTA (warp: 32,
        warpgroup: 128) over the chunk, and the number of groups."""
        got = self._group_cache.get(width)
        if got is None:
            per_cta = (self.nthreads_cta + width - 1) // width
            got = (self.cta * per_cta + self.tid // width, per_cta * len(self.ctas))
            self._group_cache[width] = got
        return got

def _ranges(xs: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``0-2,5``: warp lists in one short line."""
    out: list[str] = []
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        out.append(str(xs[i]) if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ",".join(out)


def _convert_int(v: np.ndarray, ty: PtxType) -> np.ndarray:
    if ty.kind == "f":
        raise VmError("special register read as a float")
    src = ptx_type(f"u{v.dtype.itemsize * 8}")
    if src.bits == ty.bits:
        return v.view(ty.dtype)
    return _resize(v, src, ty)


def _resize(bits: np.ndarray, src: PtxType, dst: PtxType) -> np.ndarray:
    """Bits of ``src``'s width as ``dst``: truncation, or zero / sign extension (by ``src``'s
    signedness), as PTX defines operand size mismatches for bit-size and integer types."""
    if dst.kind == "f" and src.kind != "f":
        if src.bits < dst.bits:
            raise VmError(f".{src.name} register read as .{dst.name}")
        return bits.astype(dst.udtype).view(dst.dtype)
    if src.bits > dst.bits:
        out = bits.astype(dst.udtype)
    elif src.signed:
        out = bits.view(src.dtype).astype(np.dtype(f"int{dst.bits}")).view(dst.udtype)
    else:
        out = np.asarray(bits).view(src.udtype).astype(dst.udtype)
    return out.view(dst.dtype)


def values_of(bits: np.ndarray, ty: PtxType) -> np.ndarray:
    return from_bits(bits, ty)

