"""Find the suites: every ``suites/<name>/driver.py`` that exposes ``DRIVER``.

The suites live in the checkout beside the package (the suite is run from a
clone), so discovery is a directory listing, not a registry anyone must edit.

``MMACTS_EXTRA_SUITES_DIR`` names one more folder of ``<name>/driver.py`` suites
(imported by path). It exists so the runner's own tests can drive ``mmacts run``
end to end with a suite that misbehaves on purpose, without putting that suite
into ``suites/``; a site may also use it for private suites.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
SUITES_DIR = REPO_ROOT / "suites"
EXTRA_ENV = "MMACTS_EXTRA_SUITES_DIR"


def _extra_dir() -> Path | None:
    d = os.environ.get(EXTRA_ENV)
    return Path(d) if d and Path(d).is_dir() else None


def suite_names() -> list[str]:
    """Names of the suites present in this checkout (and the extra folder), sorted."""
    names = {p.parent.name for p in SUITES_DIR.glob("*/driver.py")} if SUITES_DIR.is_dir() else set()
    extra = _extra_dir()
    if extra is not None:
        names |= {p.parent.name for p in extra.glob("*/driver.py")}
    return sorted(names)


_MODULES: dict[tuple[str, str | None], Any] = {}
"""Driver modules already found, by (name, extra folder): every case of a run asks for its driver, and
the lookup (a directory listing, then an import) was 0.14 ms a case on a fast CPU, 0.4 ms on a GPU host.
The module is kept, not its ``DRIVER``, so a driver a test swaps in is the one served."""


def load_driver(name: str) -> Any:
    """Import ``suites.<name>.driver`` (or the extra folder's) and return its ``DRIVER``."""
    key = (name, os.environ.get(EXTRA_ENV))
    mod = _MODULES.get(key)
    if mod is None:
        mod = _MODULES[key] = _driver_module(name)
    return mod.DRIVER


def _driver_module(name: str) -> Any:
    if name not in suite_names():
        raise KeyError(name)
    if str(REPO_ROOT) not in sys.path:  # a console script's sys.path does not hold the checkout
        sys.path.insert(0, str(REPO_ROOT))
    if (SUITES_DIR / name / "driver.py").is_file():
        return importlib.import_module(f"suites.{name}.driver")
    extra = _extra_dir()
    assert extra is not None
    modname = f"mmacts_extra_suites.{name}.driver"
    if modname not in sys.modules:
        spec = importlib.util.spec_from_file_location(modname, extra / name / "driver.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[modname] = mod
        spec.loader.exec_module(mod)
    return sys.modules[modname]
