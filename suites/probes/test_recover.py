"""Probes must recover the parameters of models with known parameters."""

from __future__ import annotations

import numpy as np
import pytest

from suites.probes.blockfma import BlockFMAParams, evaluate
from suites.probes.catalog import PROBES
from suites.probes.models import reference_evaluator, reference_features
from suites.probes.recover import candidates, predictions, recover, run_all

NAMED = ("hmma_fp8_emulation", "hopper_wgmma_fp8", "b200_tcgen05_hypothesis", "ada_qmma_fp8")


@pytest.mark.parametrize("name", NAMED)
def test_recovers_every_named_reference_model_exactly(name):
    # planted parameters from an independent implementation (reference.numeric_model)
    rec = recover(run_all(reference_evaluator(name)))
    assert rec.survivors == 1
    planted = reference_features(name)
    assert {k: rec.features[k] for k in planted} == planted


def test_exact_accumulation_is_reported_as_outside_the_hypotheses():
    rec = recover(run_all(reference_evaluator("exact_rne")))
    assert not rec.consistent and rec.survivors == 0


PLANTED = [
    BlockFMAParams(8, "contiguous", 1, "rne", "aligned", in_subnormals=False, zero_sign="ieee"),
    BlockFMAParams(4, "contiguous", 0, "rz", "last", out_subnormals=False),
    BlockFMAParams(16, "kmod4", 3, "rne", "aligned", out_frac_bits=13),
    BlockFMAParams(32, "contiguous", -10, "rz", "last", out_frac_bits=13),
]


@pytest.mark.parametrize("p", PLANTED, ids=lambda p: f"{p.block_size}{p.grouping[0]}{p.neab}{p.block_rounding}")
def test_recovers_planted_variants(p):
    rec = recover(run_all(lambda a, b, c: evaluate(p, a, b, c)))
    assert rec.determined() == p.features()


def test_probes_separate_most_of_the_hypothesis_grid():
    cands = candidates()
    preds = predictions(cands)
    distinct = {row.tobytes() for row in preds}
    assert len(distinct) >= 340  # of 400; the rest are known equivalences (13-bit window + 23-bit out)


def test_each_probe_answer_names_its_feature():
    rec = recover(run_all(reference_evaluator("hmma_fp8_emulation")))
    assert rec.answers["c_placement"] == "c_placement=last"
    assert rec.answers["block_size"] == "block_size=16, grouping=kmod4"
    assert set(rec.answers) == {p.name for p in PROBES}


def test_a_deliberately_wrong_measurement_is_not_explained():
    obs = run_all(reference_evaluator("hopper_wgmma_fp8"))
    obs["neab"] = obs["neab"].copy()
    obs["neab"][0] = np.nextafter(np.float32(obs["neab"][0]), np.float32(np.inf))
    rec = recover(obs)
    assert rec.survivors == 0 and rec.answers["neab"] == "no hypothesis reproduces this probe"


def test_a_fit_probe_reads_its_columns_of_the_shared_grid() -> None:
    """marginal_answer's predictions (a slice of the grid every recover case shares) equal the grid
    evaluated on that probe's vectors alone: the block-FMA model is evaluated row by row."""
    from suites.probes import recover as R
    from suites.probes.blockfma import evaluate
    from suites.probes.catalog import probe
    from suites.probes.vectors import stack

    for name, _, _ in R._fit_vectors():
        cands, shared = R._probe_predictions(name)
        a, b, c = stack(probe(name).vectors())
        alone = np.stack([R.to_bits(evaluate(p, a, b, c)) for p in cands[::7]])
        assert np.array_equal(shared[::7], alone), name
