"""``mmacts explain CASE_ID``: everything a person needs to reproduce one case by hand."""

from __future__ import annotations

import sys

import numpy as np

from mmacts.cases.model import Case
from mmacts.runner.suites import load_driver, suite_names


def find_case(case_id: str) -> tuple[object, Case] | None:
    """Search every suite at the ``full`` level for ``case_id``."""
    for name in suite_names():
        driver = load_driver(name)
        for case in driver.cases("full"):
            if case.case_id == case_id:
                return driver, case
    return None


def _show(title: str, body: str) -> None:
    print(f"===== {title}")
    print(body.rstrip())
    print()


def explain(case_id: str) -> int:
    """Print PTX, SASS, decoded descriptors, inputs and reference output of one case."""
    found = find_case(case_id)
    if found is None:
        print(f"mmacts: error: no case with id {case_id!r} (try `mmacts list --level full`)", file=sys.stderr)
        return 2
    driver, case = found
    _show("case", "\n".join(f"{k}: {getattr(case, k)}" for k in
                            ("case_id", "suite", "instruction", "arch", "spec_rows", "level", "form",
                             "runtime", "recipe", "seed", "expect", "xfail")))
    ptx = driver.module_ptx(case)
    _show("PTX", ptx)
    try:
        from mmacts.backends import assembler
        from mmacts.toolchain.sass import disassemble

        res = assembler.assemble(ptx, case.arch)
        if res.ok:
            text = disassemble(res.cubin)
            lines = [ln for ln in text.splitlines() if "/*" in ln and ";" in ln]
            _show(f"SASS ({assembler.ptxas_version()})", "\n".join(lines))
        else:
            _show("ptxas", res.log)
    except Exception as exc:
        _show("SASS", f"unavailable: {exc}")
    if getattr(driver, "compile_only", False):
        return 0
    np.set_printoptions(linewidth=160, threshold=4096)
    inputs = driver.make_inputs(case)
    describe = getattr(driver, "describe", None)
    if describe is not None:
        _show("descriptors and operands (decoded)", describe(case, inputs))
    else:
        _show("inputs", repr(inputs))
    exp = driver.expected(case, inputs)
    _show(f"reference output (mode {exp.mode})", repr(exp.want))
    return 0
