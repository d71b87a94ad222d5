"""The executable model of ``tcgen05.mma ... .block_scale``: a CTA pair's tensor memory, driven by
exactly the per-CTA programs the GPU kernel executes.

``run(form, programs)`` does what the kernel does, in order: TMEM preload (``tcgen05.st``), the
listed ``tcgen05.cp``, the MMAs, then returns per CTA what ``tcgen05.ld.32x32b`` reads from the
read-back window. Every operand is *decoded* with the reference decoders, never the host encoders:
idesc with ``reference.tcgen05.idesc``, shared-memory operands by walking the descriptor
(``smem_image.decode_operand``), scale factors with ``tmem_image.read_sf``, A in tensor memory
with ``tmem_image.read_a``, copies with ``cp_decompress.cp_to_tmem`` (``operands`` names the
readings the spec leaves open). Arithmetic (``Hypotheses.arithmetic``): ``float64`` -- exact block
dot products summed in float64 and rounded once to fp32, which IS the answer for
exact-by-construction data; or a ``reference.numeric_model`` name for random data (the
tensor-core accumulation hypothesis the suite compares against, in observe mode).

Datapath layouts (9.7.16.10.5; D placement from cutlass-facts §5.1):
``D`` M=128 cta_group::1 -- lane m, column n; ``A`` M=256 cta_group::2 -- CTA m//128, lane m%128;
``B`` M=128 cta_group::2 -- CTA m//64, lane m%64 (+64 for the second half of N), column n mod N/2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from reference import formats
from reference import numeric_model as NM
from reference.gemm import matmul64
from reference.tcgen05 import tmem_image as TI
from reference.tcgen05.idesc import decode_idesc
from reference.tcgen05_model import operands as ops
from reference.tcgen05_model.program import CtaProgram, MmaOperands

TMEM_SHAPE = (128, 512)

F8F6F4_NAMES = {0: "e4m3", 1: "e5m2", 3: "e2m3", 4: "e3m2", 5: "e2m1"}


@dataclass(frozen=True)
class Hypotheses:
    """Readings the spec leaves open; the probes run the same case under competing values."""

    sf_lane_rule: str = "row_quadrant"
    sparse_meta: str = "lane_row_nibble"
    arithmetic: str = "float64"
    """``float64``: exact block dot products summed in float64, one rounding to fp32 -- the
    exact answer for exact-by-construction data (any order gives it). Otherwise the name of a
    ``reference.numeric_model`` model (e.g. ``b200_tcgen05_hypothesis``): D is computed the way
    that model says the tensor core accumulates (random-data cases)."""


def layout_of(m: int, cta_group: int) -> str:
    """Datapath layout ID (9.7.16.10.5) of a block-scaled MMA."""
    if cta_group == 1 and m == 128:
        return "D"
    if cta_group == 2 and m == 256:
        return "A"
    if cta_group == 2 and m == 128:
        return "B"
    raise ValueError(f"no block-scaled datapath layout for M={m}, cta_group::{cta_group}")


def d_placement(layout: str, m_total: int, n: int, lane_align: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cta, lane, column offset) of every D(m, n), arrays of shape (M, N); ``lane_align``: D's address lane
    (16 is allowed by the half-datapath Layouts C and F only)."""
    m, nn = np.meshgrid(np.arange(m_total), np.arange(n), indexing="ij")
    if layout == "D":
        return np.zeros_like(m), m, nn
    if layout == "A":
        return m // 128, m % 128, nn
    if layout != "B":  # Layouts C/E/F/G (the plain kinds' M = 64 and .ws shapes): the tmem_image reading
        return TI.d_lane_col(layout, n, lane_align=lane_align)
    half = n // 2
    return m // 64, m % 64 + 64 * (nn // half), nn % half


def scale_count(kind: str, scale_vec: str | None, k96: bool) -> tuple[int, int]:
    """(scales per row per MMA, K per scale) from the kind, the qualifier and idesc bit 31 (Table 54)."""
    if kind == "mxf8f6f4":
        return 1, 32
    k = 96 if k96 else 64
    if scale_vec in ("4X", "block16") or (scale_vec is None and kind == "mxf4nvf4"):
        return k // 16, 16
    return k // 32, 32


def _values(fmt: str, codes: np.ndarray) -> np.ndarray:
    return formats.decode(fmt, codes)


def execute_mma(form, tmems: list[np.ndarray], smems: list[np.ndarray], op: MmaOperands,
                hyp: Hypotheses = Hypotheses()) -> None:
    """Execute one MMA on the pair's TMEM images (in place)."""
    kind = form.kind
    f = decode_idesc(kind, int(op.idesc))
    m_total, n = int(f["m"]), int(f["n"])
    cg = form.cta_group
    layout = layout_of(m_total, cg)
    k96 = bool(f.get("k96", 0))
    sparse = bool(f["sparse"])
    if sparse != form.sparse:
        raise ValueError("idesc sparsity bit disagrees with the instruction form (.sp)")
    if kind == "mxf8f6f4":
        afmt, bfmt = F8F6F4_NAMES[int(f["atype"])], F8F6F4_NAMES[int(f["btype"])]
        k = 64 if sparse else 32
    else:
        afmt = bfmt = "e2m1"
        k = 96 if k96 else (128 if sparse else 64)
    sfmt = "ue8m0" if int(f["scale_type"]) == 1 else "ue4m3"
    nsf, _ = scale_count(kind, form.scale_vec, k96)
    # Table 54 gives the scale count per MMA "for all supported values of K": the sparse form
    # (K doubled) keeps the count, so one scale covers K/nsf logical elements (register AMB-SPARSE-SF-COUNT).
    vs = k // nsf
    rows_a = m_total // cg
    cols_b = n // cg
    a_major = "MN" if f["transpose_a"] else "K"
    b_major = "MN" if f["transpose_b"] else "K"
    # -- A (per CTA rows) and B (per CTA columns) -----------------------------------------------
    ka = k // 2 if sparse else k
    a_parts, b_parts = [], []
    for v in range(cg):
        if form.a_tmem:
            a_codes = ops.gather_a_tmem(tmems[v], int(op.a), rows_a, ka, kind=kind, fmt=afmt,
                                        datapath="2x2" if layout == "B" else "4x1")
        else:
            a_codes = ops.gather_smem(smems[v], int(op.a), rows_a, ka, major=a_major,
                                      container=ops.container_for(kind, afmt))
        a_parts.append(_values(afmt, a_codes))
        b_codes = ops.gather_smem(smems[v], int(op.b_desc), cols_b, k, major=b_major,
                                  container=ops.container_for(kind, bfmt))
        b_parts.append(_values(bfmt, b_codes))
    a = np.concatenate(a_parts, axis=0)
    b = np.concatenate(b_parts, axis=0)
    if sparse:
        a = _expand_sparse(a, tmems, op, rows_a, k, kind, hyp)
    if f["negate_a"]:
        a = -a
    if f["negate_b"]:
        b = -b
    # -- where D lives, and the scale factors each D cell's lane reads -------------------------
    # Scale factors are decoded with the reference decoder ``tmem_image.read_sf`` (never the
    # host encoder), once per CTA and lane quadrant; each D cell then takes the copy its lane
    # reads under ``hyp.sf_lane_rule`` (the replicas agree on CUTLASS-style data; the quadrant
    # probes make them differ).
    cta, lane, dcol = d_placement(layout, m_total, n)
    sv = TI.resolve_scale_vec(kind, form.scale_vec, k96=k96)
    if TI.SCALE_VECS[sv][0] != nsf:
        raise ValueError(f"scale_vec {sv} gives {TI.SCALE_VECS[sv][0]} scales, Table 54 count is {nsf}")
    sa_q, sb_q = _read_scales(tmems, op, f, sv, layout, n, rows_a, hyp.sf_lane_rule)
    sa_v = _values(sfmt, sa_q)
    sb_v = _values(sfmt, sb_q)
    m_rows = np.arange(m_total)
    n_cols = np.arange(n)
    quad = lane // 32
    x_a = (m_rows % rows_a)[:, None]
    if hyp.arithmetic != "float64":
        _numeric_mma(tmems, op, a, b, sa_v, sb_v, cta, lane, dcol, x_a, afmt, bfmt, vs, hyp.arithmetic)
        return
    # -- exact block dot products, scaled, summed -----------------------------------------------
    acc = np.zeros((m_total, n), dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(nsf):
            blk = slice(j * vs, (j + 1) * vs)
            p = matmul64(a[:, blk], b[:, blk].T)
            sa_j = sa_v[cta, quad, x_a, j]
            sb_j = sb_v[cta, quad, n_cols[None, :], j]
            acc += p * sa_j * sb_j
        d_addr = int(op.d_tmem)
        lane0, col0 = (d_addr >> 16) & 0x7F, d_addr & 0x1FF
        if op.enable_input_d:
            old = np.empty((m_total, n), dtype=np.uint32)
            for v in range(cg):
                sel = cta == v
                old[sel] = tmems[v][lane0 + lane[sel], col0 + dcol[sel]]
            acc = acc + old.view(np.float32).astype(np.float64)
        out = acc.astype(np.float32).view(np.uint32)
    for v in range(cg):
        sel = cta == v
        tmems[v][lane0 + lane[sel], col0 + dcol[sel]] = out[sel]


def _numeric_mma(tmems, op: MmaOperands, a: np.ndarray, b: np.ndarray, sa_v: np.ndarray, sb_v: np.ndarray,
                 cta: np.ndarray, lane: np.ndarray, dcol: np.ndarray, x_a: np.ndarray, afmt: str, bfmt: str,
                 vs: int, model: str) -> None:
    """D += A.B under numeric model ``model``: one dot product per D cell (the cell's own scale
    copies), with the old D as the model's C when enable-input-d, else C = 0."""
    m_total, n = cta.shape
    quad = lane // 32
    n_cols = np.arange(n)
    nsf = sa_v.shape[-1]
    sa = sa_v[cta, quad, np.broadcast_to(x_a, cta.shape)].reshape(m_total * n, nsf)
    sb = sb_v[cta, quad, np.broadcast_to(n_cols[None, :], cta.shape)].reshape(m_total * n, nsf)
    lane0, col0 = (int(op.d_tmem) >> 16) & 0x7F, int(op.d_tmem) & 0x1FF
    c = np.zeros(m_total * n)
    if op.enable_input_d:
        old = np.empty((m_total, n), dtype=np.uint32)
        for v in range(len(tmems)):
            sel = cta == v
            old[sel] = tmems[v][lane0 + lane[sel], col0 + dcol[sel]]
        c = old.view(np.float32).astype(np.float64).reshape(-1)
    if a.shape[1] != vs * nsf:
        raise ValueError("numeric-model arithmetic needs dense A (K = scales x vector size)")
    d = NM.dot(model, np.repeat(a, n, axis=0), np.tile(b, (m_total, 1)), c, "fp32", in_format=(afmt, bfmt),
               scale_a=sa, scale_b=sb)
    out = d.reshape(m_total, n).astype(np.float32).view(np.uint32)
    for v in range(len(tmems)):
        sel = cta == v
        tmems[v][lane0 + lane[sel], col0 + dcol[sel]] = out[sel]


def _read_scales(tmems: list[np.ndarray], op: MmaOperands, f: dict, sv: str, layout: str, n: int,
                 rows_a: int, rule: str) -> tuple[np.ndarray, np.ndarray]:
    """(SFA (cta, quadrant, row, j), SFB (cta, quadrant, column, j)) codes as the lanes of each
    quadrant read them, via ``tmem_image.read_sf``.

    ``rule`` (``ops.SF_LANE_RULES``): ``row_quadrant`` -- a D cell in lane L uses the copy in L's
    quadrant; ``quadrant0`` -- every cell uses quadrant 0. Layout B SFB keeps each N half in
    its own quadrant pair (lanes 64h + {0..63}); quadrant q serves only half q // 2, so half h
    is decoded from the image seen from lane 64h (where ``read_sf`` finds it as a first half),
    and under ``quadrant0`` both halves read lanes 0-31 (what a quadrant-0 reader would see).
    SF address bits 23-31 are ignored (``high_bits='ignore'``: probe ``sf_addr_bits30_31``).
    """
    cg = len(tmems)
    dp = "2x2" if layout == "B" else "4x1"
    nsf = TI.SCALE_VECS[sv][0]
    sa = np.empty((cg, 4, rows_a, nsf), dtype=np.uint8)
    sb = np.zeros((cg, 4, n, nsf), dtype=np.uint8)
    quads = range(4) if rule == "row_quadrant" else (0, 0, 0, 0)
    if rule not in ops.SF_LANE_RULES:
        raise ValueError(f"unknown SF lane rule {rule!r}")
    for v in range(cg):
        for q, src in zip(range(4), quads, strict=True):
            sa[v, q] = TI.read_sf(tmems[v], int(op.sfa_tmem), int(f["sfa_id"]), sv, rows_a, "A",
                                  datapath=dp, n=n, quadrant=src, high_bits="ignore")
            if dp == "4x1":
                sb[v, q] = TI.read_sf(tmems[v], int(op.sfb_tmem), int(f["sfb_id"]), sv, n, "B",
                                      datapath=dp, n=n, quadrant=src, high_bits="ignore")
                continue
            half = n // 2
            h = q // 2
            view = np.ascontiguousarray(np.roll(tmems[v], -64 * h, axis=0)) if rule == "row_quadrant" \
                else tmems[v]
            part = TI.read_sf(view, int(op.sfb_tmem), int(f["sfb_id"]), sv, half, "B", datapath=dp, n=n,
                              quadrant=src % 2, high_bits="ignore")
            if rule == "row_quadrant":
                sb[v, q, h * half:(h + 1) * half] = part
            else:
                sb[v, q, :half] = sb[v, q, half:] = part
    return sa, sb


def _expand_sparse(a_packed: np.ndarray, tmems, op: MmaOperands, rows_a: int, k: int, kind: str,
                   hyp: Hypotheses) -> np.ndarray:
    """Dense A (M x K) from the packed M x K/2 values and the metadata in TMEM.

    HYPOTHESIS ``lane_row_nibble`` (the metadata figures 260/261/267 are missing): row m's
    metadata is in lane (meta lane + m) of its CTA, one 4-bit nibble per chunk (two 2-bit
    positions, low bits first), nibble c at column meta_col + c // 8, bits 4*(c % 8). Chunks are 4
    elements (2:4, mxf8f6f4) or 8 elements in pairs (4:8, mxf4*). Sparse cases are PROBES.
    """
    if hyp.sparse_meta != "lane_row_nibble":
        raise ValueError(f"unknown sparse metadata reading {hyp.sparse_meta!r}")
    m_total = a_packed.shape[0]
    pair = 2 if kind in ("mxf4", "mxf4nvf4") else 1
    chunk = 4 * pair
    nchunks = k // chunk
    addr = int(op.sp_meta_tmem)
    lane0, col0 = (addr >> 16) & 0x7F, addr & 0x1FF
    m = np.arange(m_total)
    c = np.arange(nchunks)
    nib = np.empty((m_total, nchunks), dtype=np.int64)
    for v in range(len(tmems)):
        rows = m[m // rows_a == v]
        cells = tmems[v][(lane0 + rows % rows_a)[:, None], (col0 + c // 8)[None, :]]
        nib[rows] = (cells >> (4 * (c % 8))[None, :].astype(np.uint32)) & 0xF
    pos = np.stack([nib & 3, (nib >> 2) & 3], axis=-1)  # (M, chunks, 2) slot positions
    dense = np.zeros((m_total, k), dtype=np.float64)
    vals = a_packed.reshape(m_total, nchunks, 2, pair)
    for s in range(2):
        for p in range(pair):
            idx = c[None, :] * chunk + pos[..., s] * pair + p
            np.put_along_axis(dense, idx, vals[:, :, s, p], axis=1)
    return dense


def run(form, programs: Sequence[CtaProgram], hyp: Hypotheses = Hypotheses()) -> list[np.ndarray]:
    """Execute one case (1 or 2 CTA programs, leader first); return each CTA's raw read-back."""
    cg = form.cta_group
    if len(programs) != cg:
        raise ValueError(f"cta_group::{cg} needs {cg} CTA programs, got {len(programs)}")
    tmems = []
    for p in programs:
        t = np.zeros(TMEM_SHAPE, dtype=np.uint32)
        pre = np.asarray(p.preload, dtype=np.uint32)
        t[:, : pre.shape[1]] = pre
        tmems.append(t)
    smems = [np.asarray(p.smem, dtype=np.uint8) for p in programs]
    leader = programs[0]
    for code, taddr, desc in leader.cps:
        for v in range(cg):  # cta_group::2: the copy lands in both CTAs, each from its own smem
            ops.apply_cp(tmems[v], smems[v], int(code), int(taddr), int(desc))
    for op in leader.mmas:
        execute_mma(form, tmems, smems, op, hyp)
    return [t[:, p.ld_col0: p.ld_col0 + p.ld_ncols].copy() for t, p in zip(tmems, programs, strict=True)]


def decode_d(dumps: Sequence[np.ndarray], layout: str, m_total: int, n: int, col_off: int = 0,
             lane_align: int = 0) -> np.ndarray:
    """Logical fp32 D (M x N) from the raw read-back windows (column ``col_off`` = D column 0)."""
    cta, lane, dcol = d_placement(layout, m_total, n, lane_align)
    stack = np.stack([np.asarray(d, dtype=np.uint32) for d in dumps])
    return stack[cta, lane, col_off + dcol].view(np.float32)
