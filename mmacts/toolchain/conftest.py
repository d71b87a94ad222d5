"""Fixtures of the toolchain self-tests: every test gets its own cache directory."""

from __future__ import annotations

import pytest

from mmacts.toolchain.cache import CACHE_ENV


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    yield
