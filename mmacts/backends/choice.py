"""Which backend runs a case, decided in one place (issue 25, item 2).

Before, three places answered the question each in its own words: the CLI's banner (which hardware suites
the model will run, and why), the executor (which backend runs this case, or why it is skipped) and the
report's ``--require-gpu`` check. Two of them decide (the third reads what was recorded): they now call
:func:`choose` and carry its :class:`Choice`, so the banner cannot announce a plan the executor does not follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mmacts.backends import AUTO, COMPILE, CUDA, MODEL, gpu

if TYPE_CHECKING:
    from mmacts.cases.model import Case
    from mmacts.core.driver import Driver


@dataclass(frozen=True)
class Choice:
    """The backend that runs a case (``cuda``, ``model`` or ``compile``; never ``auto``) and why.

    ``skip`` is set when the named backend cannot run it (``--backend cuda`` with no usable GPU, or a GPU the
    suite or the case does not fit): the case is skipped with that reason, never run elsewhere.
    ``on_model`` is set when a hardware case runs on the PTX VM: the banner says so, the verdict is the VM's.
    """

    backend: str
    skip: str | None = None
    on_model: str | None = None


def unsupported(driver: Driver, case: Case | None, cc: tuple[int, int]) -> str | None:
    """Why a GPU of compute capability ``cc`` cannot run ``case`` (None if it can): the suite's rule, then the
    case's own (``case_supported``: the probes mix sm_90a and Blackwell paths). ``case=None`` asks for the suite."""
    reason = driver.device_supported(cc)
    if reason is None and case is not None:
        reason = driver.case_supported(case, cc)
    return reason


def choose(requested: str, driver: Driver, case: Case | None = None,
           status: gpu.GpuStatus | None = None) -> Choice:
    """The :class:`Choice` for ``case`` of ``driver`` (or the whole suite, ``case=None``) when ``requested``
    (``auto``, ``cuda``, ``model``, ``compile``) was asked for. ``status`` is the GPU probe (probed if None)."""
    if driver.compile_only or requested == COMPILE:
        return Choice(COMPILE)
    if requested == MODEL:
        return Choice(MODEL, on_model="--backend model")
    status = status if status is not None else gpu.probe()
    if not status.usable:
        why = f"no usable GPU: {status.reason}"
        return Choice(MODEL, on_model=why) if requested == AUTO else Choice(CUDA, skip=why)
    reason = unsupported(driver, case, status.compute_capability)
    if requested == AUTO:
        if reason is None:
            return Choice(CUDA)
        return Choice(MODEL, on_model=f"{status.name} ({status.sm}) does not fit them")
    return Choice(CUDA, skip=reason)
