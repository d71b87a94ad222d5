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

CP_CODES: dict[int, tuple[str, str | None, str | None]] = {
    0: ("32x128b", "warpx4", None),          # CUTLASS's scale-factor copy
    1: ("64x128b", "warpx2::01_23", None),   # the CuTe DSL's Layout-B SFB copy
    2: ("64x128b", "warpx2::02_13", None),
    3: ("128x128b", None, None),
    4: ("128x256b", None, None),
    5: ("128x128b", None, "b4x16_p64"),      # decompressing copies (9.7.16.9.1)
    6: ("128x128b", None, "b6x16_p32"),
    7: ("32x128b", "warpx4", "b4x16_p64"),
    8: ("32x128b", "warpx4", "b6x16_p32"),
}
"""Run-time ``tcgen05.cp`` codes of ``CtaProgram.cps``: (shape, multicast, source format of a
``.b8x16.<src>`` decompression or None). The kernel emits one predicated cp per code; the model
executes the same code with ``reference.tcgen05.cp_decompress.cp_to_tmem``."""


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
    smem_patch: np.ndarray | None = None
    """``a_overwrite`` kernels: bytes written over the image start after the first MMA completed."""


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
    disable_output_lane: tuple[int, ...] | None = None
    """The 4 (cta_group::1) 32-bit words of a plain-kind MMA's disable-output-lane vector (None: no operand)."""
