"""``select.suite_cases``: each suite's cases are enumerated once per process and (suite, level)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mmacts.runner import select
from mmacts.runner.select import Selection


class _Counting:
    """A driver that forwards ``cases`` to the real one and counts the calls."""

    def __init__(self, real: Any) -> None:
        self.real, self.calls = real, []

    def cases(self, level: str) -> list[Any]:
        self.calls.append(level)
        return self.real.cases(level)


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    select.clear_case_cache()
    yield
    select.clear_case_cache()


def _swap(monkeypatch: pytest.MonkeyPatch, suite: str) -> _Counting:
    mod = importlib.import_module(f"suites.{suite}.driver")
    real = mod.DRIVER.real if isinstance(mod.DRIVER, _Counting) else mod.DRIVER
    counting = _Counting(real)
    monkeypatch.setattr(mod, "DRIVER", counting)
    return counting


def test_cases_enumerated_once_per_suite_and_level(monkeypatch: pytest.MonkeyPatch, fresh_cache: None) -> None:
    drv = _swap(monkeypatch, "probes")
    everything = list(select.cases(["probes"], "full", Selection()))
    some = list(select.cases(["probes"], "full", Selection(k="sm_90a")))
    select.check_exact_names(["probes"], "full", Selection(arch=("sm_90a",)))
    assert drv.calls == ["full"]
    ids = [c.case_id for c in everything]
    assert some and {c.case_id for c in some} < set(ids)
    assert ids == [c.case_id for c in drv.real.cases("full")]
    smoke = list(select.cases(["probes"], "smoke", Selection()))
    assert drv.calls == ["full", "smoke"] and smoke and len(smoke) < len(everything)


def test_a_swapped_driver_is_asked_afresh(monkeypatch: pytest.MonkeyPatch, fresh_cache: None) -> None:
    first = _swap(monkeypatch, "probes")
    list(select.cases(["probes"], "smoke", Selection()))
    second = _swap(monkeypatch, "probes")  # a test replacing DRIVER gets its own driver's cases
    list(select.cases(["probes"], "smoke", Selection()))
    assert first.calls == ["smoke"] and second.calls == ["smoke"]
    select.clear_case_cache()
    list(select.cases(["probes"], "smoke", Selection()))
    assert second.calls == ["smoke", "smoke"]


def test_extra_suites_are_not_remembered(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                         fresh_cache: None) -> None:
    """The runner's test doubles read the environment when listed: never served stale."""
    d = tmp_path / "extra" / "faulty_cache_probe"
    d.mkdir(parents=True)
    (d / "driver.py").write_text("from mmacts.runner.fake_suite import FAULTY_DRIVER as DRIVER\n")
    monkeypatch.setenv("MMACTS_EXTRA_SUITES_DIR", str(tmp_path / "extra"))
    monkeypatch.setenv("MMACTS_FAULTY_CASES", "good")
    one = [c.case_id for c in select.cases(["faulty_cache_probe"], "smoke", Selection())]
    monkeypatch.setenv("MMACTS_FAULTY_CASES", "good,bad")
    two = [c.case_id for c in select.cases(["faulty_cache_probe"], "smoke", Selection())]
    assert len(one) == 1 and len(two) == 2
