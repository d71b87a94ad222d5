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

Where each part lives: this module builds the state of one chunk (:class:`Machine`: the thread index arrays,
registers, shared / local memory, barrier tables); the methods that read and change it are grouped by concern
into the classes it combines: :class:`~mmacts.ptxvm.operands.Operands` (registers, special registers,
addresses), :class:`~mmacts.ptxvm.spaces.StateSpaces` (loads and stores in each state space),
:class:`~mmacts.ptxvm.hazards.Hazards` (pending asynchronous registers, unfenced async-proxy reads),
:class:`~mmacts.ptxvm.scheduler.Scheduler` (the execution loop, spinning waits) and
:class:`~mmacts.ptxvm.barriers.Barriers` (barriers, warp sync, deadlocks). Handlers and the instruction
families call them all as methods of the one machine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mmacts.ptxvm.barriers import Barriers
from mmacts.ptxvm.errors import VmError
from mmacts.ptxvm.hazards import Hazards
from mmacts.ptxvm.memory import GlobalMemory, SharedLayout
from mmacts.ptxvm.operands import Operands
from mmacts.ptxvm.parse import Entry, Instr, Module
from mmacts.ptxvm.ptxtypes import PtxType, ptx_type
from mmacts.ptxvm.scheduler import Scheduler
from mmacts.ptxvm.spaces import StateSpaces

MAX_SHARED_BYTES = 232448
"""Largest shared memory per CTA on sm_90 / sm_100 (227 KiB): a launch asking for more fails."""


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
class Machine(Operands, Hazards, StateSpaces, Scheduler, Barriers):
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
        """Registers written by an asynchronous load (``tcgen05.ld``) not yet waited for."""
        self.ld_read: dict[str, np.ndarray] = {}
        """Per pending tcgen05.ld destination register, the threads that have read it since the load: their
        part of the load has read Tensor Memory (a later dealloc need not wait for it), though the register
        stays pending for an overwrite (AMB-TCGEN05-LD-NO-WAIT-DEALLOC)."""
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

    # ------------------------------------------------------------------------------ instruction families
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
