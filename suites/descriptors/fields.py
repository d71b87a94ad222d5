"""The ``descriptors`` suite's run-time record: the check a case runs.

Declared once here (issue 25, item 1). The form needs no record of its own: it is the tcgen05.mma that would
consume the descriptor a check decodes, a compile-suite form (:class:`suites.compile.fields.TcMmaForm`, built
by :func:`suites.descriptors.driver.carrier_form`), which :mod:`mmacts.ptx.compile_forms` assembles.
"""

from __future__ import annotations

from dataclasses import dataclass

from mmacts.core.fields import Fields


@dataclass(frozen=True)
class CheckRuntime(Fields):
    """The known-answer check a case runs: a name of ``suites.descriptors.checks.all_checks``."""

    check: str = ""
