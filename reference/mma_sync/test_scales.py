"""Selector rules (Table 37 and the 9.7.14.3 prose) and the poison placement."""

from __future__ import annotations

import numpy as np
import pytest

from reference.mma_sync import scales as sc


@pytest.mark.parametrize("scale_vec", ["1X", "2X", "4X"])
def test_roundtrip_and_poison_everywhere_else(scale_vec):
    nsf = sc.NSF[scale_vec]
    rng = np.random.default_rng(nsf)
    for sel in sc.all_selectors(scale_vec):
        a = rng.integers(125, 130, size=(16, nsf))
        b = rng.integers(125, 130, size=(nsf, 8))
        wa = sc.encode_sfa(a, scale_vec, "ue8m0", sel)
        wb = sc.encode_sfb(b, scale_vec, "ue8m0", sel)
        assert np.array_equal(sc.decode_sfa(wa, scale_vec, sel), a)
        assert np.array_equal(sc.decode_sfb(wb, scale_vec, sel), b)
        # Independent statement of the prose: which (lane, byte) cells are selected.
        ba = (wa[:, None] >> (8 * np.arange(4))) & 0xFF
        bb = (wb[:, None] >> (8 * np.arange(4))) & 0xFF
        lane = np.arange(32)[:, None]
        byte = np.arange(4)[None, :]
        in_bytes_a = (byte >= sel.bida) & (byte < sel.bida + nsf)
        in_bytes_b = (byte >= sel.bidb) & (byte < sel.bidb + nsf)
        sel_a = ((lane % 4) // 2 == sel.tida) & in_bytes_a  # thread pair 2*tida, 2*tida+1
        sel_b = (lane % 4 == sel.tidb) & in_bytes_b
        real = set(range(125, 130))
        assert not (set(ba[~sel_a].tolist()) & real)
        assert not (set(bb[~sel_b].tolist()) & real)
        assert set(ba[sel_a].tolist()) <= real and set(bb[sel_b].tolist()) <= real


@pytest.mark.parametrize("scale_vec", ["1X", "2X", "4X"])
def test_default_selectors_are_zero_and_valid(scale_vec):
    # Selectors() is {0, 0} / {0, 0}: the one selector Table 37 defines for every scale_vec
    assert sc.Selectors().as_tuple() == (0, 0, 0, 0)
    sc.check_selectors(scale_vec, sc.Selectors())


@pytest.mark.parametrize("scale_vec", ["1X", "4X"])
def test_batched_encode_is_the_stack_of_single_encodes(scale_vec):
    # [..., 16, nsf] / [..., nsf, 8] codes (a batch of warps' scale data, as probes and tools encode them)
    nsf = sc.NSF[scale_vec]
    rng = np.random.default_rng(7)
    a = rng.integers(125, 130, size=(3, 2, 16, nsf))
    b = rng.integers(125, 130, size=(3, 2, nsf, 8))
    sel = sc.all_selectors(scale_vec)[-1]
    wa, wb = sc.encode_sfa(a, scale_vec, "ue8m0", sel), sc.encode_sfb(b, scale_vec, "ue8m0", sel)
    assert wa.shape == wb.shape == (3, 2, 32)
    for i in range(3):
        for j in range(2):
            assert np.array_equal(wa[i, j], sc.encode_sfa(a[i, j], scale_vec, "ue8m0", sel))
            assert np.array_equal(wb[i, j], sc.encode_sfb(b[i, j], scale_vec, "ue8m0", sel))


def test_sfa_row_mapping_matches_cutlass_sfalayout():
    # CUTLASS SFALayout (cutlass-facts 6.3): lane l holds the SF of row l/4 + 8*(l % 2).
    for tida in (0, 1):
        for lane in range(32):
            if (lane % 4) // 2 != tida:
                continue
            row = lane // 4 + 8 * (lane % 2)
            assert sc.sfa_lane(np.array([row]), tida)[0] == lane


def test_sfb_column_mapping():
    for tidb in range(4):
        for n in range(8):
            lane = sc.sfb_lane(np.array([n]), tidb)[0]
            assert lane // 4 == n and lane % 4 == tidb


@pytest.mark.parametrize(("scale_vec", "count"), [("1X", 128), ("2X", 32), ("4X", 8)])
def test_selector_counts(scale_vec, count):
    sels = sc.all_selectors(scale_vec)
    assert len(sels) == len(set(sels)) == count


def test_undefined_selector_refused():
    with pytest.raises(ValueError):
        sc.decode_sfa(np.zeros(32, np.uint32), "2X", sc.Selectors(bida=1))
    with pytest.raises(ValueError):
        sc.decode_sfb(np.zeros(32, np.uint32), "4X", sc.Selectors(bidb=2))
    with pytest.raises(ValueError):
        sc.decode_sfa(np.zeros(32, np.uint32), "1X", sc.Selectors(tida=2))
