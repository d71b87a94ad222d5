"""The exact model's float64 shortcut (``exact_f32``) gives the model's bits wherever it claims an element, and
leaves to the model every element where float64 would not be exact (wide exponent spread, zero, specials)."""

from __future__ import annotations

import numpy as np

from mmacts.ptxvm.warpmma import exact_f32 as X
from mmacts.ptxvm.warpmma import mma_sync as ms
from reference import numeric_model as nm

E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def _model(a, b, c, sa, sb):
    """The model on every (warp, m, n) element, as the VM asked it before the shortcut."""
    w, m, k = a.shape
    n = b.shape[-1]
    av = np.broadcast_to(a[:, :, None, :], (w, m, n, k)).reshape(-1, k)
    bv = np.broadcast_to(np.swapaxes(b, -1, -2)[:, None], (w, m, n, k)).reshape(-1, k)
    nsf = sa.shape[-1]
    sav = np.broadcast_to(sa[:, :, None, :], (w, m, n, nsf)).reshape(-1, nsf)
    sbv = np.broadcast_to(np.swapaxes(sb, -1, -2)[:, None], (w, m, n, nsf)).reshape(-1, nsf)
    return nm.dot("exact_rne", av, bv, c.reshape(-1), "fp32", in_format=("e2m1", "e2m1"), scale_a=sav,
                  scale_b=sbv).reshape(w, m, n)


def _inputs(rng, exp_lo, exp_hi, c_exp, warps=4):
    a = rng.choice(E2M1, (warps, 16, 64)) * rng.choice([-1.0, 1.0], (warps, 16, 64))
    b = rng.choice(E2M1, (warps, 64, 8)) * rng.choice([-1.0, 1.0], (warps, 64, 8))
    sa = np.ldexp(1.0, rng.integers(exp_lo, exp_hi, (warps, 16, 4)))
    sb = np.ldexp(1.0, rng.integers(exp_lo, exp_hi, (warps, 4, 8)))
    c = np.ldexp(rng.standard_normal((warps, 16, 8)), rng.integers(-c_exp, c_exp + 1, (warps, 16, 8)))
    return a, b, np.float32(c).astype(np.float64), sa, sb


def _bits(x):
    return np.asarray(x, np.float32).view(np.uint32)


def test_lowbit_exponent():
    x = np.array([1.0, 0.75, 6.0, -12.0, 2.0**-1074, 3 * 2.0**-1074, 2.0**1000 + 2.0**948, 0.0])
    got = X.lowbit_exponent(x)
    assert got[:-1].tolist() == [0, -2, 1, 2, -1074, -1074, 948]
    assert got[-1] > 10**9


def test_ordinary_data_is_claimed_and_equal():
    """Scales within 2^+-8 and C of moderate size (a GEMM's running sum): every element claimed, model's bits."""
    rng = np.random.default_rng(1)
    a, b, c, sa, sb = _inputs(rng, -8, 9, 12)
    d, ok = X.matrix_dot(a, b, c, sa, sb)
    assert ok.mean() > 0.95
    assert (_bits(d)[ok] == _bits(_model(a, b, c, sa, sb))[ok]).all()


def test_wide_spread_is_left_to_the_model():
    """Scales spread over 2^+-24 and C over 2^+-40: float64 sums would lose bits; the shortcut must decline
    those elements (and still be right on the ones it claims). Planted fault: without the 2^(L+52) guard this fails."""
    rng = np.random.default_rng(2)
    a, b, c, sa, sb = _inputs(rng, -24, 25, 40)
    d, ok = X.matrix_dot(a, b, c, sa, sb)
    want = _model(a, b, c, sa, sb)
    assert 0 < ok.sum() < ok.size
    assert (_bits(d)[ok] == _bits(want)[ok]).all()


def test_cancellation_far_below_the_top_is_declined():
    """2^100 - 2^100 + 2^-100: float64 gives 0 in one order, the exact answer is 2^-100."""
    a = np.zeros((1, 16, 64))
    b = np.zeros((1, 64, 8))
    a[0, 0, :3] = [1.0, -1.0, 1.0]
    b[0, :3, 0] = [1.0, 1.0, 1.0]
    sa = np.ones((1, 16, 4))
    sb = np.ones((1, 4, 8))
    a[0, 0, 2] = 2.0**-200  # not an E2M1 value, but the shortcut takes any float64: the guard must hold
    sa[0, 0, 0] = 2.0**100
    sb[0, 0, 0] = 1.0
    c = np.zeros((1, 16, 8))
    d, ok = X.matrix_dot(a, b, c, sa, sb)
    assert not ok[0, 0, 0]


def test_exact_zeros_take_the_models_sign():
    """An exact zero is -0 only when every term (products and C) is -0 (the model's rule): rows of -0 with
    C = -0 give -0; with C = +0, or a cancelling sum, +0. Planted fault: a zero taken as matmul's own sign
    (float64 gives -0 + -0 = -0 but also +0 for x - x) fails here."""
    rng = np.random.default_rng(3)
    a, b, c, sa, sb = _inputs(rng, -2, 3, 2)
    b = np.abs(b)
    a[0, 1] = -0.0
    c[0, 1] = -0.0
    a[0, 2] = 0.0
    c[0, 2] = -0.0
    a[0, 3] = -0.0
    c[0, 3] = 0.0
    a[1, 0] = 0.0
    a[1, 0, 0], a[1, 0, 16] = 1.0, -1.0
    sa[1, 0] = 1.0
    b[1, 0], b[1, 16] = 1.0, 1.0
    sb[1, 0], sb[1, 1] = 1.0, 1.0
    c[1, 0] = 0.0
    d, ok = X.matrix_dot(a, b, c, sa, sb)
    want = _model(a, b, c, sa, sb)
    assert ok[0, 1:4].all() and ok[1, 0].all()
    assert (_bits(d)[ok] == _bits(want)[ok]).all()
    assert np.signbit(d[0, 1]).all() and not np.signbit(d[0, 2:4]).any() and (d[1, 0] == 0).all()


def test_special_and_out_of_range_are_declined():
    rng = np.random.default_rng(3)
    a, b, c, sa, sb = _inputs(rng, -2, 3, 2)
    sa[1, 2, 0] = 2.0**127
    sb[1, 0, :] = 2.0**127  # beyond f32: overflow is the model's
    _, ok = X.matrix_dot(a, b, c, sa, sb)
    assert not ok[1, 2].any() and ok[2:].all()
    sa[3, 0, 0] = np.nan  # UE8M0 0xFF
    _, ok = X.matrix_dot(a, b, c, sa, sb)
    assert not ok.any()


def test_mma_sync_matches_the_model_element_by_element():
    """Through execute_mma_sync (shortcut + the model for the declined elements) against the model alone."""
    rng = np.random.default_rng(4)
    q = ms.parse_mma_sync("mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X"
                          ".f32.e2m1.e2m1.f32.ue8m0")
    regs = [rng.integers(0, 2**32, (6, 32, n), dtype=np.uint64).astype(np.uint32) for n in (4, 2)]
    c = np.float32(np.ldexp(rng.standard_normal((6, 32, 4)), rng.integers(-60, 60, (6, 32, 4)))).view(np.uint32)
    sf = [rng.integers(0, 2**32, (6, 32), dtype=np.uint64).astype(np.uint32) & 0x7F7F7F7F for _ in range(2)]
    got = ms.execute_mma_sync(q, regs[0], regs[1], c, sfa=sf[0], sfb=sf[1], arch="sm_120a")
    A, B, C = ms.read_a(q, regs[0]), ms.read_b(q, regs[1]), ms.read_c(q, c)
    SA, SB = ms.read_scales(q, sf[0], sf[1], (0, 0), (0, 0))
    _, ok = X.matrix_dot(A, B, C, SA, SB)
    assert 0 < ok.sum() < ok.size  # both paths ran
    want = ms.write_d(q, _model(A, B, C, SA, SB))
    assert (got == want).all()
