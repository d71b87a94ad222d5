"""The machine-level gaps that stopped production kernels on the VM (issue 23), each pinned here.

Why one file: each test provokes one gap the way a CUTLASS / Triton kernel meets it (dispatch of
``bar.warp.sync``, ``.b128`` registers, named barriers with ``bar.arrive``, ``prefetch``, ``setmaxnreg``,
``mma.sync`` scale operands in braces, an mbarrier wait that can never succeed) and says what the VM
must do instead: the exact result, or one error naming the instruction, the CTA and the thread.
"""

from __future__ import annotations

import numpy as np

from mmacts.ptxvm import load_module
from mmacts.ptxvm.machine import handler_names

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
    assert handler_names(("bar", "warp", "sync")) == ["bar.warp.sync", "bar.warp", "bar.sync", "bar"]
    assert handler_names(("mov", "b128")) == ["mov.b128", "mov"]
    assert handler_names(("ld", "shared", "b128")) == ["ld.shared.b128", "ld.shared", "ld.b128", "ld"]
    assert handler_names(("ret",)) == ["ret"]


def test_bar_warp_sync_is_the_warp_barrier_not_the_cta_barrier() -> None:
    """Warp 0 passes bar.warp.sync alone, then both warps meet at bar.sync 0. Sent to the CTA barrier
    (the bug), warp 0 waits there for warp 1, which waits at bar.sync 0: a deadlock."""
    body = ("  setp.ge.u32 %p0, %r0, 32;\n  @%p0 bra S;\n  bar.warp.sync -1;\nS:\n  bar.sync 0;\n"
            "  st.global.u32 [%rd3], %r0;")
    res, dout = _run(_kernel(body))
    assert res.status == "ok", res.message
    assert (dout.host == np.arange(64)).all()
