"""Kernel parameter declarations: ``.ptr .global .align N`` names the pointee's alignment, not the parameter's.

Why: nvcc and Triton declare pointer parameters as ``.param .u64 .ptr .global .align 16 p``; the parser took the 16
as the parameter's own alignment, so a pointer after a 4-byte parameter sat at offset 16 instead of the ABI's 8 in
the VM's parameter block (what a host-built parameter buffer or a ``cvta.param`` window read at ABI offsets sees).
A parameter's own ``.align`` comes before its type."""

from __future__ import annotations

from mmacts.ptxvm.parse import _parse_entry_header

KERNEL = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u32 x, .param .u64 .ptr .global .align 16 p, .param .align 16 .b8 blob[16])
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u32 %r1, [x];
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r2, [blob+4];
  st.global.u32 [%rd1], %r1;
  st.global.u32 [%rd1+4], %r2;
  ret;
}
"""


def test_pointee_alignment_is_not_the_parameters() -> None:
    e = _parse_entry_header(KERNEL.split("{")[0].split(".address_size 64")[1], 4)
    assert [(p.name, p.align) for p in e.params] == [("x", 4), ("p", 8), ("blob", 16)]

