"""The backends' view of the toolchain layer: assemble, fingerprint, version.

One narrow facade so the generic executor does not depend on how
``mmacts.toolchain`` is organised inside.
"""

from __future__ import annotations

from typing import Any

from mmacts.cases.model import Case
from mmacts.toolchain.assemble import CompileResult
from mmacts.toolchain.assemble import assemble as _assemble
from mmacts.toolchain.conformance import check_compile_case as _check
from mmacts.toolchain.locate import nvdisasm_version as _nvdisasm_version
from mmacts.toolchain.locate import ptxas_version as _ptxas_version
from mmacts.toolchain.sass import sass as _sass


def assemble(ptx: str, arch: str) -> CompileResult:
    """Assemble through the on-disk cache."""
    return _assemble(ptx, arch)


def sass_summary(cubin: bytes) -> str:
    """Short SASS fingerprint, e.g. ``QMMA.SF.16832.F32.E4M3.E2M1.E8:1``."""
    return _sass(cubin).summary()


def ptxas_version() -> str:
    """ptxas version string (raises ToolchainMissing naming the wheel when absent)."""
    return _ptxas_version()


def nvdisasm_version() -> str:
    """nvdisasm version string."""
    return _nvdisasm_version()


def check_compile_case(case: Case, ptx: str) -> dict[str, Any]:
    """Toolchain-conformance verdict of a compile case (accept/reject vs what ptxas did)."""
    return _check(case, ptx)
