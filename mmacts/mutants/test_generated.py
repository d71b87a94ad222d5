"""Generated mutation (cosmic-ray) over project modules: the machinery is pinned without the tool; with the tool
installed (``pip install cosmic-ray``), a seeded sample of one module's mutants must each be killed by the
target's cases or stand in ``generated/survivors.yaml`` with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmacts.mutants import generated as GEN

ROOT = Path(__file__).resolve().parents[2]


def test_targets_name_modules_and_cases() -> None:
    from mmacts.mutants.engine import _driver

    for name, t in GEN.TARGETS.items():
        assert (ROOT / t.module).is_file(), name
        assert all((ROOT / u).is_file() for u in t.unit_tests)
        picked = [c for s in t.suites for c in _driver(s).cases("standard") if t.pick(c)]
        assert picked, f"target {name} selects no suite case"


def test_the_check_passes_unmutated() -> None:
    assert GEN.check("shift") == 0


def test_every_committed_survivor_has_a_reason() -> None:
    doc = GEN.load_survivors()
    missing = [f"{t}: {k}" for t, ss in doc.items() for k, v in (ss or {}).items() if not str(v.get("reason", ""))]
    assert not missing, missing


def test_survivor_keys_survive_renumbering() -> None:
    m = {"operator": "core/NumberReplacer", "line": 40, "diff": "--- a\n+++ b\n-    x = 1\n+    x = 2\n"}
    assert GEN._key(m) == GEN._key(dict(m, line=41)) == "core/NumberReplacer @ x = 1 => x = 2"


@pytest.mark.skipif(GEN.cosmic_ray() is None, reason="cosmic-ray not installed (pip install cosmic-ray)")
def test_a_sample_of_generated_mutants_is_killed_or_justified() -> None:
    _, results = GEN.run_target(GEN.cosmic_ray(), "shift", sample=2, seed=26, progress=False)
    known = GEN.load_survivors().get("shift", {}) or {}
    for r in results:
        assert r["outcome"] == "killed" or GEN._key(r) in known, r
