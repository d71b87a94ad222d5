"""The VM's memory spaces: global buffers, per-CTA shared memory, the kernel parameter block.

Why bounds checks on every access: an out-of-range or misaligned access in a kernel is a harness
bug that a real GPU may hide (the address happens to be mapped) or report far from its cause. The
VM reports it at the instruction, with the thread and the address, as compute-sanitizer would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mmacts.ptxvm.errors import VmMemoryFault

GLOBAL_BASE = 0x7F00_0000_0000
"""Where the first global buffer lives (a plausible 64-bit device address, never 0)."""
GLOBAL_ALIGN = 256

SHARED_WINDOW = 0x7E00_0000_0000
"""Generic address of shared::cluster address 0 (``cvta.shared``: a shared address plus this); the window is
:data:`WINDOW_SIZE` bytes, below the global buffers. A generic address in it may name any CTA of the cluster
(distributed shared memory), by the rank bits of the shared address."""
CLUSTER_RANK_SHIFT = 24
"""A 32-bit shared address carries the CTA's rank in its cluster in the bits from here up, its byte offset in
that CTA's shared memory below: ``(rank << CLUSTER_RANK_SHIFT) | offset``. So a shared variable's address, and
``cvta.to.shared`` of its generic address, in cluster rank 1 is ``0x0100_0000 + offset``, and CUTLASS finds the
even (leader) CTA's barrier of a 2-CTA pair with ``addr & 0xFEFFFFFF``. The one place the VM's layout is
named. Confirmed on an H100 (``validation/probes/cluster_shared_addresses``, ``cluster-rank-lead``; the cluster
kernels of ``validation/silicon/h100-2026-11-25-cluster`` match bit for bit). Not modelled: sm_90 reserves the
first 1 KiB of a CTA's window (its first variable sits at 0x400); the VM's start at 0. A non-cluster launch has
rank 0: its addresses are plain offsets, as before."""
SHARED_OFFSET_MASK = (1 << CLUSTER_RANK_SHIFT) - 1
LOCAL_WINDOW = 0x7D00_0000_0000
"""Generic address of byte 0 of the executing thread's local memory (``cvta.local``)."""
PARAM_WINDOW = 0x7C00_0000_0000
"""Generic address of byte 0 of the kernel's parameter block (``cvta.param``). Why: nvcc hands a
``__grid_constant__`` parameter (a CUtensorMap) to ``cp.async.bulk.tensor`` / ``prefetch.tensormap`` and to
plain loads as ``mov.b64 %rd, k_param_0; cvta.param.u64 %rd, %rd``. The window is read-only: a generic
store into it is a fault."""
WINDOW_SIZE = 1 << 32


@dataclass
class DeviceArray:
    """A buffer in the VM's global memory: ``host`` holds its bytes, ``base`` its device address.

    It stands where a CuPy array stands in the cuda backend: the drivers allocate with
    ``rt.to_device`` / ``rt.empty``, pass it as a kernel argument (its address) and read it back
    with ``rt.to_host``.
    """

    host: np.ndarray
    base: int

    @property
    def shape(self) -> tuple[int, ...]:
        return self.host.shape

    @property
    def dtype(self) -> np.dtype:
        return self.host.dtype

    @property
    def nbytes(self) -> int:
        return self.host.nbytes

    def get(self, stream: Any = None) -> np.ndarray:
        return self.host.copy()


@dataclass
class GlobalMemory:
    """All buffers of one VM runtime, addressed by device address."""

    buffers: list[DeviceArray] = field(default_factory=list)
    _next: int = GLOBAL_BASE
    _bounds_of: tuple[int, int] = (-1, 0)
    _bounds_cache: tuple[np.ndarray, np.ndarray] = field(default=(np.zeros(0, np.uint64), np.zeros(0, np.uint64)))

    def allocate(self, host: np.ndarray) -> DeviceArray:
        arr = np.ascontiguousarray(host).copy()
        d = DeviceArray(arr, self._next)
        self._next += (max(arr.nbytes, 1) + GLOBAL_ALIGN - 1) // GLOBAL_ALIGN * GLOBAL_ALIGN + GLOBAL_ALIGN
        self.buffers.append(d)
        return d

    def _bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(bases, ends) of the buffers, rebuilt only when the list changed (buffers are only ever appended)."""
        key = (len(self.buffers), self.buffers[-1].base if self.buffers else 0)
        if self._bounds_of != key:
            self._bounds_cache = (np.array([b.base for b in self.buffers], dtype=np.uint64),
                                  np.array([b.base + b.nbytes for b in self.buffers], dtype=np.uint64))
            self._bounds_of = key
        return self._bounds_cache

    def _locate(self, addrs: np.ndarray, nbytes: int, what: str) -> tuple[np.ndarray, np.ndarray]:
        bases, ends = self._bounds()
        idx = np.searchsorted(bases, addrs, side="right") - 1
        bad = (idx < 0)
        idx = np.maximum(idx, 0)
        if len(self.buffers):
            bad |= (addrs + np.uint64(nbytes)) > ends[idx]
        else:
            bad[:] = True
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise VmMemoryFault(f"out-of-bounds global {what} of {nbytes} bytes at address {int(addrs[i]):#x}"
                                f"@thread{i}")
        return idx, addrs - bases[idx]

    def load(self, addrs: np.ndarray, nbytes: int) -> np.ndarray:
        """(n, nbytes) uint8 read at ``addrs`` (uint64)."""
        idx, off = self._locate(addrs, nbytes, "load")
        if len(idx) and (idx == idx[0]).all():  # one buffer (the usual case): one gather
            flat = self.buffers[int(idx[0])].host.reshape(-1).view(np.uint8)
            return flat[off.astype(np.int64)[:, None] + np.arange(nbytes)]
        out = np.empty((len(addrs), nbytes), dtype=np.uint8)
        for b in np.unique(idx):
            sel = idx == b
            flat = self.buffers[int(b)].host.reshape(-1).view(np.uint8)
            out[sel] = flat[off[sel].astype(np.int64)[:, None] + np.arange(nbytes)]
        return out

    def store(self, addrs: np.ndarray, data: np.ndarray) -> None:
        """Write (n, nbytes) uint8 rows at ``addrs``; later rows win where two threads collide."""
        nbytes = data.shape[1]
        idx, off = self._locate(addrs, nbytes, "store")
        if len(idx) and (idx == idx[0]).all():  # one buffer (the usual case): one scatter
            flat = self.buffers[int(idx[0])].host.reshape(-1).view(np.uint8)
            flat[off.astype(np.int64)[:, None] + np.arange(nbytes)] = data
            return
        for b in np.unique(idx):
            sel = idx == b
            flat = self.buffers[int(b)].host.reshape(-1).view(np.uint8)
            flat[off[sel].astype(np.int64)[:, None] + np.arange(nbytes)] = data[sel]


def check_aligned(addrs: np.ndarray, nbytes: int, space: str) -> None:
    """Natural alignment of every access (PTX requires it: a misaligned access faults)."""
    if nbytes & (nbytes - 1) == 0:
        mis = (addrs & np.uint64(nbytes - 1)) != 0
    else:
        mis = (addrs % np.uint64(nbytes)) != 0
    if mis.any():
        i = int(np.flatnonzero(mis)[0])
        raise VmMemoryFault(f"misaligned {space} access of {nbytes} bytes at address {int(addrs[i]):#x}@thread{i}")


@dataclass
class SharedLayout:
    """Where each ``.shared`` variable lives in a CTA's shared window."""

    offsets: dict[str, int]
    static_bytes: int
    dynamic_name: str | None
    dynamic_offset: int

    @staticmethod
    def build(variables: list[Any], space: str = "shared") -> SharedLayout:
        """Offsets of the ``space`` variables (``shared``, or ``local`` for a thread's local window)."""
        off = 0
        offsets: dict[str, int] = {}
        dyn_name, dyn_align = None, 16
        for v in variables:
            if v.space != space:
                continue
            if v.extern:
                dyn_name, dyn_align = v.name, max(v.align, 16)
                continue
            off = (off + v.align - 1) // v.align * v.align
            offsets[v.name] = off
            off += v.size
        dyn_off = (off + dyn_align - 1) // dyn_align * dyn_align
        if dyn_name is not None:
            offsets[dyn_name] = dyn_off
        return SharedLayout(offsets, off, dyn_name, dyn_off)
