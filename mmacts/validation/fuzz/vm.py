"""Run one fuzz kernel on the PTX VM exactly as the GPU runs it (same PTX, inputs, 0xFF-filled output)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mmacts.ptxvm.runtime import load_module
from mmacts.validation.fuzz.generate import THREADS


@dataclass
class VmRun:
    """The VM's answer: status ``ok`` / ``error`` / ``timeout``, its message, the output words
    (``uint64[threads, n_out]``, ``None`` unless ok), and how much work it was."""

    status: str
    message: str
    out: np.ndarray | None
    steps: int = 0
    thread_instructions: int = 0

    @property
    def refused(self) -> bool:
        """The VM declined a form it does not model exactly (``VmUnsupported``): counted, not a match."""
        return self.status == "error" and self.message.startswith("PTX VM unsupported")


def run_vm(ptx: str, inputs: np.ndarray, n_out: int, entry: str = "fz", grid: tuple[int, int, int] = (1, 1, 1),
           block: tuple[int, int, int] = (THREADS, 1, 1), n_param: int | None = None) -> VmRun:
    """Launch ``entry`` over ``grid`` x ``block`` on a fresh VM device, exactly as the GPU ran it."""
    try:
        mod = load_module(ptx, "sm_90a")
    except Exception as exc:  # a module the VM cannot even parse is a VM finding, not a crash here
        return VmRun("error", f"PTX VM parse: {type(exc).__name__}: {exc}", None)
    threads = int(np.prod(grid)) * int(np.prod(block))
    d_in = mod.rt.to_device(np.ascontiguousarray(inputs))
    d_out = mod.rt.empty((threads, max(n_out, 1)), np.uint64)
    args = [d_in, d_out] + ([np.uint32(n_param)] if n_param is not None else [])
    res = mod.launch(entry, grid, block, args)
    out = mod.rt.to_host(d_out)[:, :n_out] if res.status == "ok" else None
    return VmRun(res.status, res.message, out, res.steps, res.thread_instructions)
