"""Pins: the minimum ``.version`` per ``.target`` against ptxas, and the scaffold's text."""

from __future__ import annotations

import pytest

from mmacts.ptx.module import TARGET_MIN_PTX, Entry, max_version, module, module_header
from mmacts.toolchain.assemble import assemble

ARCHS = ["sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_120a", "sm_121a"]
_PREV = {"8.0": "7.8", "8.6": "8.5", "8.7": "8.6", "8.8": "8.7", "9.0": "8.8"}


def _trivial(arch: str, version: str) -> str:
    e = Entry("k", params=[("u64", "p")])
    g = e.load_param_u64("p")
    r = e.regs.one("b32")
    e.emit(f"ld.global.b32 {r}, [{g}];", f"st.global.b32 [{g}+4], {r};")
    return module(arch, [e], version)


@pytest.mark.parametrize("arch", ARCHS)
def test_minimum_version_is_the_first_ptxas_accepts(arch):
    v = TARGET_MIN_PTX[arch]
    assert assemble(_trivial(arch, v), arch).ok
    r = assemble(_trivial(arch, _PREV[v]), arch)
    assert not r.ok and arch in r.first_error_line


def test_header_and_version_order():
    assert module_header("sm_100a") == ".version 8.6\n.target sm_100a\n.address_size 64\n"
    assert max_version("8.10", "8.8") == "8.10" and max_version("9.0", "8.8") == "9.0"


def test_registers_are_declared_exactly():
    e = Entry("k")
    e.regs.new("b32", 3)
    e.regs.one("pred")
    text = e.render()
    assert ".reg .b32 %r<3>;" in text and ".reg .pred %p<1>;" in text and text.rstrip().endswith("}")
