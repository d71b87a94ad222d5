"""The compile-conformance suite's Driver: cases and their PTX modules; nothing runs on a GPU.

Every case is an instruction form + target + the spec's verdict (``accept``/``reject``); the
generic compile backend assembles :meth:`CompileDriver.module_ptx` and judges it with
:func:`mmacts.toolchain.conformance.check_compile_case`.
"""

from __future__ import annotations

import functools
from typing import cast

from mmacts.cases.model import Case
from mmacts.core.driver import Driver
from mmacts.ptx.compile_forms import build_module
from suites.compile.cases import SUITE, build_cases
from suites.compile.fields import CompileForm


@functools.cache
def _all_cases() -> tuple[Case, ...]:
    return tuple(build_cases())


class CompileDriver(Driver):
    """Driver of the ``compile`` suite (compile-only: the run methods are :class:`Driver`'s, which refuse)."""

    suite = SUITE
    compile_only = True

    def cases(self, level: str) -> list[Case]:
        """Every compile case at ``level`` (smoke < standard < full)."""
        return [c for c in _all_cases() if c.in_level(level)]

    def module_ptx(self, case: Case) -> str:
        """The complete module for ``case`` (its form, target and PTX ISA version)."""
        return build_module(case.form, case.arch, cast(CompileForm, case.form).ptx_version)

    def device_supported(self, compute_capability: tuple[int, int]) -> str | None:
        return "compile-only suite: runs under --backend compile"


DRIVER = CompileDriver()
