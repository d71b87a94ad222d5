"""The data recipe value: one parse of the written form, and the written form given back unchanged."""

from __future__ import annotations

import pytest

from mmacts.cases.model import Case
from mmacts.core.recipe import CONTROL, EXACT, PROBE, RANDOM, Recipe


@pytest.mark.parametrize("text, kind, name", [
    ("exact", EXACT, ""), ("random", RANDOM, ""), ("random:fp32_chain", RANDOM, "fp32_chain"),
    ("probe:sf_addr_bits30_31", PROBE, "sf_addr_bits30_31"), ("control:sf_cp_missing", CONTROL, "sf_cp_missing"),
    ("known-answer", "known-answer", ""), ("feature:ldst-roundtrip", "feature", "ldst-roundtrip"),
    ("probe:a:b", PROBE, "a:b"),  # only the first ':' separates: a name may hold more
])
def test_a_recipe_parses_into_kind_and_name_and_writes_back_the_same_text(text: str, kind: str, name: str) -> None:
    r = Recipe.parse(text)
    assert (r.kind, r.name) == (kind, name)
    assert str(r) == text  # the serialised form (case IDs, records, store) is unchanged
    assert Recipe.parse(text) is r  # parsed once per text


@pytest.mark.parametrize("bad", ["", "probe:"])
def test_a_malformed_recipe_is_refused_where_the_case_is_made(bad: str) -> None:
    with pytest.raises(ValueError, match="c1"):
        Case("c1", "s", "i", "sm_100a", (), recipe=bad)


def test_a_case_carries_its_recipe_parsed_and_its_string_field_unchanged() -> None:
    c = Case("c1", "s", "i", "sm_100a", (), recipe="control:sf_cp_missing")
    assert c.recipe == "control:sf_cp_missing"
    assert c.parsed_recipe == Recipe(CONTROL, "sf_cp_missing")
    assert c.parsed_recipe.is_kind(EXACT, CONTROL) and not c.parsed_recipe.is_kind(PROBE)
