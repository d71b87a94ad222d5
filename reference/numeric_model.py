"""Parameterised numeric model of the tensor-core inner product (block FMA).

After Khattak & Mikaitis's models (arXiv 2512.07004, companion code
north-numerical-computing/MATLAB-tensor-core ``Generic_BFMA_TC.m``/``GEMM.m``), as
paraphrased in the project's reference notes ``numeric-models.md`` §1-§2; written from that
description, no code copied.

One *block* of n products (plus an incoming c) is computed as
``round_out( 2^(M-w) * sum_i sign_i * floor(|x_i| * 2^(w-M)) )``: products are exact,
M is the largest product exponent (e_a + e_b, before renormalising, floored at
``min_exp_limit``), every term is truncated to w = 23 + neab fraction bits below 2^M,
the integer sum is exact, and one rounding gives the block result. Blocks chain: the
rounded result of one block is the c of the next. Where C enters (first block's alignment,
or a separate correctly rounded add at the end) and which k form a block are parameters:
that is what separates the instruction paths of :data:`MODELS`.

Everything is vectorised over vectors: ``dot`` takes (V, K) arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from reference import formats as F
from reference.gemm import exact_sum_round


@dataclass(frozen=True)
class OutParams:
    """How a block result is rounded for one output format."""

    frac_bits: int
    """Fraction bits kept (23 for fp32, 13 for the 13-bit fp8 paths, 10 for fp16)."""
    frmode: str
    """Rounding of every block result: rz, rne, ru, rd."""
    min_exp_limit: int
    """Floor of the alignment anchor M."""


@dataclass(frozen=True)
class ModelParams:
    """One instruction path's numeric behaviour. ``source`` says where each value comes from."""

    name: str
    source: str
    fma: int
    """Block size: products aligned together and rounded once."""
    neab: int
    """Extra alignment bits (negative: fewer than 23 fraction bits in the window)."""
    blocks: str
    """``contiguous`` (k = j*fma ... ) or ``mod4_pairs`` (per 32 k: k mod 4 in {0,1}, then {2,3})."""
    c_placement: str
    """``aligned``: C is the incoming c of the first block; ``last``: blocks start from 0 and C is
    added at the end with one correctly rounded add (``c_last_mode``)."""
    out: dict[str, OutParams] = field(default_factory=dict)
    c_last_mode: str = "rne"
    subnormals: bool = True
    """False: flush subnormal inputs and results to zero."""
    overflow_to_inf: bool = True
    """A block result whose exponent reaches all-ones is +-Inf even under rz (the models' rule)."""
    exact: bool = False
    """Ignore the block structure: exact sum, one rounding (reference, not a GPU)."""
    validated: str = ""
    """Which published files it reproduces (tests pin these counts)."""


_NOTES = "reference notes numeric-models.md"
_REPO = "north-numerical-computing/MATLAB-tensor-core@b12b5a7"

MODELS: dict[str, ModelParams] = {
    m.name: m
    for m in (
        ModelParams(
            "hmma_fp8_emulation",
            f"mma.sync m16n8k32 e4m3/e5m2 on sm_90/sm_100a = F2FP + 2x HMMA.16816 ({_NOTES} §0.1, §0.3, §4: "
            f"the pre-00415cd 'inter_pattern' configuration of {_REPO} GEMM.m; NVIDIA/cutlass#1986)",
            fma=16, neab=2, blocks="mod4_pairs", c_placement="last",
            out={"fp32": OutParams(23, "rz", -133), "fp16": OutParams(10, "rne", -21)},
            validated="B200 d_fp32 + d_fp16, H100 d_fp16, H200 d_fp16: 5000/5000 each",
        ),
        ModelParams(
            "hopper_wgmma_fp8",
            f"wgmma (QGMMA) fp8 on H100/H200: {_REPO} models/H100TC.m (fma 32, neab -10, rz, "
            f"13-bit output; {_NOTES} §0.2, §3). fp16 output: pre-refactor rule (13-bit alignment, "
            f"fp16 rne), NOT validated (HEAD is broken there, §5)",
            fma=32, neab=-10, blocks="contiguous", c_placement="aligned",
            out={"fp32": OutParams(13, "rz", -133), "fp16": OutParams(10, "rne", -21)},
            validated="H100 d_fp32, H200 d_fp32 (C = 0): 5000/5000 each",
        ),
        ModelParams(
            "b200_tcgen05_hypothesis",
            f"tcgen05.mma kind::f8f6f4 on B200 as claimed by {_REPO} models/B200TC.m (fma 32, neab 2, "
            f"rz, C aligned); unconfirmed: the published B200 data come from the HMMA path ({_NOTES} §0.1). "
            f"fp16 output: B200 fp16 row of §3 (rne, -21), not modelled upstream",
            fma=32, neab=2, blocks="contiguous", c_placement="aligned",
            out={"fp32": OutParams(23, "rz", -133), "fp16": OutParams(10, "rne", -21)},
            validated="B200 d_fp32: 3207/5000 only (the file is from the HMMA path)",
        ),
        ModelParams(
            "ada_qmma_fp8",
            f"native QMMA fp8 on Ada/L40S (sm_89): {_REPO} models/AdaTC.m, L40STC.m (fma 16 chained x2, "
            f"neab -10, rz, C aligned, min_exp -132; fp16 out rne 10 bits, -20) ({_NOTES} §0.4, §3); "
            f"first hypothesis for sm_120a mma.sync (native QMMA)",
            fma=16, neab=-10, blocks="contiguous", c_placement="aligned",
            out={"fp32": OutParams(13, "rz", -132), "fp16": OutParams(10, "rne", -20)},
            validated="Ada/L40S files (not shipped here): 5000/5000 per the notes",
        ),
        ModelParams(
            "exact_rne",
            "correctly rounded: exact sum of all products and C, one RNE rounding (IEEE reference)",
            fma=0, neab=0, blocks="contiguous", c_placement="aligned",
            out={"fp32": OutParams(23, "rne", -10_000), "fp16": OutParams(10, "rne", -10_000)},
            exact=True,
            validated="B200 d_fp32: 5000/5000 (that file only pins C-by-RNE)",
        ),
    )
}


_NO_TERM = np.iinfo(np.int32).min // 4
"""The exponent of a term that is absent (a zero product, or no addend): below every real one."""


def _floor_log2(x: np.ndarray) -> np.ndarray:
    _, e = np.frexp(x)
    return e.astype(np.int64) - 1


def _in_exponent(x: np.ndarray, fmt: F.Format) -> np.ndarray:
    """e_x = max(floor(log2|x|), emin_in): a subnormal input counts at the format's emin."""
    ax = np.abs(x)
    return np.maximum(_floor_log2(np.where(ax == 0, 1.0, ax)), fmt.emin)


def round_out(v: np.ndarray, out_fmt: F.Format, p: OutParams, params: ModelParams) -> np.ndarray:
    """Round float64 ``v`` (exact) to ``p.frac_bits`` with the output format's exponent range."""
    r = F.round_to_grid(v, p.frac_bits, out_fmt.emin, p.frmode)
    big = np.abs(r) >= 2.0 ** (out_fmt.emax + 1)
    if params.overflow_to_inf:
        r = np.where(big, np.copysign(np.inf, r), r)
    else:
        r = F.round_float(r, out_fmt.name, p.frmode)
    if not params.subnormals:
        r = np.where(np.abs(r) < out_fmt.min_normal, 0.0, r)
    return np.where(r == 0, 0.0, r)  # the models return +0


def _block(x: np.ndarray, e: np.ndarray, c: np.ndarray, out_fmt: F.Format, p: OutParams,
           params: ModelParams) -> np.ndarray:
    """One block FMA: x (n,V) exact products, e (n,V) their exponents e_a+e_b (the caller puts
    ``_NO_TERM`` where x == 0), c (V,) incoming addend (exact in the output format). Returns the
    rounded block result.

    Why terms along the first axis: the block's max and sum then run over contiguous rows of V
    values (a large wgmma case spent most of its oracle time in strided per-row reductions).
    """
    w = 23 + params.neab
    ec = np.maximum(_floor_log2(np.where(c == 0, 1.0, np.abs(c))), -126)
    m = e.max(axis=0) if x.shape[0] else np.full(x.shape[1], _NO_TERM)
    m = np.maximum(m, np.where(c != 0, ec, _NO_TERM))
    m = np.maximum(m, p.min_exp_limit)
    sh = w - m
    if sh.size and not (-1000 < sh.min() and sh.max() < 1000):
        # every format here (fp8/6/4 with UE8M0/UE4M3 scales, fp32 C) stays within 2**300
        raise ValueError("block terms beyond the range the model aligns in doubles (|exponent| > 1000)")
    # each term scaled by 2**sh (a power of two: exact, as ldexp) and truncated toward zero
    # (trunc(y) == copysign(floor(|y|), y), signed zeros included)
    up = np.ldexp(1.0, sh)
    t = x * up
    s = np.trunc(t, out=t).sum(axis=0) + np.trunc(c * up)
    v = s * np.ldexp(1.0, -sh)
    return round_out(v, out_fmt, p, params)


def _add_round(x: np.ndarray, y: np.ndarray, out_fmt: F.Format, mode: str) -> np.ndarray:
    """Correctly rounded x + y (both exact in the output format), via TwoSum + round-to-odd."""
    with np.errstate(invalid="ignore", over="ignore"):
        s = x + y
        bb = s - x
        err = (x - (s - bb)) + (y - bb)
    inexact = (err != 0) & np.isfinite(s)
    if inexact.any():
        m, _ = np.frexp(np.where(np.isfinite(s), s, 0.0))  # non-finite sums are never adjusted
        odd = (np.abs(m) * 2.0**53).astype(np.int64) & 1
        toward = np.where(err > 0, np.inf, -np.inf)
        s = np.where(inexact & (odd == 0), np.nextafter(s, toward), s)
    return F.round_float(s, out_fmt.name, mode)


def block_order(k: int, params: ModelParams) -> list[np.ndarray | slice]:
    """The k indices of each block, in accumulation order."""
    if params.exact:
        return [slice(0, k)]
    if params.blocks == "contiguous":  # slices: the blocks are views of the products, not copies
        return [slice(j, min(j + params.fma, k)) for j in range(0, k, params.fma)]
    if params.blocks == "mod4_pairs":
        out = []
        for base in range(0, k, 32):
            ks = np.arange(base, min(base + 32, k))
            lo, hi = ks[ks % 4 < 2], ks[ks % 4 >= 2]
            for grp in (lo, hi):
                out.extend(grp[j:j + params.fma] for j in range(0, len(grp), params.fma))
        return out
    raise ValueError(f"unknown block structure {params.blocks!r}")


def dot(model: str | ModelParams, a: np.ndarray, b: np.ndarray, c: np.ndarray | float | None = None,
        out_format: str = "fp32", *, in_format: str | tuple[str, str] = "e4m3",
        scale_a: np.ndarray | None = None, scale_b: np.ndarray | None = None) -> np.ndarray:
    """d = a . b + c per row, as the instruction path ``model`` computes it.

    ``a``, ``b``: (V, K) float64 values exact in ``in_format`` (one name, or (a, b) names), or
    without scales any two arrays that broadcast to (..., K) (V = the product of the leading dims:
    ``A[:, None, :]`` and ``B.T[None, :, :]`` give every element of A @ B);
    ``c``: (V,) float64 fp32 values (for fp16 output it is first rounded to fp16 with RNE, as an
    f16-accumulator instruction receives it). Returns (V,) float64 values exact in the output
    format (NaN/Inf after the models' pre-check).

    ``scale_a``/``scale_b`` (V, K/VS) block scales (HYPOTHESIS, no published data): each product
    becomes a*b*sa*sb and its exponent e_a + e_b + floor(log2 sa) + floor(log2 sb), i.e. a
    UE8M0 scale only moves the product in the alignment; a UE4M3 scale's significand joins it.
    """
    params, out_fmt, key = _model_and_output(model, out_format)
    op = params.out[key]
    a, b, shape = _vector_operands(a, b, scale_a)
    k = shape[-1]
    v = int(np.prod(shape[:-1]))
    c = np.zeros(v) if c is None else np.broadcast_to(np.asarray(c, dtype=np.float64), (v,)).copy()
    if key == "fp16":
        c = F.round_float(c, "fp16", "rne")
    fa, fb = (F.get(in_format), F.get(in_format)) if isinstance(in_format, str) else tuple(
        F.get(t) for t in in_format)
    sa, sb = _expanded_scales(scale_a, scale_b, a, v, k)
    terms = _KFirst(shape)
    prods = terms.products(a, b, sa, sb)
    nan, pinf, ninf = _special_inputs(prods, c)
    a, b, sa, sb, changed = _finite_inputs(a, b, sa, sb)
    c = np.where(np.isfinite(c), c, 0.0)
    if not params.subnormals:
        a = np.where(np.abs(a) < fa.min_normal, 0.0, a)
        b = np.where(np.abs(b) < fb.min_normal, 0.0, b)
        changed = True
    if changed:
        prods = terms.products(a, b, sa, sb)

    if params.exact:
        d = exact_sum_round(np.concatenate([prods.T, c[:, None]], axis=1), key, op.frmode)
    else:
        e = terms.exponents(a, b, sa, sb, fa, fb, prods)
        d = _blocks(prods, e, c, out_fmt, op, params)
    return np.where(nan | pinf | ninf, np.where(nan | (pinf & ninf), np.nan, np.where(pinf, np.inf, -np.inf)), d)


def _model_and_output(model: str | ModelParams, out_format: str) -> tuple[ModelParams, F.Format, str]:
    """The model's parameters, the output format and its key in ``ModelParams.out`` (``fp32``/``fp16``)."""
    if isinstance(model, str) and model not in MODELS:
        raise ValueError(f"unknown model {model!r}; known: {', '.join(MODELS)}")
    params = MODELS[model] if isinstance(model, str) else model
    out_fmt = F.get(out_format)
    if out_fmt.name not in ("f32", "f16"):
        raise ValueError(f"output format must be fp32 or fp16, not {out_format!r}")
    return params, out_fmt, "fp32" if out_fmt.name == "f32" else "fp16"


def _vector_operands(a: np.ndarray, b: np.ndarray, scale_a: np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """``a``, ``b`` as float64 arrays of at least two axes and their broadcast shape (..., K)."""
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(b, dtype=np.float64))
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        shape = ()
    if not shape or a.shape[-1] != b.shape[-1] or (scale_a is not None and a.shape != b.shape):
        raise ValueError(f"a {a.shape} and b {b.shape} differ")
    return a, b, shape


def _expanded_scales(scale_a: np.ndarray | None, scale_b: np.ndarray | None, a: np.ndarray, v: int, k: int
                     ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The block scales repeated to one per element (V, K); (None, None) without scales."""
    if (scale_a is None) != (scale_b is None):
        raise ValueError("give both scale_a and scale_b, or neither")
    if scale_a is None:
        return None, None  # unscaled: the products are a * b (the same bits as a * b * 1 * 1, fewer passes)
    sa = np.atleast_2d(np.asarray(scale_a, dtype=np.float64))
    sb = np.atleast_2d(np.asarray(scale_b, dtype=np.float64))
    if a.ndim != 2 or sa.shape != sb.shape or sa.shape[0] != v or k % sa.shape[1]:
        raise ValueError(f"scales {sa.shape}/{sb.shape} do not fit vectors {a.shape}")
    return np.repeat(sa, k // sa.shape[1], axis=1), np.repeat(sb, k // sb.shape[1], axis=1)


class _KFirst:
    """Terms laid out (K, V): term j of every vector in one contiguous row, so that a block's max and sum
    are reductions over whole rows (strided per-vector reductions, and transposing a (V, K) array, were
    most of a large wgmma case's oracle time). Operands are viewed with K first and every elementwise
    result is made in C order directly in that layout. An operand may be broadcast over the rows (e.g.
    ``dot(m, A[:, None, :], B.T[None, :, :])`` for every row x column of a matrix product): the
    per-element work on it (finiteness, exponents) is then done once, not once per row."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.k = shape[-1]
        self.v = int(np.prod(shape[:-1]))
        self.shape_t = (self.k, *shape[:-1])

    @staticmethod
    def k_first(x: np.ndarray) -> np.ndarray:
        return np.moveaxis(x, -1, 0)

    def k_rows(self, x: np.ndarray) -> np.ndarray:
        """An elementwise result of ``k_first`` views as (K, V) (free where it has every axis)."""
        return np.broadcast_to(x, self.shape_t).reshape(self.k, self.v)

    def products(self, a: np.ndarray, b: np.ndarray, sa: np.ndarray | None, sb: np.ndarray | None) -> np.ndarray:
        """The exact double products a * b (* sa * sb), (K, V)."""
        with np.errstate(invalid="ignore", over="ignore"):
            p = np.multiply(self.k_first(a), self.k_first(b), order="C")
            if sa is not None:
                p = p * self.k_first(sa) * self.k_first(sb)
        return self.k_rows(p)

    def exponents(self, a: np.ndarray, b: np.ndarray, sa: np.ndarray | None, sb: np.ndarray | None,
                  fa: F.Format, fb: F.Format, prods: np.ndarray) -> np.ndarray:
        """Each product's exponent e_a + e_b (+ floor(log2) of each scale), (K, V) and writable; a zero
        product has none (``_NO_TERM``)."""
        # exponents as int32 (|e| < 2**11 for any double): half the memory traffic of int64
        ea, eb = (_in_exponent(x, f).astype(np.int32) for x, f in ((a, fa), (b, fb)))
        e = np.add(self.k_first(ea), self.k_first(eb), order="C")
        if sa is not None:
            e = e + self.k_first(_floor_log2(np.where(sa == 0, 1.0, sa)) + _floor_log2(np.where(sb == 0, 1.0, sb))
                                 ).astype(np.int32)
        e = e.reshape(self.k, self.v) if e.shape == self.shape_t else np.array(self.k_rows(e))
        np.putmask(e, prods == 0, _NO_TERM)
        return e


def _special_inputs(prods: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The NaN/Inf pre-check (GEMM.m) on the double products and c: (NaN, +Inf, -Inf) per vector (one
    pass where all are finite, the usual case: the three per-kind passes cost a third of a large call)."""
    if np.isfinite(prods).all():
        return np.isnan(c), np.isposinf(c), np.isneginf(c)
    return (np.isnan(prods).any(axis=0) | np.isnan(c), np.isposinf(prods).any(axis=0) | np.isposinf(c),
            np.isneginf(prods).any(axis=0) | np.isneginf(c))


def _finite_inputs(a: np.ndarray, b: np.ndarray, sa: np.ndarray | None, sb: np.ndarray | None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, bool]:
    """Non-finite inputs count as 0 (scales as 1) after the pre-check; returns (a, b, sa, sb, whether any
    changed)."""
    fin_a, fin_b = np.isfinite(a), np.isfinite(b)
    changed = not (fin_a.all() and fin_b.all() and (sa is None or (np.isfinite(sa).all() and np.isfinite(sb).all())))
    if changed:
        fin = fin_a & fin_b
        if sa is not None:
            fin &= np.isfinite(sa) & np.isfinite(sb)
        a = np.where(fin, a, 0.0)
        b = np.where(fin, b, 0.0)
        if sa is not None:
            sa = np.where(fin, sa, 1.0)
            sb = np.where(fin, sb, 1.0)
    return a, b, sa, sb, changed


def _blocks(prods: np.ndarray, e: np.ndarray, c: np.ndarray, out_fmt: F.Format, op: OutParams,
            params: ModelParams) -> np.ndarray:
    """The block FMAs in accumulation order, C aligned into the first block or added last."""
    acc = c.copy() if params.c_placement == "aligned" else np.zeros(c.shape[0])
    for idx in block_order(prods.shape[0], params):
        acc = _block(prods[idx], e[idx], acc, out_fmt, op, params)
    if params.c_placement == "last":
        acc = _add_round(acc, c, out_fmt, params.c_last_mode)
    return acc


def list_models() -> list[tuple[str, str]]:
    """(name, source) of every model, for ``mmacts predict --list``."""
    return [(m.name, m.source) for m in MODELS.values()]
