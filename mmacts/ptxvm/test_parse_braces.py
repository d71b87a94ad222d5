"""Vector operands written against the opcode (``...b32{%r1, %r2}``) parse exactly as with a blank.

Why: LLVM and CUTLASS's inline asm print ``tcgen05.ld.sync.aligned.32x32b.x2.b32{%r1, %r2}, [%r3];``
with no blank; the parser split at the first blank, took ``{%r1,`` into the opcode and shifted every
operand by one, so the TMEM address was read from the wrong register, silently (issue 23). Each vector
brace form is parsed here with and without blanks and must give the same instruction.
"""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.ptxvm import load_module
from mmacts.ptxvm.errors import VmUnsupported
from mmacts.ptxvm.parse import _parse_instr

# (tight spelling, spaced spelling): both must decode to one opcode and operand list
FORMS = [
    ("tcgen05.ld.sync.aligned.32x32b.x2.b32{%r1, %r2}, [%r3];",
     "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r3];"),
    ("tcgen05.st.sync.aligned.32x32b.x2.b32[%r3],{%r1,%r2};",
     "tcgen05.st.sync.aligned.32x32b.x2.b32 [%r3], {%r1, %r2};"),
    ("ld.global.v4.u32{%r1,%r2,%r3,%r4},[%rd1+16];", "ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+16];"),
    ("st.global.v2.u32[%rd1],{%r1,%r2};", "st.global.v2.u32 [%rd1], {%r1, %r2};"),
    ("mov.b64{%r1,%r2},%rd1;", "mov.b64 {%r1, %r2}, %rd1;"),
    ("mov.b64 %rd1,{%r1,%r2};", "mov.b64 %rd1, {%r1, %r2};"),
    ("@%p1 ld.shared.v2.u32{%r1,_},[%r3];", "@%p1 ld.shared.v2.u32 {%r1, _}, [%r3];"),
    ("@!%p1 ld.shared.v2.u32{%r1,%r2},[%r3];", "@!%p1 ld.shared.v2.u32 { %r1 , %r2 }, [%r3];"),
    ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue8m0"
     "{%f0,%f1,%f2,%f3},{%r0,%r1,%r2,%r3},{%r4,%r5},{%f4,%f5,%f6,%f7},{%r8},{%h0,%h1},{%r9},{%h2,%h3};",
     "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue8m0 "
     "{%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7}, {%r8}, {%h0, %h1}, "
     "{%r9}, {%h2, %h3};"),
    ("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3{%f0,%f1,%f2,%f3},%rd1,%rd2,1,1,1;",
     "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%f0, %f1, %f2, %f3}, %rd1, %rd2, 1, 1, 1;"),
    ("ldmatrix.sync.aligned.m8n8.x4.shared.b16{%r1,%r2,%r3,%r4},[%r5];",
     "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];"),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes[%r1],[%rd1,{%r2,%r3}],[%r4];",
     "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], "
     "[%r4];"),
    ("tcgen05.ld.sync.aligned.16x64b.x2.b32{%r1,\n   %r2,\n   %r5,\n   %r6},[%r3];",
     "tcgen05.ld.sync.aligned.16x64b.x2.b32 {%r1, %r2, %r5, %r6}, [%r3];"),
]


@pytest.mark.parametrize("tight,spaced", FORMS, ids=[f[1].split()[0][:40] + str(i) for i, f in enumerate(FORMS)])
def test_vector_brace_against_the_opcode_parses_like_the_spaced_form(tight: str, spaced: str) -> None:
    a = _parse_instr(tight.rstrip(";"), 1)
    b = _parse_instr(spaced.rstrip(";"), 1)
    assert a.opcode == b.opcode and "{" not in a.opcode and "[" not in a.opcode
    assert a.operands == b.operands
    assert (a.guard, a.guard_neg) == (b.guard, b.guard_neg)
    assert a.text.replace(" ", "") == b.text.replace(" ", "") and a.text.startswith(
        (f"@{'!' if a.guard_neg else ''}{a.guard} " if a.guard else "") + a.opcode + " ")


def test_tcgen05_ld_tight_reads_the_tmem_address_operand() -> None:
    ins = _parse_instr("tcgen05.ld.sync.aligned.32x32b.x2.b32{%r1, %r2}, [%r3]", 7)
    assert ins.opcode == "tcgen05.ld.sync.aligned.32x32b.x2.b32"
    vec, addr = ins.operands
    assert [str(x) for x in vec.items] == ["%r1", "%r2"]
    assert addr.kind == "addr" and addr.base is not None and addr.base.name == "%r3"


@pytest.mark.parametrize("bad", ["ld.global.v2.u32 {%r1, %r2, [%rd1]", "st.global.u32 [%rd1, %r2",
                                 "mov.b64 {%r1, %r2}}, %rd1"])
def test_unbalanced_braces_are_refused_by_name(bad: str) -> None:
    with pytest.raises(VmUnsupported):
        _parse_instr(bad, 3)


def test_tight_vector_load_and_store_execute() -> None:
    """The whole path: a kernel written without blanks copies 2 words per thread exactly."""
    ptx = (".version 8.4\n.target sm_90a\n.address_size 64\n"
           ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
           "  .reg .b32 %r<8>;\n  .reg .b64 %rd<8>;\n"
           "  ld.param.u64 %rd0, [pin];\n  ld.param.u64 %rd1, [pout];\n  mov.u32 %r0, %tid.x;\n"
           "  mul.wide.u32 %rd2, %r0, 8;\n  add.u64 %rd3, %rd0, %rd2;\n  add.u64 %rd4, %rd1, %rd2;\n"
           "  ld.global.v2.u32{%r1,%r2},[%rd3];\n  { .reg .b32 t;\n  mov.b32 t, %r1;\n"
           "  st.global.v2.u32[%rd4],{%r2,t}; }\n  ret;\n}\n")
    mod = load_module(ptx)
    src = np.arange(64, dtype=np.uint32)
    din, dout = mod.rt.to_device(src), mod.rt.empty((64,), np.uint32)
    res = mod.launch("k", (1,), (32,), [din, dout])
    assert res.status == "ok", res.message
    assert (dout.host.reshape(32, 2) == src.reshape(32, 2)[:, ::-1]).all()
