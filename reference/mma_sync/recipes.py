"""Exact-by-construction data for mma.sync block_scale, and the register images for it.

"Exact" means the right answer does not depend on how the hardware accumulates: every
product and C lie on one lattice 2^q Z and the sum of their magnitudes stays below
2^(q+13), so every partial sum, every alignment window of >= 14 bits and the final f32 are
exact. That holds even for a 13-bit truncating accumulator like Ada's/Hopper's fp8 paths.

The data also make every metadata mistake visible:

* SF values of row r and row r+8 differ in every block (a swapped lane pair reads the other
  row's SF); SF values of one row/column differ across blocks (a wrong byte order reads a
  neighbour's SF); all unselected lanes/bytes hold poison (see ``scales``);
* every (row, block) and (block, column) partial product is nonzero somewhere, so changing
  any one SF changes D.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference.mma_sync import fragments as fr
from reference.mma_sync import scales as sc
from reference.mma_sync.model import BlockScaleForm, RegisterImage
from reference.mma_sync.values import decode_elements, decode_scales, encode_elements, encode_scales

ELEMENT_VALUES = np.array([0.5, 1.0, 1.5, 2.0])
"""Magnitudes every element type represents exactly (E2M1 is the narrowest)."""

SF_EXPONENTS: dict[str, tuple[int, ...]] = {"1X": (0, 1), "2X": (0, 1), "4X": (-1, 0, 1, 2)}
"""log2 of the SF values a recipe uses: at least NSF distinct values per row."""


@dataclass
class LogicalCase:
    """Codes of one case (leading batch dims allowed) and its C matrix."""

    a: np.ndarray  # [..., 16, K] element codes
    b: np.ndarray  # [..., K, 8]
    sfa: np.ndarray  # [..., 16, nsf] scale codes
    sfb: np.ndarray  # [..., nsf, 8]
    c: np.ndarray  # [..., 16, 8] float32


def _element_values(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    mags = rng.choice(ELEMENT_VALUES, size=shape)
    return mags * rng.choice([-1.0, 1.0], size=shape)


def exact_case(form: BlockScaleForm, seed: int) -> LogicalCase:
    """Deterministic exact data for ``form`` from ``seed``."""
    for attempt in range(64):
        rng = np.random.default_rng([seed, attempt])
        case = _draw(form, rng)
        if _scales_all_matter(form, case) and _exact_bound_ok(form, case):
            return case
    raise RuntimeError(f"no exact data for {form.tag()} seed {seed}")  # pragma: no cover


def _draw(form: BlockScaleForm, rng: np.random.Generator) -> LogicalCase:
    k, nsf, blk = form.k, form.nsf, form.block
    a = _element_values(rng, (16, k))
    if form.scale_vec == "4X":  # keep the term span inside 13 bits: 2 nonzeros per A block
        keep = np.zeros((16, k), dtype=bool)
        for j in range(nsf):
            cols = np.argsort(rng.random((16, blk)), axis=1)[:, :2] + j * blk
            np.put_along_axis(keep, cols, True, axis=1)
        a = np.where(keep, a, 0.0)
    b = _element_values(rng, (k, 8))
    exps = np.array(SF_EXPONENTS[form.scale_vec])
    L = len(exps)
    p = rng.permutation(exps)
    c0 = rng.integers(0, L, size=8)
    offs = np.concatenate([c0, c0 + 1])  # row r+8 shifted by one: differs from row r everywhere
    sfa_exp = p[(offs[:, None] + np.arange(nsf)[None, :]) % L]
    q = rng.permutation(exps)
    d0 = rng.integers(0, L, size=8)
    sfb_exp = q[(d0[None, :] + np.arange(nsf)[:, None]) % L]
    qmin = -2 + 2 * int(exps.min())
    c = rng.integers(-16, 17, size=(16, 8)) * 2.0**qmin
    return LogicalCase(
        a=encode_elements(a, form.atype),
        b=encode_elements(b, form.btype),
        sfa=encode_scales(2.0**sfa_exp, form.stype),
        sfb=encode_scales(2.0**sfb_exp, form.stype),
        c=c.astype(np.float32),
    )


def logical_values(form: BlockScaleForm, case: LogicalCase) -> tuple[np.ndarray, ...]:
    """(A*SF_A, B*SF_B, C) as float64, straight from the logical codes (no fragments)."""
    a = decode_elements(case.a, form.atype)
    b = decode_elements(case.b, form.btype)
    sfa = decode_scales(case.sfa, form.stype)
    sfb = decode_scales(case.sfb, form.stype)
    blk = np.arange(form.k) // form.block
    return a * sfa[..., :, blk], b * sfb[..., blk, :], case.c.astype(np.float64)


def _scales_all_matter(form: BlockScaleForm, case: LogicalCase) -> bool:
    a, b, _ = logical_values(form, case)
    blk = form.block
    parts = np.stack([a[:, j * blk:(j + 1) * blk] @ b[j * blk:(j + 1) * blk, :] for j in range(form.nsf)])
    return bool(np.all(np.any(parts != 0, axis=2)) and np.all(np.any(parts != 0, axis=1)))


def _exact_bound_ok(form: BlockScaleForm, case: LogicalCase) -> bool:
    a, b, c = logical_values(form, case)
    terms = np.abs(a[:, :, None] * b[None, :, :]).sum(axis=1) + np.abs(c)
    nz = np.concatenate([(a[:, :, None] * b[None, :, :]).ravel(), c.ravel()])
    nz = nz[nz != 0]
    _, e = np.frexp(nz)
    mant = np.abs(nz) / 2.0**e
    # lattice exponent: the smallest lsb over all terms (mantissas have <= 8 bits here)
    q = int(np.min(e - 8 + _trailing_zeros_8(mant)))
    return bool(np.max(terms) < 2.0 ** (q + 13))


def _trailing_zeros_8(mant: np.ndarray) -> np.ndarray:
    ints = np.rint(mant * 256).astype(np.int64)
    low = ints & -ints
    return np.log2(low).astype(np.int64)


def reference_d(form: BlockScaleForm, case: LogicalCase) -> np.ndarray:
    """Exact D (float32) from the logical matrices: the suite's independent answer."""
    a, b, c = logical_values(form, case)
    d = a @ b + c  # exact: see the module docstring
    return d.astype(np.float32)


def encode_case(form: BlockScaleForm, case: LogicalCase, sel: sc.Selectors,
                fp6_shift: int = fr.FP6_SHIFT_DEFAULT) -> RegisterImage:
    """Register image of ``case`` with the SFs placed where ``sel`` selects them."""
    sc.check_selectors(form.scale_vec, sel)
    k = form.k
    return RegisterImage(
        a=fr.encode(case.a, fr.a_layout(k), fr.container_shift(form.kind, form.atype, fp6_shift)),
        b=fr.encode(case.b, fr.b_layout(k), fr.container_shift(form.kind, form.btype, fp6_shift)),
        c=fr.encode_f32(case.c),
        sfa=sc.encode_sfa(case.sfa, form.scale_vec, form.stype, sel),
        sfb=sc.encode_sfb(case.sfb, form.scale_vec, form.stype, sel),
        sel=sel,
    )
