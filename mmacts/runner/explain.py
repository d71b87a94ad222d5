"""``mmacts explain CASE_ID``: everything a person needs to reproduce one case by hand."""

from __future__ import annotations

import sys

import numpy as np

from mmacts.backends import (
    assembler,
    execute,  # module attributes: tests patch execute.vm_reason
)
from mmacts.cases.model import Case
from mmacts.compare.mismatch_map import render
from mmacts.core.driver import Driver, as_driver
from mmacts.core.suites import load_driver, suite_names
from mmacts.ptxvm.trace import Tracer
from mmacts.report.run_dir import ReportInputError, read_meta, run_records
from mmacts.runner.explain_tcgen05 import sections
from mmacts.toolchain.sass import disassemble


def find_case(case_id: str) -> tuple[Driver, Case] | None:
    """Search every suite at the ``full`` level for ``case_id``."""
    for name in suite_names():
        driver = load_driver(name)
        for case in driver.cases("full"):
            if case.case_id == case_id:
                return as_driver(driver), case
    return None


SECTION_LINES, LINE_CHARS = 120, 240
"""Cap of every section (``--full`` lifts it): a probe's inputs were one 923 KB line."""

_CAP = {"lines": SECTION_LINES, "chars": LINE_CHARS}


def cap(body: str, max_lines: int | None = None, max_chars: int | None = None) -> str:
    """``body`` cut to ``max_lines`` lines of ``max_chars`` characters, saying what was cut."""
    max_lines = _CAP["lines"] if max_lines is None else max_lines
    max_chars = _CAP["chars"] if max_chars is None else max_chars
    if not max_lines:
        return body
    lines = body.rstrip().splitlines()
    out = [ln if len(ln) <= max_chars else f"{ln[:max_chars]} ... [{len(ln) - max_chars} more characters cut]"
           for ln in lines[:max_lines]]
    if len(lines) > max_lines:
        out.append(f"... [{len(lines) - max_lines} more lines cut; mmacts explain --full shows all]")
    return "\n".join(out)


def _show(title: str, body: str) -> None:
    print(f"===== {title}")
    print(cap(body))
    print()


def explain(case_id: str, *, trace: bool = False, threads: str = "0:0", max_lines: int = 4000,
            run_dir: str | None = None, full: bool = False) -> int:
    """Print PTX, SASS, decoded descriptors, inputs and reference output of one case; with ``trace``,
    run it on the PTX VM and print what the chosen threads executed, instruction by instruction;
    with ``run_dir``, what that run got against what it wanted, with a mismatch map."""
    found = find_case(case_id)
    if found is None:
        print(f"mmacts: error: no case with id {case_id!r} (try `mmacts list --level full`)", file=sys.stderr)
        return 2
    driver, case = found
    run_rec = None
    if run_dir is not None:
        run_rec = _run_record(run_dir, case_id)
        if isinstance(run_rec, str):
            print(f"mmacts: error: {run_rec}", file=sys.stderr)
            return 2
    _CAP.update(lines=0 if full else SECTION_LINES, chars=LINE_CHARS)
    _show("case", "\n".join(f"{k}: {getattr(case, k)}" for k in
                            ("case_id", "suite", "instruction", "arch", "spec_rows", "level", "form",
                             "runtime", "recipe", "seed", "expect", "xfail")))
    ptx = driver.module_ptx(case)
    _show("PTX", ptx)
    try:
        res = assembler.assemble(ptx, case.arch)
        if res.ok:
            text = disassemble(res.cubin)
            lines = [ln for ln in text.splitlines() if "/*" in ln and ";" in ln]
            _show(f"SASS ({assembler.ptxas_version()})", "\n".join(lines))
        else:
            _show("ptxas", res.log)
    except Exception as exc:
        _show("SASS", f"unavailable: {exc}")
    if driver.compile_only:
        return 0
    np.set_printoptions(linewidth=160, threshold=sys.maxsize if full else 256, edgeitems=4)
    inputs = driver.make_inputs(case)
    described = driver.describe(case, inputs)
    if described is not None:
        _show("descriptors and operands (decoded)", described)
    elif getattr(inputs, "programs", None) is not None:
        for title, body in sections(case, inputs):
            _show(title, body)
    else:
        _show("inputs", repr(inputs))
    exp = driver.expected(case, inputs)
    _show(f"reference output (mode {exp.mode})", repr(exp.want))
    if run_rec is not None:
        _show(f"got vs want in {run_dir}", _got_vs_want(driver, case, run_rec, exp))
    if trace:
        return _trace(driver, case, threads, max_lines)
    return 0


def _run_record(run_dir: str, case_id: str) -> dict | str:
    """The last record of ``case_id`` in a finished run, or a one-line reason."""
    from pathlib import Path


    try:
        read_meta(Path(run_dir))
        recs = [r for r in run_records(Path(run_dir)) if r.get("case_id") == case_id]
    except ReportInputError as exc:
        return str(exc)
    if not recs:
        return f"{run_dir} has no record of {case_id}"
    return recs[-1]


def _got_vs_want(driver: object, case: Case, rec: dict, exp: object) -> str:
    head = [f"{k}: {rec.get(k)}" for k in ("status", "backend", "device", "mismatches", "max_abs_err",
                                            "max_ulp_err", "first_mismatch", "message") if rec.get(k) is not None]
    mm = rec.get("mismatch_map")
    if mm:
        return "\n".join([*head, "", "mismatch map (recorded by the run):", render(mm)])
    if rec.get("status") not in ("fail", "observed", "xfail") or not rec.get("mismatches"):
        return "\n".join([*head, "", "no mismatching elements recorded"])
    # an older run kept no map: re-run the case on the PTX VM and say that this is the model's answer
    if execute.vm_reason(driver, case) is not None:  # type: ignore[arg-type]
        return "\n".join([*head, "", "the run stored no mismatch map and this case does not run on the PTX VM"])
    again = execute.Executor("model").execute(driver, case)  # type: ignore[arg-type]
    mm = again.get("mismatch_map")
    note = ("the run stored no mismatch map; the PTX VM re-ran the case "
            f"(status {again.get('status')}): this map is the MODEL's, not the run's {rec.get('backend')} answer")
    return "\n".join([*head, "", note, render(mm) if mm else "the VM's result matches the reference"])


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
    why = execute.vm_reason(driver, case)  # type: ignore[arg-type]
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
    rec = execute.Executor("model", vm_trace=tracer).execute(driver, case)  # type: ignore[arg-type]
    print()
    _show("result on the PTX VM", f"status: {rec['status']}\nmessage: {rec['message']}")
    return 0
