"""The executable model of ``tcgen05.mma ... .block_scale``: a CTA pair's tensor memory, driven by
exactly the per-CTA programs the GPU kernel executes.

``run(form, programs)`` does what the kernel does, in order: TMEM preload (``tcgen05.st``), the
listed ``tcgen05.cp``, the MMAs, then returns per CTA what ``tcgen05.ld.32x32b`` reads from the
read-back window. Every operand is *decoded*: idesc with ``reference.tcgen05.idesc``, shared-memory
descriptors with ``reference.tcgen05.smem_desc``, elements and scale factors with the readings in
``operands``. The arithmetic is exact for exact-by-construction data (float64 block dot products,
scaled by powers of two or UE4M3 values, then rounded once to fp32); for arbitrary data it is the
float64 model of that order, and the suite says which it compares against.

Datapath layouts (9.7.16.10.5; D placement from cutlass-facts §5.1):
``D`` M=128 cta_group::1 -- lane m, column n; ``A`` M=256 cta_group::2 -- CTA m//128, lane m%128;
``B`` M=128 cta_group::2 -- CTA m//64, lane m%64 (+64 for the second half of N), column n mod N/2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from reference import formats
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


def layout_of(m: int, cta_group: int) -> str:
    """Datapath layout ID (9.7.16.10.5) of a block-scaled MMA."""
    if cta_group == 1 and m == 128:
        return "D"
    if cta_group == 2 and m == 256:
        return "A"
    if cta_group == 2 and m == 128:
        return "B"
    raise ValueError(f"no block-scaled datapath layout for M={m}, cta_group::{cta_group}")


def d_placement(layout: str, m_total: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cta, lane, column offset) of every D(m, n), arrays of shape (M, N)."""
    m, nn = np.meshgrid(np.arange(m_total), np.arange(n), indexing="ij")
    if layout == "D":
        return np.zeros_like(m), m, nn
    if layout == "A":
        return m // 128, m % 128, nn
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
    # (K doubled) keeps the count, so one scale covers K/nsf logical elements (AMBIGUITY SP-SF).
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
            a_codes = ops.gather_a_tmem(tmems[v], int(op.a), rows_a, ka, kind=kind, fmt=afmt)
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
    # SFA depends on (row, N half) and SFB on (column, CTA, lane quadrant): read them on those
    # small grids, then gather per D cell (the row-quadrant rule makes SF lane-dependent).
    cta, lane, dcol = d_placement(layout, m_total, n)
    halves = 2 if layout == "B" else 1
    half_n = n // halves
    ga = ops.sf_group_columns("a", layout, n)
    gb = ops.sf_group_columns("b", layout, n)
    m_rows = np.arange(m_total)
    sa_small = np.empty((m_total, halves, nsf), dtype=np.uint8)
    for h in range(halves):
        cta_h, lane_h = cta[:, h * half_n], lane[:, h * half_n]
        for v in range(cg):
            sel = cta_h == v
            sa_small[sel, h] = ops.sf_read(tmems[v], int(op.sfa_tmem), int(f["sfa_id"]), nsf,
                                           x_local=m_rows[sel] % rows_a, d_lane=lane_h[sel], group_cols=ga,
                                           rule=hyp.sf_lane_rule)
    n_cols = np.arange(n)
    n_local = n_cols % half_n
    sb_small = np.empty((cg, 4, n, nsf), dtype=np.uint8)
    for v in range(cg):
        for q in range(4):
            d_lane_q = np.full(n, 32 * q)
            sb_small[v, q] = ops.sf_read(tmems[v], int(op.sfb_tmem), int(f["sfb_id"]), nsf, x_local=n_local,
                                         d_lane=d_lane_q, group_cols=gb, rule=hyp.sf_lane_rule)
    sa_v = _values(sfmt, sa_small)
    sb_v = _values(sfmt, sb_small)
    half_of_n = (n_cols // half_n)[None, :]
    quad = lane // 32
    # -- exact block dot products, scaled, summed -----------------------------------------------
    acc = np.zeros((m_total, n), dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(nsf):
            blk = slice(j * vs, (j + 1) * vs)
            p = a[:, blk] @ b[:, blk].T
            sa_j = sa_v[:, :, j][m_rows[:, None], half_of_n]
            sb_j = sb_v[:, :, :, j][cta, quad, n_cols[None, :]]
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


def decode_d(dumps: Sequence[np.ndarray], layout: str, m_total: int, n: int, col_off: int = 0) -> np.ndarray:
    """Logical fp32 D (M x N) from the raw read-back windows (column ``col_off`` = D column 0)."""
    cta, lane, dcol = d_placement(layout, m_total, n)
    stack = np.stack([np.asarray(d, dtype=np.uint32) for d in dumps])
    return stack[cta, lane, col_off + dcol].view(np.float32)
