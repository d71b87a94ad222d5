"""The state spaces one launch addresses: shared (per CTA, and across the cluster), local (per thread), the
parameter block, global, and generic addresses that fall in one of their windows.

Why a unit of its own: every load and store of a handler goes through :meth:`StateSpaces.load` /
:meth:`StateSpaces.store`, which bounds-check, alignment-check and name the faulting address and thread
(:class:`~mmacts.ptxvm.errors.VmMemoryFault`), never read out of range silently.
"""

from __future__ import annotations

import numpy as np

from mmacts.ptxvm.errors import VmMemoryFault, VmUnsupported
from mmacts.ptxvm.memory import (
    CLUSTER_RANK_SHIFT,
    LOCAL_WINDOW,
    PARAM_WINDOW,
    SHARED_OFFSET_MASK,
    SHARED_WINDOW,
    WINDOW_SIZE,
    check_aligned,
)
from mmacts.ptxvm.parse import Instr


class StateSpaces:
    """Loads and stores of the active threads in every state space.

    Mixed into :class:`~mmacts.ptxvm.machine.Machine`: the methods read and change the launch state
    that ``Machine.__post_init__`` builds (thread index arrays, registers, memories, barrier tables)."""

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
