"""The contract between a suite and the generic backends (the ground floor: :mod:`mmacts.core`).

A suite knows its instruction: how to enumerate cases, how to build the kernel
module for a form, how to make inputs, what the answer must be, and how the
model executes it. The backends (``compile``, ``model``, ``cuda``) know nothing
about any instruction: they assemble, launch, time, compare and record. That
split is what keeps one kernel module per instruction form and lets the same
case run on every backend.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:  # only annotations: the case model sits on this floor (it imports core.recipe)
    from mmacts.cases.model import Case


@dataclass
class Expectation:
    """What a case must produce, and how strictly.

    ``mode`` is ``exact`` (exact-by-construction data: bit-for-bit),
    ``model:<name>`` (random data compared with a named numeric model, bit-for-bit),
    ``bound`` (|got - want| <= ``tolerance`` elementwise) or ``observe``
    (the spec leaves it open: record, never pass/fail); ``observe:model:<name>`` records
    against a named hypothesis model, so the report says which one.
    """

    want: np.ndarray
    mode: str = "exact"
    tolerance: np.ndarray | float | None = None
    note: str = ""
    control: str = ""
    """A control of the comparator itself (recipe ``control:*``): the verdict the comparison of this
    deliberately perturbed result must give (``fail`` or ``pass``). The case passes when it does, and
    fails when the comparator accepts a known-wrong result (or rejects a known-equal one)."""


@dataclass
class LaunchResult:
    """What one case returned from a device (or the model).

    ``status`` is ``ok`` or ``timeout`` (the kernel's bounded wait expired and it
    wrote its status word); ``got`` is the output decoded into the logical matrix.
    """

    got: np.ndarray | None
    status: str = "ok"
    kernel_us: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Driver(Protocol):
    """One instruction family's knowledge, consumed by the generic backends."""

    suite: str

    def cases(self, level: str) -> list[Case]:
        """Every case of this suite at ``level`` (the level includes the smaller ones)."""
        ...

    def module_ptx(self, case: Case) -> str:
        """Complete PTX module for ``case.form_key`` (all cases of the form share it)."""
        ...

    def make_inputs(self, case: Case) -> Any:
        """Deterministic inputs for ``case`` (from ``case.recipe`` and ``case.seed``)."""
        ...

    def expected(self, case: Case, inputs: Any) -> Expectation:
        """The reference answer, computed independently of the kernel and the model."""
        ...

    def run_record_model(self, case: Case, inputs: Any) -> LaunchResult:
        """Execute ``case`` on the suite's record-level model (CPU, from the encoded operands, no PTX): the
        executor's fallback where the VM refuses a case (``executor`` = ``record-model``). Was ``run_model``,
        a name that read like the ``model`` backend, which runs the PTX VM."""
        ...

    def launch(self, cases: list[Case], inputs: list[Any], module: Any) -> list[LaunchResult]:
        """Launch many cases of one form at once on a loaded ``module``; one result per case. The module is a
        GPU's (``cuda`` backend) or the PTX VM's ``VmModule`` (``model`` backend): the same code runs on both.
        Was ``run_cuda``, a name that hid the VM."""
        ...

    def device_supported(self, compute_capability: tuple[int, int]) -> str | None:
        """``None`` if a GPU of this capability runs the suite, else the skip reason."""
        ...
