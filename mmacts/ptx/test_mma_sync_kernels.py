"""Every kernel module this file generates assembles with the wheel's ptxas, and becomes the
SASS we expect (the instruction is not silently emulated or dropped)."""

from __future__ import annotations

import pytest

from mmacts.ptx import mma_sync_kernels as k
from reference.mma_sync.model import all_forms

try:
    from mmacts.toolchain.assemble import assemble
    from mmacts.toolchain.locate import find_tool
    from mmacts.toolchain.sass import sass

    find_tool("ptxas")
    find_tool("nvdisasm")
    HAVE = ""
except Exception as exc:  # pragma: no cover - depends on the machine
    HAVE = f"toolchain unavailable: {exc}"


@pytest.mark.skipif(bool(HAVE), reason=HAVE or "x")
@pytest.mark.parametrize("form", all_forms(), ids=lambda f: f.tag())
def test_blockscale_forms_assemble_to_native_mma(form):
    ptx = k.mma_sync_blockscale_module(form.kind, form.atype, form.btype, form.stype, form.scale_vec)
    res = assemble(ptx, "sm_120a")
    assert res.ok, res.first_error_line
    op = sass(res.cubin).mma_opcode
    assert op.split(".")[0] in ("QMMA", "OMMA") and ".SF." in op, op


@pytest.mark.skipif(bool(HAVE), reason=HAVE or "x")
def test_immediate_selectors_assemble():
    res = assemble(k.mma_sync_blockscale_module("mxf8f6f4", "e5m2", "e2m3", "ue8m0", "1X",
                                                selectors=(3, 1, 2, 3)), "sm_120a")
    assert res.ok, res.first_error_line


@pytest.mark.skipif(bool(HAVE), reason=HAVE or "x")
def test_hopper_modules():
    r = assemble(k.mma_sync_fp8_module("e4m3", "e5m2"), "sm_90a")
    assert r.ok and sass(r.cubin).mma_family == "HMMA"  # sm_90 emulates fp8 mma.sync
    r = assemble(k.wgmma_module("e5m2", 64, "e4m3", steps=2, img_bytes=8192), "sm_90a")
    assert r.ok and sass(r.cubin).mma_family == "QGMMA"
    r = assemble(k.wgmma_module("bf16", 64, steps=1, img_bytes=8192, trans_a=1), "sm_90a")
    assert r.ok and sass(r.cubin).mma_family == "HGMMA"


def test_selector_packing():
    assert k.pack_selectors([(2, 1, 3, 0)]) == [2 | 1 << 8 | 3 << 16]
    with pytest.raises(ValueError):
        k.wgmma_module("e4m3", 64, img_bytes=100)
