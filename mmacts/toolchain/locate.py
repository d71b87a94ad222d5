"""Find ptxas and nvdisasm inside the installed NVIDIA pip wheels, and read their versions.

Why only the wheels: a conformance verdict is a statement about one pinned toolchain. A system
CUDA (``/usr/local/cuda``, ``$PATH``) is whatever the machine happens to have; mixing it in would
make two runs of the same case disagree for reasons no report records. So the search looks only
inside the ``nvidia`` namespace package that ``nvidia-cuda-nvcc`` (ptxas) and
``nvidia-cuda-nvdisasm`` (nvdisasm) install, and says which pip package to install when absent.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

TOOL_PACKAGES: dict[str, str] = {
    "ptxas": "nvidia-cuda-nvcc",
    "nvdisasm": "nvidia-cuda-nvdisasm",
}
"""The pip package that ships each tool."""

_WHEEL_SUBDIRS: tuple[str, ...] = ("cu13/bin", "cuda_nvcc/bin", "cuda_nvdisasm/bin", "cu12/bin")
"""Layouts of the wheels: CUDA 13 wheels share ``nvidia/cu13/bin``; CUDA 12 wheels use one
folder per component."""


class ToolchainMissing(RuntimeError):
    """A tool is not installed from its NVIDIA wheel. The message names the pip package."""

    def __init__(self, tool: str, searched: Sequence[Path]):
        pkg = TOOL_PACKAGES.get(tool, "?")
        where = ", ".join(str(p) for p in searched) or "(no nvidia package installed)"
        super().__init__(
            f"{tool} not found in the NVIDIA wheels (searched: {where}); "
            f"install it with: pip install {pkg}"
        )
        self.tool = tool
        self.package = pkg


def nvidia_roots() -> list[Path]:
    """The folders of the ``nvidia`` namespace package (where the CUDA wheels install)."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or spec.submodule_search_locations is None:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


def find_tool(tool: str, roots: Sequence[Path] | None = None) -> Path:
    """Path of ``tool`` (``ptxas`` or ``nvdisasm``) inside the NVIDIA wheels.

    ``roots`` overrides the ``nvidia`` package folders (tests use it to simulate a missing
    wheel). Raises :class:`ToolchainMissing` naming the pip package when not found.
    """
    if tool not in TOOL_PACKAGES:
        raise ValueError(f"unknown tool {tool!r}; expected one of {', '.join(TOOL_PACKAGES)}")
    base = nvidia_roots() if roots is None else [Path(r) for r in roots]
    searched: list[Path] = []
    override = os.environ.get("MMACTS_TOOLCHAIN_DIR")
    if override and roots is None:
        # An explicit, recorded choice (e.g. a GPU host with no wheel): never a silent fallback.
        cand = Path(override) / tool
        if cand.is_file():
            return cand
        searched.append(Path(override))
    for root in base:
        for sub in _WHEEL_SUBDIRS:
            cand = root / sub / tool
            searched.append(cand.parent)
            if cand.is_file():
                return cand
    raise ToolchainMissing(tool, searched)


_VERSION_RE = re.compile(r"release\s+([\d.]+),\s*V([\d.]+)")


@functools.cache
def _version_of(path: str) -> str:
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    m = _VERSION_RE.search(out.stdout + out.stderr)
    if not m:
        raise RuntimeError(f"cannot read the version of {path}: {out.stdout!r} {out.stderr!r}")
    return m.group(2)


def tool_version(tool: str) -> str:
    """Full version of ``tool``, e.g. ``13.5.37`` (from ``--version``; cached per path)."""
    return _version_of(str(find_tool(tool)))


def _mark_override(version: str) -> str:
    override = os.environ.get("MMACTS_TOOLCHAIN_DIR")
    return f"{version} (MMACTS_TOOLCHAIN_DIR={override})" if override else version


def ptxas_version() -> str:
    """Version string of the wheel's ptxas, e.g. ``13.5.37`` (the override directory is named if used)."""
    return _mark_override(tool_version("ptxas"))


def nvdisasm_version() -> str:
    """Version string of the wheel's nvdisasm, e.g. ``13.5.37`` (the override directory is named if used)."""
    return _mark_override(tool_version("nvdisasm"))
