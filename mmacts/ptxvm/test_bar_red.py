"""bar.red / barrier.red (9.7.13.1): a CTA barrier that reduces a predicate over its participants.
Expected values are counted by hand over thread indices."""

from __future__ import annotations

import numpy as np

from mmacts.ptxvm import load_module

HEAD = ".version 8.4\n.target sm_90a\n.address_size 64\n"


def _run(body: str, block: int = 64):
    ptx = (HEAD + ".visible .entry k(.param .u64 pout)\n{\n"
           "  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n"
           "  ld.param.u64 %rd1, [pout];\n  cvta.to.global.u64 %rd1, %rd1;\n  mov.u32 %r0, %tid.x;\n"
           "  mul.wide.u32 %rd2, %r0, 4;\n  add.u64 %rd3, %rd1, %rd2;\n" + body + "\n  ret;\n}\n")
    mod = load_module(ptx)
    dout = mod.rt.empty((block,), np.uint32)
    res = mod.launch("k", (1,), (block,), [dout])
    return res, mod.rt.to_host(dout).tolist()


def test_popc_counts_over_warps_that_arrive_apart() -> None:
    # warp 1 reaches its bar.red (the lower address) first and waits; warp 0 arrives at another bar.red of
    # the same barrier. tid % 3 == 0 holds for 22 of 0..63; warp 1 must see warp 0's 11 too.
    body = ("  rem.u32 %r1, %r0, 3;\n  setp.eq.u32 %p1, %r1, 0;\n  setp.lt.u32 %p2, %r0, 32;\n  @%p2 bra A;\n"
            "  bar.red.popc.u32 %r2, 0, %p1;\n  bra B;\n"
            "A:\n  barrier.red.popc.aligned.u32 %r2, 0, %p1;\nB:\n  st.global.u32 [%rd3], %r2;")
    res, out = _run(body)
    assert res.status == "ok", res.message
    assert out == [22] * 64


def test_and_or_and_a_second_phase() -> None:
    # phase 1: and over tid != 5 is false; phase 2 (same barrier): or over !(tid != 7), i.e. tid == 7, is true
    body = ("  setp.ne.u32 %p1, %r0, 5;\n  barrier.red.and.pred %p2, 1, %p1;\n"
            "  setp.ne.u32 %p1, %r0, 7;\n  barrier.red.or.pred %p3, 1, 64, !%p1;\n"
            "  selp.u32 %r2, 1, 0, %p2;\n  selp.u32 %r3, 2, 0, %p3;\n  or.b32 %r2, %r2, %r3;\n"
            "  st.global.u32 [%rd3], %r2;")
    res, out = _run(body)
    assert res.status == "ok", res.message
    assert out == [2] * 64


def test_mixing_bar_red_with_bar_sync_is_an_error() -> None:
    body = ("  setp.lt.u32 %p2, %r0, 32;\n  @%p2 bra A;\n  bar.sync 0;\n  bra B;\n"
            "A:\n  bar.red.popc.u32 %r2, 0, %p2;\nB:\n  st.global.u32 [%rd3], %r0;")
    res, _ = _run(body)
    assert res.status == "error" and "bar.red" in res.message
