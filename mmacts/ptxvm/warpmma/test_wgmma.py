"""wgmma semantics: differential against the hopper_validation record-level model, descriptor unit checks."""

from __future__ import annotations

import numpy as np
import pytest

from mmacts.ptxvm.warpmma import wgmma as wg


def _same(got, want) -> bool:
    g, w = np.asarray(got, np.float32), np.asarray(want, np.float32)
    nan = np.isnan(g) & np.isnan(w)
    return bool(np.all((g.view(np.uint32) == w.view(np.uint32)) | nan))


def _run_case(case, inputs, shared_base: int = 0):
    """The kernel's chain: fence, one wgmma per step on the same accumulator, commit, wait 0.

    ``shared_base`` plays the kernel's role of placing the image at a shared address and adding
    (base >> 4) to each descriptor (the descriptors hold offsets inside the image)."""
    f = case.form
    q = wg.parse_wgmma(case.instruction)
    img = inputs["img"]
    if shared_base:
        img = np.concatenate([np.zeros((img.shape[0], shared_base), np.uint8), img], axis=1)
    w = img.shape[0]
    d = np.ascontiguousarray(np.broadcast_to(np.asarray(inputs["c"], np.float32), (w,) + inputs["c"].shape[-2:]))
    d = d.view(np.uint32)
    groups = wg.AsyncGroups()
    groups.fence()
    ranges = None
    for s in range(f["steps"]):
        ad = inputs["desc"][:, s, 0] + np.uint64(shared_base >> 4)
        bd = inputs["desc"][:, s, 1] + np.uint64(shared_base >> 4)
        assert groups.issue(("d",)) is None
        d, ranges = wg.execute_wgmma(q, img, ad, bd, d, bool(inputs["use_c"]) if s == 0 else True,
                                     imm_trans_a=f["trans_a"], imm_trans_b=f["trans_b"])
    groups.commit()
    assert groups.wait(0) == ["d"] * f["steps"]
    return q, d, ranges


def test_hopper_wgmma_every_case():
    """All wgmma cases of hopper_validation full (fp8 exact/random, bf16 K/MN-major, every swizzle, and
    the two 5000-vector published QGMMA replays) vs run_record_model and the expectation, bit for bit."""
    from suites.hopper_validation.driver import DRIVER, WG_N

    cases = [c for c in DRIVER.cases("full") if c.form["path"] == "wgmma"]
    assert len(cases) == 50
    for case in cases:
        inputs = DRIVER.make_inputs(case)
        _, d, _ = _run_case(case, inputs, shared_base=1024 if case.recipe == "exact" else 0)
        got = DRIVER._finish_wg(case, inputs, wg.read_accumulator(d, WG_N).astype(np.float32))
        assert _same(got, DRIVER.run_record_model(case, inputs).got), case.case_id
        assert _same(got, DRIVER.expected(case, inputs).want), case.case_id


def test_probe_wgmma_path():
    from suites.probes import hardware as H
    from suites.probes.driver import DRIVER

    q = wg.parse_wgmma("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3")
    n = 0
    for case in DRIVER.cases("full"):
        if case.form.get("path") != "wgmma.sm_90a":
            continue
        inputs = DRIVER.make_inputs(case)
        ops = H.wgmma_operands(inputs["vectors"])
        d0 = np.ascontiguousarray(ops["c"], dtype=np.float32).view(np.uint32)
        d, _ = wg.execute_wgmma(q, ops["img"], ops["desc"][:, 0, 0], ops["desc"][:, 0, 1], d0, True)
        i = np.arange(64)
        got = wg.read_accumulator(d, 64)[:, i, i].reshape(-1)[: ops["n"]]
        assert _same(got, DRIVER.run_record_model(case, inputs).got), case.case_id
        n += 1
    assert n >= 10


def test_byte_ranges_of_the_published_layout():
    """32B swizzle, K = 32 fp8: A (64 x 32 B) fills [0, 2048), B (64 x 32 B) fills [2048, 4096)."""
    from suites.hopper_validation.driver import DRIVER

    case = next(c for c in DRIVER.cases("full") if c.case_id.startswith("hopper.published.wgmma"))
    inputs = DRIVER.make_inputs(case)
    q = wg.parse_wgmma(case.instruction)
    _, ranges = wg.execute_wgmma(q, inputs["img"][0], int(inputs["desc"][0, 0, 0]), int(inputs["desc"][0, 0, 1]),
                                 np.zeros((128, 32), np.uint32), False)
    assert ranges == [(0, 4096)]


# ------------------------------------------------------------------------------------ descriptors

def _desc(start, lbo, sbo, sw, bo=0):
    return (start >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (bo << 49) | (sw << 62)


def test_descriptor_fields_and_malformed():
    d = wg.decode_descriptor(_desc(0x3FFF0, 0x10, 0x400, 1, 5))
    assert (d.start, d.lbo, d.sbo, d.base_offset, d.swizzle) == (0x3FFF0, 16, 1024, 5, "128B")
    assert wg.decode_descriptor(_desc(0, 0, 0, 3)).swizzle == "32B"
    for bit in (14, 31, 46, 52, 61):
        with pytest.raises(ValueError, match="no meaning"):
            wg.decode_descriptor(_desc(0, 16, 256, 0) | (1 << bit))
        wg.decode_descriptor(_desc(0, 16, 256, 0) | (1 << bit), strict=False)


def test_reading_outside_shared_window_raises():
    q = wg.parse_wgmma("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3")
    smem = np.zeros(1024, np.uint8)
    with pytest.raises(ValueError, match="outside"):
        wg.execute_wgmma(q, smem, _desc(0, 16, 128, 0), _desc(0, 16, 128, 0), np.zeros((128, 4), np.uint32), False)


def _wg_exact(swizzle_code, base_offset_reading="subtract-phase", shift=0, bo=0):
    """m64n8k32 e4m3 K-major, A at 0 + shift (B at 16384 stays on its boundary: a K permutation applied to both
    operands alike would not change the sum), random exact data."""
    rng = np.random.default_rng(7)
    width = {1: 128, 2: 64, 3: 32}[swizzle_code]
    codes = np.array([0x30, 0x38, 0x40, 0xB8, 0x00], np.uint8)
    smem = np.zeros(32768, np.uint8)
    smem[:8192] = rng.choice(codes, size=8192)  # A: 8 groups of 8 rows, SBO = 8 * width <= 1024
    smem[16384:] = rng.choice(codes, size=16384)
    if shift:
        smem[:8192 + shift] = np.roll(smem[:8192 + shift], shift)
    q = wg.parse_wgmma("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3")
    a = _desc(shift, 16, 8 * width, swizzle_code, bo)
    b = _desc(16384, 16, 8 * width, swizzle_code, 0)
    return wg.execute_wgmma(q, smem, a, b, np.zeros((128, 4), np.uint32), False,
                            base_offset_reading=base_offset_reading)[0]


@pytest.mark.parametrize("sw", [1, 2, 3])
def test_base_offset_readings(sw):
    """The same pattern moved 128 B off its boundary: with base offset (addr >> 7) & 7 the
    subtract-phase reading sees the same matrix; the ignored reading does not (AMB-SDESC-BASEOFFSET)."""
    ref = _wg_exact(sw)
    moved = _wg_exact(sw, shift=128, bo=1)
    assert np.array_equal(ref, moved)
    assert not np.array_equal(ref, _wg_exact(sw, "ignored", shift=128, bo=1))


def test_negation_scale_d_and_trans_rules():
    q = wg.parse_wgmma("wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16")
    rng = np.random.default_rng(3)
    smem = np.zeros(8192, np.uint8)
    vals = rng.choice(np.array([0x3F80, 0x4000, 0xBF80, 0x3F00], np.uint16), size=2048)
    smem[:4096] = vals.view(np.uint8)
    a, b = _desc(0, 128, 256, 0), _desc(2048, 128, 256, 0)
    nan_acc = np.full((128, 8), 0x7FC00000, np.uint32)
    d1, _ = wg.execute_wgmma(q, smem, a, b, nan_acc, False)
    d2, _ = wg.execute_wgmma(q, smem, a, b, nan_acc, False, -1, 1)
    d3, _ = wg.execute_wgmma(q, smem, a, b, nan_acc, False, -1, -1)
    v1, v2 = wg.read_accumulator(d1, 16), wg.read_accumulator(d2, 16)
    assert np.isfinite(v1).all() and np.array_equal(v2, -v1) and np.array_equal(d3, d1)
    d4, _ = wg.execute_wgmma(q, smem, a, b, d1, True)
    assert np.array_equal(wg.read_accumulator(d4, 16), 2 * v1)
    dt, _ = wg.execute_wgmma(q, smem, a, b, nan_acc, False, 1, 1, 1, 1)  # MN-major reading of the same bytes
    assert dt.shape == d1.shape
    q8 = wg.parse_wgmma("wgmma.mma_async.sync.aligned.m64n16k32.f32.e5m2.e4m3")
    with pytest.raises(ValueError, match="imm-trans"):
        wg.execute_wgmma(q8, smem, a, b, np.zeros((128, 8), np.uint32), False, imm_trans_a=1)
    with pytest.raises(ValueError, match="imm-scale"):
        wg.execute_wgmma(q, smem, a, b, nan_acc, False, 2)


@pytest.mark.parametrize("op", [
    "wgmma.mma_async.sync.aligned.m64n64k16.f32.e4m3.e4m3",
    "wgmma.mma_async.sync.aligned.m64n12k32.f32.e4m3.e4m3",
    "wgmma.mma_async.sync.aligned.m64n264k32.f32.e4m3.e4m3",
    "wgmma.mma_async.sync.aligned.m64n64k16.f16.bf16.bf16",
    "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.e4m3",
    "wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.bf16.bf16",
    "wgmma.fence.aligned",
    "wgmma.wait_group.sync.aligned",
])
def test_parse_refuses(op):
    with pytest.raises(ValueError):
        wg.parse_wgmma(op)


def test_parse_sync_ops_and_groups():
    assert wg.parse_wgmma("wgmma.fence.sync.aligned;") == wg.WgmmaSyncOp("fence")
    assert wg.parse_wgmma("wgmma.commit_group.sync.aligned;") == wg.WgmmaSyncOp("commit_group")
    assert wg.parse_wgmma("wgmma.wait_group.sync.aligned 1;") == wg.WgmmaSyncOp("wait_group", 1)
    g = wg.AsyncGroups()
    assert g.issue(("d0",)) is not None  # no fence
    g.fence()
    g.commit()
    g.issue(("d1",))
    g.commit()
    assert g.hazards(["d1", "x"]) == {"d1"}
    assert g.wait(1) == ["d0"]
    assert g.wait(0) == ["d1"] and not g.pending()
