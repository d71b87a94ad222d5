"""The suite's typed case records: what a case sets is a field of its record, and a misspelt one is refused."""

from __future__ import annotations

import numpy as np
import pytest

from suites.tcgen05_blockscale import build as B
from suites.tcgen05_blockscale.cases import enumerate_cases, make_case
from suites.tcgen05_blockscale.fields import FeatureCaseForm, OperandRuntime, PlainForm, Tcgen05Form


def test_a_misspelt_run_time_field_is_refused_by_name() -> None:
    """A dict took ``swizle_a`` silently and the case ran with the default swizzle."""
    with pytest.raises(TypeError, match="Tcgen05Runtime has no field swizle_a"):
        make_case("standard", "mxf8f6f4", None, atype="e4m3", btype="e4m3", swizle_a="64B")


def test_every_case_holds_the_suites_records() -> None:
    """MMA, plain and feature cases each hold their record; readers outside the suite that still ask the mapping
    view with a default (``c.form.get("block_scale", True)``) get what the record says."""
    for c in enumerate_cases("full"):
        assert isinstance(c.form, Tcgen05Form) and isinstance(c.runtime, OperandRuntime), c.case_id
        assert c.form.get("block_scale", True) is not isinstance(c.form, PlainForm), c.case_id
        assert (c.form.kind == "none") is isinstance(c.form, FeatureCaseForm), c.case_id


def test_sf_slots_puts_scale_f_at_slot_sf_id_plus_f() -> None:
    """The host's statement of where an SF ID puts the scales (the seam mutant ``sf-host.sf-id-slot`` shifts)."""
    block = B.sf_slots(np.array([[5, 6], [7, 8]], dtype=np.uint8), 2)
    np.testing.assert_array_equal(block, [[0, 0, 5, 6], [0, 0, 7, 8]])
