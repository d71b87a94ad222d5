"""The compile suite's form records: each case holds its instruction's record, and a qualifier that
instruction does not have is refused where the case is made (it used to be carried silently)."""

from __future__ import annotations

import pytest

from suites.compile.cases import build_cases
from suites.compile.fields import FORMS, LdRed, WaitFenceForm, compile_form


def test_every_case_holds_the_record_of_its_instruction() -> None:
    cases = build_cases()
    assert {type(c.form) for c in cases} == set(FORMS.values())
    assert all(type(c.form) is FORMS[c.form.op] for c in cases)


def test_a_qualifier_the_instruction_lacks_is_refused_by_name() -> None:
    assert compile_form({"op": "tcgen05.wait", "which": "ld"}) == WaitFenceForm(op="tcgen05.wait", which="ld")
    with pytest.raises(TypeError, match="WaitFenceForm has no field kind"):
        compile_form({"op": "tcgen05.wait", "which": "ld", "kind": "f16"})


def test_red_is_a_record_the_module_generator_reads_as_a_mapping() -> None:
    f = compile_form({"op": "tcgen05.ld", "shape": "32x32b", "num": 2,
                      "red": {"op": "max", "dtype": "u32", "abs": False, "nan": True}})
    assert f.red == LdRed(op="max", dtype="u32", nan=True)
    assert (f["red"]["op"], f["red"].get("nan"), f.get("split")) == ("max", True, None)
    hash(f)  # frozen all the way down: equal forms share one module
