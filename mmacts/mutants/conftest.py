"""The full mutation run (``-m mutants_full``) is opt-in: CI's ``-m "not mmacts_case"`` runs the fast subset only."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "mutants_full" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="full mutation run: pytest -m mutants_full (or mmacts selftest --mutants)")
    for item in items:
        if "mutants_full" in item.keywords:
            item.add_marker(skip)
