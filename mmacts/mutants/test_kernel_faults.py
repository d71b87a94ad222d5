"""Every planted kernel fault makes at least one case of its suite end as something other than a
pass on the model backend (the PTX VM executes the faulty kernel); and without the fault the same
cases pass, so it is the fault that is caught, not a broken case."""

from __future__ import annotations

import pytest

from mmacts.mutants import kernel_faults as KF
from mmacts.ptx.fault_points import POINTS


def test_every_fault_point_is_planted_by_one_fault() -> None:
    names = [f.name for f in KF.FAULTS]
    assert sorted(names) == sorted(POINTS), "a generator's fault point without its kernel fault (or a duplicate)"


@pytest.mark.parametrize("fault", KF.FAULTS, ids=lambda f: f.name)
def test_planted_kernel_fault_is_caught(fault: KF.KernelFault) -> None:
    got = KF.run_fault(fault)
    assert got, f"{fault.name}: no cases selected"
    caught = {k: v for k, v in got.items() if not v.startswith(("pass", "observed", "skip"))}
    assert caught, f"{fault.name} ({fault.what}) passed every case: {got}"
    refused = [v for v in caught.values() if "ptxas refused" in v]
    assert not refused, f"{fault.name}: the faulty kernel does not even assemble, so it proves nothing: {refused[0]}"


def test_cases_pass_without_faults() -> None:
    import importlib

    from mmacts.backends.execute import Executor

    for suite in sorted({f.suite for f in KF.FAULTS}):
        drv = importlib.import_module(f"suites.{suite}.driver").DRIVER
        cases = {c.case_id: c for f in KF.FAULTS if f.suite == suite for c in KF.cases_for(f)}
        ex = Executor("model")
        for c in cases.values():
            ex.all_cases.setdefault(repr(c.form_key), []).append(c)
        for c in cases.values():
            rec = ex.execute(drv, c)
            assert rec["status"] == "pass", f"{c.case_id}: {rec['status']} {rec['message']}"
