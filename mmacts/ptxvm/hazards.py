"""Hazards of one launch the VM detects rather than approximates: registers an asynchronous operation has not
completed (``tcgen05.ld``, ``wgmma``), and shared memory the async proxy reads before a ``fence.proxy.async``.

Why a unit of its own: these are the ordering rules of the ISA that a kernel can break without any wrong value
on one GPU run; the VM raises :class:`~mmacts.ptxvm.errors.VmHazard` naming the rule, or takes the reading a
launch's profile names for an open question (:meth:`Hazards.reading`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mmacts.ptxvm.errors import VmHazard
from mmacts.ptxvm.parse import Instr

LD_OVERWRITE_REGISTER = "AMB-TCGEN05-LD-NO-WAIT-OVERWRITE"
"""Register entry: may a tcgen05.ld destination register, read since the load, be overwritten before
tcgen05.wait::ld? The VM's default reading is wait-required; ``{"readings": {LD_OVERWRITE_REGISTER:
"register-read-completes"}}`` in a launch's profile allows it (:meth:`Hazards._ld_overwrite`)."""


class Hazards:
    """Pending asynchronous registers and unfenced shared-memory reads.

    Mixed into :class:`~mmacts.ptxvm.machine.Machine`: the methods read and change the launch state
    that ``Machine.__post_init__`` builds (thread index arrays, registers, memories, barrier tables)."""

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
