"""The compile-conformance suite's Driver: cases and their PTX modules; nothing runs on a GPU.

Every case is an instruction form + target + the spec's verdict (``accept``/``reject``); the
generic compile backend assembles :meth:`CompileDriver.module_ptx` and judges it with
:func:`mmacts.toolchain.conformance.check_compile_case`.
"""

from __future__ import annotations

import functools
from typing import Any

from mmacts.cases.model import Case
from mmacts.ptx.compile_forms import build_module
from suites.compile.cases import SUITE, build_cases


@functools.cache
def _all_cases() -> tuple[Case, ...]:
    return tuple(build_cases())


class CompileDriver:
    """Driver of the ``compile`` suite (compile-only: the run/model methods are not provided)."""

    suite = SUITE
    compile_only = True

    def cases(self, level: str) -> list[Case]:
        """Every compile case at ``level`` (smoke < standard < full)."""
        return [c for c in _all_cases() if c.in_level(level)]

    def module_ptx(self, case: Case) -> str:
        """The complete module for ``case`` (its form, target and PTX ISA version)."""
        return build_module(case.form, case.arch, case.form.get("ptx_version"))

    def make_inputs(self, case: Case) -> Any:
        raise NotImplementedError("compile suite: nothing to run")

    def expected(self, case: Case, inputs: Any) -> Any:
        raise NotImplementedError("compile suite: the expectation is case.expect")

    def run_record_model(self, case: Case, inputs: Any) -> Any:
        raise NotImplementedError("compile suite: nothing to run")

    def launch(self, cases: list[Case], inputs: list[Any], module: Any) -> list[Any]:
        raise NotImplementedError("compile suite: nothing to run")

    def device_supported(self, compute_capability: tuple[int, int]) -> str | None:
        return "compile-only suite: runs under --backend compile"


DRIVER = CompileDriver()
