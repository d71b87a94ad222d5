"""Block-scale probe vectors, their encodings for mma.sync and tcgen05, and the probe cases."""

from __future__ import annotations

import json
import math

import ml_dtypes
import numpy as np
import pytest

from suites.probes import blockscale_driver as BD
from suites.probes import blockscale_paths as P
from suites.probes.blockscale_model import exact_value
from suites.probes.blockscale_probes import BS_PROBES, vectors
from suites.probes.blockscale_recover import probes_for
from suites.probes.blockscale_vectors import FORMS, bsvec, stack_bs
from suites.probes.recover import to_bits


@pytest.mark.parametrize("tag", list(FORMS))
def test_vectors_hold_the_products_they_state(tag):
    form = FORMS[tag]
    v = bsvec(form, {0: 8.0, form.k - 1: -0.375}, 2.0**-3)
    # exact value recomputed from the element values and the scale codes (independent decode)
    def scale(c: int) -> float:
        return 2.0 ** (c - 127) if form.stype == "ue8m0" else float(np.uint8(c).view(ml_dtypes.float8_e4m3fn))

    sa, sb = [scale(c) for c in v.sa], [scale(c) for c in v.sb]
    total = math.fsum(x * y * sa[k // form.vs] * sb[k // form.vs]
                      for k, (x, y) in enumerate(zip(v.a, v.b, strict=True)))
    assert total + v.c == 8.0 - 0.375 + 2.0**-3 == exact_value(form, v)


@pytest.mark.parametrize("tag", list(FORMS))
def test_mma_sync_images_read_back_to_the_vectors(tag):
    form = FORMS[tag]
    vs = [v for p in probes_for(form) for v in vectors(p, form)]
    x = stack_bs(form, vs)
    back = P.mma_sync_decode(form, P.mma_sync_images(form, vs))
    for k in ("a", "b", "c"):
        assert np.array_equal(to_bits(getattr(back, k)), to_bits(getattr(x, k))), k
    assert np.array_equal(back.sa, x.sa) and np.array_equal(back.sb, x.sb)
    assert np.array_equal(np.signbit(back.a), np.signbit(x.a))  # -0 elements survive the encoding


def test_tcgen05_placement_through_the_machine_model():
    # diagonal of the tcgen05 model fed by the suite's builder == the same named model on the
    # logical vectors; includes the enable-input-d = false vectors (NaN preloaded into D)
    form = FORMS["mxf4nvf4.4X"]
    probes = probes_for(form, tcgen05=True)
    vs = vectors(probes[0], form)[:100] + vectors(next(p for p in probes if p.tcgen05_only), form)
    got = P.tcgen05_model_diagonal(form, vs, "b200_tcgen05_hypothesis")
    want = P.reference_bs_evaluator("b200_tcgen05_hypothesis")(form, stack_bs(form, vs))
    assert np.array_equal(to_bits(got), to_bits(want))
    assert not np.isnan(got[-4:]).any()  # D = NaN preloaded but not read


def test_cases_skip_with_a_reason_off_blackwell():
    cases = BD.cases()
    assert len({c.case_id for c in cases}) == len(cases)
    assert all(c.recipe == f"probe:{c.runtime['probe']}" and c.level == "standard" for c in cases)
    mma = next(c for c in cases if c.form["family"] == "mma_sync")
    tc = next(c for c in cases if c.form["family"] == "tcgen05")
    assert "sm_120a" in BD.path_of(mma).supported((9, 0)) and BD.path_of(mma).supported((12, 0)) is None
    assert "sm_100a" in BD.path_of(tc).supported((9, 0)) and BD.path_of(tc).supported((10, 0)) is None
    assert "sm_100a" in BD.path_of(tc).supported((10, 3))
    assert not any(c.runtime["probe"] == "tc05_enable_input_d_nan" for c in cases if c.form["family"] == "mma_sync")


def test_model_case_reports_the_planted_answer():
    c = next(c for c in BD.cases() if c.case_id == "probes.bs_scale_anchor.tcgen05.sm_100a.mxf4nvf4.4X")
    inp = BD.make_inputs(c)
    res = BD.run_record_model(c, inp)
    obs = json.loads(res.extra["observation"])
    assert obs["answer"] == "anchor=across"  # the reference's reading, planted for tcgen05
    assert len(obs["measured_bits"]) == len(inp["vectors"])
    assert np.array_equal(to_bits(res.got), to_bits(BD.expected(c, inp).want))


def test_direct_probe_answers_name_a_reading():
    c = next(c for c in BD.cases() if c.case_id == "probes.bs_scale_nan.mma_sync.sm_120a.mxf4.2X")
    obs = json.loads(BD.run_record_model(c, BD.make_inputs(c)).extra["observation"])
    assert obs["supports"] == "ocp-nan" and obs["details"] == {"ue8m0_ff": "nan"}


def test_probes_and_register_name_each_other():
    from mmacts.ambiguity import load_register

    reg = load_register()
    ids = set(reg.ids())
    for p in BS_PROBES:
        assert set(p.register) <= ids, p.name
        for rid in p.register:
            assert f"probes.{p.name}" in reg.get(rid).decided_by, (p.name, rid)
