"""Planted faults in the generated kernels: each one must make a suite case fail on the VM.

Why: until the model backend executed the kernels, a wrong shift, swapped operands or a missing
wait in the PTX passed every suite. Each fault here names a fault point of a kernel generator
(:mod:`mmacts.ptx.fault_points`, where what each point's faulty variant does is written down):
while the fault is planted the generator emits that block's faulty variant. The meta-test
(``test_kernel_faults.py``) runs a few cases of the suite that uses the kernel through
``--backend model`` and requires at least one verdict that is not a pass. A planted point that no
generated kernel reaches is itself a failure (the kernel changed: move the point, don't drop the fault).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from mmacts.cases.model import Case
from mmacts.ptx import fault_points
from suites.hopper_validation.fields import WgmmaForm
from suites.mma_sync_blockscale.fields import SelectorFields
from suites.tcgen05_blockscale.fields import Tcgen05Form


@dataclass(frozen=True)
class KernelFault:
    """One planted fault: the generator's fault point it turns on, which cases must catch it."""

    name: str
    """The fault point (a key of :data:`mmacts.ptx.fault_points.POINTS`)."""
    suite: str
    pick: Callable[[Case], bool]
    """Cases (at ``level``) that run with the fault; a few are enough."""
    level: str = "standard"
    limit: int = 4

    def __post_init__(self) -> None:
        if self.name not in fault_points.POINTS:
            raise ValueError(f"kernel fault {self.name}: no such fault point in mmacts.ptx.fault_points")

    @property
    def what(self) -> str:
        """What the faulty variant does (the point's description)."""
        return fault_points.POINTS[self.name]


def _tc(cg: int | None = None, kind: str | None = None) -> Callable[[Case], bool]:
    def pick(c: Case) -> bool:
        return (c.recipe == "exact" and isinstance(c.form, Tcgen05Form) and not c.form.a_tmem
                and (cg is None or c.form.cta_group == cg) and (kind is None or c.form.kind == kind))

    return pick


TC = "tcgen05_blockscale"

FAULTS: tuple[KernelFault, ...] = (
    KernelFault("tmem-quadrant-shift", TC, _tc(1)),
    KernelFault("mma-sfa-sfb-swapped", TC, _tc(1)),
    KernelFault("mma-sync-tida-byte", "mma_sync_blockscale",
                lambda c: isinstance(c.runtime, SelectorFields) and c.runtime.tida != c.runtime.bidb, limit=8),
    KernelFault("params-record-offset", TC, _tc(1)),
    KernelFault("readback-loop-off-by-one", TC, _tc(1)),
    KernelFault("missing-wait-ld", TC,
                # N > 8: a second .x8 load must overwrite the first's registers -- a single load whose registers
                # are all read needs no wait before dealloc (AMB-TCGEN05-LD-NO-WAIT-DEALLOC, the VM's reading)
                lambda c: _tc(1)(c) and int(c.runtime.n) > 8),
    KernelFault("missing-proxy-fence", TC, _tc(1)),
    KernelFault("wrong-ld-shape", TC, _tc(1)),
    KernelFault("wrong-cluster-rank", TC, _tc(2)),
    KernelFault("missing-wait-st", TC, _tc(1)),
    KernelFault("missing-mbarrier-wait", TC, _tc(1)),
    KernelFault("wgmma-missing-fence", "hopper_validation",
                lambda c: isinstance(c.form, WgmmaForm) and c.recipe == "exact", limit=2),
)


def planted(fault: KernelFault) -> AbstractContextManager[None]:
    """The generators emit the faulty variant of ``fault``'s point while the context is open (and refuse, on
    leaving, a point no generated kernel reached)."""
    return fault_points.planted(fault.name)


def cases_for(fault: KernelFault) -> list[Case]:
    drv = importlib.import_module(f"suites.{fault.suite}.driver").DRIVER
    return [c for c in drv.cases(fault.level) if fault.pick(c)][: fault.limit]


def run_fault(fault: KernelFault) -> dict[str, str]:
    """case id -> 'status: message' of the fault's cases on the model backend (the PTX VM)."""
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
