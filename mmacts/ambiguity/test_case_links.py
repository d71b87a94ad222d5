"""Every register entry a case cites as its expected deviation must exist in the register."""

from __future__ import annotations

import pytest

from mmacts.ambiguity import load_register
from mmacts.core.suites import load_driver, suite_names


@pytest.mark.parametrize("suite", suite_names())
def test_xfail_ids_are_register_entries(suite: str) -> None:
    ids = {e.id for e in load_register().entries}
    cited = {c.xfail for c in load_driver(suite).cases("standard") if c.xfail}
    missing = sorted(cited - ids)
    assert not missing, f"{suite} cites register entries that do not exist: {missing}"
