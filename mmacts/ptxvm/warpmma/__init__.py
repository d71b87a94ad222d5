"""Warp- and warpgroup-level MMA semantics for the PTX VM: pure numpy, register / shared-memory bits in,
register bits out.

* :func:`parse_mma_sync`, :func:`execute_mma_sync` -- ``mma.sync.aligned`` m16n8k32 fp8 (f32/f16 D) and
  ``.block_scale`` kinds mxf8f6f4 / mxf4 / mxf4nvf4 (m16n8k32 / m16n8k64), leading warp batch axes;
* :func:`parse_wgmma`, :func:`execute_wgmma`, :class:`AsyncGroups` -- Hopper ``wgmma`` fp8 / bf16 from
  shared-memory matrix descriptors, and the fence / commit_group / wait_group bookkeeping;
* :mod:`.numerics` -- the one table of which numeric model each path uses (device profiles).

A second, independent reading of the PTX ISA: nothing here imports the project's encoders
(``reference.mma_sync``, ``reference.tcgen05``, ``reference.formats``, ``suites``, ``mmacts.ptx``).
"""

from mmacts.ptxvm.warpmma.mma_sync import MmaSyncForm, execute_mma_sync, parse_mma_sync
from mmacts.ptxvm.warpmma.numerics import DEVICE_PROFILES
from mmacts.ptxvm.warpmma.wgmma import (
    AsyncGroups,
    MatrixDescriptor,
    WgmmaForm,
    WgmmaSyncOp,
    decode_descriptor,
    execute_wgmma,
    parse_wgmma,
)

__all__ = [
    "DEVICE_PROFILES",
    "AsyncGroups",
    "MatrixDescriptor",
    "MmaSyncForm",
    "WgmmaForm",
    "WgmmaSyncOp",
    "decode_descriptor",
    "execute_mma_sync",
    "execute_wgmma",
    "parse_mma_sync",
    "parse_wgmma",
]
