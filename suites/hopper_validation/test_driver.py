"""The Hopper suite's exact verdicts are checked by code the model path does not use.

Why: ``run_record_model`` sums with ``reference.mma_sync.model.exact_rne_f32`` and decodes fp8 with
``reference.mma_sync.values``. If ``expected`` used the same two functions, a mistake in
either would move the model and the answer together and every exact case would still pass.
The tests below plant such a mistake and require the verdict to change.
"""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.core.driver import Driver, as_driver
from suites.hopper_validation import driver as D
from suites.hopper_validation.fields import MmaSyncForm, MmaSyncRuntime, WgmmaForm, WgmmaRuntime

EXACT_IDS = (
    "hopper.mma_sync.m16n8k32.f32.e4m3xe5m2/exact-s0",
    "hopper.wgmma.m64n64k32.f32.e5m2xe4m3/K-K.128B/exact",
    "hopper.wgmma.m64n64k16.f32.bf16/MN-K.64B/exact",
)


def _case(cid: str):
    (case,) = [c for c in D.DRIVER.cases("full") if c.case_id == cid]
    return case


@pytest.mark.parametrize("cid", EXACT_IDS)
def test_model_matches_independent_answer(cid):
    case = _case(cid)
    inp = D.DRIVER.make_inputs(case)
    want = D.DRIVER.expected(case, inp)
    got = D.DRIVER.run_record_model(case, inp).got
    assert want.mode == "exact"
    assert np.any(want.want != np.asarray(inp["C"][0], dtype=np.float32))  # the products matter
    assert np.array_equal(got, want.want)


@pytest.mark.parametrize("cid", EXACT_IDS)
def test_wrong_model_sum_fails_the_case(cid, monkeypatch):
    """A planted accumulation error in the model path must not move the expectation."""
    case = _case(cid)
    inp = D.DRIVER.make_inputs(case)
    want = D.DRIVER.expected(case, inp).want
    real = D.exact_rne_f32

    def off_by_one(a, b, c):  # C counted twice: a plausible wrong accumulator
        return real(a, b, 2 * c)

    monkeypatch.setattr(D, "exact_rne_f32", off_by_one)
    assert np.array_equal(D.DRIVER.expected(case, inp).want, want)
    assert not np.array_equal(D.DRIVER.run_record_model(case, inp).got, want)


def test_wrong_element_decoder_fails_the_case(monkeypatch):
    """A planted fp8 decoding error (E4M3 read as E5M2) in the model path must fail the case."""
    case = _case(EXACT_IDS[0])
    inp = D.DRIVER.make_inputs(case)
    want = D.DRIVER.expected(case, inp).want
    real = D.decode_elements
    monkeypatch.setattr(D, "decode_elements", lambda codes, t: real(codes, "e5m2"))
    assert np.array_equal(D.DRIVER.expected(case, inp).want, want)
    assert not np.array_equal(D.DRIVER.run_record_model(case, inp).got, want)


def test_inexact_data_is_refused():
    """The exactness guard is live: data outside the 14-bit window raise instead of passing."""
    case = _case(EXACT_IDS[0])
    inp = D.DRIVER.make_inputs(case)
    bad = dict(inp, C=np.full_like(inp["C"], 2.0**-30))  # C far below the product lattice
    with pytest.raises(AssertionError, match="not exact"):
        D.DRIVER.expected(case, bad)


def test_inf_specials_want_has_the_designed_nans_and_infinities():
    """The f16 ``specials`` case's answer (reference.gemm's IEEE rules on the exact sum): rows 0, 1, 2, 4 NaN
    in every column, row 3 +Inf, row 5 -Inf, every other row finite and exact in f16 -- so a VM whose
    per-block infinity rule (numerics.ieee_nan) loses a NaN or keeps a finite block fails the case."""
    case = _case("hopper.mma_sync.m16n8k32.f16.e5m2xe5m2/inf-specials")
    inp = D.DRIVER.make_inputs(case)
    want = D.DRIVER.expected(case, inp)
    assert want.mode == "exact"
    w = want.want
    assert np.isnan(w[[0, 1, 2, 4]]).all() and np.isposinf(w[3]).all() and np.isneginf(w[5]).all()
    assert np.isfinite(w[6:]).all() and np.array_equal(w[6:].astype(np.float16).astype(np.float32), w[6:])


def test_the_driver_is_a_driver_and_every_public_method_is_a_hook():
    """The driver derives from ``Driver`` (``as_driver`` hands it back as it is, no view probing its hooks) and
    writes no public method the base class does not declare: a misspelt hook (``worth_cachng``) would be a
    method nobody calls while the default ran in its place -- what an ``@override`` check catches."""
    assert isinstance(D.DRIVER, Driver) and as_driver(D.DRIVER) is D.DRIVER
    own = {n for n, v in vars(D.HopperDriver).items() if callable(v) and not n.startswith("_")}
    assert own <= set(dir(Driver)), sorted(own - set(dir(Driver)))
    assert {"cases", "module_ptx", "device_supported", "make_inputs", "expected", "run_record_model", "launch",
            "vm_reason", "worth_caching"} <= own


def test_every_case_holds_the_typed_records_of_its_path():
    """mma.sync cases hold the mma.sync records, wgmma cases the wgmma ones; the ``path`` field (part of the
    module key) agrees with the record, and a record refuses a path that is not its own."""
    for c in D.DRIVER.cases("full"):
        want = (MmaSyncForm, MmaSyncRuntime) if c.form.path == "mma_sync" else (WgmmaForm, WgmmaRuntime)
        assert (type(c.form), type(c.runtime)) == want, c.case_id
    with pytest.raises(ValueError, match="WgmmaForm is the wgmma path"):
        WgmmaForm(path="mma_sync")
