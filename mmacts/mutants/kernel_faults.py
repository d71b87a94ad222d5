"""Planted faults in the generated kernels: each one must make a suite case fail on the VM.

Why: until the model backend executed the kernels, a wrong shift, swapped operands or a missing
wait in the PTX passed every suite. Each fault here is one small edit of a kernel generator's
output text (a regular expression that must match exactly once), applied at test time; the
meta-test (``test_kernel_faults.py``) runs a few cases of the suite that uses the kernel through
``--backend model`` and requires at least one verdict that is not a pass. A fault whose pattern no
longer matches the kernel is itself a failure (the kernel changed: update the fault, don't drop it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from mmacts.cases.model import Case


@dataclass(frozen=True)
class KernelFault:
    """One planted fault: where it goes, what it changes, which cases must catch it."""

    name: str
    what: str
    generator: str
    """``module:function`` of the kernel generator whose text is edited."""
    pattern: str
    replacement: str
    suite: str
    pick: Callable[[Case], bool]
    """Cases (at ``level``) that run with the fault; a few are enough."""
    level: str = "standard"
    limit: int = 4

    def apply(self, ptx: str) -> str:
        new, n = re.subn(self.pattern, self.replacement, ptx, flags=re.M)
        if n != 1:
            raise AssertionError(f"planted fault {self.name}: pattern {self.pattern!r} matched {n} times (want 1)")
        return new


def _tc(cg: int | None = None, kind: str | None = None) -> Callable[[Case], bool]:
    def pick(c: Case) -> bool:
        return (c.recipe == "exact" and not c.form.get("a_tmem") and (cg is None or c.form["cta_group"] == cg)
                and (kind is None or c.form["kind"] == kind))

    return pick


TC = "mmacts.ptx.tcgen05_kernels:module_ptx"
MS = "mmacts.ptx.mma_sync_kernels:mma_sync_blockscale_module"
WG = "mmacts.ptx.mma_sync_kernels:wgmma_module"

FAULTS: tuple[KernelFault, ...] = (
    KernelFault("tmem-quadrant-shift", "tcgen05.ld/st lane-quadrant base shifted by 20 instead of 21 bits", TC,
                r"shl\.b32 %r20, %r1, 21;", "shl.b32 %r20, %r1, 20;", "tcgen05_blockscale", _tc(1)),
    KernelFault("mma-sfa-sfb-swapped", "SFA and SFB tensor-memory operands of tcgen05.mma swapped", TC,
                r"\[%r35\], \[%r36\]", "[%r36], [%r35]", "tcgen05_blockscale", _tc(1)),
    KernelFault("mma-sync-tida-byte", "mma.sync kernel unpacks thread-id-a from byte 2 instead of byte 1", MS,
                r"shr\.b32 %t3, %selw, 8;", "shr.b32 %t3, %selw, 16;", "mma_sync_blockscale",
                lambda c: c.runtime.get("tida") != c.runtime.get("bidb"), limit=8),
    KernelFault("params-record-offset", "the read-back column (record word 5) is read from word 6", TC,
                r"ld\.global\.u64 %rd35, \[%rd4\+40\];", "ld.global.u64 %rd35, [%rd4+48];", "tcgen05_blockscale",
                _tc(1)),
    KernelFault("readback-loop-off-by-one", "the TMEM read-back loop runs one .x8 step too far", TC,
                r"setp\.ge\.u32 %p13, %r46, %r43;", "setp.gt.u32 %p13, %r46, %r43;", "tcgen05_blockscale",
                _tc(1)),
    KernelFault("missing-wait-ld", "tcgen05.wait::ld removed: the next .x8 load overwrites registers still being "
                "loaded (anti-dependency) and dealloc may overtake the loads (9.7.16.6.4.5)", TC,
                r"^\s*tcgen05\.wait::ld\.sync\.aligned;\n", "", "tcgen05_blockscale",
                # N > 8: a second .x8 load must overwrite the first's registers -- a single load whose registers
                # are all read needs no wait before dealloc (AMB-TCGEN05-LD-NO-WAIT-DEALLOC, the VM's reading)
                lambda c: _tc(1)(c) and int(c.runtime["n"]) > 8),
    KernelFault("missing-proxy-fence", "fence.proxy.async removed after the shared-memory image copy", TC,
                r"^\s*fence\.proxy\.async\.shared::cta;\n", "", "tcgen05_blockscale", _tc(1)),
    KernelFault("wrong-ld-shape", "tcgen05.ld.32x32b.x8 replaced by .16x64b.x8", TC,
                r"tcgen05\.ld\.sync\.aligned\.32x32b\.x8\.b32", "tcgen05.ld.sync.aligned.16x64b.x8.b32",
                "tcgen05_blockscale", _tc(1)),
    KernelFault("wrong-cluster-rank", "both CTAs of a pair read the leader's record (rank not added)", TC,
                r"^\s*add\.u32 %r5, %r5, %r4;\n", "", "tcgen05_blockscale", _tc(2)),
    KernelFault("missing-wait-st", "tcgen05.wait::st removed after the preload stores", TC,
                r"^\s*tcgen05\.wait::st\.sync\.aligned;\n", "", "tcgen05_blockscale", _tc(1)),
    KernelFault("missing-mbarrier-wait", "the bounded wait on the commit's mbarrier is skipped", TC,
                r"mbarrier\.try_wait\.parity\.shared::cta\.b64 %p10, \[%r15\], 0;",
                "setp.eq.u32 %p10, %r0, %r0;", "tcgen05_blockscale", _tc(1)),
    KernelFault("wgmma-missing-fence", "wgmma.fence removed before the first wgmma.mma_async", WG,
                r"^\s*wgmma\.fence\.sync\.aligned;\n", "", "hopper_validation",
                lambda c: c.form.get("path") == "wgmma" and c.recipe == "exact", limit=2),
)


@contextmanager
def planted(fault: KernelFault) -> Iterator[None]:
    """The generator of ``fault`` emits the faulty text while the context is open."""
    import importlib

    mod_name, fn_name = fault.generator.split(":")
    mod = importlib.import_module(mod_name)
    original = getattr(mod, fn_name)

    def faulty(*args, **kwargs):
        return fault.apply(original(*args, **kwargs))

    setattr(mod, fn_name, faulty)
    try:
        yield
    finally:
        setattr(mod, fn_name, original)


def cases_for(fault: KernelFault) -> list[Case]:
    import importlib

    drv = importlib.import_module(f"suites.{fault.suite}.driver").DRIVER
    return [c for c in drv.cases(fault.level) if fault.pick(c)][: fault.limit]


def run_fault(fault: KernelFault) -> dict[str, str]:
    """case id -> 'status: message' of the fault's cases on the model backend (the PTX VM)."""
    import importlib

    from mmacts.backends.execute import Executor

    drv = importlib.import_module(f"suites.{fault.suite}.driver").DRIVER
    cases = cases_for(fault)
    out: dict[str, str] = {}
    with planted(fault):
        ex = Executor("model")
        for c in cases:
            ex.all_cases.setdefault(repr(c.form_key), []).append(c)
        for c in cases:
            rec = ex.execute(drv, c)
            out[c.case_id] = f"{rec['status']}: {rec['message']}"
    return out
