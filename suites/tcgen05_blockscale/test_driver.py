"""Suite coverage and driver contract: every Table 39 block-scaled row, every Table 54/55 row and
every Table 43/44 field row is touched at ``standard``; non-Blackwell GPUs skip with a reason;
sample cases pass on the model and a wrong SF ID is diagnosed by name."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from mmacts.core.driver import Driver
from mmacts.spec import catalog
from mmacts.spec import queries as Q
from suites.tcgen05_blockscale import cases as C
from suites.tcgen05_blockscale.driver import DRIVER, device_reason
from suites.tcgen05_blockscale.probes import PROBES


@pytest.fixture(scope="module")
def standard():
    return DRIVER.cases("standard")


def test_protocol_and_levels(standard) -> None:
    assert isinstance(DRIVER, Driver)
    smoke, full = DRIVER.cases("smoke"), DRIVER.cases("full")
    assert 0 < len(smoke) < len(standard) < len(full)
    assert len({c.case_id for c in full}) == len(full)


def test_every_table_row_is_covered(standard) -> None:
    refs = {r for c in standard for r in c.spec_rows}
    cat = catalog.load()
    t39 = {s.refs[0] for k in ("mxf8f6f4", "mxf4", "mxf4nvf4") for s in Q.tcgen05_shapes(cat, k) if not s.ws}
    assert t39 <= refs, t39 - refs
    assert {f"T54.{i}" for i in range(1, 9)} <= refs
    assert {f"T55.{i}" for i in range(1, 5)} <= refs
    assert {f"T43.{i}" for i in range(1, 18)} <= refs  # reserved rows: encoded as 0 by every case
    assert {f"T44.{i}" for i in range(1, 19)} <= refs
    assert {"T40.5", "S9.7.16.9.1"} <= refs  # descriptor base offset, cp decompression
    # the block-scaled rows Table 39 marks Invalid (.ws) are compile-suite reject cases, not ours
    invalid = {r.ref for r in cat.table(39).rows if r.values.get("invalid") and "mx" in r.values["kind"]}
    assert invalid and not invalid & refs


def test_random_cases_compare_with_the_numeric_model(standard) -> None:
    rnd = [c for c in standard if c.recipe.startswith("random")]
    assert {c.form["kind"] for c in rnd} == {"mxf8f6f4", "mxf4", "mxf4nvf4"}
    c = next(x for x in rnd if x.runtime.get("enable_d"))
    inp = DRIVER.make_inputs(c)
    exp = DRIVER.expected(c, inp)
    assert exp.mode == "observe" and C.NUMERIC_MODEL in exp.note
    got = DRIVER.run_record_model(c, inp).got
    assert np.array_equal(got, exp.want)  # the model decodes the operands the numeric model sees
    # random data are order-sensitive: the correctly rounded answer differs somewhere
    from suites.tcgen05_blockscale import build as B
    exact = B.expected_d(inp, c.form["kind"], negate_a=bool(c.runtime.get("negate_a")))
    assert (exact != exp.want).any()


def test_field_values_are_covered(standard) -> None:
    from suites.tcgen05_blockscale.features import is_feature
    from suites.tcgen05_blockscale.plain import is_plain

    every = standard
    # no block-scaled MMA: the features.py / plain.py cases are pinned by their own tests
    standard = [c for c in standard if not is_feature(c) and not is_plain(c)]
    f8 = [c for c in standard if c.form["kind"] == "mxf8f6f4"]
    assert {(c.runtime["atype"], c.runtime["btype"]) for c in f8} >= {(a, b) for a in C.F8 for b in C.F8}
    assert {(c.runtime["sfa_id"], c.runtime["sfb_id"]) for c in f8} >= {(a, b) for a in range(4) for b in range(4)}
    svs = {(c.form["kind"], c.form["scale_vec"], c.runtime["k96"]) for c in standard}
    for kind, spells in C.SPELLINGS.items():
        assert {(kind, sv, False) for sv, _ in spells} <= svs
    assert ("mxf4nvf4", "block16", True) in svs and ("mxf4", "block32", True) in svs
    k96 = [c for c in standard if c.runtime["k96"]]
    assert {c.arch for c in k96} == {"sm_103a"} and {n > 128 for n in (c.runtime["n"] for c in k96)} == {True, False}
    assert {(c.form["cta_group"], c.runtime["m"]) for c in standard} == {(1, 128), (2, 128), (2, 256)}
    assert {c.runtime["sf_stage"] for c in standard} == {"st", "cp"}
    assert any(c.form["a_tmem"] for c in standard) and any(c.form["sparse"] for c in standard)
    assert {c.runtime.get("swizzle_a", "128B") for c in standard} >= {"none", "32B", "64B", "128B"}
    assert {c.recipe for c in every if C.is_probe(c)} == {f"probe:{p}" for p in PROBES}


def test_non_blackwell_skips_with_reason() -> None:
    assert DRIVER.device_supported((9, 0)) == "needs an sm_100-family GPU (sm_100a); this device is sm_90"
    assert DRIVER.device_supported((10, 0)) is None
    assert device_reason((10, 0), "sm_103a").startswith("needs sm_103a exactly")
    assert device_reason((10, 3), "sm_103a") is None


SAMPLE = ("smoke",)


def test_sample_cases_pass_on_model(standard) -> None:
    picks = DRIVER.cases("smoke") + [c for c in standard if "K96" in c.case_id][:1]
    for c in picks:
        inp = DRIVER.make_inputs(c)
        got = DRIVER.run_record_model(c, inp).got
        exp = DRIVER.expected(c, inp)
        assert exp.mode == "exact" and np.array_equal(got, exp.want), c.case_id
    probe = next(c for c in standard if c.recipe == "probe:sf_quadrant")
    assert DRIVER.expected(probe, DRIVER.make_inputs(probe)).mode == "observe"


def test_wrong_sf_id_is_diagnosed_by_name() -> None:
    case = C.make_case("standard", "mxf8f6f4", None, atype="e4m3", btype="e4m3", sfa_id=0, sfb_id=0, seed=3)
    inp = DRIVER.make_inputs(case)
    p = inp.programs[0]
    op = p.mmas[0]
    wrong = replace(inp, programs=[replace(p, mmas=[replace(op, idesc=op.idesc | (1 << 4))])])  # SFB ID 1
    got = DRIVER.run_record_model(case, wrong).got
    want = DRIVER.expected(case, inp).want
    mask = got != want
    assert mask.any()
    msg = DRIVER.diagnose(case, got, want, mask)
    assert "sfb_id=1 (instead of 0)" in msg, msg
