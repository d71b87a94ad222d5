"""The VM refuses what a GPU (or compute-sanitizer) would: each misbehaviour is provoked here and
must end as an outcome that names the instruction, the thread and, for memory, the address."""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.ptxvm import load_module

HEAD = ".version 8.4\n.target sm_90a\n.address_size 64\n"


def _kernel(body: str, regs: str = "", shared: str = "") -> str:
    return (HEAD + shared + ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
            "  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<16>;\n" + regs + body + "\n  ret;\n}\n")


def _run(ptx: str, block: int = 64, grid: int = 1, n_in: int = 64, **kw):
    mod = load_module(ptx, **kw)
    din = mod.rt.to_device(np.arange(n_in, dtype=np.uint32))
    dout = mod.rt.empty((n_in,), np.uint32)
    return mod.launch("k", (grid,), (block,), [din, dout]), mod, dout


PRO = ("  ld.param.u64 %rd0, [pin];\n  cvta.to.global.u64 %rd0, %rd0;\n"
       "  ld.param.u64 %rd1, [pout];\n  cvta.to.global.u64 %rd1, %rd1;\n  mov.u32 %r0, %tid.x;\n"
       "  mul.wide.u32 %rd2, %r0, 4;\n")


def test_unsupported_instruction_is_an_error_naming_it() -> None:
    res, _, _ = _run(_kernel(PRO + "  testp.finite.f32 %p0, 0f3F800000;"))
    assert res.status == "error"
    assert "testp.finite.f32" in res.message and "not implemented" in res.message and "line" in res.message


def test_out_of_bounds_global_load_names_thread_and_address() -> None:
    res, _, _ = _run(_kernel(PRO + "  add.u64 %rd3, %rd0, %rd2;\n  ld.global.u32 %r1, [%rd3+4];"))
    assert res.status == "error" and "out-of-bounds global load" in res.message
    assert "thread 63" in res.message and "0x7f" in res.message and "ld.global.u32" in res.message


def test_misaligned_global_store() -> None:
    res, _, _ = _run(_kernel(PRO + "  add.u64 %rd3, %rd1, %rd2;\n  st.global.u32 [%rd3+2], %r0;"))
    assert res.status == "error" and "misaligned" in res.message


def test_out_of_bounds_shared_store() -> None:
    res, _, _ = _run(_kernel(PRO + "  mov.u32 %r1, buf;\n  shl.b32 %r2, %r0, 3;\n  add.u32 %r1, %r1, %r2;\n"
                             "  st.shared.u32 [%r1], %r0;", shared=".shared .align 4 .b32 buf[64];\n"))
    assert res.status == "error" and "out-of-bounds shared store" in res.message and "thread 32" in res.message


def test_barrier_deadlock_is_a_timeout_naming_the_barrier() -> None:
    body = PRO + ("  setp.lt.u32 %p0, %r0, 32;\n  @%p0 bra A;\n  bar.sync 1;\n  bra B;\nA:\n  bar.sync 0;\nB:")
    res, _, _ = _run(_kernel(body))
    assert res.status == "timeout" and "deadlock" in res.message and "bar.sync" in res.message


def test_barrier_counts_only_live_threads() -> None:
    body = PRO + ("  setp.ge.u32 %p0, %r0, 32;\n  @%p0 bra DONE;\n  bar.sync 0;\n  add.u64 %rd3, %rd1, %rd2;\n"
                  "  st.global.u32 [%rd3], %r0;\nDONE:")
    res, _, dout = _run(_kernel(body))
    assert res.status == "ok", res.message
    assert (dout.host[:32] == np.arange(32)).all() and (dout.host[32:] == 0xFFFFFFFF).all()


def test_mbarrier_that_never_completes_expires_the_bounded_wait() -> None:
    body = PRO + ("  mov.u32 %r1, mb;\n  mbarrier.init.shared::cta.b64 [%r1], 2;\n  bar.sync 0;\n"
                  "  mov.u64 %rd4, %globaltimer;\n  add.u64 %rd4, %rd4, 1000000000;\n  mov.u32 %r5, 1;\n"
                  "W:\n  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;\n  @%p1 bra E;\n"
                  "  mov.u64 %rd5, %globaltimer;\n  setp.lt.u64 %p2, %rd5, %rd4;\n  @%p2 bra W;\n  mov.u32 %r5, 2;\n"
                  "E:\n  add.u64 %rd3, %rd1, %rd2;\n  st.global.u32 [%rd3], %r5;")
    res, _, dout = _run(_kernel(body, shared=".shared .align 8 .b64 mb;\n"))
    assert res.status == "ok", res.message
    assert (dout.host == 2).all()  # every thread saw its deadline pass


def test_unbounded_spin_hits_the_step_budget() -> None:
    body = PRO + "W:\n  bra W;"
    res, _, _ = _run(_kernel(body), max_steps=10_000)
    assert res.status == "timeout" and "step budget" in res.message


def test_mbarrier_phases_complete_with_arrivals() -> None:
    body = PRO + ("  mov.u32 %r1, mb;\n  setp.eq.u32 %p0, %r0, 0;\n  @%p0 mbarrier.init.shared::cta.b64 [%r1], 64;\n"
                  "  bar.sync 0;\n  mbarrier.arrive.shared::cta.b64 %rd6, [%r1];\n"
                  "W:\n  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;\n  @!%p1 bra W;\n"
                  "  mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r1], 1;\n  selp.u32 %r5, 7, 9, %p2;\n"
                  "  add.u64 %rd3, %rd1, %rd2;\n  st.global.u32 [%rd3], %r5;")
    res, _, dout = _run(_kernel(body, shared=".shared .align 8 .b64 mb;\n"))
    assert res.status == "ok", res.message
    assert (dout.host == 9).all()  # phase 0 completed, phase 1 not


def test_uninitialised_mbarrier_is_an_error() -> None:
    body = PRO + "  mov.u32 %r1, mb;\n  mbarrier.arrive.shared::cta.b64 %rd6, [%r1];"
    res, _, _ = _run(_kernel(body, shared=".shared .align 8 .b64 mb;\n"))
    assert res.status == "error" and "before mbarrier.init" in res.message


def test_launch_rejects_too_much_shared_memory_and_bad_blocks() -> None:
    ptx = _kernel(PRO)
    mod = load_module(ptx)
    a = mod.rt.to_device(np.zeros(4, np.uint32))
    assert mod.launch("k", (1,), (64,), [a, a], shared_mem=300_000).status == "error"
    assert mod.launch("k", (1,), (2048,), [a, a]).status == "error"
    assert mod.launch("nope", (1,), (64,), [a, a]).status == "error"
    assert mod.launch("k", (1,), (64,), [a]).status == "error"


@pytest.mark.parametrize("shift", [0, 1, 31, 32, 33, 64])
def test_shift_amounts_at_and_past_the_width(shift: int) -> None:
    body = PRO + (f"  add.u64 %rd3, %rd0, %rd2;\n  ld.global.u32 %r1, [%rd3];\n  or.b32 %r1, %r1, 0x80000000;\n"
                  f"  shr.s32 %r2, %r1, {shift};\n  shl.b32 %r3, %r1, {shift};\n  shr.u32 %r4, %r1, {shift};\n"
                  "  xor.b32 %r5, %r2, %r3;\n  xor.b32 %r5, %r5, %r4;\n  add.u64 %rd3, %rd1, %rd2;\n"
                  "  st.global.u32 [%rd3], %r5;")
    res, _, dout = _run(_kernel(body))
    assert res.status == "ok", res.message
    x = (np.arange(64, dtype=np.uint64) | 0x80000000)
    s = min(shift, 32)
    sar = (x.astype(np.int64) - (1 << 32)) >> min(s, 63)
    shl = (x << np.uint64(s)) & np.uint64(0xFFFFFFFF) if s < 32 else np.zeros(64, np.uint64)
    shr = x >> np.uint64(s) if s < 32 else np.zeros(64, np.uint64)
    want = (sar.astype(np.uint64) & np.uint64(0xFFFFFFFF)) ^ shl ^ shr
    assert (dout.host.astype(np.uint64) == want).all()


TC_HEAD = ".version 8.8\n.target sm_100a\n.address_size 64\n"


def _tc_kernel(st_lane_of_warp: str) -> str:
    """Warp 0 allocates 32 columns; every warp stores one cell per lane at lane base ``st_lane_of_warp``
    (a PTX expression of %r1 = warp); then dealloc."""
    return (TC_HEAD + ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
            "  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .shared .align 4 .b32 slot;\n"
            "  mov.u32 %r0, %tid.x;\n  shr.u32 %r1, %r0, 5;\n  mov.u32 %r2, slot;\n  mov.u32 %r3, 32;\n"
            "  setp.eq.u32 %p0, %r1, 0;\n  @!%p0 bra A;\n"
            "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r2], %r3;\n"
            "  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\nA:\n"
            "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n"
            "  ld.shared.u32 %r4, [%r2];\n" + st_lane_of_warp +
            "  add.u32 %r6, %r4, %r5;\n  tcgen05.st.sync.aligned.32x32b.x1.b32 [%r6], {%r0};\n"
            "  tcgen05.wait::st.sync.aligned;\n  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n"
            "  tcgen05.fence::after_thread_sync;\n  @!%p0 bra B;\n"
            "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r4, %r3;\nB:\n  ret;\n}\n")


def test_tensor_memory_lane_quadrant_rule() -> None:
    good = _tc_kernel("  shl.b32 %r5, %r1, 21;\n")  # warp w -> lanes 32w..32w+31
    mod = load_module(good, "sm_100a")
    a = mod.rt.to_device(np.zeros(4, np.uint32))
    res = mod.launch("k", (1,), (128,), [a, a])
    assert res.status == "ok", res.message
    bad = _tc_kernel("  shl.b32 %r5, %r1, 20;\n")  # warp 1 -> lane 16: another warp's quadrant
    mod = load_module(bad, "sm_100a")
    res = mod.launch("k", (1,), (128,), [mod.rt.to_device(np.zeros(4, np.uint32))] * 2)
    assert res.status == "error"
    assert "warp 1 of CTA 0 accesses TMEM lane 16, outside its lane quadrant 32-63" in res.message
    assert "tcgen05.st" in res.message


def test_tensor_memory_leak_and_unallocated_columns() -> None:
    leak = _tc_kernel("  shl.b32 %r5, %r1, 21;\n").replace(
        "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r4, %r3;\n", "")
    mod = load_module(leak, "sm_100a")
    res = mod.launch("k", (1,), (128,), [mod.rt.to_device(np.zeros(4, np.uint32))] * 2)
    assert res.status == "error" and "not deallocated" in res.message
    outside = _tc_kernel("  shl.b32 %r5, %r1, 21;\n  add.u32 %r5, %r5, 40;\n")  # column 40 of a 32-column allocation
    mod = load_module(outside, "sm_100a")
    res = mod.launch("k", (1,), (128,), [mod.rt.to_device(np.zeros(4, np.uint32))] * 2)
    assert res.status == "error" and "not allocated" in res.message


def _ld_kernel(between: str) -> str:
    """Warp-wide tcgen05.st then tcgen05.ld of one cell per lane, ``between`` the load and its wait."""
    body = _tc_kernel("  shl.b32 %r5, %r1, 21;\n")
    return body.replace(
        "  tcgen05.wait::st.sync.aligned;\n",
        "  tcgen05.wait::st.sync.aligned;\n  tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r7}, [%r6];\n" + between +
        "  tcgen05.wait::ld.sync.aligned;\n")


def test_tcgen05_ld_true_dependency_needs_no_wait_but_an_anti_dependency_does() -> None:
    ok = load_module(_ld_kernel("  add.u32 %r8, %r7, 1;\n"), "sm_100a")  # reads the destination: ordered (9.7.16.6.4.5)
    assert ok.launch("k", (1,), (128,), [ok.rt.to_device(np.zeros(4, np.uint32))] * 2).status == "ok"
    bad = load_module(_ld_kernel("  mov.u32 %r7, 5;\n"), "sm_100a")  # overwrites it before the wait
    res = bad.launch("k", (1,), (128,), [bad.rt.to_device(np.zeros(4, np.uint32))] * 2)
    assert res.status == "error" and "anti-dependency" in res.message
