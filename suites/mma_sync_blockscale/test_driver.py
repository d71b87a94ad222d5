"""The block-scale suite's own checks: coverage of Tables 35-37, and that it can fail."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from mmacts.backends.cuda_runtime import RecordingModule
from mmacts.compare.compare import compare
from reference.mma_sync import fragments as fr
from reference.mma_sync import scales as sc
from reference.mma_sync.model import all_forms, execute
from suites.mma_sync_blockscale.driver import DRIVER, _form, pairwise_selectors


def test_catalog_forms_equal_reference_forms():
    cat = {(c.form["kind"], c.form["atype"], c.form["btype"], c.form["stype"], c.form["scale_vec"])
           for c in DRIVER.cases("full")}
    ref = {(f.kind, f.atype, f.btype, f.stype, f.scale_vec) for f in all_forms()}
    assert cat == ref and len(cat) == 29


def test_catalog_selectors_equal_reference_table():
    for sv, valid in sc.VALID_SELECTORS.items():
        got = {(c.runtime["bida"], c.runtime["tida"], c.runtime["bidb"], c.runtime["tidb"])
               for c in DRIVER.cases("full") if c.form["scale_vec"] == sv}
        assert got == set(itertools.product(*valid.values()))


def test_standard_covers_every_row_and_every_selector_pair_per_form():
    std = DRIVER.cases("standard")
    rows = {r for c in std for r in c.spec_rows}
    assert {"T35.1", "T35.2", "T35.3", "T36.1", "T36.2", "T36.3", "T36.4", "T37.1", "T37.2", "T37.3"} <= rows
    by_form: dict = {}
    for c in std:
        by_form.setdefault(tuple(sorted(c.form.items())), []).append(c)
    assert len(by_form) == 29
    for cases in by_form.values():
        sv = cases[0].form["scale_vec"]
        names = ("bida", "tida", "bidb", "tidb")
        valid = sc.VALID_SELECTORS[sv]
        seen = {(i, c.runtime[names[i]], j, c.runtime[names[j]]) for c in cases
                for i, j in itertools.combinations(range(4), 2)}
        need = {(i, a, j, b) for i, j in itertools.combinations(range(4), 2)
                for a in valid[names[i]] for b in valid[names[j]]}
        assert need <= seen


def test_pairwise_is_small():
    assert len(pairwise_selectors(sc.VALID_SELECTORS["1X"])) <= 20


def test_ids_unique_and_levels_nested():
    full = DRIVER.cases("full")
    probes = [c for c in full if c.recipe.startswith("probe:")]
    assert len({c.case_id for c in full}) == len(full) == 3280 + len(probes)
    assert {c.recipe for c in probes} == {"probe:ue4m3_nan_scale"} and all(c.level == "standard" for c in probes)
    assert 0 < len(DRIVER.cases("smoke")) < len(DRIVER.cases("standard")) < len(full)


def test_model_backend_passes_smoke():
    for c in DRIVER.cases("smoke"):
        x = DRIVER.make_inputs(c)
        assert compare(DRIVER.run_record_model(c, x).got, DRIVER.expected(c, x)).status == "pass", c.case_id


def test_wrong_metadata_fails_through_the_suite():
    """Feed the model backend deliberately wrong metadata: every case must fail."""
    for c in DRIVER.cases("smoke"):
        x = DRIVER.make_inputs(c)
        exp = DRIVER.expected(c, x)
        regs = x["regs"]
        sel = regs.sel
        valid = sc.VALID_SELECTORS[c.form["scale_vec"]]
        bad_sels = [dataclasses.replace(sel, tida=1 - sel.tida),
                    dataclasses.replace(sel, tidb=(sel.tidb + 1) % 4)]
        if len(valid["bida"]) > 1:
            bad_sels.append(dataclasses.replace(sel, bida=[v for v in valid["bida"] if v != sel.bida][0]))
            bad_sels.append(dataclasses.replace(sel, bidb=[v for v in valid["bidb"] if v != sel.bidb][0]))
        lanes = np.arange(32)
        wrong = [dataclasses.replace(regs, sel=s) for s in bad_sels]
        wrong.append(dataclasses.replace(regs, sfa=regs.sfa[lanes ^ 1]))  # swapped lane pair
        wrong.append(dataclasses.replace(regs, sfb=regs.sfb[lanes ^ 1]))
        rot = ((regs.sfa << np.uint32(8)) | (regs.sfa >> np.uint32(24))).astype(np.uint32)
        wrong.append(dataclasses.replace(regs, sfa=rot))  # wrong byte
        for w in wrong:
            got = fr.decode_f32(execute(_form(c), w))
            assert compare(got, exp).status == "fail", c.case_id


def test_diagnose_names_the_misread_selector():
    c = next(x for x in DRIVER.cases("smoke") if x.form["scale_vec"] == "1X" and x.runtime["bida"] == 0)
    x = DRIVER.make_inputs(c)
    bad = dataclasses.replace(x["regs"], sel=dataclasses.replace(x["regs"].sel, bidb=2))
    got = fr.decode_f32(execute(_form(c), bad))
    assert "bidb=2" in DRIVER.diagnose(c, got, None, None)


def test_run_cuda_packing_roundtrip_without_a_gpu():
    """launch's packing, launch arguments and unpacking, with the 'GPU' replaced by the model."""
    cases = [c for c in DRIVER.cases("standard") if c.form["kind"] == "mxf4nvf4" and c.form["stype"] == "ue4m3"]
    inputs = [DRIVER.make_inputs(c) for c in cases]
    rec = RecordingModule(b"")
    DRIVER.launch(cases, inputs, rec)
    (launch,) = rec.launches
    assert launch["entry"] == "mma_bs" and launch["grid"][0] * 4 >= len(cases)
    arrs = [a for _, _, a in launch["args"]]
    a, b, c_, sfa, sfb, sel = arrs[:6]
    d = np.stack([execute(_form(cs), dataclasses.replace(
        x["regs"], a=a[i], b=b[i], c=c_[i], sfa=sfa[i], sfb=sfb[i],
        sel=sc.Selectors(*(int(sel[i]) >> s & 0xFF for s in (0, 8, 16, 24)))))
        for i, (cs, x) in enumerate(zip(cases, inputs, strict=True))])
    replay = RecordingModule(b"", replay={0: d})
    results = DRIVER.launch(cases, inputs, replay)
    for cs, x, r in zip(cases, inputs, results, strict=True):
        want = "observed" if cs.recipe.startswith("probe:") else "pass"
        assert compare(r.got, DRIVER.expected(cs, x)).status == want


def test_device_supported():
    assert DRIVER.device_supported((12, 0)) is None and DRIVER.device_supported((12, 1)) is None
    assert "sm_90" in DRIVER.device_supported((9, 0))
    assert DRIVER.device_supported((10, 0))
