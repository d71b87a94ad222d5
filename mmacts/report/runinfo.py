"""``run.json``: what ran where, so two runs can be compared and a verdict traced.

Everything is read, never assumed: a field that could not be read says so.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata as md
import os
import platform
import socket
import subprocess
from pathlib import Path
from typing import Any

from mmacts.backends import assembler, gpu
from mmacts.toolchain import calibration

SCHEMA = "mmacts-run/1"
PACKAGES = ("mmacts", "numpy", "pandas", "pyarrow", "ml_dtypes", "cupy-cuda13x", "pytest",
            "pytest-xdist", "nvidia-cuda-nvcc", "nvidia-cuda-nvdisasm", "triton", "nvidia-cutlass")


def now() -> str:
    """UTC timestamp, ISO 8601."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _git_sha(repo: Path) -> str:
    """HEAD of the checkout (``-dirty`` if modified); MMACTS_GIT_SHA names it where no .git travelled."""
    if os.environ.get("MMACTS_GIT_SHA"):
        return os.environ["MMACTS_GIT_SHA"]
    try:
        out = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        sha = out.stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return (sha + ("-dirty" if dirty else "")) if sha else "unknown"
    except Exception:
        return "unknown"


def _versions() -> dict[str, str]:
    out = {}
    for p in PACKAGES:
        try:
            out[p] = md.version(p)
        except md.PackageNotFoundError:
            out[p] = "not installed"
    return out


def _toolchain() -> dict[str, str]:
    try:
        return {"ptxas": assembler.ptxas_version(), "nvdisasm": assembler.nvdisasm_version()}
    except Exception as exc:
        return {"ptxas": f"unavailable: {exc}", "nvdisasm": f"unavailable: {exc}"}


def collect(repo: Path, command: list[str], options: dict[str, Any]) -> dict[str, Any]:
    """Run metadata at the start of a run."""
    g = gpu.probe()
    toolchain = _toolchain()
    warnings = [w for w in (calibration.ptxas_warning(toolchain.get("ptxas")),) if w]
    return {
        "schema": SCHEMA,
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "gpu": {"usable": g.usable, "reason": g.reason, "name": g.name, "compute_capability": g.sm,
                "count": g.count, "driver": g.driver_version,
                "kernel_driver": g.kernel_driver, "cuda_runtime": g.runtime_version},
        "toolchain": toolchain,
        "warnings": warnings,
        "packages": _versions(),
        "git_sha": _git_sha(repo),
        "command": command,
        "options": options,
        "start": now(),
        "end": None,
        "complete": False,
    }
