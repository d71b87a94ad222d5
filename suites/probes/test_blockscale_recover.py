"""Block-scale probes must recover the configuration planted in differently configured models.

Planted models come from two codes: ``reference.numeric_model`` (named and modified parameter
sets, scales read by ``reference.formats``) and this package's block-scale hypothesis model.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from reference import numeric_model as NM
from suites.probes.blockscale_model import BSParams
from suites.probes.blockscale_paths import model_evaluator, reference_bs_evaluator
from suites.probes.blockscale_recover import candidates, recover_bs, run_all_bs
from suites.probes.blockscale_vectors import FORMS

B200 = NM.MODELS["b200_tcgen05_hypothesis"]
GLOBAL64 = replace(B200, name="global64", fma=64)
GLOBAL64_LAST = replace(B200, name="global64_last", fma=64, c_placement="last")
REF_DEFAULTS = dict(product_range="exact", overflow="inf", ue8m0_ff="nan", ue8m0_00="pow2", zero_sign="plus",
                    disabled_d="not_read")
"""What reference.numeric_model + reference.formats do with the direct features (prd_limit 0, Inf on
overflow even under RZ, OCP NaN for UE8M0 0xFF, 0x00 = 2**-127, +0, enable-input-d=false reads 0)."""

# (form, planted reference model, the features it implies for the probes)
REFERENCE_CASES = [
    ("mxf8f6f4.1X", "b200_tcgen05_hypothesis",
     dict(fma=32, anchor="per_scale_block", neab=2, block_rounding="rz", c_placement="aligned", out_frac_bits=23,
          anchor_floor=-133)),
    ("mxf8f6f4.1X", "ada_qmma_fp8",
     dict(fma=16, anchor="per_scale_block", neab=-10, block_rounding="rz", c_placement="aligned", out_frac_bits=13,
          anchor_floor=-132)),
    ("mxf4.2X", GLOBAL64,  # one alignment across both scale blocks: the reference's reading of scales
     dict(fma=64, anchor="across", neab=2, block_rounding="rz", c_placement="aligned", out_frac_bits=23,
          anchor_floor=-133)),
    ("mxf4nvf4.4X", GLOBAL64_LAST,
     dict(fma=64, anchor="across", neab=2, block_rounding="rz", c_placement="last", out_frac_bits=23,
          anchor_floor=-133)),
    ("mxf4nvf4.4X", "hopper_wgmma_fp8",
     dict(fma=32, anchor="across", neab=-10, block_rounding="rz", c_placement="aligned", out_frac_bits=13,
          anchor_floor=-133)),
    ("mxf4nvf4.4X.ue4m3", "ada_qmma_fp8",
     dict(fma=16, anchor="per_scale_block", neab=-10, block_rounding="rz", c_placement="aligned", out_frac_bits=13,
          ue4m3_sign="nan", ue4m3_7f="nan")),  # reference.formats reads a UE4M3 sign bit as NaN
]


@pytest.mark.parametrize("tag,model,planted", REFERENCE_CASES,
                         ids=[f"{t}-{getattr(m, 'name', m)}" for t, m, _ in REFERENCE_CASES])
def test_recovers_reference_models_exactly(tag, model, planted):
    form = FORMS[tag]
    rec = recover_bs(form, run_all_bs(form, reference_bs_evaluator(model), tcgen05=True), tcgen05=True)
    assert rec.survivors == 1
    want = {**{k: v for k, v in REF_DEFAULTS.items() if k in rec.features}, **planted}
    assert {k: rec.features[k] for k in want} == want


PLANTED = [
    ("mxf4nvf4.4X", BSParams(fma=32, anchor="across", neab=0, c_placement="last", anchor_floor=None,
                             ue8m0_ff="pow2", overflow="satfinite", zero_sign="ieee", disabled_d="times_zero")),
    ("mxf4nvf4.4X.ue4m3", BSParams(fma=64, anchor="per_scale_block", neab=3, ue4m3_sign="negates",
                                   ue4m3_7f="finite")),
    ("mxf8f6f4.1X", BSParams(fma=16, neab=1, block_rounding="rne", anchor_floor=None, ue8m0_00="zero",
                             product_range="overflow", ue8m0_ff="nan_nonzero")),
    ("mxf4nvf4.4X", BSParams(fma=64, anchor="per_scale_block", neab=2, block_rounding="rz", anchor_floor=-133)),
]


@pytest.mark.parametrize("tag,p", PLANTED, ids=[f"{t}-{p.fma}{p.anchor[0]}{p.neab}" for t, p in PLANTED])
def test_recovers_planted_hypotheses(tag, p):
    form = FORMS[tag]
    rec = recover_bs(form, run_all_bs(form, model_evaluator(p), tcgen05=True), tcgen05=True)
    assert rec.survivors == 1
    assert rec.features == p.features(form, tcgen05=True)


def test_anchor_probe_tells_global_from_per_scale_block():
    form = FORMS["mxf4.2X"]
    obs_g = run_all_bs(form, reference_bs_evaluator(GLOBAL64))
    obs_b = run_all_bs(form, model_evaluator(BSParams(fma=64, anchor="per_scale_block")))
    assert not np.array_equal(obs_g["bs_scale_anchor"], obs_b["bs_scale_anchor"])
    assert recover_bs(form, obs_g).answers["bs_scale_anchor"] == "anchor=across"
    assert recover_bs(form, obs_b).answers["bs_scale_anchor"] == "anchor=per_scale_block"


def test_what_a_form_cannot_show_is_reported_open_not_guessed():
    # FP4 elements inside one scale block span 7 binades: with one FMA block per scale block the
    # anchor floor (terms below 2**-133) never shows; the recovery lists the values still possible
    form = FORMS["mxf4.2X"]
    rec = recover_bs(form, run_all_bs(form, reference_bs_evaluator("b200_tcgen05_hypothesis")))
    assert rec.survivors >= 1 and isinstance(rec.features["anchor_floor"], list)
    assert -133 in rec.features["anchor_floor"]
    assert rec.features["fma"] == 32 and rec.features["neab"] == 2


def test_outside_the_grid_is_reported_inconsistent():
    # the F2FP+HMMA emulation (k mod 4 interleave, C added last) is no block-scaled hypothesis
    form = FORMS["mxf8f6f4.1X"]
    rec = recover_bs(form, run_all_bs(form, reference_bs_evaluator("hmma_fp8_emulation")))
    assert rec.survivors == 0 and not rec.consistent


def test_a_one_bit_change_is_not_explained():
    form = FORMS["mxf4.2X"]
    obs = run_all_bs(form, reference_bs_evaluator(GLOBAL64))
    obs["bs_window"] = obs["bs_window"].copy()
    obs["bs_window"][0] = np.nextafter(np.float32(obs["bs_window"][0]), np.float32(np.inf))
    rec = recover_bs(form, obs)
    assert rec.survivors == 0 and rec.answers["bs_window"] == "no hypothesis reproduces this probe"


def test_grid_hypotheses_are_mostly_distinct():
    from suites.probes.blockscale_model import evaluate, prepare
    from suites.probes.blockscale_probes import vectors
    from suites.probes.blockscale_recover import fit_probes_for
    from suites.probes.blockscale_vectors import stack_bs
    from suites.probes.recover import to_bits

    form = FORMS["mxf8f6f4.1X"]
    x = stack_bs(form, [v for p in fit_probes_for(form) for v in vectors(p, form)])
    cands = candidates(form)
    prep = prepare(BSParams(), form, x)
    distinct = {to_bits(evaluate(c, form, x, prep)).tobytes() for c in cands}
    # of 240; the rest are equivalences on this form (e.g. a 13-bit window with a 23-bit output
    # where no probe carries into a binade that would round differently)
    assert len(distinct) >= 140


@pytest.mark.parametrize("tag", list(FORMS))
def test_a_fit_probe_reads_its_columns_of_the_shared_grid(tag):
    """marginal_answer's predictions (columns of the grid every bs_recover case of the form shares)
    equal the grid evaluated on that probe's vectors alone: the model is evaluated row by row."""
    from suites.probes import blockscale_recover as R
    from suites.probes.blockscale_model import evaluate, prepare
    from suites.probes.blockscale_probes import vectors
    from suites.probes.blockscale_vectors import stack_bs
    from suites.probes.recover import to_bits

    form = FORMS[tag]
    for p in R.fit_probes_for(form):
        cands, shared = R._probe_predictions(p.name, form)
        assert cands == tuple(candidates(form))
        x = stack_bs(form, vectors(p, form))
        prep = prepare(BSParams(), form, x)
        alone = np.stack([to_bits(evaluate(c, form, x, prep)) for c in cands[::7]])
        assert np.array_equal(shared[::7], alone), p.name
