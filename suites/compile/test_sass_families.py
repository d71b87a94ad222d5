"""Pins the SASS MMA family ptxas emits per kind, so silent emulation or re-routing is caught.

The expectation is the native unit per operand width (H: 16-bit/tf32, Q: 8/6-bit, O: 4-bit,
I: integer) -- what a Blackwell tensor core executes natively. A toolchain that lowered, say,
``kind::mxf4nvf4`` through UTCQMMA, or an mma.sync FP4 kind through F2FP + HMMA, would change the
numerics the hardware suites compare against.
"""

from __future__ import annotations

import pytest

from mmacts.ptx.compile_forms import build_module
from mmacts.toolchain.assemble import assemble
from mmacts.toolchain.sass import sass
from suites.compile.cases import SASS_MMA_FAMILY

TCGEN05 = [k for (op, k) in SASS_MMA_FAMILY if op == "tcgen05.mma"]


@pytest.mark.parametrize("kind", TCGEN05)
def test_tcgen05_kind_family(kind):
    bs = kind.startswith("mx")
    form = {"op": "tcgen05.mma", "kind": kind, "cta_group": 1, "block_scale": bs,
            "scale_vec": "4X" if kind == "mxf4nvf4" else None}
    r = assemble(build_module(form, "sm_100a", "8.7"), "sm_100a")
    assert r.ok, r.first_error_line
    info = sass(r.cubin)
    assert info.mma_family == SASS_MMA_FAMILY[("tcgen05.mma", kind)]
    assert sum(n for op, n in info.opcodes.items() if op.startswith("UTC") and op.split(".")[0].endswith("MMA")) == 1
    assert "F2FP" not in info.summary()


@pytest.mark.parametrize(("kind", "shape", "t", "st", "sv"), [
    ("mxf8f6f4", "m16n8k32", "e2m1", "ue8m0", "1X"),
    ("mxf4", "m16n8k64", "e2m1", "ue8m0", "2X"),
    ("mxf4nvf4", "m16n8k64", "e2m1", "ue4m3", "4X"),
])
def test_mma_sync_block_scale_family_is_native_with_scale_factors(kind, shape, t, st, sv):
    form = {"op": "mma.sync.block_scale", "kind": kind, "shape": shape, "atype": t, "btype": t, "stype": st,
            "scale_vec": sv, "sel": (0, 0, 0, 0)}
    r = assemble(build_module(form, "sm_120a", "8.7"), "sm_120a")
    assert r.ok, r.first_error_line
    info = sass(r.cubin)
    assert info.mma_family == SASS_MMA_FAMILY[("mma.sync.block_scale", kind)]
    assert ".SF." in info.mma_opcode  # the block-scaled variant, not a plain MMA + software scaling
    assert "F2FP" not in info.summary()
