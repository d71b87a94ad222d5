"""Semantics the silicon corpus does not reach: the ISA's undefined cases of warp ``.sync``
instructions are errors, a warp that is not converged waits at ``shfl.sync``, ``.local`` and
generic windows are bounds-checked, atomics serialise, the scheduler counts thread-instructions."""

from __future__ import annotations

import numpy as np

from mmacts.ptxvm import load_module

HEAD = ".version 8.4\n.target sm_90a\n.address_size 64\n"
PRO = ("  ld.param.u64 %rd0, [pin];\n  cvta.to.global.u64 %rd0, %rd0;\n"
       "  ld.param.u64 %rd1, [pout];\n  cvta.to.global.u64 %rd1, %rd1;\n  mov.u32 %r0, %tid.x;\n"
       "  mul.wide.u32 %rd2, %r0, 4;\n  add.u64 %rd3, %rd1, %rd2;\n")


def _kernel(body: str, shared: str = "") -> str:
    return (HEAD + shared + ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
            "  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<16>;\n" + PRO + body + "\n  ret;\n}\n")


def _run(body: str, block: int = 64, shared: str = ""):
    mod = load_module(_kernel(body, shared))
    din = mod.rt.to_device(np.arange(block, dtype=np.uint32))
    dout = mod.rt.empty((block,), np.uint32)
    res = mod.launch("k", (1,), (block,), [din, dout])
    return res, mod.rt.to_host(dout)


def test_shfl_waits_for_a_diverged_warp() -> None:
    # lanes 0-15 reach the shfl.sync first (the others run an extra instruction): they wait
    body = ("  setp.lt.u32 %p0, %r0, 16;\n  @%p0 bra A;\n  add.u32 %r5, %r0, 0;\nA:\n"
            "  shfl.sync.bfly.b32 %r1, %r0, 16, 31, 0xFFFFFFFF;\n  st.global.u32 [%rd3], %r1;")
    res, out = _run(body, block=32)
    assert res.status == "ok", res.message
    assert out.tolist() == [i ^ 16 for i in range(32)]


def test_shfl_mask_without_the_executing_lane_is_an_error() -> None:
    res, _ = _run("  shfl.sync.idx.b32 %r1, %r0, 0, 31, 0x0000FFFF;", block=32)
    assert res.status == "error" and "membermask" in res.message and "shfl.sync" in res.message


def test_shfl_mask_naming_an_exited_lane_is_an_error() -> None:
    body = "  setp.ge.u32 %p0, %r0, 16;\n  @%p0 ret;\n  shfl.sync.idx.b32 %r1, %r0, 0, 31, 0xFFFFFFFF;"
    res, _ = _run(body, block=32)
    assert res.status == "error" and "exited" in res.message


def test_shfl_partial_mask_and_vote() -> None:
    body = ("  setp.lt.u32 %p0, %r0, 16;\n  @!%p0 bra A;\n"
            "  shfl.sync.down.b32 %r1|%p1, %r0, 1, 15, 0x0000FFFF;\n"
            "  vote.sync.ballot.b32 %r2, %p1, 0x0000FFFF;\n  add.u32 %r1, %r1, %r2;\n  bra B;\n"
            "A:\n  activemask.b32 %r1;\nB:\n  st.global.u32 [%rd3], %r1;")
    res, out = _run(body, block=32)
    assert res.status == "ok", res.message
    want = [min(i + 1, 15) + 0x7FFF if i < 16 else 0xFFFF0000 for i in range(32)]
    assert out.tolist() == want


def test_local_memory_is_per_thread_and_bounds_checked() -> None:
    body = ("  .local .align 4 .b32 buf[4];\n  mov.u32 %r1, buf;\n  st.local.u32 [%r1+4], %r0;\n"
            "  cvta.local.u64 %rd4, %rd5;\n  ld.local.u32 %r2, [buf+4];\n  st.global.u32 [%rd3], %r2;")
    res, out = _run(body.replace("  cvta.local.u64 %rd4, %rd5;\n", ""))
    assert res.status == "ok", res.message
    assert out.tolist() == list(range(64))
    res, _ = _run("  .local .align 4 .b32 buf[4];\n  st.local.u32 [buf+16], %r0;")
    assert res.status == "error" and "out-of-bounds local store" in res.message


def test_generic_shared_window_round_trip_and_refusal() -> None:
    sh = ".shared .align 4 .b32 buf[64];\n"
    body = ("  mov.u64 %rd4, buf;\n  add.u64 %rd4, %rd4, %rd2;\n  cvta.shared.u64 %rd5, %rd4;\n"
            "  st.u32 [%rd5], %r0;\n  bar.sync 0;\n  ld.shared.u32 %r1, [%rd4];\n  isspacep.shared %p0, %rd5;\n"
            "  selp.u32 %r2, 100, 0, %p0;\n  add.u32 %r1, %r1, %r2;\n  st.global.u32 [%rd3], %r1;")
    res, out = _run(body, shared=sh)
    assert res.status == "ok", res.message
    assert out.tolist() == [i + 100 for i in range(64)]
    res, _ = _run("  cvta.to.shared.u64 %rd4, %rd0;", shared=sh)
    assert res.status == "error" and "not in the generic .shared window" in res.message


def test_atomics_serialise_in_thread_order() -> None:
    sh = ".shared .align 4 .b32 cnt[1];\n"
    body = ("  setp.eq.u32 %p0, %r0, 0;\n  @%p0 st.shared.u32 [cnt], 0;\n  bar.sync 0;\n"
            "  atom.shared.inc.u32 %r1, [cnt], 40;\n  st.global.u32 [%rd3], %r1;")
    res, out = _run(body, shared=sh)
    assert res.status == "ok", res.message
    assert out.tolist() == [i % 41 for i in range(64)]


def test_thread_instructions_count_executing_threads() -> None:
    # 64 threads; the guarded add runs for 32 of them
    body = "  setp.lt.u32 %p0, %r0, 32;\n  @%p0 add.u32 %r1, %r0, 1;"
    res, _ = _run(body)
    assert res.status == "ok"
    n_instr = len(PRO.strip().splitlines()) + 1 + 1  # prologue, setp, ret (the add counts 32 threads)
    assert res.thread_instructions == 64 * n_instr + 32
