"""Faults provoked on purpose on a real GPU, one per process: the runtime's guarantees under test.

A conformance run meets kernels that never finish and kernels that fault. The promises are:
an in-kernel bounded wait ends and reports through a status word; a kernel that spins past the
host deadline becomes ``timeout`` and poisons the runtime (no later launch in that process); a
sticky CUDA error (an illegal address) becomes ``error`` and poisons it too. Each scenario runs
in its own process (``python -m mmacts.backends.gpu_faults SCENARIO`` prints one JSON line),
because a hung or faulted context cannot be trusted afterwards.

The kernels are PTX for ``sm_90`` (no arch-specific features) loaded through the driver's JIT,
so the same probes run on Hopper and on Blackwell.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import numpy as np

from mmacts.backends.cuda_runtime import runtime

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"

BOUNDED_WAIT = HEADER + """
.visible .entry bounded_wait(.param .u64 out, .param .u32 max_iter)
{
    .shared .align 8 .b64 bar;
    .reg .pred p;
    .reg .b32 i, n, st;
    .reg .u64 o;
    ld.param.u64 o, [out];
    ld.param.u32 n, [max_iter];
    mbarrier.init.shared::cta.b64 [bar], 2;     // two arrivals expected, none ever comes
    mov.u32 i, 0;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 p, [bar], 0;
    @p bra DONE;
    add.u32 i, i, 1;
    setp.lt.u32 p, i, n;
    @p bra WAIT;
    mov.u32 st, 2;                               // STATUS_TIMEOUT, as the tcgen05 kernels write
    bra WRITE;
DONE:
    mov.u32 st, 1;
WRITE:
    cvta.to.global.u64 o, o;
    st.global.u32 [o], st;
    ret;
}
"""

SPIN = HEADER + """
.visible .entry spin(.param .u64 flag)
{
    .reg .u64 f;
    .reg .u32 v;
    .reg .pred p;
    ld.param.u64 f, [flag];
    cvta.to.global.u64 f, f;
LOOP:
    ld.volatile.global.u32 v, [f];
    setp.eq.u32 p, v, 0;
    @p bra LOOP;                                 // the flag is never set: spins forever
    ret;
}
"""

ILLEGAL = HEADER + """
.visible .entry illegal(.param .u64 unused)
{
    .reg .u64 a;
    .reg .u32 v;
    mov.u64 a, 8;                                // not a mapped device address
    mov.u32 v, 1;
    st.global.u32 [a], v;
    ret;
}
"""

OK_KERNEL = HEADER + """
.visible .entry ok(.param .u64 out)
{
    .reg .u64 o;
    .reg .u32 v;
    ld.param.u64 o, [out];
    cvta.to.global.u64 o, o;
    mov.u32 v, 7;
    st.global.u32 [o], v;
    ret;
}
"""


def _after(rt: Any) -> dict[str, Any]:
    """What a second, harmless launch in the same process gets (must be refused once poisoned)."""
    t0 = time.monotonic()
    try:
        out = rt.empty((1,), np.uint32)
        res = rt.launch(rt.load(OK_KERNEL), "ok", (1,), (1,), (out,), timeout_s=5)
        status, message = res.status, res.message
    except Exception as exc:  # PoisonedRuntime, or the sticky error raised again by CuPy
        status, message = "refused", f"{type(exc).__name__}: {exc}"
    return {"second_status": status, "second_message": message, "second_wall_s": round(time.monotonic() - t0, 3)}


def scenario(name: str) -> dict[str, Any]:
    """Run one scenario and describe what the runtime did."""
    rt = runtime()
    t0 = time.monotonic()
    if name == "bounded_wait":
        out = rt.empty((1,), np.uint32)
        res = rt.launch(rt.load(BOUNDED_WAIT), "bounded_wait", (1,), (1,), (out, np.uint32(64)), timeout_s=30)
        rec = {"status": res.status, "status_word": int(rt.to_host(out)[0]), "kernel_us": res.kernel_us}
    elif name == "spin":
        flag = rt.to_device(np.zeros(1, np.uint32))
        res = rt.launch(rt.load(SPIN), "spin", (1,), (1,), (flag,), timeout_s=2.0)
        rec = {"status": res.status, "message": res.message, "poisoned": bool(rt.poisoned), **_after(rt)}
    elif name == "illegal":
        res = rt.launch(rt.load(ILLEGAL), "illegal", (1,), (1,), (np.uint64(0),), timeout_s=10)
        rec = {"status": res.status, "message": res.message, "poisoned": bool(rt.poisoned), **_after(rt)}
    else:
        raise SystemExit(f"unknown scenario {name!r}")
    rec["wall_s"] = round(time.monotonic() - t0, 3)
    rec["scenario"] = name
    return rec


def main(argv: list[str]) -> int:
    print(json.dumps(scenario(argv[0])), flush=True)
    return 0


if __name__ == "__main__":
    import os

    rc = main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(rc)  # do not wait on a context that still holds a hung grid
