"""tcgen05 semantics for the PTX VM: pure numpy functions the executor calls.

A second, independent reading of the spec (PTX ISA 9.7.16): descriptors are decoded from the spec
catalog (``mmacts.spec``), layouts from the spec text and the CUTLASS notes; nothing is shared with
the host encoders (``reference.tcgen05``) or the old model (``reference.tcgen05_model``).

Modules: ``decode`` (idesc, smem descriptor), ``smem_operand`` (operands through a descriptor), ``tmem_operand``
(A and the sparsity metadata in TMEM), ``datapath`` (what every tcgen05.mma shares: K, layouts, D),
``tmem`` (addresses, ld/st maps, quadrant rule), ``alloc`` (column allocator), ``cp`` (tcgen05.cp),
``mma`` (block-scaled tcgen05.mma{.sp}), ``mma_plain`` (kinds f16/tf32/f8f6f4/i8, .ws),
``collector`` (the A/B collector buffers), ``shift`` (tcgen05.shift).
"""

from .alloc import WOULD_BLOCK, TmemAllocator
from .collector import Collector
from .cp import CpFootprint, execute_cp
from .datapath import MmaFootprint
from .decode import decode_idesc, decode_smem_desc
from .mma import execute_mma
from .mma_plain import execute_mma_plain
from .shift import execute_shift, shift_cells
from .smem_operand import read_operand
from .tmem import ld_st_map, quadrant_violations, split_taddr, tcgen05_ld, tcgen05_st

__all__ = [
    "WOULD_BLOCK", "TmemAllocator", "CpFootprint", "execute_cp", "decode_idesc", "decode_smem_desc",
    "MmaFootprint", "execute_mma", "execute_mma_plain", "Collector", "execute_shift", "shift_cells",
    "read_operand", "ld_st_map",
    "quadrant_violations", "split_taddr",
    "tcgen05_ld", "tcgen05_st",
]
