"""The model, run from register images, against the exact reference on logical matrices;
and proof that every kind of wrong metadata gives a wrong answer."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from reference.mma_sync import fragments as fr
from reference.mma_sync import recipes
from reference.mma_sync import scales as sc
from reference.mma_sync.model import BlockScaleForm, all_forms, execute

FORMS = all_forms()


def _run(form, regs, **kw):
    return fr.decode_f32(execute(form, regs, **kw))


def test_form_count_matches_table_36():
    assert len(FORMS) == 29
    assert len({f.tag() for f in FORMS}) == 29


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.tag())
def test_model_equals_reference_for_every_selector(form):
    case = recipes.exact_case(form, seed=7)
    want = recipes.reference_d(form, case)
    assert np.any(want != case.c)  # the products matter
    for sel in sc.all_selectors(form.scale_vec):
        got = _run(form, recipes.encode_case(form, case, sel))
        assert np.array_equal(got, want), sel


def _other(values, current):
    return [v for v in values if v != current]


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.tag())
def test_wrong_metadata_is_caught(form):
    """Each mistake the hardware (or a kernel) could make must change D."""
    case = recipes.exact_case(form, seed=11)
    want = recipes.reference_d(form, case)
    valid = sc.VALID_SELECTORS[form.scale_vec]
    sels = sc.all_selectors(form.scale_vec)
    for sel in sels[:: max(1, len(sels) // 8)]:
        regs = recipes.encode_case(form, case, sel)
        wrong_selectors = (
            [dataclasses.replace(sel, bida=v) for v in _other(valid["bida"], sel.bida)]
            + [dataclasses.replace(sel, tida=v) for v in _other(valid["tida"], sel.tida)]
            + [dataclasses.replace(sel, bidb=v) for v in _other(valid["bidb"], sel.bidb)]
            + [dataclasses.replace(sel, tidb=v) for v in _other(valid["tidb"], sel.tidb)]
        )
        for bad in wrong_selectors:  # metadata placed for sel, instruction told `bad`
            got = _run(form, dataclasses.replace(regs, sel=bad))
            assert not np.array_equal(got, want), ("wrong selector not caught", sel, bad)
        # swapped lane pair: the two lanes of the SF_A thread pair exchange their words
        lanes = np.arange(32)
        pair = lanes[(lanes % 4) // 2 == sel.tida]
        swapped = regs.sfa.copy()
        swapped[pair] = regs.sfa[pair ^ 1]
        assert not np.array_equal(_run(form, dataclasses.replace(regs, sfa=swapped)), want)
        # wrong byte: rotate every word by one byte (selected bytes land one place off)
        for name in ("sfa", "sfb"):
            w = getattr(regs, name)
            rot = ((w << np.uint32(8)) | (w >> np.uint32(24))).astype(np.uint32)
            assert not np.array_equal(_run(form, dataclasses.replace(regs, **{name: rot})), want)
        # SF_B from the neighbouring lane of the quad (wrong thread in the quad)
        nb = regs.sfb.copy()
        nb[lanes] = regs.sfb[lanes ^ 1]
        assert not np.array_equal(_run(form, dataclasses.replace(regs, sfb=nb)), want)


def test_fp6_container_shift_matters():
    form = BlockScaleForm("mxf8f6f4", "e3m2", "e2m3", "ue8m0", "1X")
    case = recipes.exact_case(form, seed=3)
    want = recipes.reference_d(form, case)
    sel = sc.Selectors()
    for shift in (0, 1, 2):
        regs = recipes.encode_case(form, case, sel, fp6_shift=shift)
        assert np.array_equal(_run(form, regs, fp6_shift=shift), want)
        assert not np.array_equal(_run(form, regs, fp6_shift=(shift + 1) % 3), want)


def test_batched_execution_equals_single():
    form = BlockScaleForm("mxf4nvf4", "e2m1", "e2m1", "ue4m3", "4X")
    sel = sc.Selectors(0, 1, 0, 2)
    cases = [recipes.exact_case(form, seed=s) for s in range(3)]
    regs = [recipes.encode_case(form, c, sel) for c in cases]
    stacked = dataclasses.replace(regs[0], **{f: np.stack([getattr(r, f) for r in regs])
                                              for f in ("a", "b", "c", "sfa", "sfb")})
    got = _run(form, stacked)
    for i, c in enumerate(cases):
        assert np.array_equal(got[i], recipes.reference_d(form, c))


def test_exact_rne_handles_wide_span_and_ties():
    from reference.mma_sync.model import exact_rne_f32
    # 1 + 2^-24 + 2^-80: a tie in f32 broken upward only by the tiny term (span > 53 bits).
    a = np.array([[[1.0, 2.0**-24, 2.0**-80]]])
    b = np.ones((1, 3, 1))
    c = np.zeros((1, 1, 1))
    got = exact_rne_f32(a, b, c)
    assert got[0, 0, 0] == np.float32(1 + 2.0**-23)
    a2 = np.array([[[1.0, 2.0**-24, 0.0]]])
    assert exact_rne_f32(a2, b, c)[0, 0, 0] == np.float32(1.0)  # plain tie to even
