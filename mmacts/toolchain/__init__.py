"""ptxas / nvdisasm from the NVIDIA wheels, the compile cache and the SASS fingerprint.

Public API::

    find_tool(tool) -> Path                    # ToolchainMissing names the pip package
    ptxas_version() / nvdisasm_version() -> str
    assemble(ptx, arch, flags=()) -> CompileResult(ok, cubin, first_error_line, log, seconds, cached, ...)
    sass(cubin) -> SassInfo(opcodes: Counter, mma_opcode: str); .summary() -> "UTCQMMA:1 UTCBAR:1"
    check_compile_case(case, ptx) -> dict(status, message, compile_s, cached, sass_opcodes,
                                          mma_opcode, ptxas_version)
    cache_dir()                                # $MMACTS_CACHE_DIR or ./.mmacts-cache
"""

from mmacts.toolchain.assemble import CompileResult, assemble
from mmacts.toolchain.cache import CACHE_ENV, DiskCache, cache_dir
from mmacts.toolchain.conformance import UNDER_TEST_MARK, check_compile_case
from mmacts.toolchain.locate import (
    ToolchainMissing,
    find_tool,
    nvdisasm_version,
    ptxas_version,
)
from mmacts.toolchain.sass import SassInfo, sass

__all__ = [
    "CACHE_ENV",
    "CompileResult",
    "DiskCache",
    "SassInfo",
    "ToolchainMissing",
    "UNDER_TEST_MARK",
    "assemble",
    "cache_dir",
    "check_compile_case",
    "find_tool",
    "nvdisasm_version",
    "ptxas_version",
    "sass",
]
