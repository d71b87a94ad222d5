"""The scheduler of one launch: which threads run the next instruction, the step budget, spinning waits and the
virtual time they advance, and the deadlock of threads that spin forever.

The rule (see :mod:`mmacts.ptxvm.machine`): repeatedly pick the smallest program counter among the runnable
threads and execute that instruction for every thread standing there; a thread whose wait failed yields to every
other runnable thread. Barriers, which block and release threads, are :mod:`mmacts.ptxvm.barriers`.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from mmacts.ptxvm.errors import VmError, VmTimeout, VmUnsupported
from mmacts.ptxvm.handlers import HANDLERS, Handler, handler_names
from mmacts.ptxvm.parse import Instr

RUN, BLOCKED, EXITED = 0, 1, 2
"""A thread's ``status``: runnable, waiting at a barrier, exited."""

STEP_NS = 4
"""Virtual nanoseconds per scheduler step (``%globaltimer``)."""
SUSPEND_NS = 10_000_000
"""Virtual time a failing ``mbarrier.try_wait`` suspends for when no other thread can run."""


class Scheduler:
    """The execution loop and its spin-wait bookkeeping.

    Mixed into :class:`~mmacts.ptxvm.machine.Machine`: the methods read and change the launch state
    that ``Machine.__post_init__`` builds (thread index arrays, registers, memories, barrier tables)."""

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
