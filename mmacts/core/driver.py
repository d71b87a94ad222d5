"""The contract between a suite and the generic backends (the ground floor: :mod:`mmacts.core`).

A suite knows its instruction: how to enumerate cases, how to build the kernel
module for a form, how to make inputs, what the answer must be, and how the
model executes it. The backends (``compile``, ``model``, ``cuda``) know nothing
about any instruction: they assemble, launch, time, compare and record. That
split is what keeps one kernel module per instruction form and lets the same
case run on every backend.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only annotations: the case model sits on this floor (it imports core.recipe); numpy stays
    # out of the CLI's start (the console names the driver contract)
    import numpy as np

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


NO_VM_PATH = "the suite has no VM launch path"
""":meth:`Driver.vm_reason`'s default: a suite that does not say which cases the PTX VM runs runs none there."""


class Driver(ABC):
    """One instruction family's knowledge, consumed by the generic backends.

    A suite's driver derives from this class and writes what it knows: the three abstract methods always,
    the run methods (:meth:`make_inputs` .. :meth:`launch`) when its cases run a kernel, and any optional
    hook whose default (written here, once) does not fit it. The generic machinery calls every hook
    directly; a driver written before this class (or a test's stand-in) reaches it through
    :func:`as_driver`, which gives it these defaults for what it lacks.
    """

    suite: str = ""
    compile_only: bool = False
    """True for a suite whose cases are only assembled and judged by the toolchain (``compile``): no
    inputs, no launch, every backend runs it as ``compile``."""

    # ------------------------------------------------------------------ what every suite writes
    @abstractmethod
    def cases(self, level: str) -> list[Case]:
        """Every case of this suite at ``level`` (the level includes the smaller ones)."""

    @abstractmethod
    def module_ptx(self, case: Case) -> str:
        """Complete PTX module for ``case.form_key`` (all cases of the form share it)."""

    @abstractmethod
    def device_supported(self, compute_capability: tuple[int, int]) -> str | None:
        """``None`` if a GPU of this capability runs the suite, else the skip reason."""

    # ------------------------------------------------------------------ what a suite that runs kernels writes
    def make_inputs(self, case: Case) -> Any:
        """Deterministic inputs for ``case`` (from ``case.recipe`` and ``case.seed``)."""
        raise NotImplementedError(f"suite {self.suite}: no inputs (nothing runs)")

    def expected(self, case: Case, inputs: Any) -> Expectation:
        """The reference answer, computed independently of the kernel and the model."""
        raise NotImplementedError(f"suite {self.suite}: no expected answer (nothing runs)")

    def run_record_model(self, case: Case, inputs: Any) -> LaunchResult:
        """Execute ``case`` on the suite's record-level model (CPU, from the encoded operands, no PTX): the
        executor's fallback where the VM refuses a case (``executor`` = ``record-model``). Was ``run_model``,
        a name that read like the ``model`` backend, which runs the PTX VM."""
        raise NotImplementedError(f"suite {self.suite}: no record-level model (nothing runs)")

    def launch(self, cases: list[Case], inputs: list[Any], module: Any) -> list[LaunchResult]:
        """Launch many cases of one form at once on a loaded ``module``; one result per case. The module is a
        GPU's (``cuda`` backend) or the PTX VM's ``VmModule`` (``model`` backend): the same code runs on both.
        Was ``run_cuda``, a name that hid the VM."""
        raise NotImplementedError(f"suite {self.suite}: no kernel launch (nothing runs)")

    # ------------------------------------------------------------------ optional hooks, with their defaults
    def vm_reason(self, case: Case) -> str | None:
        """Why the PTX VM cannot execute ``case``'s kernel (None: it can); the model backend then runs
        :meth:`run_record_model`. Default: the suite has no VM launch path."""
        return NO_VM_PATH

    def vm_profile(self, case: Case) -> Mapping[str, Any]:
        """The VM's device profile for ``case`` (e.g. the tensor-core arithmetic hypothesis). Default: none."""
        return {}

    def case_supported(self, case: Case, compute_capability: tuple[int, int]) -> str | None:
        """Why a GPU the suite supports still cannot run this case (None: it can), for suites whose cases
        target different architectures. Default: every case runs where the suite does."""
        return None

    def diagnose(self, case: Case, got: np.ndarray | None, want: np.ndarray, mask: np.ndarray | None) -> str:
        """A hint, appended to a failing case's message, on what the mismatch pattern points to. Default: none."""
        return ""

    def describe(self, case: Case, inputs: Any) -> str | None:
        """``mmacts explain``'s decoded view of the case's descriptors and operands. Default None: explain
        shows what it knows of the inputs itself."""
        return None

    def worth_caching(self, case: Case) -> bool:
        """Whether :meth:`expected`'s answer is worth keeping in the answer cache (most answers cost less than
        hashing their inputs). Default: not cached."""
        return False

    def form_readings(self, case: Case) -> tuple[tuple[str, str], ...]:
        """The readings ``case``'s form and recipe take for granted, beyond what its cited spec rows link:
        (ambiguity-register id, why) pairs. ``mmacts.ambiguity.assumes`` asks the suite, which alone knows
        its form records (a K = 96 scale layout, an FP4 nibble order, a probe's question); the register floor
        sits below the suites and names none of them. Default: none."""
        return ()

    def readings_not_assumed(self, case: Case) -> tuple[str, ...]:
        """Register ids ``case`` does not assume although its cited rows link them (a catalog link coarser
        than the question, e.g. a section about data-path layouts the suite never uses); ``assumes`` drops
        them whatever their source. Default: none."""
        return ()

    def run_case(self, case: Case, backend: str) -> dict[str, Any]:
        """For a suite that judges its cases itself (the peers: a library's own kernel and check): the
        record fields of one case run on ``backend``. Only called where :attr:`judges_own_cases`."""
        raise NotImplementedError(f"suite {self.suite}: the generic backends run its cases")

    @property
    def judges_own_cases(self) -> bool:
        """True when the driver writes :meth:`run_case`: the executor hands it each case whole."""
        return type(self).run_case is not Driver.run_case


_HOOKS = ("cases", "module_ptx", "device_supported", "make_inputs", "expected", "run_record_model", "launch",
          "vm_reason", "vm_profile", "case_supported", "diagnose", "describe", "worth_caching", "form_readings",
          "readings_not_assumed", "run_case")
"""The methods of the contract, all forwarded by :func:`as_driver`'s view."""


class _DriverView(Driver):
    """A driver that does not derive from :class:`Driver`, seen as one: each method of the contract is the
    driver's own where it has it (looked up at each call, so a test's monkeypatch is seen) and the default
    of :class:`Driver` where it has not. Any other attribute is the driver's."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "_inner":  # not set yet (a copy or unpickling builds the object bare)
            raise AttributeError(name)
        return getattr(self._inner, name)

    @property
    def suite(self) -> str:  # type: ignore[override]
        return self._inner.suite

    @property
    def compile_only(self) -> bool:  # type: ignore[override]
        return bool(getattr(self._inner, "compile_only", False))

    @property
    def judges_own_cases(self) -> bool:
        return callable(getattr(self._inner, "run_case", None))


def _forwarded(name: str) -> Any:
    default = getattr(Driver, name)

    def method(self: _DriverView, *args: Any, **kwargs: Any) -> Any:
        own = getattr(self._inner, name, None)
        return own(*args, **kwargs) if own is not None else default(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = default.__doc__
    return method


for _name in _HOOKS:
    setattr(_DriverView, _name, _forwarded(_name))
_DriverView.__abstractmethods__ = frozenset()


def as_driver(driver: Any) -> Driver:
    """``driver`` itself when it derives from :class:`Driver`; else a :class:`Driver` view of it (the
    one place where a driver's hooks are discovered by name: every caller then calls them directly)."""
    return driver if isinstance(driver, Driver) else _DriverView(driver)
