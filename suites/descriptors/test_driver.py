"""The descriptors suite's contract: every case passes on the model (or fails as its register entry
says), the checks are sensitive to the reading they encode, carriers assemble, GPUs skip honestly."""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.compare.compare import compare
from mmacts.core.driver import Driver
from suites.descriptors import checks as C
from suites.descriptors import spec_readings as R
from suites.descriptors.driver import DRIVER, NO_KERNEL, carrier_form


@pytest.fixture(scope="module")
def standard():
    return DRIVER.cases("standard")


def _verdict(case):
    inp = DRIVER.make_inputs(case)
    return compare(DRIVER.run_record_model(case, inp).got, DRIVER.expected(case, inp))


def test_protocol_levels_and_ids(standard) -> None:
    assert isinstance(DRIVER, Driver)
    smoke = DRIVER.cases("smoke")
    assert 0 < len(smoke) < len(standard) == len(DRIVER.cases("full"))
    assert len({c.case_id for c in standard}) == len(standard)
    assert all(c.case_id.startswith("descriptors.") and c.spec_rows for c in standard)


def test_rows_covered(standard) -> None:
    refs = {r for c in standard for r in c.spec_rows}
    want = ({f"T40.{i}" for i in range(1, 9)} | {f"T42.{i}" for i in range(1, 17)}
            | {f"T45.{i}" for i in range(1, 14)} | {f"T53.{i}" for i in (1, *range(3, 11))})
    assert want <= refs, sorted(want - refs)
    # Table 42: every row for every non-scaled kind
    assert {c.case_id.rsplit(".", 1)[1] for c in standard if ".idesc.T42." in c.case_id} == set(R.T42_KINDS)


def test_every_case_passes_or_xfails_on_the_model(standard) -> None:
    for c in standard:
        v = _verdict(c)
        if c.xfail:
            assert v.status == "fail", f"{c.case_id} passes although it is marked xfail {c.xfail}"
        else:
            assert v.status == "pass", f"{c.case_id}: {v.first_mismatch}"


def test_span_contradiction_is_the_only_xfail(standard) -> None:
    assert {c.case_id: c.xfail for c in standard if c.xfail} == {
        "descriptors.zcm.example2-table-descriptions.M128N64": "AMB-ZCM-SPAN"}


def test_atom_checks_detect_a_misread_atom() -> None:
    """Reading a Table 53 atom with its two extents swapped (e.g. 64B K-major '8x4' as 4 rows of
    128 B) places the bytes elsewhere: decoding them with the check's descriptor fails the check."""
    checked = 0
    for i in (5, 6, 7, 8):  # the non-square atoms
        chk = next(c for c in C.atom_checks() if c.name.startswith(f"swizzle_atom.T53.{i}.") and c.name.endswith("b8"))
        good = R.atom_of(f"T53.{i}")
        bad = R.Atom(good.swizzle, good.major, rows=good.width // 16, width=16 * good.rows, atomicity=16)
        inp = chk.make()
        ok = R.atom_plan(good, 1)
        strides = R.atom_plan(bad, 1)  # an author who misread the atom also strides by it
        misread = R.AtomTile(bad, 1, ok.base, ok.rows, ok.row_bytes, lbo=strides.lbo, sbo=strides.sbo)
        inp["images"] = [C._image(misread.addresses(), p, 1) for p in C._tag_planes(inp["mn"], inp["k"])]
        try:
            got = chk.run(inp)
        except IndexError:  # the walk leaves the misread image: also a failed check
            checked += 1
            continue
        assert not np.array_equal(got, chk.want()), chk.name
        checked += 1
    assert checked == 4


def test_idesc_checks_detect_a_misplaced_field() -> None:
    """Shifting Table 42's atype field by one bit breaks the per-value decode the check expects."""
    chk = next(c for c in C.table42_checks() if c.name == "idesc.T42.6.f8f6f4")
    inp = chk.make()
    inp["words"] = [w ^ (((w >> 7) & 7) << 7) ^ (((w >> 7) & 7) << 8) for w in inp["words"]]
    assert not np.array_equal(chk.run(inp), chk.want())


def test_zcm_examples_detect_swapped_spans() -> None:
    ex = C.ZCM_EXAMPLES[3]
    chk = C._zcm_example_check(ex)
    inp = chk.make()
    assert np.array_equal(chk.run(inp), chk.want())
    swapped = C.ZcmExample(ex.number, ex.m, ex.n, ex.start_counts, ex.first_spans, 1, ex.use_span, ex.skip_span,
                           ex.shift, ex.masks, ex.rows)
    assert not np.array_equal(chk.run(C._zcm_example_check(swapped).make()), chk.want())


def test_cuda_skips_with_the_reason_and_devices() -> None:
    cases = DRIVER.cases("smoke")
    res = DRIVER.launch(cases, [DRIVER.make_inputs(c) for c in cases], None)
    assert all(r.status == "skip" and r.extra["reason"] == NO_KERNEL for r in res)
    assert DRIVER.device_supported((10, 0)) is None
    assert "sm_90" in DRIVER.device_supported((9, 0)) and "sm_120" in DRIVER.device_supported((12, 0))
    c103 = next(c for c in DRIVER.cases("standard") if c.arch == "sm_103a")
    assert DRIVER.case_supported(c103, (10, 3)) is None and "sm_103a" in DRIVER.case_supported(c103, (10, 0))


@pytest.mark.parametrize("carrier", ["smem", "zcm", "idesc:tf32", "idesc:f16", "idesc:f8f6f4", "idesc:i8"])
def test_carrier_modules_assemble(carrier, tmp_path, monkeypatch) -> None:
    from mmacts.backends.assembler import assemble
    from mmacts.toolchain.cache import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    case = next(c for c in DRIVER.cases("standard") if c.form == carrier_form(carrier))
    ptx = DRIVER.module_ptx(case)
    assert "tcgen05.mma" in ptx
    r = assemble(ptx, case.arch)
    assert r.ok, r.first_error_line
