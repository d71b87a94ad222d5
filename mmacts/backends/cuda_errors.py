"""Which CUDA errors poison a context: the CUDA runtime's knowledge, kept beside it on the backends floor.

The runtime (:mod:`mmacts.backends.cuda_runtime`) marks itself poisoned when a launch fails with one of these;
the runner's fault containment (:mod:`mmacts.runner.faults`) ends the worker process after recording the case.
Here, below both, so that the backend need not import the runner (issue 25: no import runs upward). No numpy,
no CuPy: the runner reads it in every worker.
"""

from __future__ import annotations

import re

STICKY_CUDA_ERRORS: dict[int, str] = {
    214: "ECC_UNCORRECTABLE",
    700: "ILLEGAL_ADDRESS",
    702: "LAUNCH_TIMEOUT",
    710: "ASSERT",
    714: "HARDWARE_STACK_ERROR",
    715: "ILLEGAL_INSTRUCTION",
    716: "MISALIGNED_ADDRESS",
    717: "INVALID_ADDRESS_SPACE",
    718: "INVALID_PC",
    719: "LAUNCH_FAILED",
}
"""CUDA errors after which the context is unusable (same codes in the driver and runtime APIs)."""

_STICKY_RE = re.compile(
    r"CUDA_ERROR_(?:" + "|".join(STICKY_CUDA_ERRORS.values()) + r")\b"
    r"|cudaError(?:ECCUncorrectable|IllegalAddress|LaunchTimeout|Assert|HardwareStackError|"
    r"IllegalInstruction|MisalignedAddress|InvalidAddressSpace|InvalidPc|LaunchFailure)\b")


def is_sticky_cuda_error(error: BaseException | str | None) -> bool:
    """Whether an exception (or its message) is a sticky CUDA error that poisons the context."""
    if error is None:
        return False
    status = getattr(error, "status", None)
    if isinstance(status, int) and status in STICKY_CUDA_ERRORS:
        return True
    return bool(_STICKY_RE.search(str(error)))
