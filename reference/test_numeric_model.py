"""Numeric model: bit-for-bit against the published GPU data, and against hand-derived vectors.

One parameter set per instruction path (not per file): ``hmma_fp8_emulation`` for every
mma.sync file (B200 fp32/fp16, H100/H200 fp16), ``hopper_wgmma_fp8`` for the H100/H200
fp32 files (which were measured with C = 0, see the reference notes).
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from reference import formats as F
from reference import numeric_model as NM
from reference import published as P

PATHS = [
    # (gpu, output, model, use the c file?)
    ("B200", "fp32", "hmma_fp8_emulation", True),
    ("B200", "fp16", "hmma_fp8_emulation", True),
    ("H100", "fp16", "hmma_fp8_emulation", True),
    ("H200", "fp16", "hmma_fp8_emulation", True),
    ("H100", "fp32", "hopper_wgmma_fp8", False),
    ("H200", "fp32", "hopper_wgmma_fp8", False),
]


@pytest.fixture(scope="module")
def data() -> dict[str, P.PublishedSet]:
    return {g: P.load(g) for g in ("B200", "H100", "H200")}


def test_every_published_file_is_covered_by_one_path() -> None:
    have = {(g, o) for g, f, o in P.available() if f == "E4M3"}
    assert have == {(g, o) for g, o, _, _ in PATHS}


@pytest.mark.parametrize("gpu,out,model,with_c", PATHS)
def test_published_bit_for_bit(data: dict[str, P.PublishedSet], gpu: str, out: str, model: str,
                               with_c: bool) -> None:
    s = data[gpu]
    c = s.c if with_c else np.zeros_like(s.c)
    got = F.fp32_bits(NM.dot(model, s.a, s.b, c, out))
    want = s.d[out]
    assert want.size == 5000
    miss = np.flatnonzero(got != want)
    assert miss.size == 0, f"{miss.size} mismatches, first at line {miss[:1] + 1}"


def test_published_files_discriminate_the_paths(data: dict[str, P.PublishedSet]) -> None:
    """The data pin the paths: the wrong model misses many vectors (figures as in the notes)."""
    b200 = data["B200"]
    got = F.fp32_bits(NM.dot("b200_tcgen05_hypothesis", b200.a, b200.b, b200.c, "fp32"))
    assert (got == b200.d["fp32"]).sum() == 3207  # numeric-models.md §0.1
    got = F.fp32_bits(NM.dot("exact_rne", b200.a, b200.b, b200.c, "fp32"))
    assert (got == b200.d["fp32"]).sum() == 5000  # the fp32 file only pins C-by-RNE
    h100 = data["H100"]
    for model in ("hmma_fp8_emulation", "ada_qmma_fp8"):
        got = F.fp32_bits(NM.dot(model, h100.a, h100.b, 0.0, "fp32"))
        assert (got == h100.d["fp32"]).sum() < 4500
    got = F.fp32_bits(NM.dot("b200_tcgen05_hypothesis", b200.a, b200.b, b200.c, "fp16"))
    assert (got == b200.d["fp16"]).sum() < 4000


def test_published_inputs_are_e4m3(data: dict[str, P.PublishedSet]) -> None:
    for s in data.values():
        assert s.a.shape == s.b.shape == (5000, 32)
        assert F.representable("e4m3", s.a).all() and F.representable("e4m3", s.b).all()
    assert np.array_equal(data["B200"].a, data["H100"].a)


# HPEC-style vectors moved to e4m3, numeric-models.md §7.5 (computed there with an independent
# implementation): (c, [(k, product)], expected offset in ulps of the result's binade, per model)
J = 2.0**13
ROWS = [
    (J, [(0, 2.0**-11), (1, 2.0**-11)], 2.0**13, {"b200": 1, "h100": 0, "ada": 0, "hmma": 1}),
    (J, [(0, 2.0**-11), (1, 2.0**-12), (2, 2.0**-12)], 2.0**13, {"b200": 1, "h100": 0, "ada": 0, "hmma": 1}),
    (J * (1 + 2.0**-23 + 2.0**-22), [(0, J), (1, J), (2, J)], 2.0**15, {"b200": 0, "h100": 0, "ada": 0, "hmma": 1}),
    (J * (1 + 2.0**-23), [(0, 1.5 * 2.0**-11)], 2.0**13, {"b200": 1, "h100": 0, "ada": 0, "hmma": 2}),
]
MODEL_OF = {"b200": "b200_tcgen05_hypothesis", "h100": "hopper_wgmma_fp8", "ada": "ada_qmma_fp8",
            "hmma": "hmma_fp8_emulation"}


def _split(p: float) -> tuple[float, float]:
    """An e4m3 pair whose product is p (p a power of two times 1 or 1.5)."""
    m, e = np.frexp(p)  # p = m * 2^e, m in [0.5, 1)
    e = int(e) - 1
    ea = max(min(e // 2, 8), -6)
    return float(2 * m) * 2.0**ea, 2.0 ** (e - ea)


def _vectors(c: float, prods: list[tuple[int, float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a, b = np.zeros((1, 32)), np.zeros((1, 32))
    for k, p in prods:
        a[0, k], b[0, k] = _split(p)
        assert a[0, k] * b[0, k] == p
    assert F.representable("e4m3", a).all() and F.representable("e4m3", b).all()
    return a, b, np.array([c])


@pytest.mark.parametrize("row", range(len(ROWS)))
@pytest.mark.parametrize("who", list(MODEL_OF))
def test_hpec_vectors_in_e4m3(row: int, who: str) -> None:
    c, prods, binade, want = ROWS[row]
    a, b, cc = _vectors(c, prods)
    ulp = binade * 2.0**-23
    d = NM.dot(MODEL_OF[who], a, b, cc, "fp32")[0]
    assert d == binade + want[who] * ulp


@pytest.mark.parametrize("who,second_k,want", [
    ("b200", 16, 16386), ("h100", 16, 16386), ("ada", 16, 16384), ("hmma", 16, 16386),
    ("b200", 2, 16386), ("h100", 2, 16386), ("ada", 2, 16386), ("hmma", 2, 16386),
])
def test_block_size_vector(who: str, second_k: int, want: float) -> None:
    a, b, c = _vectors(J * (1 + 2.0**-13), [(0, J), (second_k, 1.0)])
    assert NM.dot(MODEL_OF[who], a, b, c, "fp32")[0] == want


def test_hmma_blocks_are_k_mod_4_pairs() -> None:
    blocks = NM.block_order(32, NM.MODELS["hmma_fp8_emulation"])
    assert [sorted(set(int(k) % 4 for k in blk)) for blk in blocks] == [[0, 1], [2, 3]]
    assert sorted(np.concatenate(blocks).tolist()) == list(range(32))
    ks = np.arange(64)
    assert [ks[b].tolist() for b in NM.block_order(64, NM.MODELS["hopper_wgmma_fp8"])] == [list(range(32)),
                                                                                         list(range(32, 64))]


def test_exact_rne_matches_fractions() -> None:
    rng = np.random.default_rng(3)
    vals = F.decode("e5m2", F.finite_codes("e5m2"))
    a = rng.choice(vals, size=(200, 32))
    b = rng.choice(vals, size=(200, 32))
    c = (rng.standard_normal(200) * 2.0 ** rng.integers(-20, 20, 200)).astype(np.float32).astype(np.float64)
    d = NM.dot("exact_rne", a, b, c, "fp32", in_format="e5m2")
    for i in range(200):
        s = sum(Fraction(x) * Fraction(y) for x, y in zip(a[i], b[i], strict=True)) + Fraction(c[i])
        want = _rne_fraction(s)
        assert d[i] == want


def _rne_fraction(s: Fraction) -> float:
    """Round a fraction to fp32 (normal range, finite), ties to even — by hand."""
    if s == 0:
        return 0.0
    sign = -1 if s < 0 else 1
    s = abs(s)
    e = s.numerator.bit_length() - s.denominator.bit_length()
    if Fraction(2) ** e > s:
        e -= 1
    q = Fraction(2) ** (max(e, -126) - 23)
    n, r = divmod(s, q)
    if r * 2 > q or (r * 2 == q and n % 2 == 1):
        n += 1
    return sign * float(n * q)


def test_nan_inf_precheck() -> None:
    a = np.ones((4, 32))
    b = np.ones((4, 32))
    a[0, 3] = np.nan
    a[1, 0] = np.inf
    a[2, 0], a[2, 1] = np.inf, -np.inf
    a[3, 5] = np.inf
    b[3, 5] = 0.0
    for model in NM.MODELS:
        d = NM.dot(model, a, b, np.zeros(4), "fp32", in_format="e5m2")
        assert np.isnan(d[0]) and d[1] == np.inf and np.isnan(d[2]) and np.isnan(d[3])


def test_rz_overflow_gives_inf_and_fp16_output() -> None:
    # 32 products of 448*448 = 6422528 > fp16 max: Inf even under rz (the models' rule), max
    # finite under IEEE rz
    a = np.full((1, 32), 448.0)
    rz16 = dataclasses.replace(NM.MODELS["b200_tcgen05_hypothesis"],
                               out={"fp16": NM.OutParams(10, "rz", -21), "fp32": NM.OutParams(23, "rz", -133)})
    assert NM.dot(rz16, a, a, np.zeros(1), "fp16")[0] == np.inf
    ieee = dataclasses.replace(rz16, overflow_to_inf=False)
    assert NM.dot(ieee, a, a, np.zeros(1), "fp16")[0] == 65504.0
    # fp16 output: 32 * 448^2 = 6422528 overflows fp16 -> Inf
    assert NM.dot("hmma_fp8_emulation", a, a, np.zeros(1), "fp16")[0] == np.inf
    # small fp16 case: the result is an fp16 value
    d = NM.dot("hmma_fp8_emulation", np.full((1, 32), 0.5), np.full((1, 32), 0.25), np.array([1 / 3]), "fp16")
    assert d[0] == np.float16(4 + np.float16(1 / 3))


def test_list_models_names_and_sources() -> None:
    rows = NM.list_models()
    assert {n for n, _ in rows} >= {"hmma_fp8_emulation", "hopper_wgmma_fp8", "b200_tcgen05_hypothesis",
                                    "ada_qmma_fp8", "exact_rne"}
    assert all(src for _, src in rows)
    with pytest.raises(ValueError):
        NM.dot("nope", np.zeros((1, 32)), np.zeros((1, 32)))


def test_block_scaled_dot_on_exact_data_equals_exact_gemm() -> None:
    from reference import gemm as G

    data = G.exact_recipe("mxf4nvf4", 16, 16, 64, a_fmt="e2m1", b_fmt="e2m1", scale_fmt="ue8m0", vs=16, seed=4,
                          window_bits=14)
    a = np.repeat(F.decode("e2m1", data.a), 16, axis=0)
    b = np.tile(F.decode("e2m1", data.b).T, (16, 1))
    sa = np.repeat(F.decode("ue8m0", data.scale_a), 16, axis=0)
    sb = np.tile(F.decode("ue8m0", data.scale_b).T, (16, 1))
    for model in NM.MODELS:
        d = NM.dot(model, a, b, data.c.reshape(-1), "fp32", in_format="e2m1", scale_a=sa, scale_b=sb)
        assert np.array_equal(d, data.d.reshape(-1)), model


def test_scale_moves_product_in_alignment() -> None:
    """A 2^-20 scale on block 1 puts its products below the 13-bit window of the wgmma model."""
    a = np.ones((1, 64))
    sa = np.array([[1.0, 2.0**-20]])
    one = np.ones((1, 2))
    d13 = NM.dot("hopper_wgmma_fp8", a, a, 0.0, "fp32", scale_a=sa, scale_b=one)[0]
    d25 = NM.dot("b200_tcgen05_hypothesis", a, a, 0.0, "fp32", scale_a=sa, scale_b=one)[0]
    assert d13 == 32.0 and d25 == 32.0 + 32 * 2.0**-20


@pytest.mark.parametrize("model", sorted(NM.MODELS))
def test_broadcast_operands_give_the_same_bits_as_rows(model: str) -> None:
    """dot(A[:, None, :], B.T[None]) (every element of a matrix product, each operand worked on once)
    equals dot over the materialised (m*n, K) rows bit for bit, NaN/Inf included."""
    from reference.mma_sync.values import decode_elements, element_table

    rng = np.random.default_rng(7)
    a_codes = rng.integers(0, len(element_table("e4m3")), size=(2, 16, 32)).astype(np.uint8)
    b_codes = rng.integers(0, len(element_table("e5m2")), size=(2, 8, 32)).astype(np.uint8)
    A, Bt = decode_elements(a_codes, "e4m3"), decode_elements(b_codes, "e5m2")  # some NaN/Inf codes
    C = rng.standard_normal((2, 16, 8)).astype(np.float32).astype(np.float64)
    C[0, 0, 0] = np.inf
    rows_a = np.broadcast_to(A[:, :, None, :], (2, 16, 8, 32)).reshape(-1, 32)
    rows_b = np.broadcast_to(Bt[:, None, :, :], (2, 16, 8, 32)).reshape(-1, 32)
    for out in ("fp32", "fp16"):
        try:
            want = NM.dot(model, rows_a, rows_b, C.reshape(-1), out, in_format=("e4m3", "e5m2"))
        except ValueError as exc:  # the exact model refuses terms too wide for it: so must the broadcast form
            with pytest.raises(ValueError, match=str(exc)):
                NM.dot(model, A[:, :, None, :], Bt[:, None, :, :], C.reshape(-1), out, in_format=("e4m3", "e5m2"))
            continue
        got = NM.dot(model, A[:, :, None, :], Bt[:, None, :, :], C.reshape(-1), out, in_format=("e4m3", "e5m2"))
        assert np.array_equal(got.view(np.uint64), want.view(np.uint64))


@pytest.mark.parametrize("model", ["hopper_wgmma_fp8", "hmma_fp8_emulation"])
def test_terms_past_the_doubles_alignment_range_are_refused(model: str) -> None:
    """The block step aligns terms by multiplying with 2**shift in float64; a term whose
    exponent is past +-1000 (no fp8/6/4 value with its scales comes near) would make that
    power of two overflow, so it is refused rather than rounded silently."""
    big = np.full((1, 32), 2.0**600)
    with pytest.raises(ValueError, match="beyond the range"):
        NM.dot(model, big, big)
    assert NM.dot(model, np.full((1, 32), 2.0**100), np.full((1, 32), 2.0**100))[0] == np.inf  # in range
