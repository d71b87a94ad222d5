"""The machine-level gaps that stopped production kernels on the VM (issue 23), each pinned here.

Why one file: each test provokes one gap the way a CUTLASS / Triton kernel meets it (dispatch of
``bar.warp.sync``, ``.b128`` registers, named barriers with ``bar.arrive``, ``prefetch``, ``setmaxnreg``,
``mma.sync`` scale operands in braces, an mbarrier wait that can never succeed) and says what the VM
must do instead: the exact result, or one error naming the instruction, the CTA and the thread.
"""

from __future__ import annotations

import numpy as np

from mmacts.ptxvm import load_module
from mmacts.ptxvm.handlers import HANDLERS, handler_names

HEAD = ".version 8.7\n.target sm_100a\n.address_size 64\n"


def _kernel(body: str, regs: str = "", shared: str = "") -> str:
    return (HEAD + shared + ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
            "  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<16>;\n" + regs +
            "  ld.param.u64 %rd0, [pin];\n  ld.param.u64 %rd1, [pout];\n  mov.u32 %r0, %tid.x;\n"
            "  mul.wide.u32 %rd2, %r0, 4;\n  add.u64 %rd3, %rd1, %rd2;\n" + body + "\n  ret;\n}\n")


def _run(ptx: str, block: int = 64, grid: int = 1, n: int = 64, **kw):
    mod = load_module(ptx, **kw)
    din = mod.rt.to_device(np.arange(n, dtype=np.uint32))
    dout = mod.rt.empty((n,), np.uint32)
    return mod.launch("k", (grid,), (block,), [din, dout]), dout


# ------------------------------------------------------------------------------------------ dispatch
def test_handler_names_most_specific_first() -> None:
    assert handler_names(("bar", "warp", "sync")) == ["bar.warp.sync", "bar.warp", "bar"]
    assert handler_names(("mov", "b128")) == ["mov.b128", "mov"]
    assert handler_names(("ld", "shared", "b128")) == ["ld.shared.b128", "ld.shared", "ld.b128", "ld"]
    assert handler_names(("ret",)) == ["ret"]
    assert "barrier.arrive" not in handler_names(("barrier", "cluster", "arrive"))  # not the named-barrier arrive


def test_cluster_barrier_arrive_is_not_the_named_barrier_arrive() -> None:
    """barrier.cluster.arrive / wait over a cluster of 2 still reach the cluster barrier."""
    body = ("  barrier.cluster.arrive;\n  barrier.cluster.wait;\n  barrier.cluster.arrive.release.aligned;\n"
            "  barrier.cluster.wait.acquire.aligned;\n  mov.u32 %r1, %ctaid.x;\n  mad.lo.u32 %r1, %r1, 64, %r0;\n"
            "  mul.wide.u32 %rd5, %r1, 4;\n  add.u64 %rd5, %rd1, %rd5;\n  st.global.u32 [%rd5], %r1;")
    ptx = _kernel(body).replace("(.param .u64 pin, .param .u64 pout)\n", "(.param .u64 pin, .param .u64 pout)\n"
                                ".reqnctapercluster 2\n")
    res, dout = _run(ptx, grid=2, n=128)
    assert res.status == "ok", res.message
    assert (dout.host == np.arange(128)).all()


def test_bar_warp_sync_is_the_warp_barrier_not_the_cta_barrier() -> None:
    """Warp 0 passes bar.warp.sync alone, then both warps meet at bar.sync 0. Sent to the CTA barrier
    (the bug), warp 0 waits there for warp 1, which waits at bar.sync 0: a deadlock."""
    body = ("  setp.ge.u32 %p0, %r0, 32;\n  @%p0 bra S;\n  bar.warp.sync -1;\nS:\n  bar.sync 0;\n"
            "  st.global.u32 [%rd3], %r0;")
    res, dout = _run(_kernel(body))
    assert res.status == "ok", res.message
    assert (dout.host == np.arange(64)).all()


# ------------------------------------------------------------------------------------------ .b128
B128_REGS = "  .reg .b128 %q<2>;\n"


def test_b128_load_unpack_pack_store_is_exact() -> None:
    """Each thread loads 16 bytes as one .b128, swaps its two 64-bit halves through mov unpack/pack and
    stores it (global and shared); a .reg .b128 declaration used to make launch() raise a TypeError."""
    body = ("  mul.wide.u32 %rd2, %r0, 16;\n  add.u64 %rd4, %rd0, %rd2;\n  add.u64 %rd5, %rd1, %rd2;\n"
            "  ld.global.b128 %q0, [%rd4];\n  mov.b128 {%rd6, %rd7}, %q0;\n  mov.b128 %q1, {%rd7, %rd6};\n"
            "  mov.u32 %r1, buf;\n  mul.lo.u32 %r2, %r0, 16;\n  add.u32 %r1, %r1, %r2;\n"
            "  st.shared.b128 [%r1], %q1;\n  ld.shared.b128 %q0, [%r1];\n  mov.b128 {%r4, %r5, %r6, %r7}, %q0;\n"
            "  mov.b128 %q1, {%r4, %r5, %r6, %r7};\n  st.global.b128 [%rd5], %q1;")
    ptx = _kernel(body, B128_REGS, ".shared .align 16 .b8 buf[1024];\n")
    res, dout = _run(ptx, block=16, n=64)
    assert res.status == "ok", res.message
    want = np.arange(64, dtype=np.uint32).reshape(16, 2, 2)[:, ::-1, :].reshape(-1)
    assert (dout.host == want).all()


def test_b128_register_in_an_arithmetic_instruction_is_refused_by_name() -> None:
    res, _ = _run(_kernel("  mov.b128 %q0, {%rd0, %rd1};\n  add.u64 %rd4, %q0, 1;", B128_REGS))
    assert res.status == "error" and ".b128 register %q0" in res.message and "line" in res.message
    assert "CTA 0, thread 0" in res.message


def test_b128_atomics_are_refused_by_name() -> None:
    res, _ = _run(_kernel("  atom.global.cas.b128 %q0, [%rd0], %q0, %q1;", B128_REGS))
    assert res.status == "error" and "atom.global.cas.b128: 128-bit atomics are not implemented" in res.message


def test_b128_misaligned_load_is_a_memory_error() -> None:
    res, _ = _run(_kernel("  ld.global.b128 %q0, [%rd0+8];", B128_REGS))
    assert res.status == "error" and "misaligned" in res.message


# ------------------------------------------------------------------------------------------ named barriers
PRODUCER_CONSUMER = (
    "  mov.u32 %r1, buf;\n  shl.b32 %r2, %r0, 2;\n  setp.ge.u32 %p0, %r0, 64;\n  @%p0 bra CONSUMER;\n"
    "  add.u32 %r3, %r1, %r2;\n  add.u32 %r4, %r0, 1000;\n  st.shared.u32 [%r3], %r4;\n"
    "  bar.arrive 1, 128;\n  bra END;\n"
    "CONSUMER:\n  bar.sync 1, 128;\n  sub.u32 %r5, %r2, 256;\n  add.u32 %r3, %r1, %r5;\n"
    "  ld.shared.u32 %r4, [%r3];\n  st.global.u32 [%rd3], %r4;\nEND:")


def test_bar_arrive_producers_release_consumers_with_their_data() -> None:
    """Warps 0-1 write shared memory and arrive at barrier 1 (count 128) without waiting; warps 2-3 wait
    there and then read what the producers wrote."""
    res, dout = _run(_kernel(PRODUCER_CONSUMER, shared=".shared .align 4 .b32 buf[64];\n"), block=128, n=128)
    assert res.status == "ok", res.message
    assert (dout.host[64:] == np.arange(64) + 1000).all() and (dout.host[:64] == 0xFFFFFFFF).all()


def test_bar_arrive_short_of_the_count_is_a_deadlock_naming_the_arrivals() -> None:
    ptx = _kernel(PRODUCER_CONSUMER.replace("bar.sync 1, 128", "bar.sync 1, 192").replace(
        "bar.arrive 1, 128", "bar.arrive 1, 192"), shared=".shared .align 4 .b32 buf[64];\n")
    res, _ = _run(ptx, block=128, n=128)
    assert res.status == "timeout" and "deadlock" in res.message
    assert "64 threads (warps 2-3; first thread 64) wait at barrier 1 (64 arrived with bar.arrive)" in res.message


def test_barrier_completed_by_arrivals_alone_starts_over() -> None:
    """Warps 0-1 complete barrier 2 (count 64) by arriving alone; then barrier 2 serves a new phase of
    128 threads. Without the reset the old 64 arrivals would count towards the new phase."""
    body = ("  setp.ge.u32 %p0, %r0, 64;\n  @%p0 bra C;\n  bar.arrive 2, 64;\n  mov.u32 %r1, flag;\n"
            "  mov.u32 %r2, 7;\n  st.shared.u32 [%r1], %r2;\n  bar.arrive 2, 128;\n  bra E;\n"
            "C:\n  bar.sync 2, 128;\n  mov.u32 %r1, flag;\n  ld.shared.u32 %r2, [%r1];\n"
            "  st.global.u32 [%rd3], %r2;\nE:")
    res, dout = _run(_kernel(body, shared=".shared .align 4 .b32 flag;\n"), block=128, n=128)
    assert res.status == "ok", res.message
    assert (dout.host[64:] == 7).all()


def test_bar_arrive_operand_rules() -> None:
    for bad, why in (("bar.arrive 1;", "needs a barrier and a thread count"),
                     ("bar.arrive 16, 64;", "not in 0..15"),
                     ("bar.arrive 1, 48;", "multiple of the warp size")):
        res, _ = _run(_kernel("  " + bad))
        assert res.status == "error" and why in res.message, (bad, res.message)


# ------------------------------------------------------------------------------------------ hints
def test_prefetch_is_a_no_op_with_a_checked_address() -> None:
    res, dout = _run(_kernel("  prefetch.global.L2 [%rd0];\n  prefetch.tensormap [%rd0];\n"
                             "  prefetch.global.L2::evict_last [%rd0+64];\n  st.global.u32 [%rd3], %r0;"))
    assert res.status == "ok", res.message
    assert (dout.host == np.arange(64)).all()
    res, _ = _run(_kernel("  prefetch.global.L2 [%rd0+4096];"))
    assert res.status == "error" and "out-of-bounds global load" in res.message and "prefetch" in res.message
    res, _ = _run(_kernel("  prefetch.tensormap [%rd0+32];"))
    assert res.status == "error" and "not 64-byte aligned" in res.message


def test_setmaxnreg_checks_its_operand() -> None:
    res, _ = _run(_kernel("  setmaxnreg.inc.sync.aligned.u32 240;\n  setmaxnreg.dec.sync.aligned.u32 24;"), block=128)
    assert res.status == "ok", res.message
    for bad in ("setmaxnreg.inc.sync.aligned.u32 16;", "setmaxnreg.dec.sync.aligned.u32 244;",
                "setmaxnreg.inc.sync.aligned.u32 264;"):
        res, _ = _run(_kernel("  " + bad), block=128)
        assert res.status == "error" and "24..256" in res.message, (bad, res.message)


CLC = ("  mov.u32 %r1, mb;\n  mov.u32 %r2, resp;\n  setp.eq.u32 %p0, %r0, 0;\n"
       "  @%p0 mbarrier.init.shared::cta.b64 [%r1], 1;\n  mov.u32 %r4, -1;\n"
       "  @%p0 st.shared.v4.u32 [%r2], {%r4, %r4, %r4, %r4};\n  bar.sync 0;\n"
       "  @%p0 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 16;\n"
       "  @%p0 clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r2], [%r1];\n"
       "W:\n  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;\n  @!%p1 bra W;\n"
       "  ld.shared.b128 %q0, [%r2];\n  clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p2, %q0;\n"
       "  selp.u32 %r5, 1, 0, %p2;\n  st.global.u32 [%rd3], %r5;")
CLC_SHARED = ".shared .align 16 .b8 resp[16];\n.shared .align 8 .b64 mb;\n"


def test_griddepcontrol_is_a_no_op_on_sequential_launches() -> None:
    body = "  griddepcontrol.wait;\n  griddepcontrol.launch_dependents;\n  st.global.u32 [%rd3], %r0;"
    res, dout = _run(_kernel(body))
    assert res.status == "ok", res.message
    assert (dout.host == np.arange(64)).all()
    res, _ = _run(_kernel("  griddepcontrol.other;"))
    assert res.status == "error" and "griddepcontrol.other is not implemented" in res.message


def test_cluster_launch_control_never_cancels_and_completes_the_mbarrier() -> None:
    """try_cancel answers "not canceled" (legal for any request): the response overwrites the 0xFF bytes
    and completes the 16 transaction bytes the mbarrier expects, so the waiters go on."""
    res, dout = _run(_kernel(CLC, B128_REGS, CLC_SHARED), max_steps=50_000)
    assert res.status == "ok", res.message
    assert (dout.host == 0).all()


def test_cluster_launch_control_multicast_answers_every_cta_of_the_cluster() -> None:
    """Rank 0 alone asks with .multicast::cluster::all; CTA 1 waits on its own mbarrier for its copy."""
    body = (CLC.replace("setp.eq.u32 %p0, %r0, 0;", "setp.eq.u32 %p0, %r0, 0;\n  mov.u32 %r6, %cluster_ctarank;\n"
                        "  setp.eq.u32 %p3, %r6, 0;\n  and.pred %p3, %p3, %p0;")
            .replace("@%p0 clusterlaunchcontrol", "@%p3 clusterlaunchcontrol")
            .replace("bytes.b128", "bytes.multicast::cluster::all.b128")
            .replace("st.global.u32 [%rd3], %r5;", "mov.u32 %r7, %ctaid.x;\n  mad.lo.u32 %r7, %r7, 64, %r0;\n"
                     "  mul.wide.u32 %rd5, %r7, 4;\n  add.u64 %rd5, %rd1, %rd5;\n  st.global.u32 [%rd5], %r5;"))
    ptx = _kernel(body, B128_REGS, CLC_SHARED).replace("(.param .u64 pin, .param .u64 pout)\n",
                                                        "(.param .u64 pin, .param .u64 pout)\n.reqnctapercluster 2\n")
    res, dout = _run(ptx, grid=2, n=128, max_steps=50_000)
    assert res.status == "ok", res.message
    assert (dout.host == 0).all()


def test_cluster_launch_control_first_ctaid_of_a_refusal_is_an_error() -> None:
    body = CLC.replace("clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p2, %q0;",
                       "clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %r5, %q0;")
    res, _ = _run(_kernel(body, B128_REGS, CLC_SHARED), max_steps=50_000)
    assert res.status == "error" and "undefined" in res.message and "get_first_ctaid" in res.message
    res, _ = _run(_kernel("  clusterlaunchcontrol.other.b128 [%r1];"))
    assert res.status == "error" and "clusterlaunchcontrol.other.b128" in res.message
    assert "not implemented" in res.message


# ------------------------------------------------------------------------------------------ spin deadlock
SPIN = ("  mov.u32 %r1, mb;\n  setp.eq.u32 %p0, %r0, 0;\n  @%p0 mbarrier.init.shared::cta.b64 [%r1], 2;\n"
        "  bar.sync 0;\n  @%p0 mbarrier.arrive.shared::cta.b64 _, [%r1];\n"
        "W:\n  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;\n  @!%p1 bra W;\n"
        "  st.global.u32 [%rd3], %r0;")


def test_spin_on_an_mbarrier_that_cannot_complete_is_a_deadlock_naming_it() -> None:
    """One of the two expected arrivals comes; every thread then polls forever. The VM must say so
    (barrier address, phase, pending arrivals, waiting warps) long before the step budget."""
    res, _ = _run(_kernel(SPIN, shared=".shared .align 8 .b64 mb;\n"), max_steps=50_000)
    assert res.status == "timeout" and "deadlock" in res.message, res.message
    assert "mbarrier at shared::cta 0x0 of CTA 0" in res.message and "1 of 2 arrivals" in res.message
    assert "warps 0-1" in res.message and "thread 0" in res.message and "mbarrier.try_wait" in res.message


def test_spin_deadlock_with_other_warps_blocked_names_both() -> None:
    body = SPIN.replace("W:\n", "  setp.ge.u32 %p2, %r0, 32;\n  @%p2 bra B;\nW:\n").replace(
        "  st.global.u32", "B:\n  bar.sync 1;\n  st.global.u32")
    res, _ = _run(_kernel(body, shared=".shared .align 8 .b64 mb;\n"), max_steps=50_000)
    assert res.status == "timeout" and "warp 0 " in res.message and "wait at barriers" in res.message, res.message


def test_spin_that_completes_is_not_a_deadlock() -> None:
    """The second arrival comes from warp 1 after a loop of 300 iterations: the pollers must wait for it."""
    body = SPIN.replace("  @%p0 mbarrier.arrive.shared::cta.b64 _, [%r1];\n",
                        "  @%p0 mbarrier.arrive.shared::cta.b64 _, [%r1];\n  setp.ne.u32 %p3, %r0, 32;\n"
                        "  @%p3 bra W;\n  mov.u32 %r6, 0;\nL:\n  add.u32 %r6, %r6, 1;\n  setp.lt.u32 %p3, %r6, 300;\n"
                        "  @%p3 bra L;\n  mbarrier.arrive.shared::cta.b64 _, [%r1];\n")
    res, dout = _run(_kernel(body, shared=".shared .align 8 .b64 mb;\n"), max_steps=50_000)
    assert res.status == "ok", res.message
    assert (dout.host == np.arange(64)).all()


# ------------------------------------------------------------------------------------------ internal errors
def test_a_python_exception_in_a_handler_names_the_instruction_and_thread() -> None:
    def boom(m, ins, act):  # noqa: ANN001, ANN202 -- a stand-in for a VM bug
        raise TypeError("planted")

    HANDLERS["boomtest"] = boom
    try:
        res, _ = _run(_kernel("  boomtest.b32 %r1;"))
    finally:
        del HANDLERS["boomtest"]
    assert res.status == "error" and "VM internal error (TypeError: planted)" in res.message
    assert "boomtest.b32" in res.message and "CTA 0, thread 0" in res.message


# ------------------------------------------------------------------------------------------ mma.sync {%sf}
def test_mma_sync_block_scale_scale_operands_in_braces() -> None:
    """The scale-factor operands written ``{%sfa}`` (CUTLASS's and the suite's ``brace_scale``
    spelling) give the same D as the bare registers, bit for bit."""
    from mmacts.ptx.mma_sync_kernels import mma_sync_blockscale_module

    ptx = mma_sync_blockscale_module("mxf8f6f4", "e4m3", "e4m3", "ue8m0", "1X", selectors=(0, 0, 0, 0))
    lines = ptx.split("\n")
    i = next(k for k, ln in enumerate(lines) if ln.strip().startswith("mma.sync"))
    assert ", %sfa," in lines[i] and ", %sfb," in lines[i]
    lines[i] = lines[i].replace(", %sfa,", ", {%sfa},").replace(", %sfb,", ", {%sfb},")
    braced = "\n".join(lines)
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, (32, 4), dtype=np.uint32) & np.uint32(0x3F3F3F3F)  # finite e4m3 bytes
    b = rng.integers(0, 256, (32, 2), dtype=np.uint32) & np.uint32(0x3F3F3F3F)
    c = rng.standard_normal((32, 4)).astype(np.float32)
    sfa = np.full(32, 127 + 1, dtype=np.uint32)
    sfb = np.full(32, 127 - 2, dtype=np.uint32)
    outs = []
    for text in (ptx, braced):
        mod = load_module(text)
        args = [mod.rt.to_device(x) for x in (a, b, c, sfa, sfb, np.zeros(1, np.uint32))]
        d = mod.rt.empty((32, 4), np.float32)
        res = mod.launch("mma_bs", (1,), (32,), [*args, d, np.uint32(1)])
        assert res.status == "ok", res.message
        outs.append(d.host.view(np.uint32).copy())
    assert (outs[0] == outs[1]).all() and (outs[0] != 0xFFFFFFFF).all()


def test_bounded_wait_reading_the_timer_in_setp_is_not_a_deadlock() -> None:
    """The deadline compare reads %globaltimer directly (no register changes between polls): the machine
    state repeats until the deadline passes, so only the time read tells it from a deadlock."""
    body = ("  mov.u32 %r1, mb;\n  mbarrier.init.shared::cta.b64 [%r1], 2;\n  bar.sync 0;\n"
            "  mov.u64 %rd4, %globaltimer;\n  add.u64 %rd4, %rd4, 100000000;\n  mov.u32 %r5, 1;\n"
            "W:\n  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;\n  @%p1 bra E;\n"
            "  setp.lt.u64 %p2, %globaltimer, %rd4;\n  @%p2 bra W;\n  mov.u32 %r5, 2;\n"
            "E:\n  st.global.u32 [%rd3], %r5;")
    res, dout = _run(_kernel(body, shared=".shared .align 8 .b64 mb;\n"), max_steps=50_000)
    assert res.status == "ok", res.message
    assert (dout.host == 2).all()


def test_every_error_names_the_instruction_cta_and_thread() -> None:
    """Errors raised before the handler runs (the lookup of an unknown opcode, an undeclared guard) used to
    name the line only, or nothing at all."""
    for body, what, who in (("  setp.ge.u32 %p0, %r0, 40;\n  @%p0 frobnicate.b32 %r1;", "frobnicate.b32", 40),
                            ("  @%q9 mov.u32 %r1, 1;", "undeclared register %q9", 0)):
        res, _ = _run(_kernel(body))
        assert res.status == "error" and what in res.message, res.message
        assert "line" in res.message and f"[CTA 0, thread {who}]" in res.message, res.message


def test_barrier_deadlock_names_every_barrier_waited_at() -> None:
    body = "  setp.lt.u32 %p0, %r0, 32;\n  @%p0 bra A;\n  bar.sync 1;\n  bra B;\nA:\n  bar.sync 0;\nB:"
    res, _ = _run(_kernel(body))
    assert res.status == "timeout", res.message
    assert "32 threads (warp 0; first thread 0) wait at barrier 0" in res.message
    assert "32 threads (warp 1; first thread 32) wait at barrier 1" in res.message and "CTA 0" in res.message


def test_bar_arrive_is_aligned_whole_warps_arrive() -> None:
    res, _ = _run(_kernel("  setp.lt.u32 %p0, %r0, 16;\n  @%p0 bar.arrive 1, 64;\n  bar.sync 0;"))
    assert res.status == "error" and "is .aligned but thread 16" in res.message, res.message
    res, _ = _run(_kernel("  setp.lt.u32 %p0, %r0, 16;\n  @%p0 barrier.arrive 1, 64;\n  bar.sync 0;"))
    assert res.status == "ok", res.message  # barrier.arrive without .aligned: threads arrive one by one


def test_b128_parts_must_have_the_part_width() -> None:
    res, _ = _run(_kernel("  mov.b128 %q0, {%rd0, %rd1};\n  mov.b128 {%r1, %r2}, %q0;", B128_REGS))
    assert res.status == "error" and "%r1 is .b32; 2 parts of a .b128 are 64-bit registers" in res.message


def test_arrivals_beyond_the_count_open_the_next_phase() -> None:
    """Warps 0-1 wait at barrier 1 (count 128) twice; warps 2-5 arrive there once, all four together: two
    warps complete the first phase with the waiters, the other two count towards the second."""
    body = ("  setp.ge.u32 %p0, %r0, 64;\n  @%p0 bra P;\n  bar.sync 1, 128;\n  bar.sync 1, 128;\n"
            "  st.global.u32 [%rd3], %r0;\n  bra E;\nP:\n  bar.arrive 1, 128;\nE:")
    res, dout = _run(_kernel(body), block=192, n=192)
    assert res.status == "ok", res.message
    assert (dout.host[:64] == np.arange(64)).all()


def test_arrivals_alone_beyond_the_count_carry_over() -> None:
    """Warps 0-2 arrive at barrier 3 (count 64) together: one phase completes, 32 arrivals open the next,
    which warp 3 completes by waiting there."""
    body = ("  setp.ge.u32 %p0, %r0, 96;\n  @%p0 bra C;\n  bar.arrive 3, 64;\n  bra E;\n"
            "C:\n  bar.sync 3, 64;\n  st.global.u32 [%rd3], %r0;\nE:")
    res, dout = _run(_kernel(body), block=128, n=128)
    assert res.status == "ok", res.message
    assert (dout.host[96:] == np.arange(96, 128)).all()
