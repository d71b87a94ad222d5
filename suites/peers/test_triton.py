"""Triton peer kernels on the PTX VM: the smoke level must compute the exact product.

Skipped without the ``peers`` extra (``triton``) unless every smoke kernel's PTX is already in the
disk cache (then Triton is not needed at all)."""

from __future__ import annotations

import numpy as np
import pytest

from suites.peers import triton_cases as TC


def _have_triton() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


SMOKE = TC.triton_cases("smoke")


def test_levels_nest_and_ids_are_unique():
    ids = {lvl: [c.case_id for c in TC.triton_cases(lvl)] for lvl in ("smoke", "standard", "full")}
    assert set(ids["smoke"]) <= set(ids["standard"]) <= set(ids["full"])
    for v in ids.values():
        assert len(v) == len(set(v))
    assert 2 <= len(ids["smoke"]) <= 3
    assert all(i.startswith("peers.triton.sm_") for i in ids["full"])


def test_fp4_packing_and_reference_agree():
    cfg = TC.TritonConfig("sm_100a", "e2m1", "e4m3", "ue8m0", 128, 64, 128, "ptr", "bK")
    x = TC.make_inputs(cfg, 3)
    assert x.a_mem.shape == (128, 128) and (x.a_mem & 0xF == x.a_codes[:, 0::2]).all()
    assert (x.a_mem >> 4 == x.a_codes[:, 1::2]).all()
    want = TC.expected(cfg, x)
    assert np.isfinite(want).all() and np.count_nonzero(want) > want.size // 2


def test_chain_data_is_exact_by_construction():
    cfg = TC.TritonConfig("sm_100a", "e4m3", "e4m3", "ue8m0", 128, 64, 128, "chain", "bN")
    x = TC.make_inputs(cfg, 5)
    assert ((x.a_codes != 0).sum(axis=1) == 1).all()  # one 1.0 per row of A
    p = TC.chain_intermediate(x)  # asserts P is exact in e4m3
    assert p.shape == (128, 128) and np.count_nonzero(p) > p.size // 2
    want = TC.expected(cfg, x)
    assert want.shape == (128, 64) and np.isfinite(want).all() and np.count_nonzero(want) > want.size // 2


@pytest.mark.skipif(not _have_triton(), reason="needs the peers extra (triton)")
@pytest.mark.parametrize("case", SMOKE, ids=[c.case_id for c in SMOKE])
def test_smoke_kernel_computes_exact_product(case):
    got, want, msg = TC.run_triton_case(case)
    assert got is not None, msg
    assert np.count_nonzero(want) > want.size // 2
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg=msg)
