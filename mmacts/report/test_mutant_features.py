"""Per-feature coverage: every feature names mutants that exist, and the status says how they were caught."""

from __future__ import annotations

from mmacts.mutants.registry import all_mutants
from mmacts.report import mutant_features as FE


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


def _doc(how_shift: str) -> dict:
    """A coverage document whose stored ``features`` block is stale: it says shift.down can fail."""
    ms = [{"name": "shift-vm.rows-up", "killed": True, "how": how_shift, "killers": ["c.other", "c.shift.down"]},
          {"name": "shift-vm.all-lanes", "killed": False, "how": "survived", "killers": []}]
    return {"mutants": ms, "features": {"shift.down": {"status": "can-fail", "what": "stale", "mutants": [],
                                                       "caught_by_fail": ["x"], "caught_by_observation": []}}}


def test_a_feature_seen_only_by_an_observation_is_not_reported_as_proved() -> None:
    rows = {r["feature"]: r for r in FE.rows(_doc("observed"))}
    assert rows["shift.down"]["status"] == "observed-only"
    assert (rows["shift.down"]["fail"], rows["shift.down"]["observed"], rows["shift.down"]["mutants"]) == (0, 1, 2)
    assert rows["shift.down"]["example case"] == "c.shift.down"  # the one naming the feature's last word
    assert rows["collector.a"]["status"] == "none" and rows["collector.a"]["example case"] == ""
    assert "0 of 14 features a failing mutant proves can fail, 1 observed-only (shift.down), 13 none" \
        in FE.summary(_doc("observed"))
    rows = {r["feature"]: r for r in FE.rows(_doc("fail"))}
    assert rows["shift.down"]["status"] == "can-fail" and rows["shift.down"]["fail"] == 1
    assert FE.summary(_doc("fail")).startswith("1 of 14 features")


def test_without_mutation_results_there_are_no_feature_rows() -> None:
    assert FE.rows(None) == [] and FE.rows({}) == []
    stored = {"features": {"k": {"status": "none", "what": "w", "mutants": [], "caught_by_fail": [],
                                 "caught_by_observation": []}}}
    assert [r["feature"] for r in FE.rows(stored)] == ["k"]  # no mutants: the stored block is all there is
