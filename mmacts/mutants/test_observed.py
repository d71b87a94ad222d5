"""A mutant that is one reading of an open question (``Mutant.observed``) is caught by an observation that
differs from its hypothesis -- never by one that agrees, and a mutant that is not ``observed`` never by either."""

from __future__ import annotations

from mmacts.cases.model import Case
from mmacts.mutants.engine import Mutant, judge


def _case(cid: str) -> Case:
    return Case(case_id=cid, suite="s", instruction="i", arch="sm_100a", spec_rows=(), level="standard",
                form={}, runtime={}, recipe="probe:x")


def _m(observed: bool) -> Mutant:
    return Mutant("m", "f", "w", (), lambda: None, "s", lambda c: True, observed=observed)


def test_observed_mutant_needs_a_differing_observation() -> None:
    cases = [_case("a"), _case("b")]
    agree = {"a": {"status": "observed", "mismatches": 0, "message": ""},
             "b": {"status": "pass", "mismatches": 0, "message": ""}}
    differ = dict(agree, a={"status": "observed", "mismatches": 3, "message": ""})
    assert judge(_m(True), cases, agree)[0] == "survived"
    how, killers = judge(_m(True), cases, differ)
    assert how == "observed" and set(killers) == {"a"}
    assert judge(_m(False), cases, differ)[0] == "survived"
