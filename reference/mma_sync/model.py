"""Executable model of ``mma.sync.aligned.m16n8k{32,64}...block_scale`` from register images.

The model reads what the hardware reads -- the A/B/C register images of all 32 lanes and
the two scale-metadata words per lane -- applies the fragment maps and the selector rules,
and produces the D register image. It never sees the logical matrices a recipe started
from, so a wrong fragment map, a wrong selector rule or wrong metadata gives a wrong answer.

Arithmetic: D = (A * SF_A) (B * SF_B) + C, every product exact, then an accumulation rule.
The default rule is the exact sum of all products and C, rounded once to f32 (RNE). That is
what "exact" data recipes are built to make unambiguous; what the hardware really does for
inexact data is the job of ``reference.numeric_model`` (pass ``accumulate=``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from reference.mma_sync import fragments as fr
from reference.mma_sync import scales as sc
from reference.mma_sync.values import ELEMENT_BITS, decode_elements, decode_scales

KINDS: dict[str, int] = {"mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}
"""K of the one shape each kind has for mma.sync (Table 36 + 9.7.14.3 syntax)."""

Accumulate = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
"""(A_scaled [..., 16, K], B_scaled [..., K, 8], C [..., 16, 8]) -> D float32 [..., 16, 8]."""


@dataclass(frozen=True)
class BlockScaleForm:
    """Compile-time qualifiers of one mma.sync block_scale instruction."""

    kind: str
    atype: str
    btype: str
    stype: str
    scale_vec: str

    @property
    def k(self) -> int:
        return KINDS[self.kind]

    @property
    def shape(self) -> str:
        return f"m16n8k{self.k}"

    @property
    def nsf(self) -> int:
        return sc.NSF[self.scale_vec]

    @property
    def block(self) -> int:
        """K elements per scale factor (32 for 1X/2X, 16 for 4X)."""
        return self.k // self.nsf

    def tag(self) -> str:
        return f"{self.shape}.{self.kind}.{self.scale_vec}.{self.stype}/{self.atype}x{self.btype}"


@dataclass
class RegisterImage:
    """Everything one warp passes to the instruction (leading batch dims allowed)."""

    a: np.ndarray  # [..., 32, 4] uint32
    b: np.ndarray  # [..., 32, 2] uint32
    c: np.ndarray  # [..., 32, 4] uint32 (f32 bit patterns)
    sfa: np.ndarray  # [..., 32] uint32
    sfb: np.ndarray  # [..., 32] uint32
    sel: sc.Selectors


@dataclass
class Logical:
    """Decoded operand values (float64) as the instruction sees them."""

    a: np.ndarray  # [..., 16, K]
    b: np.ndarray  # [..., K, 8]
    sfa: np.ndarray  # [..., 16, nsf]
    sfb: np.ndarray  # [..., nsf, 8]
    c: np.ndarray  # [..., 16, 8]


def read_operands(form: BlockScaleForm, regs: RegisterImage, fp6_shift: int = fr.FP6_SHIFT_DEFAULT) -> Logical:
    """Apply the fragment maps and selector rules to a register image."""
    k = form.k
    a_codes = fr.decode(regs.a, fr.a_layout(k), ELEMENT_BITS[form.atype],
                        fr.container_shift(form.kind, form.atype, fp6_shift))
    b_codes = fr.decode(regs.b, fr.b_layout(k), ELEMENT_BITS[form.btype],
                        fr.container_shift(form.kind, form.btype, fp6_shift))
    sfa = sc.decode_sfa(regs.sfa, form.scale_vec, regs.sel)
    sfb = sc.decode_sfb(regs.sfb, form.scale_vec, regs.sel)
    return Logical(
        a=decode_elements(a_codes, form.atype),
        b=decode_elements(b_codes, form.btype),
        sfa=decode_scales(sfa, form.stype),
        sfb=decode_scales(sfb, form.stype),
        c=fr.decode_f32(regs.c).astype(np.float64),
    )


def apply_scales(form: BlockScaleForm, op: Logical) -> tuple[np.ndarray, np.ndarray]:
    """(A * SF_A, B * SF_B): SF j covers K elements [j*block, (j+1)*block)."""
    kblk = np.arange(form.k) // form.block
    return op.a * op.sfa[..., :, kblk], op.b * op.sfb[..., kblk, :]


def _lsb_exponent(x: np.ndarray) -> np.ndarray:
    """Exponent of the lowest set bit of each nonzero finite float64 (huge for zeros)."""
    m, e = np.frexp(np.abs(x))
    mant = (m * 2.0**53).astype(np.int64)
    low = mant & -mant
    tz = np.where(mant != 0, np.log2(np.where(low == 0, 1, low)).astype(np.int64), 0)
    return np.where(x != 0, e - 53 + tz, np.iinfo(np.int32).max)


def exact_rne_f32(a_scaled: np.ndarray, b_scaled: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Exact sum of all products and C, rounded once to f32 with RNE.

    Every product is exact in float64 (elements have <= 4 significand bits, scales <= 4).
    Where the span of the terms of an output fits 53 bits the float64 sum is exact in any
    order and one cast rounds it; the rare outputs that do not fit go through ``math.fsum``
    (correctly rounded) with a tie check, so the result is one correct RNE rounding.
    """
    terms = a_scaled[..., :, :, None] * b_scaled[..., None, :, :]  # [..., 16, K, 8]
    terms = np.concatenate([terms, c[..., :, None, :]], axis=-2)
    with np.errstate(invalid="ignore", over="ignore"):
        total = terms.sum(axis=-2)
    finite = np.all(np.isfinite(terms), axis=-2)
    nz = terms != 0
    _, emax = np.frexp(np.max(np.abs(np.where(finite[..., None, :], terms, 0)), axis=-2))
    lmin = np.min(_lsb_exponent(np.where(finite[..., None, :], terms, 0)), axis=-2)
    fits = (~np.any(nz, axis=-2)) | (emax - lmin + int(math.ceil(math.log2(terms.shape[-2]))) <= 52)
    out = total.astype(np.float32)
    slow = np.argwhere(finite & ~fits)
    for idx in map(tuple, slow):  # rare: only outputs whose terms span more than 53 bits
        col = np.moveaxis(terms, -2, -1)[idx]
        out[idx] = _fsum_to_f32(col.tolist())
    return out


def _fsum_to_f32(vals: list[float]) -> np.float32:
    s = math.fsum(vals)
    f = np.float32(s)
    if float(f) == s or not math.isfinite(s):
        return f
    # s is exact to double; the only double-rounding hazard is s landing on an f32 tie.
    lo = np.nextafter(f, np.float32(-np.inf)) if float(f) > s else f
    hi = np.nextafter(lo, np.float32(np.inf))
    mid = (float(lo) + float(hi)) / 2
    if s != mid:
        return f
    r = math.fsum(vals + [-s])
    if r > 0:
        return hi
    if r < 0:
        return lo
    return f


def execute(
    form: BlockScaleForm,
    regs: RegisterImage,
    *,
    fp6_shift: int = fr.FP6_SHIFT_DEFAULT,
    accumulate: Accumulate = exact_rne_f32,
) -> np.ndarray:
    """Run the instruction on a register image; returns the D register image [..., 32, 4]."""
    op = read_operands(form, regs, fp6_shift)
    a_s, b_s = apply_scales(form, op)
    d = accumulate(a_s, b_s, op.c).astype(np.float32)
    return fr.encode_f32(d)


MXF8F6F4_TYPES: tuple[str, ...] = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")


def all_forms() -> list[BlockScaleForm]:
    """Every valid row of Table 36: 25 mxf8f6f4 type pairs, mxf4 2X, mxf4nvf4 2X/4X/4X-ue4m3."""
    forms = [BlockScaleForm("mxf8f6f4", a, b, "ue8m0", "1X") for a in MXF8F6F4_TYPES for b in MXF8F6F4_TYPES]
    forms.append(BlockScaleForm("mxf4", "e2m1", "e2m1", "ue8m0", "2X"))
    forms.append(BlockScaleForm("mxf4nvf4", "e2m1", "e2m1", "ue8m0", "2X"))
    forms.append(BlockScaleForm("mxf4nvf4", "e2m1", "e2m1", "ue8m0", "4X"))
    forms.append(BlockScaleForm("mxf4nvf4", "e2m1", "e2m1", "ue4m3", "4X"))
    return forms
