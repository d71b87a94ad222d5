"""A compact parameterised block-FMA model: the hypothesis space the probes decide between.

This is the model of shared/reference-notes/numeric-models.md §1.1/§2 (global alignment
to the largest term, truncation to ``23 + neab`` fraction bits, an exact integer sum, one
rounding per block, blocks chained through a rounded accumulator) with every feature a
probe must recover as an explicit field. It is written here, apart from
``reference/numeric_model.py``, on purpose: ``recover`` fits observations against *this*
implementation, so recovering the parameters of the reference model's named sets is an
independent check of both.

Values travel as float64: fp8 products are exact in float64, and every aligned term is an
integer below 2**40, so nothing here rounds except where the model says it does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

FORMATS: dict[str, tuple[int, int, int]] = {
    # name: (fraction bits, emin, emax)
    "fp32": (23, -126, 127),
    "fp16": (10, -14, 15),
}
INPUT_EMIN: dict[str, int] = {"e4m3": -6, "e5m2": -14}
GROUPINGS: tuple[str, ...] = ("contiguous", "kmod4")
ROUNDINGS: tuple[str, ...] = ("rz", "rne")
C_PLACEMENTS: tuple[str, ...] = ("aligned", "last")


@dataclass(frozen=True)
class BlockFMAParams:
    """Every feature of the inner product that the probes try to recover.

    ``block_size`` products form one block (``grouping='kmod4'``: two 16-term blocks,
    k mod 4 in {0,1} then {2,3}, the F2FP+HMMA split). Each block is aligned to its largest
    term keeping ``23 + neab`` fraction bits (truncated), summed exactly and rounded with
    ``block_rounding`` to ``out_frac_bits``. ``c_placement='aligned'``: C is a term of the
    first block; ``'last'``: blocks start from 0 and C is added at the end by one RNE add.
    """

    block_size: int = 32
    grouping: str = "contiguous"
    neab: int = 2
    block_rounding: str = "rz"
    c_placement: str = "aligned"
    out_format: str = "fp32"
    out_frac_bits: int | None = None
    in_format: str = "e4m3"
    in_subnormals: bool = True
    out_subnormals: bool = True
    zero_sign: str = "plus"
    overflow: str = "inf"
    min_exp_limit: int | None = None

    def __post_init__(self) -> None:
        if self.grouping not in GROUPINGS:
            raise ValueError(f"grouping {self.grouping!r} not in {GROUPINGS}")
        if self.grouping == "kmod4" and self.block_size != 16:
            raise ValueError("kmod4 grouping means two 16-term blocks")
        if self.block_rounding not in ROUNDINGS or self.c_placement not in C_PLACEMENTS:
            raise ValueError("unknown rounding or C placement")
        if self.out_format not in FORMATS or self.in_format not in INPUT_EMIN:
            raise ValueError("unknown format")
        if self.zero_sign not in ("plus", "ieee") or self.overflow not in ("inf", "satfinite"):
            raise ValueError("zero_sign must be plus|ieee, overflow inf|satfinite")

    @property
    def frac_bits(self) -> int:
        return self.out_frac_bits if self.out_frac_bits is not None else FORMATS[self.out_format][0]

    @property
    def window(self) -> int:
        """Fraction bits an aligned term keeps below the block's largest exponent."""
        return 23 + self.neab

    @property
    def anchor_floor(self) -> int:
        if self.min_exp_limit is not None:
            return self.min_exp_limit
        return -133 if self.out_format == "fp32" else -21

    def features(self) -> dict[str, object]:
        """The recoverable features, named as ``recover`` reports them."""
        d = asdict(self)
        d["out_frac_bits"] = self.frac_bits
        for k in ("out_format", "in_format", "overflow", "min_exp_limit"):
            d.pop(k)
        return d


def _floor_log2(x: np.ndarray) -> np.ndarray:
    """floor(log2|x|) for x != 0 (exact, via frexp); 0 where x == 0."""
    _, e = np.frexp(np.where(x == 0, 1.0, x))
    return (e - 1).astype(np.int64)


def round_to_format(v: np.ndarray, frac_bits: int, emin: int, emax: int, mode: str,
                    overflow: str = "inf", subnormals: bool = True) -> np.ndarray:
    """Round exact float64 values to a binary format with ``frac_bits`` fraction bits.

    The quantum is 2**(max(e, emin) - frac_bits) (gradual underflow); ``rz`` truncates,
    ``rne`` rounds half to even. A result beyond the largest finite value becomes +-Inf
    (``overflow='inf'``, as the published models do even under RZ) or saturates.
    """
    v = np.asarray(v, dtype=np.float64)
    e = np.maximum(_floor_log2(v), emin)
    q = e - frac_bits
    scaled = np.ldexp(v, -q)
    r = np.trunc(scaled) if mode == "rz" else np.rint(scaled)
    out = np.ldexp(r, q)
    maxfin = np.ldexp(2.0 - 2.0 ** -frac_bits, emax)
    big = np.abs(out) > maxfin
    out = np.where(big, np.copysign(np.inf if overflow == "inf" else maxfin, v), out)
    if not subnormals:
        out = np.where(np.abs(out) < 2.0 ** emin, np.copysign(0.0, v), out)
    return np.where(np.isfinite(v), out, v)


def _term_exponents(a: np.ndarray, b: np.ndarray, emin_in: int) -> np.ndarray:
    """Product exponent e_a + e_b *before* renormalising (the models' anchor rule)."""
    ea = np.maximum(_floor_log2(a), emin_in)
    eb = np.maximum(_floor_log2(b), emin_in)
    return ea + eb


def block_of(k: int, p: BlockFMAParams) -> np.ndarray:
    """Block index of every k position."""
    ks = np.arange(k)
    if p.grouping == "kmod4":
        return np.where(ks % 4 < 2, 0, 1) + 2 * (ks // 32)
    return ks // p.block_size


def _operands(a: np.ndarray, b: np.ndarray, c: np.ndarray, emin_in: int, in_subnormals: bool) -> tuple[np.ndarray, ...]:
    """What every hypothesis starts from: the rows' special results (NaN/Inf, decided before any
    alignment), then the finite rows' operands (inputs flushed where the hypothesis has no input
    subnormals), products, product exponents and the non-zero mask."""
    with np.errstate(invalid="ignore", over="ignore"):
        prod_raw = a * b
    nan = np.isnan(prod_raw).any(axis=1) | np.isnan(c)
    pinf = (prod_raw == np.inf).any(axis=1) | (c == np.inf)
    ninf = (prod_raw == -np.inf).any(axis=1) | (c == -np.inf)
    special = np.where(nan | (pinf & ninf), np.nan, np.where(pinf, np.inf, np.where(ninf, -np.inf, 0.0)))
    is_special = nan | pinf | ninf
    if not in_subnormals:
        tiny = 2.0**emin_in
        a = np.where(np.abs(a) < tiny, np.copysign(0.0, a), a)
        b = np.where(np.abs(b) < tiny, np.copysign(0.0, b), b)
    fin = ~is_special
    a = np.where(fin[:, None], a, 0.0)
    b = np.where(fin[:, None], b, 0.0)
    cc = np.where(fin, c, 0.0)
    prod = a * b
    return special, is_special, cc, prod, _term_exponents(a, b, emin_in), prod != 0


def evaluate(p: BlockFMAParams, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """d = a . b + c for every row of ``a``/``b`` [n, K] and ``c`` [n], under ``p``.

    Inputs are exact values of ``p.in_format`` (NaN allowed) and of the output format (c).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    n, k = a.shape
    frac, emin_out, emax_out = p.frac_bits, FORMATS[p.out_format][1], FORMATS[p.out_format][2]
    emin_in = INPUT_EMIN[p.in_format]

    special, is_special, cc, prod, eprod, live = _operands(a, b, c, emin_in, p.in_subnormals)

    blocks = block_of(k, p)
    w = p.window
    acc = cc.copy() if p.c_placement == "aligned" else np.zeros(n)
    for j in range(int(blocks.max()) + 1):
        sel = blocks == j
        x = prod[:, sel]
        ex = np.where(live[:, sel], eprod[:, sel], -(10**6))
        e_acc = np.where(acc != 0, np.maximum(_floor_log2(acc), -126), -(10**6))
        m = np.maximum(np.maximum(ex.max(axis=1), e_acc), p.anchor_floor)
        shift = (w - m)[:, None]
        t = np.trunc(np.ldexp(x, shift))  # truncation toward zero of each aligned term
        t_acc = np.trunc(np.ldexp(acc, w - m))
        s = t.sum(axis=1) + t_acc
        v = np.ldexp(s, m - w)
        acc = round_to_format(v, frac, emin_out, emax_out, p.block_rounding, p.overflow, p.out_subnormals)
    if p.c_placement == "last":
        acc = round_to_format(acc + cc, frac, emin_out, emax_out, "rne", p.overflow, p.out_subnormals)

    if p.zero_sign == "ieee":
        all_neg_zero = np.all((prod == 0) & np.signbit(prod), axis=1) & (cc == 0) & np.signbit(cc)
        zero = np.where(all_neg_zero, -0.0, 0.0)
    else:
        zero = np.zeros(n)
    acc = np.where(acc == 0, zero, acc)
    return np.where(is_special, special, acc)


def _round_rows(v: np.ndarray, frac: np.ndarray, emin: int, emax: int, rz: np.ndarray, overflow: str,
                subnormals: np.ndarray) -> np.ndarray:
    """:func:`round_to_format` of each row ``v[g]`` with that row's ``frac[g]``, mode (``rz[g]``:
    truncate, else RNE) and ``subnormals[g]``: one call per distinct rounding (a group has a few)."""
    out = np.empty_like(v)
    keys = np.stack([frac, rz, subnormals], axis=1)
    for key in np.unique(keys, axis=0):
        rows = (keys == key).all(axis=1)
        out[rows] = round_to_format(v[rows], int(key[0]), emin, emax, "rz" if key[1] else "rne", overflow,
                                    bool(key[2]))
    return out


def _evaluate_group(ps: list[BlockFMAParams], a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """:func:`evaluate` of hypotheses that share the block structure and the formats, one row per
    hypothesis: what differs (window, block rounding, C placement, output bits, output
    subnormals) becomes a per-row array, so each step runs once for the whole group."""
    p0 = ps[0]
    n, k = a.shape
    emin_out, emax_out = FORMATS[p0.out_format][1], FORMATS[p0.out_format][2]
    emin_in = INPUT_EMIN[p0.in_format]
    frac = np.array([p.frac_bits for p in ps], dtype=np.int64)
    w = np.array([p.window for p in ps], dtype=np.int64)
    rz = np.array([p.block_rounding == "rz" for p in ps])
    aligned = np.array([p.c_placement == "aligned" for p in ps])
    osub = np.array([p.out_subnormals for p in ps])

    special, is_special, cc, prod, eprod, live = _operands(a, b, c, emin_in, p0.in_subnormals)

    blocks = block_of(k, p0)
    acc = np.where(aligned[:, None], cc[None, :], 0.0)
    for j in range(int(blocks.max()) + 1):
        sel = blocks == j
        x = prod[:, sel]
        ex = np.where(live[:, sel], eprod[:, sel], -(10**6))
        e_acc = np.where(acc != 0, np.maximum(_floor_log2(acc), -126), -(10**6))
        m = np.maximum(np.maximum(ex.max(axis=1)[None, :], e_acc), p0.anchor_floor)
        shift = w[:, None] - m
        t = np.trunc(np.ldexp(x[None, :, :], shift[:, :, None]))  # integers below 2**40: any sum order is exact
        t_acc = np.trunc(np.ldexp(acc, shift))
        s = t.sum(axis=2) + t_acc
        v = np.ldexp(s, m - w[:, None])
        acc = _round_rows(v, frac, emin_out, emax_out, rz, p0.overflow, osub)
    if not aligned.all():
        last = _round_rows(acc + cc[None, :], frac, emin_out, emax_out, np.zeros(len(ps), dtype=bool), p0.overflow,
                           osub)
        acc = np.where(aligned[:, None], acc, last)

    if p0.zero_sign == "ieee":
        all_neg_zero = np.all((prod == 0) & np.signbit(prod), axis=1) & (cc == 0) & np.signbit(cc)
        zero = np.where(all_neg_zero, -0.0, 0.0)
    else:
        zero = np.zeros(n)
    acc = np.where(acc == 0, zero[None, :], acc)
    return np.where(is_special[None, :], special[None, :], acc)


def evaluate_many(ps: Sequence[BlockFMAParams], a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``np.stack([evaluate(p, a, b, c) for p in ps])`` [len(ps), n], bit for bit, computed a group
    of hypotheses at a time (those sharing block size, grouping and the fixed features): the fit
    grid's 400 hypotheses in 5 passes instead of 400 (``test_blockfma`` checks the equality)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    out = np.empty((len(ps), len(c)))
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, p in enumerate(ps):
        key = (p.block_size, p.grouping, p.in_format, p.out_format, p.in_subnormals, p.zero_sign, p.overflow,
               p.anchor_floor)
        groups.setdefault(key, []).append(i)
    for idx in groups.values():
        out[idx] = _evaluate_group([ps[i] for i in idx], a, b, c)
    return out
