"""The PTX virtual machine: the ``model`` backend executes the generated kernels themselves.

Layers: ``parse`` (PTX text -> module, entries, instructions) -> ``machine`` (SIMT scheduler,
registers, barriers) with ``memory`` (global, shared, params) -> instruction families
(``ops_core``; ``ops_tcgen05`` with ``tcgen05/`` semantics; ``ops_warpmma`` with ``warpmma/``)
-> ``runtime`` (the device the drivers' ``launch`` launches on). ``trace`` prints what chosen
threads did, instruction by instruction.
"""

from mmacts.ptxvm.errors import VmError, VmHazard, VmMemoryFault, VmTimeout, VmUnsupported
from mmacts.ptxvm.runtime import VmModule, VmOutcome, load_module

__all__ = ["VmError", "VmHazard", "VmMemoryFault", "VmModule", "VmOutcome", "VmTimeout", "VmUnsupported",
           "load_module"]
