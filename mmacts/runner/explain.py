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


def explain(case_id: str, *, trace: bool = False, threads: str = "0:0", max_lines: int = 4000) -> int:
    """Print PTX, SASS, decoded descriptors, inputs and reference output of one case; with ``trace``,
    run it on the PTX VM and print what the chosen threads executed, instruction by instruction."""
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
    if trace:
        return _trace(driver, case, threads, max_lines)
    return 0


def parse_threads(spec: str) -> tuple[tuple[int, int], ...]:
    """``"0:0,0:32,1:5"`` -> ((CTA, thread), ...); a bare number is a thread of CTA 0."""
    out = []
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        cta, _, tid = item.rpartition(":")
        out.append((int(cta or 0), int(tid)))
    if not out:
        raise ValueError("no threads named")
    return tuple(out)


def _trace(driver: object, case: Case, threads: str, max_lines: int) -> int:
    from mmacts.backends.execute import Executor, vm_reason
    from mmacts.ptxvm.trace import Tracer

    why = vm_reason(driver, case)  # type: ignore[arg-type]
    if why is not None:
        print(f"mmacts: error: {case.case_id} does not run on the PTX VM: {why}", file=sys.stderr)
        return 2
    try:
        chosen = parse_threads(threads)
    except ValueError as exc:
        print(f"mmacts: error: --threads {threads!r}: {exc}", file=sys.stderr)
        return 2
    print(f"===== PTX VM trace (CTA:thread {', '.join(f'{c}:{t}' for c, t in chosen)})")
    tracer = Tracer(chosen, max_lines)
    rec = Executor("model", vm_trace=tracer).execute(driver, case)  # type: ignore[arg-type]
    print()
    _show("result on the PTX VM", f"status: {rec['status']}\nmessage: {rec['message']}")
    return 0
