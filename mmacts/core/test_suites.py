"""``suites.load_driver``: a suite's driver module is looked up once, its ``DRIVER`` read each time."""

from __future__ import annotations

import pytest

from mmacts.core import suites


def test_a_driver_is_looked_up_once_and_its_current_driver_served(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suites, "_MODULES", {})
    listings = []
    real = suites.suite_names
    monkeypatch.setattr(suites, "suite_names", lambda: listings.append(1) or real())
    first = suites.load_driver("hopper_validation")
    assert suites.load_driver("hopper_validation") is first
    assert len(listings) == 1  # every case asks for its driver: no directory listing per case
    mod = suites._MODULES[("hopper_validation", None)]
    swapped = object()
    monkeypatch.setattr(mod, "DRIVER", swapped)  # a test replacing DRIVER is served its own
    assert suites.load_driver("hopper_validation") is swapped
    with pytest.raises(KeyError):
        suites.load_driver("no_such_suite")



def test_every_suite_driver_derives_from_driver_and_writes_only_its_hooks() -> None:
    """Each suite's driver is a :class:`Driver` (no view probing its hooks by name) and defines no public method
    the base class does not declare: a misspelt hook (``worth_cachng``) would be a method nobody calls while the
    default ran in its place."""
    from mmacts.core.driver import Driver
    from mmacts.core.suites import load_driver, suite_names

    for name in suite_names():
        drv = load_driver(name)
        assert isinstance(drv, Driver), name
        own = {n for klass in type(drv).__mro__ if klass is not Driver and issubclass(klass, Driver)
               for n, v in vars(klass).items() if callable(v) and not n.startswith("_")}
        assert own <= set(dir(Driver)), (name, sorted(own - set(dir(Driver))))
