"""Pins: tools come from the NVIDIA wheels only, with a clear message naming the pip package."""

from __future__ import annotations

import re
import subprocess

import pytest

from mmacts.toolchain.locate import ToolchainMissing, find_tool, nvdisasm_version, ptxas_version


def test_tools_are_inside_the_wheels_not_a_system_cuda():
    for tool in ("ptxas", "nvdisasm"):
        p = find_tool(tool)
        assert "site-packages" in str(p) and "nvidia" in p.parts, p
        assert not str(p).startswith("/usr/local/cuda")


@pytest.mark.parametrize(("tool", "package"), [("ptxas", "nvidia-cuda-nvcc"), ("nvdisasm", "nvidia-cuda-nvdisasm")])
def test_missing_tool_names_the_pip_package(tmp_path, tool, package):
    with pytest.raises(ToolchainMissing) as exc:
        find_tool(tool, roots=[tmp_path])
    msg = str(exc.value)
    assert f"pip install {package}" in msg and tool in msg
    assert exc.value.package == package


def test_a_wheel_layout_is_found(tmp_path):
    (tmp_path / "cuda_nvcc" / "bin").mkdir(parents=True)
    fake = tmp_path / "cuda_nvcc" / "bin" / "ptxas"
    fake.write_text("")
    assert find_tool("ptxas", roots=[tmp_path]) == fake


def test_versions_match_the_tools_own_banner():
    for tool, version in (("ptxas", ptxas_version()), ("nvdisasm", nvdisasm_version())):
        assert re.fullmatch(r"\d+\.\d+\.\d+", version)
        banner = subprocess.run([str(find_tool(tool)), "--version"], capture_output=True, text=True).stdout
        assert f"V{version}" in banner
