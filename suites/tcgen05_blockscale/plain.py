"""Cases of two ``tcgen05.mma`` features the block-scaled kinds do not have (9.7.16.10.9): the ``.ws`` collector
buffers ``::b0``-``::b3`` and the ``disable-output-lane`` mask, on ``kind::f8f6f4`` (E4M3 x E4M3, F32 D) with
the MMA kernel of ``mmacts.ptx.tcgen05_kernels`` (``KernelForm(block_scale=False, ws=..., dol=...)``).

Why here (issue 26): the suite cites those rows, and with no kernel issuing them a tensor core (or VM) that
mixed up the four B buffers or read the mask from the wrong end would pass every case.

* ``plain:ws-collectors``: four ``.ws`` MMAs accumulate into one D; each ``::fill`` of a buffer loads a new B
  (its own shared-memory image and descriptor), each ``::use``/``::lastuse`` names the descriptor of the B
  that buffer was filled with -- memory never changes, so every reading of "reuse is opportunistic" gives one
  answer: D = sum_i A_i . B_(buffer of i). A core that kept one buffer for all four names would sum another B
  (the sequences fill two buffers before using the first).
* ``plain:dol``: one MMA with enable-input-d over a preloaded, position-coded D and a 4-word mask that is not
  symmetric under bit reversal inside a word: masked lanes keep the old D (9.7.16.10.9.1: "least significant
  bit of the first element ... lane 0"; bit 1 = not updated).

* ``plain:layout-F`` / ``plain:layout-A`` / ``plain:sparse-meta`` / ``plain:a-tmem`` (``SHAPES``): the datapath
  layouts, ``.sp`` and A-from-tensor-memory of the plain kinds, which the M = 128 cases above never reach --
  Layout F (M = 64, ``cta_group::1``: D row m in lane 32 (m // 16) + m % 16, 9.7.16.10.5.6), Layout A (M = 256,
  ``cta_group::2``: rows 128-255 in the peer CTA, 9.7.16.10.5.1), 2:4 sparse A with its metadata in TMEM
  (kind::f8f6f4 and ::i8, 9.7.16.10.8.2; the metadata's place in TMEM is AMB-SPARSE-META-TMEM, so those cases
  observe) and A read from TMEM (8-bit containers four per column, 9.7.16.10.4.3; kind::f16 two 16-bit
  elements per column; one case per A type of 8, 16 or 32 bits: E4M3, E5M2, F16, BF16, TF32, S8 -- where
  FP6/FP4 sit in their holders is open, AMB-FP6-HOLDER-BITS / AMB-FP4-HOLDER-BITS); ``plain:d-f16``: kind::f16
  with an F16 D (its 16 bits in the low half of the cell, 9.7.16.10.4.1) and negate-A (Table 42 bit 13);
  ``plain:i8-saturate``: kind::i8 (U8 x S8) with Table 42's saturate bit over an old D near the s32 limits, so
  some cells clamp and their neighbours stay exact (a core that wraps, or clamps one short, fails). Every one
  runs with enable-input-d over a position-coded old D (row m, column n holds (64 m + n) / 4; kind::i8
  64 m + n; an f16 D that mod 512), so each D cell is
  distinct and a cell written to, or read from, the wrong lane or CTA shows; with ``cta_group::2`` the two
  CTAs' A rows, B columns and old D all differ.

Data: E4M3 values in {0, +-0.5, +-1, +-1.5, +-2} (the same set in f16; kind::i8 integers in [-3, 3], u8 [0, 6]): every
partial sum is exact in fp32, so the order of accumulation does not matter (``exact+signed-zero`` is not
needed: mode ``exact``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mmacts.cases.model import Case
from mmacts.core.driver import Expectation
from mmacts.core.recipe import PLAIN
from mmacts.ptx.tcgen05_kernels import KernelForm
from reference import formats as F
from reference import gemm as G
from reference.tcgen05 import tmem_image as TI
from reference.tcgen05.idesc import encode_idesc
from reference.tcgen05.smem_image import encode_operand
from reference.tcgen05_model import machine
from reference.tcgen05_model.program import CtaProgram, MmaOperands
from suites.tcgen05_blockscale import build as B
from suites.tcgen05_blockscale.build import CaseInputs
from suites.tcgen05_blockscale.fields import PlainForm, PlainRuntime

KIND, M, N, K = "f8f6f4", 128, 64, 32
WS_SEQUENCES: tuple[tuple[str, ...], ...] = (
    ("b1::fill", "b2::fill", "b1::use", "b2::lastuse"),
    ("b3::fill", "b0::fill", "b3::lastuse", "b0::lastuse"),
)
DOL_MASKS: tuple[tuple[int, ...], ...] = (
    (0x00000001, 0x80000000, 0x0000FF00, 0x12345678),
    (0xFFFF0000, 0x00000000, 0x00000003, 0xC0000001),
)
"""Masks whose bit reversal inside a word is another mask (lane 0 vs lane 31, 32 vs 63, ...)."""
TMEM_COLS = 512


def is_plain(case: Case) -> bool:
    return case.parsed_recipe.is_kind(PLAIN)


@dataclass(frozen=True)
class Shape:
    """One case of ``SHAPES``: a plain-kind form the M = 128 ``.ws``/mask cases do not reach."""

    recipe: str
    kind: str
    fmt: str
    """A's type (and B's, unless ``b_fmt`` names another)."""
    cta_group: int
    m: int
    n: int
    rows: tuple[str, ...]
    """The spec rows of what the case is for (beside the common ones ``_shape_case`` adds)."""
    sparse: bool = False
    a_tmem: bool = False
    d_lane: int = 0
    """D's TMEM address lane: Layout F allows an alignment of 0 or 16 (9.7.16.10.5 table)."""
    d_type: str = ""
    """D's type when not the kind's 32-bit default: ``f16`` (kind::f16 only; its 16 bits in the low half of the
    cell, 9.7.16.10.4.1)."""
    negate_a: bool = False
    b_fmt: str = ""
    saturate: bool = False
    """Table 42 bit 3 (kind::i8 only): with ``SATURATE_RECIPE``'s data near the s32 limits (``_saturating``)."""


SATURATE_RECIPE = "plain:i8-saturate"
SHAPES: tuple[Shape, ...] = (
    Shape("plain:layout-F", "f8f6f4", "e4m3", 1, 64, 64, ("T39.23", "S9.7.16.10.5.6")),
    Shape("plain:layout-A", "f8f6f4", "e4m3", 2, 256, 64, ("T39.25", "S9.7.16.10.5.1")),
    Shape("plain:layout-F", "f8f6f4", "e4m3", 1, 64, 64, ("T39.23", "S9.7.16.10.5.6"), d_lane=16),
    Shape("plain:layout-A", "tf32", "tf32", 2, 256, 64, ("T39.17", "S9.7.16.10.5.1")),
    Shape("plain:sparse-meta", "f8f6f4", "e4m3", 1, 128, 64, ("T39.24", "S9.7.16.10.8", "S9.7.16.10.8.2",
                                                             "S9.7.16.10.8.4.6"), sparse=True),
    Shape("plain:sparse-meta", "i8", "s8", 1, 128, 64, ("T39.40", "S9.7.16.10.8", "S9.7.16.10.8.2",
                                                       "S9.7.16.10.8.4.6"), sparse=True),
    Shape("plain:a-tmem", "f8f6f4", "e4m3", 1, 128, 64, ("T39.23", "T51.2", "S9.7.16.10.4.3"), a_tmem=True),
    Shape("plain:a-tmem", "f16", "f16", 1, 128, 64, ("T39.2", "T51.2"), a_tmem=True),
    Shape("plain:a-tmem", "f16", "bf16", 1, 128, 64, ("T39.2", "T51.2", "T42.6"), a_tmem=True),
    Shape("plain:a-tmem", "tf32", "tf32", 1, 128, 64, ("T39.15", "T51.2"), a_tmem=True),
    Shape("plain:a-tmem", "f8f6f4", "e5m2", 1, 128, 64, ("T39.23", "T51.2", "S9.7.16.10.4.3"), a_tmem=True),
    Shape("plain:a-tmem", "i8", "s8", 1, 128, 64, ("T39.39", "T51.2", "T42.6", "S9.7.16.10.4.3"), b_fmt="u8",
          a_tmem=True),
    Shape("plain:d-f16", "f16", "f16", 1, 128, 64, ("T39.1", "T42.4", "T42.8", "S9.7.16.10.4.1"), d_type="f16",
          negate_a=True),
    Shape(SATURATE_RECIPE, "i8", "u8", 1, 128, 64, ("T39.39", "T42.3", "T42.6"), b_fmt="s8", saturate=True),
)
"""Layout F (M = 64), Layout A (M = 256, cta_group::2), .sp and A from TMEM of the plain kinds (module docstring)."""
SPARSE_NOTE = ("observe: the sparsity metadata's place in tensor memory is open (AMB-SPARSE-META-TMEM: the figures "
               "are missing); 'want' is the lane-row-nibble reading -- lane = row of A, one nibble per 4 K in column "
               "order")


def _shape_case(suite: str, sh: Shape) -> Case:

    cg = sh.cta_group
    form = PlainForm(kind=sh.kind, cta_group=cg, sparse=sh.sparse, a_tmem=sh.a_tmem)
    bfmt = sh.b_fmt or sh.fmt
    runtime = PlainRuntime(m=sh.m, n=sh.n, atype=sh.fmt, btype=bfmt, stype="none", sf_stage="none", enable_d=True,
                           d_lane=sh.d_lane, d_type=sh.d_type, negate_a=sh.negate_a)
    cid = ".".join([sh.kind, f"cg{cg}", "sp" if sh.sparse else "dense", f"M{sh.m}N{sh.n}", f"{sh.fmt}x{bfmt}",
                    *(["Atmem"] if sh.a_tmem else []), *([f"dlane{sh.d_lane}"] if sh.d_lane else []),
                    *([f"d{sh.d_type.upper()}"] if sh.d_type else []), *(["negate_a"] if sh.negate_a else []),
                    *(["saturate"] if sh.saturate else []), "enable_d", sh.recipe])
    common = ("T42.1", *(["T42.2"] if sh.sparse else []), "S9.7.16.10.5", "T51.1", "T51.2" if sh.a_tmem else "T51.3",
              "T46.1" if cg == 1 else "T46.2", "T46.3" if cg == 1 else "T46.4", "T46.5", "T46.6")
    return Case(case_id=cid, suite=suite, instruction=KernelForm(**form).instruction(None), arch="sm_100a",
                spec_rows=tuple(dict.fromkeys((*sh.rows, *common))), level="standard", form=form, runtime=runtime,
                recipe=sh.recipe, seed=len(cid))


def _case(suite: str, cid: str, recipe: str, collectors: tuple[str | None, ...], ws: bool, dol: bool,
          rows: tuple[str, ...], extra: dict[str, Any]) -> Case:

    form = PlainForm(kind=KIND, collectors=collectors, ws=ws, dol=dol)
    runtime = PlainRuntime.of(extra, m=M, n=N, atype="e4m3", btype="e4m3", stype="none", sf_stage="none")
    return Case(case_id=cid, suite=suite, instruction=KernelForm(**form).instruction(collectors[0]), arch="sm_100a",
                spec_rows=rows, level="standard", form=form, runtime=runtime, recipe=recipe, seed=len(cid))


def cases(suite: str) -> list[Case]:
    out = []
    common = ("T42.1", "S9.7.16.10.5", "T51.1", "T51.3", "T46.1", "T46.3", "T46.5", "T46.6")
    for seq in WS_SEQUENCES:
        tag = "-".join(s.replace("::", ".") for s in seq)
        out.append(_case(suite, f"f8f6f4.ws.cg1.M{M}N{N}.e4m3xe4m3.coll-{tag}.plain:ws-collectors",
                         "plain:ws-collectors", seq, True, False, ("T39.27", "S9.7.16.10.9.3", *common), {}))
    for i, mask in enumerate(DOL_MASKS):
        tag = "-".join(f"{w:08x}" for w in mask)
        out.append(_case(suite, f"f8f6f4.cg1.dense.M{M}N{N}.e4m3xe4m3.dol-{tag}.plain:dol", "plain:dol", (None,),
                         False, True, ("T39.23", "S9.7.16.10.9.1", *common), {"dol": tuple(mask), "dol_index": i}))
    out += [_shape_case(suite, sh) for sh in SHAPES]
    return out


# --------------------------------------------------------------------------------------------- inputs
_VALUES = np.array([0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.0, -2.0])


def _codes(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(F.encode("e4m3", rng.choice(_VALUES, size=shape)), dtype=np.uint8)


def _buffers(seq: tuple[str | None, ...]) -> list[int]:
    """B index per MMA: each fill of a buffer loads the next new B; use/lastuse take the buffer's B."""
    held: dict[str, int] = {}
    idx, nxt = [], 0
    for q in seq:
        buf, op = (q or "b0::discard").split("::")
        if op in ("use", "lastuse"):
            idx.append(held[buf])
        else:
            idx.append(nxt)
            held[buf] = nxt
            nxt += 1
    return idx


def _pad_k(codes: np.ndarray) -> np.ndarray:
    """(rows, K) E4M3 codes padded along K to the 128-byte swizzle row."""
    return np.pad(codes, ((0, (-codes.shape[0]) % 8), (0, (-codes.shape[1]) % 128)))


def make_inputs(case: Case) -> Any:
    """``build.CaseInputs``-like object: programs, layout, logical A slices, B matrices, C, what D must be."""

    if case.recipe in SHAPE_RECIPES:
        return make_shape_inputs(case)
    seq = case.form.collectors
    rng = np.random.default_rng(case.seed + 4242)
    nmma = len(seq)
    bidx = _buffers(seq) if case.form.ws else list(range(nmma))
    nb = max(bidx) + 1
    a = _codes(rng, (M, K * nmma))
    bs = [_codes(rng, (K, N)) for _ in range(nb)]
    sm_a, img_a = encode_operand(_pad_k(a), major="K", swizzle="128B", elem="b8", base_address=0)
    pieces, base, b_descs = [(0, sm_a)], _round(img_a.nbytes, 1024), []
    for b in bs:
        sm_b, img_b = encode_operand(_pad_k(b.T), major="K", swizzle="128B", elem="b8", base_address=base)
        pieces.append((base, sm_b[base:]))
        b_descs.append(img_b.desc_for(k_offset=0))
        base = _round(base + img_b.nbytes, 1024)
    smem = np.zeros(base, dtype=np.uint8)
    for off, arr in pieces:
        smem[off:off + arr.size] = arr
    idesc = encode_idesc(KIND, m=M, n=N, atype="e4m3", btype="e4m3")
    layout = machine.layout_of(M, 1)
    preload = np.zeros((128, TMEM_COLS), dtype=np.uint32)
    c = None
    dol = case.runtime.dol
    if dol is not None:  # position-coded old D: lane l, column n holds (l * 64 + n) / 4
        c = ((np.arange(M)[:, None] * 64 + np.arange(N)[None, :]) / 4.0).astype(np.float32)
        cta, lane, dcol = machine.d_placement(layout, M, N)
        preload[lane, dcol] = c.view(np.uint32)
    mmas = [MmaOperands(a=img_a.desc_for(k_offset=i * K), b_desc=b_descs[bidx[i]], idesc=idesc, d_tmem=0,
                        sfa_tmem=0, sfb_tmem=0, enable_input_d=(i > 0 or c is not None),
                        disable_output_lane=None if dol is None else tuple(int(w) for w in dol))
            for i in range(nmma)]
    prog = CtaProgram(smem=smem, tmem_ncols=TMEM_COLS, preload=preload, ld_col0=0, ld_ncols=N, cps=(), mmas=mmas)
    b_cat = np.concatenate([bs[j] for j in bidx], axis=0)  # (K * nmma, N): the B each MMA multiplies
    return CaseInputs([prog], layout, M, N, a, b_cat, np.zeros((M, 0), np.uint8), np.zeros((0, N), np.uint8), c,
                      "e4m3", "e4m3", "none", extra={"dol": dol})


def _round(x: int, a: int) -> int:
    return -(-x // a) * a


def expected_d(inp: Any) -> np.ndarray:
    """D from the logical matrices (``reference.gemm.exact_gemm``, unit scales) and, for the mask cases, the
    old D on every lane whose bit (word lane // 32, bit lane % 32) is 1 -- written from the spec sentence, not
    from any decoder."""
    d = G.exact_gemm(F.decode("e4m3", inp.a), F.decode("e4m3", inp.b),
                     None if inp.c is None else inp.c.astype(np.float64)).astype(np.float32)
    dol = inp.extra.get("dol")
    if dol is not None:
        lanes = np.arange(M)
        off = np.array([(int(dol[lane // 32]) >> (lane % 32)) & 1 for lane in lanes], dtype=bool)
        d[off] = inp.c[off]
    return d


# --------------------------------------------------------------------------- SHAPES: layouts F and A, .sp, A in TMEM
SHAPE_RECIPES = frozenset(sh.recipe for sh in SHAPES)
SHAPE_LAYOUT: dict[tuple[int, int], str] = {(1, 64): "F", (1, 128): "D", (2, 256): "A"}
"""(cta_group, M) -> datapath layout (the 9.7.16.10.5 table, non-.ws rows)."""
SHAPE_K: dict[str, int] = {"f8f6f4": 32, "i8": 32, "f16": 16, "tf32": 8}
"""Dense K of one MMA (Table 39); .sp doubles it."""
_CONTAINER = {"e4m3": "b8", "e5m2": "b8", "s8": "b8", "u8": "b8", "f16": "b16", "bf16": "b16", "tf32": "b32"}
A_COL, META_COL = 400, 448
"""TMEM columns of A (when in TMEM) and of the sparsity metadata (D sits at column 0)."""


def _values(fmt: str, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Exact small values: kind::i8 integers in [-3, 3] (u8: [0, 6]), else ``_VALUES``."""
    if fmt == "s8":
        return rng.integers(-3, 4, size=shape).astype(np.float64)
    if fmt == "u8":
        return rng.integers(0, 7, size=shape).astype(np.float64)
    return rng.choice(_VALUES, size=shape)


def _encode(fmt: str, vals: np.ndarray) -> np.ndarray:
    """Container codes of exact values: E4M3 by the reference encoder, f16, tf32 (an fp32 word whose low 13 bits are
    0 for these values) and s8 by numpy's IEEE / two's complement."""
    if fmt in ("e4m3", "e5m2"):
        return np.asarray(F.encode(fmt, vals), dtype=np.uint8)
    if fmt == "bf16":
        return np.asarray(F.encode("bf16", vals), dtype=np.uint16)
    if fmt == "f16":
        return vals.astype(np.float16).view(np.uint16)
    if fmt == "tf32":
        return vals.astype(np.float32).view(np.uint32)
    if fmt == "u8":
        return vals.astype(np.uint8)
    return vals.astype(np.int8).view(np.uint8)


def _old_d(m: int, n: int, integer: bool, d_f16: bool = False) -> np.ndarray:
    """Position-coded old D: row m, column n holds 64 m + n (kind::i8) or (64 m + n) / 4 -- distinct in every cell,
    exact in fp32 (M <= 256, N <= 64); an f16 D takes (64 m + n) mod 512 / 4 (distinct over any 8 rows; every
    sum stays exact in f16's 11 bits)."""
    pos = np.arange(m)[:, None] * 64 + np.arange(n)[None, :]
    if d_f16:
        return (pos % 512) / 4.0
    return pos.astype(np.float64) if integer else pos / 4.0


S32_MAX = (1 << 31) - 1


def _saturating_ab(rng: np.random.Generator, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``SATURATE_RECIPE``'s A (u8) and B (s8): A in [0, 255], B's even columns in [0, 127], odd ones in [-127, 0], so
    every product of a D cell has one sign and its partial sums move one way from the old D in any order: a
    saturating core gives clamp(old D + A B) whether it clamps once at the end or after every addition (the
    spec names the bit, "Saturate for integer types", not the order)."""
    a = rng.integers(0, 256, size=(m, k))
    b = rng.integers(0, 128, size=(k, n)) * np.where(np.arange(n) % 2 == 0, 1, -1)[None, :]
    return a.astype(np.float64), b.astype(np.float64)


def _saturating_old_d(m: int, n: int) -> np.ndarray:
    """``SATURATE_RECIPE``'s old D: rows 0-63 at S32_MAX - 128 p, rows 64-127 at -2^31 + 128 p (p = 64 (m mod 64) + n,
    distinct per cell), so A B (about 260000 +- 40000 per cell) crosses the limit in the first rows' cells of the
    columns that move toward it and stays inside elsewhere -- saturated and exact cells side by side."""
    p = (np.arange(m)[:, None] % 64) * 64 + np.arange(n)[None, :]
    top = np.arange(m)[:, None] < 64
    return np.where(top, S32_MAX - 128 * p, -S32_MAX - 1 + 128 * p).astype(np.float64)


def make_shape_inputs(case: Case) -> Any:
    """Inputs of a ``SHAPES`` case: per-CTA images built with the reference encoders (``smem_image.encode_operand``,
    ``tmem_image.write_a`` / ``d_lane_col``, ``idesc.encode_idesc``); the logical A, B and old D values stay in
    ``extra`` for ``expected_shape`` (the answer never comes from an encoding)."""

    fm, rt = case.form, case.runtime
    kind, afmt, bfmt, cg, sparse = fm.kind, rt.atype, rt.btype, int(fm.cta_group), bool(fm.sparse)
    d_type, negate_a = str(rt.d_type or ""), bool(rt.negate_a)
    m, n = int(rt.m), int(rt.n)
    k = SHAPE_K[kind] * (2 if sparse else 1)
    rng = np.random.default_rng(case.seed + 4242)
    saturate = case.recipe == SATURATE_RECIPE
    if saturate:
        a_val, b_val = _saturating_ab(rng, m, n, k)
    else:
        a_val, b_val = _values(afmt, rng, (m, k)), _values(bfmt, rng, (k, n))
    a_codes = _encode(afmt, a_val)
    meta = None
    if sparse:  # 2:4 over K: keep two of every four A elements (a random listed metadata value per chunk)
        a_codes, meta = B._sparsify(a_codes, kind, rng)
        a_val = np.where(a_codes == 0, 0.0, a_val)
        a_store = B._compress(a_codes, kind, meta)
    else:
        a_store = a_codes
    b_codes = _encode(bfmt, b_val)
    layout = SHAPE_LAYOUT[(cg, m)]
    d_f16 = d_type == "f16"
    c = _saturating_old_d(m, n) if saturate else _old_d(m, n, kind == "i8", d_f16)
    if d_f16:
        c_bits = c.astype(np.float16).view(np.uint16).astype(np.uint32)
    elif kind == "i8":
        c_bits = c.astype(np.int32).view(np.uint32)
    else:
        c_bits = c.astype(np.float32).view(np.uint32)
    d_lane = int(rt.d_lane)
    cta, lane, dcol = TI.d_lane_col(layout, n, lane_align=d_lane)
    elem, elem_b = _CONTAINER[afmt], _CONTAINER[bfmt]
    rows_a, cols_b = m // cg, n // cg
    smems, pres, descs = [], [], []
    for v in range(cg):
        a_rows = a_store[v * rows_a:(v + 1) * rows_a]
        b_rows = b_codes[:, v * cols_b:(v + 1) * cols_b].T  # (N / cg, K)
        pieces, base = [], 0
        a_op = TI.taddr(0, A_COL)
        if not fm.a_tmem:
            sm_a, img_a = encode_operand(B._pad_contig(a_rows, "K", elem, "128B"), major="K", swizzle="128B",
                                         elem=elem, base_address=0)
            pieces.append((0, sm_a))
            base = _round(img_a.nbytes, 1024)
            a_op = img_a.desc_for(k_offset=0)
        sm_b, img_b = encode_operand(B._pad_contig(b_rows, "K", elem_b, "128B"), major="K", swizzle="128B",
                                     elem=elem_b, base_address=base)
        pieces.append((base, sm_b[base:]))
        smem = np.zeros(_round(base + img_b.nbytes, 1024), dtype=np.uint8)
        for off, arr in pieces:
            smem[off:off + arr.size] = arr
        smems.append(smem)
        descs.append((a_op, img_b.desc_for(k_offset=0)))
        pre = np.zeros((128, TMEM_COLS), dtype=np.uint32)
        sel = cta == v
        pre[lane[sel], dcol[sel]] = c_bits[sel]
        if fm.a_tmem:
            img = TI.write_a(TI.new_tmem(), a_rows, addr=TI.taddr(0, A_COL), elem=elem, datapath="4x1")
            pre[:, A_COL:META_COL] = img[:, A_COL:META_COL]
        if sparse:
            B._write_meta(pre, meta[v * rows_a:(v + 1) * rows_a])
        pres.append(pre)
    if any(d != descs[0] for d in descs[1:]):
        raise AssertionError("internal: the CTAs' images differ in layout; the leader's descriptors would not fit")
    idesc = encode_idesc(kind, m=m, n=n, atype=afmt, btype=bfmt, sparse=int(sparse), negate_a=int(negate_a),
                         **({"dtype": d_type} if d_type else {}),
                         **({"saturate": 1} if saturate else {}))
    mma = MmaOperands(a=descs[0][0], b_desc=descs[0][1], idesc=idesc, d_tmem=TI.taddr(d_lane, 0), sfa_tmem=0,
                      sfb_tmem=0, enable_input_d=True, sp_meta_tmem=META_COL)
    programs = [CtaProgram(smem=smems[v], tmem_ncols=TMEM_COLS, preload=pres[v], ld_col0=0, ld_ncols=_round(n, 8),
                           cps=(), mmas=[mma] if v == 0 else []) for v in range(cg)]
    no_sf = np.zeros((m, 0), np.uint8), np.zeros((0, n), np.uint8)
    return B.CaseInputs(programs, layout, m, n, a_codes, b_codes, *no_sf, c, afmt, bfmt, "none",
                        extra={"a_val": a_val, "b_val": b_val, "d_s32": kind == "i8", "d_lane": d_lane,
                               "d_f16": d_f16, "negate_a": negate_a, "saturate": saturate,
                               **({"d_s32_less": c.astype(np.int64)} if saturate else {})})


def expected_shape(inp: Any) -> np.ndarray:
    """D = A B + old D of the logical values (``reference.gemm``: ``exact_gemm`` rounded to D's type, or ``int_gemm``
    for kind::i8, which wraps modulo 2^32 as Table 42's saturate bit 0 asks, or clamps to s32 with bit 3 set: the
    mma.sync ``.satfinite`` rule for integers), as fp32 values; A negated where the case sets Table 42's negate-A
    bit. Near the s32 limits (``SATURATE_RECIPE``) D less the old D, which ``build.decode_output`` subtracts from the
    read-back too: fp32 holds every s32 near 2^31 only to 128, the difference exactly."""
    a, b = inp.extra["a_val"], inp.extra["b_val"]
    if inp.extra["negate_a"]:  # Table 42 bit 13: D = (-A) B + old D
        a = -a
    if inp.extra["d_f16"]:
        return G.exact_gemm(a, b, inp.c, out="fp16").astype(np.float32)
    if inp.extra["d_s32"]:
        c = inp.c.astype(np.int64)
        d = G.int_gemm(a.astype(np.int64), b.astype(np.int64), c, satfinite=inp.extra["saturate"]).astype(np.int64)
        return (d - c).astype(np.float32) if "d_s32_less" in inp.extra else d.astype(np.float32)
    return G.exact_gemm(a, b, inp.c).astype(np.float32)


def expectation(case: Case, inp: Any) -> Any:
    """What a plain case must give: exact, except ``.sp`` (observe: AMB-SPARSE-META-TMEM, ``SPARSE_NOTE``)."""

    if case.recipe not in SHAPE_RECIPES:
        return Expectation(want=expected_d(inp), mode="exact",
                           note="exact by construction (kind::f8f6f4, unit scales; reference.gemm)")
    if case.form.sparse:
        return Expectation(want=expected_shape(inp), mode="observe", note=SPARSE_NOTE)
    return Expectation(want=expected_shape(inp), mode="exact",
                       note=f"exact by construction (kind::{case.form.kind}, position-coded old D; reference.gemm)")
