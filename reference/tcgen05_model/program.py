"""What one CTA's params record describes: the run-time program of a tcgen05 block-scale kernel.

Why this lives in ``reference``: the CPU model must consume *exactly* what the GPU kernel consumes,
so the data structure is defined once, here, and both the kernel packer
(``mmacts.ptx.tcgen05_kernels.pack``) and the model (``reference.tcgen05_model.machine``) read it.
All addresses are relative: shared-memory descriptors to the CTA's image base (the kernel adds the
1024-aligned base), tensor-memory addresses to the allocation base (the kernel adds the allocated
address). The model uses base 0 for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_TIMEOUT_NS = 2_000_000_000


@dataclass
class CtaProgram:
    """Everything one CTA's params record describes (host values, relative addresses)."""

    smem: np.ndarray
    """uint8 shared-memory image (length multiple of 16)."""
    tmem_ncols: int
    preload: np.ndarray
    """uint32 (128, preload_cols): TMEM columns [0, preload_cols) written by tcgen05.st."""
    ld_col0: int
    ld_ncols: int
    """Multiple of 8: the read-back window."""
    cps: Sequence[tuple[int, int, int]] = ()
    """(shape code, relative taddr, relative smem descriptor) per tcgen05.cp (leader only)."""
    mmas: Sequence[MmaOperands] = ()
    timeout_ns: int = DEFAULT_TIMEOUT_NS


@dataclass(frozen=True)
class MmaOperands:
    """Run-time operands of one MMA, addresses relative (smem image base / TMEM allocation base)."""

    a: int
    """A shared-memory descriptor, or the relative A tensor-memory address when A is in TMEM."""
    b_desc: int
    idesc: int
    d_tmem: int
    sfa_tmem: int
    sfb_tmem: int
    enable_input_d: bool
    sp_meta_tmem: int = 0
