"""The driver contract: every optional hook declared once with its default, and drivers written before
the base class seen through it (``as_driver``) with their own hooks where they have them."""

from __future__ import annotations

from typing import Any

import pytest

from mmacts.cases.model import Case
from mmacts.core.driver import NO_VM_PATH, Driver, as_driver
from mmacts.core.suites import load_driver, suite_names

CASE = Case("c1", "s", "i", "sm_100a", ())


class _Minimal(Driver):
    suite = "minimal"

    def cases(self, level: str) -> list[Case]:
        return [CASE]

    def module_ptx(self, case: Case) -> str:
        return ""

    def device_supported(self, compute_capability: tuple[int, int]) -> str | None:
        return None


class _Legacy:
    """A driver that does not derive from Driver: two hooks of its own, none of the others."""

    suite = "legacy"

    def vm_reason(self, case: Case) -> str | None:
        return None

    def run_case(self, case: Case, backend: str) -> dict[str, Any]:
        return {"status": "pass"}


def test_a_driver_writes_three_methods_and_gets_every_hook_default() -> None:
    d = _Minimal()
    assert as_driver(d) is d
    assert d.vm_reason(CASE) == NO_VM_PATH and d.vm_profile(CASE) == {} and d.case_supported(CASE, (10, 0)) is None
    assert d.diagnose(CASE, None, None, None) == "" and d.describe(CASE, None) is None  # type: ignore[arg-type]
    assert not d.worth_caching(CASE) and not d.compile_only and not d.judges_own_cases
    with pytest.raises(NotImplementedError, match="minimal"):
        d.launch([CASE], [None], None)


def test_a_driver_not_derived_keeps_its_own_hooks_and_gets_the_defaults_of_the_rest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    legacy = _Legacy()
    d = as_driver(legacy)
    assert isinstance(d, Driver) and d.suite == "legacy"
    assert d.vm_reason(CASE) is None  # its own, not the default NO_VM_PATH
    assert d.judges_own_cases and d.run_case(CASE, "model") == {"status": "pass"}
    assert d.case_supported(CASE, (10, 0)) is None and not d.worth_caching(CASE) and not d.compile_only
    monkeypatch.setattr(legacy, "vm_reason", lambda case: "patched")  # a test's patch is seen through the view
    assert d.vm_reason(CASE) == "patched"


def test_every_suite_driver_answers_every_hook() -> None:
    for name in suite_names():
        d = as_driver(load_driver(name))
        case = d.cases("smoke")[0] if d.cases("smoke") else d.cases("full")[0]
        assert isinstance(d.compile_only, bool) and isinstance(d.judges_own_cases, bool)
        assert d.case_supported(case, (10, 0)) is None or isinstance(d.case_supported(case, (10, 0)), str)
        assert d.vm_reason(case) is None or isinstance(d.vm_reason(case), str)
        assert isinstance(d.worth_caching(case), bool)
