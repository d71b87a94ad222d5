"""The VM as a device: load a PTX module, allocate buffers, launch, read back.

Why this mirrors ``mmacts.backends.cuda_runtime``: the ``model`` backend must run *exactly* the
module and launch the ``cuda`` backend runs. A suite driver's ``launch`` receives either a
CuPy-backed module or a :class:`VmModule`; both offer ``rt.to_device`` / ``rt.empty`` /
``rt.to_host``, ``rt.info.compute_capability`` and ``launch(entry, grid, block, args,
shared_mem=...)`` returning an outcome with ``status`` ``ok`` / ``timeout`` / ``error`` and a
one-line ``message``. So the PTX text, the kernel parameters, the buffers and the host-side
decoding are the same code on both backends; only the executor differs.

A launch runs whole clusters of CTAs together (as many as fit :data:`THREADS_PER_CHUNK`), chunk
after chunk; CTAs of different clusters never communicate, except through global memory, which the
kernels of this suite do not do between CTAs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# every instruction family registers its handlers (mmacts.ptxvm.handlers) on import, before a machine runs
from mmacts.ptxvm import (  # noqa: F401
    ops_bulk,
    ops_core,
    ops_more,
    ops_system,
    ops_tcgen05,
    ops_warp,
    ops_warpmma,
)
from mmacts.ptxvm.errors import VmError, VmTimeout
from mmacts.ptxvm.machine import LaunchConfig, Machine
from mmacts.ptxvm.memory import DeviceArray, GlobalMemory
from mmacts.ptxvm.parse import Module, parse_module

THREADS_PER_CHUNK = 8192
"""Threads executed as one numpy vector (whole clusters); bounds the memory of one chunk."""

ARCH_CC: dict[str, tuple[int, int]] = {
    "sm_90": (9, 0), "sm_90a": (9, 0), "sm_100a": (10, 0), "sm_100f": (10, 0), "sm_101a": (10, 1),
    "sm_103a": (10, 3), "sm_103f": (10, 3), "sm_110a": (11, 0), "sm_120a": (12, 0), "sm_120f": (12, 0),
    "sm_121a": (12, 1),
}


@dataclass(frozen=True)
class VmDeviceInfo:
    """What a report records about the "device": the VM standing in for ``arch``."""

    name: str
    compute_capability: tuple[int, int]
    arch: str
    driver_version: int = 0
    runtime_version: int = 0
    index: int = 0
    count: int = 1


@dataclass
class VmOutcome:
    """One launch: ``ok`` / ``timeout`` / ``error``, a one-line message, execution statistics."""

    status: str
    kernel_us: float | None = None
    message: str = ""
    steps: int = 0
    """Scheduler steps: one instruction executed by the threads standing at it (a warp or more)."""
    thread_instructions: int = 0
    """Instructions executed summed over threads (a thread whose guard predicate is false skips it)."""
    wall_s: float = 0.0


@dataclass
class VmRuntime:
    """Global memory of the virtual device, with the CuPy-runtime calls the drivers use."""

    info: VmDeviceInfo
    gmem: GlobalMemory = field(default_factory=GlobalMemory)

    def to_device(self, array: np.ndarray) -> DeviceArray:
        return self.gmem.allocate(np.ascontiguousarray(array))

    def empty(self, shape: Sequence[int], dtype: Any) -> DeviceArray:
        host = np.empty(tuple(shape), dtype=dtype)
        host.view(np.uint8).reshape(-1)[:] = 0xFF  # visible if never written, as the cuda runtime does
        return self.gmem.allocate(host)

    def to_host(self, array: DeviceArray) -> np.ndarray:
        return array.host.copy()

    def check_usable(self) -> None:
        return None


@dataclass
class VmModule:
    """A parsed PTX module bound to a :class:`VmRuntime`: what ``Driver.launch`` receives."""

    ptx: str
    module: Module
    rt: VmRuntime
    profile: Any = None
    trace: Any = None
    max_steps: int = 3_000_000
    last: VmOutcome | None = None
    raw: Any = None

    def launch(self, entry: str, grid: Sequence[int], block: Sequence[int], args: Sequence[Any], *,
               shared_mem: int = 0, timeout_s: float | None = None) -> VmOutcome:
        """Execute ``entry`` over the grid; never raises for a kernel fault (the outcome says)."""
        t0 = time.perf_counter()
        try:
            steps, ti = self._launch(entry, _dim3(grid), _dim3(block), args, int(shared_mem))
            out = VmOutcome("ok", None, "", steps, ti)
        except VmTimeout as exc:
            out = VmOutcome("timeout", None, f"PTX VM: {exc}")
        except VmError as exc:
            out = VmOutcome("error", None, f"PTX VM {exc.kind}: {exc}")
        except Exception as exc:  # noqa: BLE001 -- a VM defect must never escape launch()
            # inside an instruction the machine already made it a VmError naming the instruction, CTA and
            # thread (Machine.run); what reaches here came from the launch set-up or the kernel-end hooks
            out = VmOutcome("error", None, f"PTX VM bug: {type(exc).__name__}: {exc} (launch set-up or kernel end)")
        out.wall_s = time.perf_counter() - t0
        self.last = out
        return out

    def _launch(self, entry_name: str, grid: tuple[int, int, int], block: tuple[int, int, int],
                args: Sequence[Any], shared_mem: int) -> tuple[int, int]:
        entry = self.module.entries.get(entry_name)
        if entry is None:
            raise VmError(f"module has no entry {entry_name!r}")
        nthr = block[0] * block[1] * block[2]
        if nthr == 0 or grid[0] * grid[1] * grid[2] == 0:
            raise VmError("empty grid or block")
        for key in ("maxntid", "reqntid"):
            lim = entry.directives.get(key)
            if lim:
                cap = int(np.prod(lim))
                if (key == "maxntid" and nthr > cap) or (key == "reqntid" and tuple(block[:len(lim)]) != lim):
                    raise VmError(f"launch block {block} violates .{key} {', '.join(map(str, lim))}")
        if nthr > 1024:
            raise VmError(f"block of {nthr} threads exceeds 1024")
        cluster = entry.directives.get("reqnctapercluster") or (1, 1, 1)
        cluster = tuple(cluster) + (1,) * (3 - len(cluster))
        for g, c in zip(grid, cluster, strict=True):
            if g % c:
                raise VmError(f"grid {grid} is not a multiple of the cluster shape {cluster}")
        params, offsets = _param_block(entry, args)
        cfg = LaunchConfig(grid, block, cluster, shared_mem, self.module.target)  # type: ignore[arg-type]
        ncta = grid[0] * grid[1] * grid[2]
        csize = int(np.prod(cluster))
        per_chunk = max(csize, (THREADS_PER_CHUNK // nthr) // csize * csize)
        # CTAs of one cluster must be in one chunk: order CTAs by cluster
        order = _cluster_order(grid, cluster)
        steps = ti = 0
        for start in range(0, ncta, per_chunk):
            ctas = order[start:start + per_chunk]
            m = Machine(self.module, entry, cfg, self.rt.gmem, params, offsets, list(ctas), self.profile,
                        self.trace, self.max_steps)
            m.run()
            m.notify("kernel_end")
            steps += m.steps
            ti += m.thread_instructions
        return steps, ti


def _dim3(d: Sequence[int] | int) -> tuple[int, int, int]:
    if isinstance(d, int | np.integer):
        return (int(d), 1, 1)
    t = tuple(int(x) for x in d)
    return (t + (1, 1, 1))[:3]  # type: ignore[return-value]


def _cluster_order(grid: tuple[int, int, int], cluster: tuple[int, ...]) -> list[int]:
    gx, gy, gz = grid
    cx, cy, cz = cluster
    out = []
    for zz in range(0, gz, cz):
        for yy in range(0, gy, cy):
            for xx in range(0, gx, cx):
                for z in range(zz, zz + cz):
                    for y in range(yy, yy + cy):
                        for x in range(xx, xx + cx):
                            out.append(x + gx * (y + gy * z))
    return out


def _param_block(entry: Any, args: Sequence[Any]) -> tuple[np.ndarray, dict[str, int]]:
    """The kernel parameter bytes, laid out by the ``.param`` list (natural alignment)."""
    if len(args) != len(entry.params):
        raise VmError(f"{entry.name} takes {len(entry.params)} parameters, the launch passed {len(args)}")
    off = 0
    offsets: dict[str, int] = {}
    chunks: list[tuple[int, bytes]] = []
    for p, a in zip(entry.params, args, strict=True):
        off = (off + p.align - 1) // p.align * p.align
        offsets[p.name] = off
        if isinstance(a, DeviceArray):
            if p.size != 8:
                raise VmError(f"parameter {p.name} (.{p.type}) receives a pointer")
            data = np.uint64(a.base).tobytes()
        elif isinstance(a, np.ndarray) and a.ndim > 0:
            raise VmError(f"parameter {p.name}: a host array was passed; allocate it with rt.to_device")
        else:
            v = np.asarray(a)
            if v.dtype.itemsize != p.size:
                raise VmError(f"parameter {p.name} (.{p.type}, {p.size} bytes) receives a {v.dtype} "
                              f"({v.dtype.itemsize} bytes)")
            data = v.tobytes()
        chunks.append((off, data))
        off += p.size
    buf = np.zeros(max(off, 1), dtype=np.uint8)
    for o, d in chunks:
        buf[o:o + len(d)] = np.frombuffer(d, dtype=np.uint8)
    return buf, offsets


def load_module(ptx: str, arch: str | None = None, *, profile: Any = None, trace: Any = None,
                max_steps: int = 3_000_000) -> VmModule:
    """Parse ``ptx`` into a module of a fresh virtual device of ``arch`` (default: the module's
    ``.target``)."""
    mod = parse_module(ptx)
    arch = arch or mod.target
    cc = ARCH_CC.get(arch)
    if cc is None:
        raise VmError(f"the VM does not model target {arch}")
    info = VmDeviceInfo(f"PTX VM ({arch})", cc, arch)
    return VmModule(ptx, mod, VmRuntime(info), profile, trace, max_steps)
