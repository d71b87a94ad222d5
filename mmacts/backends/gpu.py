"""Is there a GPU we can use, and what is it?

CuPy importing is not the same as a GPU answering: on a CPU machine with the
CuPy wheel installed, the first runtime call raises (cudaErrorInsufficientDriver
or no device). That is a normal situation, so it becomes a reason string that
the cuda backend turns into ``skip``, never a crash.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuStatus:
    """What the probe found."""

    usable: bool
    reason: str = ""
    name: str = ""
    compute_capability: tuple[int, int] = (0, 0)
    driver_version: str = ""
    """CUDA driver API version (e.g. ``13.0``)."""
    kernel_driver: str = ""
    """The kernel module's version (e.g. ``580.159.04``), read from /proc where Linux exposes it."""
    runtime_version: str = ""
    count: int = 0

    @property
    def sm(self) -> str:
        """``sm_90`` style name of the compute capability."""
        major, minor = self.compute_capability
        return f"sm_{major}{minor}" if major else ""


def kernel_driver_version() -> str:
    """NVIDIA kernel-driver version from /proc/driver/nvidia/version, '' where absent."""
    try:
        text = open("/proc/driver/nvidia/version", encoding="utf-8").read()
    except OSError:
        return ""
    m = re.search(r"Kernel Module\s+(?:for\s+\S+\s+)?([\d.]+)", text)
    return m.group(1) if m else ""


def _fmt_cuda_version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}" if v else ""


def nvidia_present() -> bool:
    """Whether this machine has an NVIDIA kernel driver or device node at all (Linux)."""
    return os.path.exists("/proc/driver/nvidia") or any(
        os.path.exists(f"/dev/{n}") for n in ("nvidiactl", "nvidia0", "dxg"))  # dxg: WSL2


def plain_reason(reason: str) -> str:
    """The probe's error in words a user of a machine without a GPU understands: the CUDA runtime
    answers "driver version is insufficient" when there is no driver at all, which sent people to
    upgrade a driver they do not have (issue 24). Where the machine has one, the error is kept."""
    if sys.platform.startswith("linux") and not nvidia_present():
        return "no GPU (no NVIDIA driver or device on this machine)"
    return reason


@functools.lru_cache(maxsize=1)
def probe() -> GpuStatus:
    """Probe the first visible GPU once per process (MMACTS_NO_GPU=1 forces 'none').

    The device query itself is :func:`mmacts.backends.cuda_runtime.probe` (one place asks CuPy);
    this adds what the reports need: readable versions and the kernel driver.
    """
    if os.environ.get("MMACTS_NO_GPU") == "1":
        return GpuStatus(False, "disabled by MMACTS_NO_GPU=1")
    from mmacts.backends.cuda_runtime import probe as device_probe  # numpy and the CUDA runtime: not at the CLI's start

    info = device_probe(0)
    if isinstance(info, str):
        return GpuStatus(False, plain_reason(info.removeprefix("no usable GPU: ")))
    return GpuStatus(
        usable=True, name=info.name, compute_capability=info.compute_capability,
        driver_version=_fmt_cuda_version(info.driver_version),
        runtime_version=_fmt_cuda_version(info.runtime_version),
        kernel_driver=kernel_driver_version(), count=info.count,
    )
