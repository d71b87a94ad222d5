"""The Gluon peer kernel: its case list, the PTX forms Triton emits for it, and its exact product on the VM.

Compile and VM tests skip without the ``peers`` extra (``triton``). A launch that stops at a VM gap named in
:data:`gluon_cases.VM_GAPS` is an ``xfail`` naming the gap (the VM refused by name: no silent approximation); any other
outcome must be the exact product, and with the planted fault (the two N halves of SFB swapped) must not be."""

from __future__ import annotations

import numpy as np
import pytest

from suites.peers import driver as D
from suites.peers import gluon_cases as GC
from suites.peers import triton_cases as TC


def _have_triton() -> bool:
    try:
        import triton.experimental.gluon  # noqa: F401
    except ImportError:
        return False
    return True


needs_triton = pytest.mark.skipif(not _have_triton(), reason="needs the peers extra (triton)")
ALL = GC.gluon_cases("full")
CTA1 = next(c for c in ALL if ".cta1.mxfp8." in c.case_id)
CTA2 = next(c for c in ALL if ".cta2.mxfp8." in c.case_id)

def test_levels_nest_and_ids_are_unique():
    ids = {lvl: [c.case_id for c in GC.gluon_cases(lvl)] for lvl in ("smoke", "standard", "full")}
    assert set(ids["smoke"]) <= set(ids["standard"]) <= set(ids["full"])
    for v in ids.values():
        assert len(v) == len(set(v))
    assert all(i.startswith("peers.gluon.mma_scaled.cta") for i in ids["full"])
    assert {GC.config_of(c).ctas for c in GC.gluon_cases("standard")} == {1, 2}


def test_pair_cases_name_the_pair_register_entries():
    assert "AMB-SF-2CTA-SFB-COPY" in D.register_ids(CTA2.case_id)
    assert "AMB-SF-CP-2CTA" in D.register_ids(CTA2.case_id)
    assert "AMB-SF-2CTA-SFB-COPY" not in D.register_ids(CTA1.case_id)
    assert CTA2.instruction.startswith("tcgen05.mma.cta_group::2.kind::mxf8f6f4")


def test_planted_fault_swaps_the_sfb_halves_and_nothing_else():
    cfg = GC.config_of(CTA2)
    x = TC.make_inputs(cfg, 7)  # type: ignore[arg-type]
    sa, sb = x.sa_mem.copy(), x.sb_mem.copy()
    GC.swap_sfb_halves(x, cfg.bn)
    assert (x.sa_mem == sa).all() and not (x.sb_mem == sb).all()
    back = TC.preshuffle_scales(x.sb_codes)
    assert (back == sb).all()  # the logical codes (and so the reference) are untouched
    half = cfg.bn // 2
    swapped = np.concatenate([x.sb_codes[half:], x.sb_codes[:half]])
    assert (x.sb_mem == TC.preshuffle_scales(swapped)).all()


@needs_triton
def test_pair_ptx_has_the_cta_group_2_forms():
    ptx = GC.compile_config(GC.config_of(CTA2))["ptx"]
    for form in ("tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale", "tcgen05.cp.cta_group::2.warpx4.32x128b",
                 "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64",
                 "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global", "tcgen05.alloc.cta_group::2",
                 "mbarrier.arrive.expect_tx.shared::cluster.b64", "-16777232", "%cluster_ctarank", "cvta.param",
                 ".reqnctapercluster 2"):
        assert form in ptx, form
    # SFB is held whole by both CTAs: two 128-row tcgen05.cp copies of it, SFA one
    assert ptx.count("tcgen05.cp.cta_group::2") == 2 * 3


@needs_triton
def test_one_cta_ptx_has_no_cluster_forms():
    ptx = GC.compile_config(GC.config_of(CTA1))["ptx"]
    assert "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale" in ptx and "cta_group::2" not in ptx
    assert "tcgen05.cp.cta_group::1.warpx4.32x128b" in ptx


@needs_triton
@pytest.mark.parametrize("case", [CTA1, CTA2], ids=[CTA1.case_id, CTA2.case_id])
def test_kernel_computes_exact_product_and_sees_the_planted_fault(case):
    got, want, msg = GC.run_gluon_case(case)
    if got is None and GC.vm_gap(msg):
        pytest.xfail(f"VM gap: {GC.vm_gap(msg)}: {msg}")
    assert got is not None, msg
    assert np.count_nonzero(want) > want.size // 2
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg=msg)
    bad, _, fmsg = GC.run_gluon_case(case, fault="swap_sfb")
    assert bad is not None, fmsg
    assert (bad.view(np.uint32) != want.view(np.uint32)).mean() > 0.5, fmsg


@needs_triton
def test_split_sfb_layout_compiles_to_one_sfb_copy_per_cta():
    """The register cites this (AMB-SF-2CTA-SFB-COPY): Triton 3.9 also accepts SFB split across the pair like B;
    each CTA then copies only its N half and the accumulator starts in the columns after it."""
    from dataclasses import replace

    ptx = GC.compile_config(replace(GC.config_of(CTA2), sfb_split=True))["ptx"]
    assert ptx.count("tcgen05.cp.cta_group::2") == 2 * 2
