"""The house's measures may only get better: a ratchet on ``scripts/architecture.py`` (issue 25).

``scripts/architecture-baseline.json`` holds today's counts (upward imports, file and package cycles, project
imports inside functions, functions over 100 lines, string-keyed reads of case fields). A change that raises
one fails here, naming what is new; a change that lowers one passes, and ``python scripts/architecture.py
--write-baseline`` then locks the gain in. A count at 0 is a measure met: it stays 0.

Why counts and not the lists: the lists name lines and functions that move with every edit; what must not
happen is that the house gets worse, and a count says that without pinning the code's text.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _architecture() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mmacts_architecture_script", ROOT / "scripts" / "architecture.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up by name
    spec.loader.exec_module(mod)
    return mod


A = _architecture()


@pytest.fixture(scope="module")
def measures() -> Any:
    return A.measure(ROOT)


def _grown(counts: dict[str, int], baseline: dict[str, int]) -> dict[str, tuple[int, int]]:
    return {k: (baseline.get(k, 0), v) for k, v in counts.items() if v > baseline.get(k, 0)}


def test_no_measure_gets_worse(measures: Any) -> None:
    baseline = json.loads(A.BASELINE.read_text(encoding="utf-8"))
    grown = _grown(measures.counts(), baseline)
    assert not grown, (
        "the house got worse (measure: (baseline, now)): " + repr(grown)
        + "\n" + A.report(measures, show_all=True)
        + "\nmove the shared piece down a floor instead (see FLOORS in scripts/architecture.py)")


def test_every_module_is_on_a_floor() -> None:
    """A new top-level package must be placed on a floor, or the upward-import count would not see it."""
    for module in A.project_files(ROOT):
        A.floor_of(module)


def test_the_measures_see_what_they_count(tmp_path: Path) -> None:
    """Planted faults: an upward import, a two-file cycle through an import inside a function, a long function,
    a string-keyed read through a local alias; each is counted (the checks can fail)."""
    core = tmp_path / "mmacts" / "core"
    runner = tmp_path / "mmacts" / "runner"
    for d in (core, runner, tmp_path / "reference", tmp_path / "suites"):
        d.mkdir(parents=True)
        (d / "__init__.py").write_text("")
    (tmp_path / "mmacts" / "__init__.py").write_text("")
    (core / "a.py").write_text("from mmacts.runner import b\n")
    (runner / "b.py").write_text("def f():\n    from mmacts.core import a\n")
    body = "".join("    x = 1\n" for _ in range(A.LONG_FUNCTION))
    (runner / "c.py").write_text(f"def long(case):\n    f = case.form\n    y = f['kind']\n{body}"
                                 "def unpacked(case):\n    fm, rt = case.form, case.runtime\n    return rt.get('m')\n")
    m = A.measure(tmp_path)
    assert [u.split(" ")[0] for u in m.upward] == ["mmacts/core/a.py:1"]
    assert m.file_cycles == [["mmacts.core.a", "mmacts.runner.b"]]
    assert m.package_cycles == [["mmacts.core", "mmacts.runner"]]
    assert (m.imports, m.imports_in_functions) == (2, 1)
    assert [x.split(" ")[1] for x in m.long_functions] == ["long"]
    assert m.case_reads == ["mmacts/runner/c.py:3 'kind'", f"mmacts/runner/c.py:{A.LONG_FUNCTION + 6} 'm'"]
    assert _grown(m.counts(), {**m.counts(), "upward imports": 0}) == {"upward imports": (0, 1)}
