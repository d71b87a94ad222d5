"""Find the suites: every ``suites/<name>/driver.py`` that exposes ``DRIVER``.

The suites live in the checkout beside the package (the suite is run from a
clone), so discovery is a directory listing, not a registry anyone must edit.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
SUITES_DIR = REPO_ROOT / "suites"


def suite_names() -> list[str]:
    """Names of the suites present in this checkout, sorted."""
    if not SUITES_DIR.is_dir():
        return []
    return sorted(p.parent.name for p in SUITES_DIR.glob("*/driver.py"))


def load_driver(name: str) -> Any:
    """Import ``suites.<name>.driver`` and return its ``DRIVER``."""
    if name not in suite_names():
        raise KeyError(name)
    if str(REPO_ROOT) not in sys.path:  # a console script's sys.path does not hold the checkout
        sys.path.insert(0, str(REPO_ROOT))
    mod = importlib.import_module(f"suites.{name}.driver")
    return mod.DRIVER
