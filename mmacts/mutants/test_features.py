"""Per-feature coverage: every feature names mutants that exist, and the status says how they were caught."""

from __future__ import annotations

from mmacts.mutants import features as FE
from mmacts.mutants.registry import all_mutants


def test_every_feature_has_a_mutant_in_the_registry() -> None:
    names = [m.name for m in all_mutants()]
    for key, _, hit in FE.FEATURES:
        assert any(hit(n) for n in names), f"feature {key}: no mutant of the registry breaks it"


def test_status_distinguishes_fail_from_observation() -> None:
    ms = [{"name": "shift-vm.rows-up", "killed": True, "how": "fail"},
          {"name": "collector-vm.use-reads-memory", "killed": True, "how": "observed"},
          {"name": "dplace-vm.dol-msb-first", "killed": False, "how": "survived"}]
    cov = FE.feature_coverage(ms)
    assert cov["shift.down"]["status"] == "can-fail"
    assert cov["collector.a"]["status"] == "observed-only"
    assert cov["disable-output-lane"]["status"] == "none"
    assert "collector.a" in FE.table({"features": cov})
