"""The verdict of one compile-conformance case: spec expectation vs what ptxas did.

Why here (and not in the compile backend): the rules that turn a ptxas outcome into a status are
toolchain knowledge -- how to read an error, which SASS to expect, when a refusal is about the
instruction under test and not about the scaffold around it. The backend only records the dict.
"""

from __future__ import annotations

import re
from typing import Any

from mmacts.toolchain.assemble import assemble
from mmacts.toolchain.sass import sass

UNDER_TEST_MARK = "// mmacts:under-test"
"""Comment a module generator puts on the line *before* each instruction under test, so a
refusal can be attributed: an error on another line means the scaffold is wrong, not the form."""

_LINE_RE = re.compile(r"line (\d+)[;:]")


def under_test_lines(ptx: str) -> set[int]:
    """1-based line numbers of the instructions marked with :data:`UNDER_TEST_MARK`."""
    lines = ptx.splitlines()
    return {i + 2 for i, ln in enumerate(lines) if ln.strip() == UNDER_TEST_MARK and i + 1 < len(lines)}


def error_lines(log: str) -> set[int]:
    """Line numbers ptxas blamed in its error lines."""
    out: set[int] = set()
    for ln in log.splitlines():
        if re.search(r"\berror\s*:", ln):
            m = _LINE_RE.search(ln)
            if m:
                out.add(int(m.group(1)))
    return out


def check_compile_case(case: Any, ptx: str) -> dict[str, Any]:
    """Assemble ``ptx`` for ``case.arch`` and judge it against ``case.expect``.

    Returns ``status`` (pass/fail/xfail), ``message`` (first ptxas error for a refusal; both
    readings when ptxas and the spec disagree), ``compile_s``, ``cached``, ``sass_opcodes``,
    ``mma_opcode`` and ``ptxas_version``.

    Extra checks read from ``case.form`` when present: ``ptxas_flags`` (sequence of flags),
    ``sass_mma_family`` (expected MMA base opcode, e.g. ``UTCQMMA``; a different one fails --
    silent emulation), ``error_like`` (regex a refusal's first error line must match).
    """
    form = dict(getattr(case, "form", {}) or {})
    flags = tuple(form.get("ptxas_flags", ()))
    r = assemble(ptx, case.arch, flags)
    rows = ",".join(getattr(case, "spec_rows", ()) or ())
    out: dict[str, Any] = {
        "compile_s": r.seconds,
        "cached": r.cached,
        "ptxas_version": r.ptxas_version,
        "sass_opcodes": "",
        "mma_opcode": "",
    }
    xfail = getattr(case, "xfail", "") or ""

    def disagree(msg: str) -> dict[str, Any]:
        if xfail:
            out.update(status="xfail", message=f"[{xfail}] {msg}")
        else:
            out.update(status="fail", message=msg)
        return out

    if r.ok:
        info = sass(r.cubin)
        out["sass_opcodes"] = info.summary()
        out["mma_opcode"] = info.mma_opcode
        if case.expect == "reject":
            return disagree(
                f"spec: reject ({rows}); ptxas {r.ptxas_version}: accepted for {case.arch}"
                f" (SASS {info.summary() or 'none'})"
            )
        want = form.get("sass_mma_family")
        if want and info.mma_family != want:
            return disagree(
                f"spec/expected SASS MMA family {want}; ptxas emitted {info.mma_opcode or 'no MMA'}"
                f" ({info.summary()})"
            )
        out.update(status="pass", message="")
        return out

    err = r.first_error_line
    if case.expect == "accept":
        return disagree(f"spec: accept ({rows}); ptxas {r.ptxas_version} refused for {case.arch}: {err}")
    # Expected refusal: make sure it is refused for the instruction under test.
    marked = under_test_lines(ptx)
    blamed = error_lines(r.log)
    if marked and blamed - marked:
        out.update(status="fail", message=f"refused, but not at the instruction under test: {err}")
        return out
    pattern = form.get("error_like")
    if pattern and not re.search(pattern, r.log):
        out.update(status="fail", message=f"refused for another reason than /{pattern}/: {err}")
        return out
    out.update(status="pass", message=err)
    return out
