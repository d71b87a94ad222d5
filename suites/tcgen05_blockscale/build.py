"""From a case to what the kernel (and the model) consume: logical data -> encoded CTA programs.

Why here and not in the model: the encoding is the *host's* job (what a kernel author puts in
shared and tensor memory); the model only decodes. Encoders used: ``reference.tcgen05.idesc``
(Tables 43/44), ``reference.tcgen05.smem_desc`` / ``smem_image`` (descriptor + operand images),
and the scale-factor TMEM layout written below after cutlass-facts §1.1/§1.4 (the SF figures are
missing from the spec text).

TMEM column plan (relative to the allocation, 512 columns): D at 0; SFA at ``SFA_COL``; SFB at
``SFB_COL``; A (when in TMEM) at ``A_COL``; sparse metadata at ``META_COL``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reference import formats as F
from reference import gemm as G
from reference.tcgen05.idesc import encode_idesc
from reference.tcgen05.smem_desc import encode_smem_desc
from reference.tcgen05.smem_image import encode_operand
from reference.tcgen05_model import machine
from reference.tcgen05_model import operands as ops
from reference.tcgen05_model.program import CtaProgram, MmaOperands

SFA_COL, SFB_COL, A_COL, META_COL = 256, 320, 400, 448
TMEM_COLS = 512
SF_POISON = 0xFFFFFFFF
"""Written to SF columns before a ``tcgen05.cp`` stage: UE8M0/UE4M3 NaN codes, so an SF copy that
did not land shows up as NaN instead of a plausible number."""


@dataclass
class CaseInputs:
    """Everything ``make_inputs`` produced: logical matrices, the encoded programs, where D is."""

    programs: list[CtaProgram]
    layout: str
    m: int
    n: int
    a: np.ndarray
    """(M, K_total) codes (dense logical A; zeros where sparse)."""
    b: np.ndarray
    """(K_total, N) codes."""
    sfa: np.ndarray
    """(M, SF_total) scale codes."""
    sfb: np.ndarray
    """(SF_total, N) scale codes."""
    c: np.ndarray | None
    """Initial D (fp32 values) when enable-input-d, else None."""
    a_fmt: str = "e4m3"
    b_fmt: str = "e4m3"
    s_fmt: str = "ue8m0"
    extra: dict[str, Any] = field(default_factory=dict)


def mma_k(kind: str, sparse: bool, k96: bool) -> int:
    if kind == "mxf8f6f4":
        return 64 if sparse else 32
    return 96 if k96 else (128 if sparse else 64)


def nsf_per_mma(kind: str, scale_vec: str | None, k96: bool) -> int:
    return machine.scale_count(kind, scale_vec, k96)[0]


def _put_bytes(tmem: np.ndarray, lane: np.ndarray, col: np.ndarray, byte: np.ndarray,
               val: np.ndarray) -> None:
    """Write bytes into a (128, 512) uint32 image (vectorised; later writes win)."""
    lane, col, byte, val = np.broadcast_arrays(lane, col, byte, val)
    for b in range(4):  # one byte position per pass: a cell may get several bytes in one call
        sel = byte == b
        if not sel.any():
            continue
        ln, cl = lane[sel], col[sel]
        cur = tmem[ln, cl]
        tmem[ln, cl] = (cur & np.uint32(~(0xFF << (8 * b)) & 0xFFFFFFFF)) | (
            val[sel].astype(np.uint32) << np.uint32(8 * b))


def sf_tmem_positions(operand: str, layout: str, n: int, x: np.ndarray, slot: np.ndarray,
                      base_col: int, half: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lanes (..., R), column, byte) where the host puts SF(x, slot) (cutlass-facts §1.1, §1.4).

    ``x`` is the CTA-local MN index (layout B SFB: index inside its N half, ``half`` = 0/1).
    4x1 datapath: replicated into all four quadrants. Layout B SFB: half h into lanes 64h + x%32
    and 64h + 32 + x%32 only (the DSL's 64x128b.warpx2::01_23 copy).
    """
    gc = ops.sf_group_columns(operand, layout, n)
    col = base_col + x // 32 + gc * (slot // 4)
    byte = slot % 4
    if operand == "b" and layout == "B":
        lanes = (64 * half)[..., None] + (x % 32)[..., None] + np.array([0, 32])
    else:
        lanes = (x % 32)[..., None] + np.array([0, 32, 64, 96])
    return lanes, col, byte


def build(case, rng_seed: int | None = None) -> CaseInputs:  # noqa: C901 - one linear recipe
    """Build the inputs of ``case`` (a ``mmacts.cases.model.Case`` of this suite)."""
    fm, rt = case.form, case.runtime
    kind, cg, sparse = fm["kind"], int(fm["cta_group"]), bool(fm.get("sparse", False))
    a_tmem = bool(fm.get("a_tmem", False))
    nmma = len(fm.get("collectors", (None,)))
    m, n = int(rt["m"]), int(rt["n"])
    k96 = bool(rt.get("k96", False))
    a_fmt, b_fmt, s_fmt = rt["atype"], rt["btype"], rt["stype"]
    layout = machine.layout_of(m, cg)
    kmma = mma_k(kind, sparse, k96)
    nsf = nsf_per_mma(kind, fm.get("scale_vec"), k96)
    ktot, sftot = kmma * nmma, nsf * nmma
    vs_logical = kmma // nsf
    seed = case.seed if rng_seed is None else rng_seed
    rng = np.random.default_rng(seed + 7919)
    # ---- logical data (exact by construction) -------------------------------------------------
    vs_recipe = vs_logical if not sparse else vs_logical // 2
    data = G.exact_recipe(kind, m, n, ktot, a_fmt=a_fmt, b_fmt=b_fmt, scale_fmt=s_fmt,
                          vs=vs_recipe, seed=seed, zero_c=not rt.get("enable_d", False))
    a, b = np.asarray(data.a, dtype=np.uint8), np.asarray(data.b, dtype=np.uint8)
    sfa, sfb = np.asarray(data.scale_a, dtype=np.uint8), np.asarray(data.scale_b, dtype=np.uint8)
    if sparse:
        # one scale per vs_logical: keep every other recipe scale column, duplicate back
        sfa, sfb = sfa[:, ::2], sfb[::2, :]
    if rt.get("a_reuse"):
        # collector cases: every MMA of the sequence uses the first K slice of A (filled once)
        a = np.tile(a[:, :kmma], (1, nmma))
    c = np.asarray(data.c, dtype=np.float32) if rt.get("enable_d", False) else None
    meta = None
    if sparse:
        a, meta = _sparsify(a, kind, rng)
    # ---- per-CTA shared-memory images --------------------------------------------------------
    rows_a, cols_b = m // cg, n // cg
    a_major = "MN" if rt.get("transpose_a") else "K"
    b_major = "MN" if rt.get("transpose_b") else "K"
    a_elem = ops.container_for(kind, a_fmt)
    b_elem = ops.container_for(kind, b_fmt)
    a_store = _compress(a, kind, meta) if sparse else a
    sw_a, sw_b = rt.get("swizzle_a", "128B"), rt.get("swizzle_b", "128B")
    progs_smem, a_descs, b_descs = [], [], []
    for v in range(cg):
        a_rows = a_store[v * rows_a:(v + 1) * rows_a]
        b_rows = b[:, v * cols_b:(v + 1) * cols_b].T  # (N/cg, K)
        pieces = []
        base = 0
        if not a_tmem:
            sm_a, img_a = encode_operand(_pad_contig(a_rows, a_major, a_elem, sw_a), major=a_major,
                                         swizzle=sw_a, elem=a_elem, base_address=0)
            pieces.append((0, sm_a))
            base = _round(img_a.nbytes, 1024)
            step = kmma // 2 if sparse else kmma
            a_descs.append([img_a.desc_for(k_offset=0 if rt.get("a_reuse") else i * step)
                            for i in range(nmma)])
        sm_b, img_b = encode_operand(_pad_contig(b_rows, b_major, b_elem, sw_b), major=b_major,
                                     swizzle=sw_b, elem=b_elem, base_address=base)
        pieces.append((base, sm_b[base:]))
        total = _round(base + img_b.nbytes, 1024)
        smem = np.zeros(total, dtype=np.uint8)
        for off, arr in pieces:
            smem[off:off + arr.size] = arr
        b_descs.append([img_b.desc_for(k_offset=i * kmma) for i in range(nmma)])
        progs_smem.append(smem)
    # ---- TMEM images: SF, A, initial D, metadata --------------------------------------------
    sf_id_a, sf_id_b = int(rt.get("sfa_id", 0)), int(rt.get("sfb_id", 0))
    tm = [np.zeros((128, TMEM_COLS), dtype=np.uint32) for _ in range(cg)]
    f_idx = np.arange(sftot)
    q_only = rt.get("sf_quadrant_only")  # probe: SF only in one quadrant, decoys elsewhere
    for v in range(cg):
        x = np.arange(rows_a)
        xa, fa = np.meshgrid(x, f_idx, indexing="ij")
        lanes, col, byte = sf_tmem_positions("a", layout, n, xa, sf_id_a + fa, SFA_COL)
        vals = sfa[v * rows_a:(v + 1) * rows_a]
        _write_sf(tm[v], lanes, col, byte, vals, q_only, rt)
        nn = np.arange(n)
        xb_full, fb = np.meshgrid(nn, f_idx, indexing="ij")
        if layout == "B":
            half = xb_full // (n // 2)
            xb = xb_full % (n // 2)
        else:
            half, xb = None, xb_full
        lanes, col, byte = sf_tmem_positions("b", layout, n, xb, sf_id_b + fb, SFB_COL, half)
        _write_sf(tm[v], lanes, col, byte, sfb.T, q_only, rt)
    sf_image = [t.copy() for t in tm]
    preload = [np.zeros((128, TMEM_COLS), dtype=np.uint32) for _ in range(cg)]
    stage = rt.get("sf_stage", "st")
    for v in range(cg):
        if stage == "st":
            preload[v][:, SFA_COL:A_COL] = sf_image[v][:, SFA_COL:A_COL]
        else:
            preload[v][:, SFA_COL:A_COL] = SF_POISON
    if stage == "cp":
        progs_smem, cps = _stage_cp(progs_smem, sf_image, layout, n, cg)
    else:
        cps = []
    if a_tmem:
        for v in range(cg):
            _write_a_tmem(preload[v], a_store[v * rows_a:(v + 1) * rows_a], kind, a_fmt)
    if sparse:
        for v in range(cg):
            _write_meta(preload[v], meta[v * rows_a:(v + 1) * rows_a])
    cta, lane, dcol = machine.d_placement(layout, m, n)
    dcols = n // 2 if layout == "B" else n
    if c is not None:
        for v in range(cg):
            sel = cta == v
            preload[v][lane[sel], dcol[sel]] = c[sel].view(np.uint32)
    # ---- MMA operands -----------------------------------------------------------------------
    mmas = []
    dirty = bool(rt.get("sf_addr_dirty", False))
    for i in range(nmma):
        ta, tb = sf_id_a + i * nsf, sf_id_b + i * nsf
        ida, idb = ta % 4, tb % 4
        ga = ops.sf_group_columns("a", layout, n) * (ta // 4)
        gb = ops.sf_group_columns("b", layout, n) * (tb // 4)
        idesc = encode_idesc(kind, _idesc_fields(kind, rt, m, n, ida, idb, sparse, k96), strict=False)
        sfa_addr = SFA_COL + ga + ((ida << 30) if dirty else 0)
        sfb_addr = SFB_COL + gb + ((idb << 30) if dirty else 0)
        enable = bool(rt.get("enable_d", False)) or i > 0
        a_op = (A_COL + i * _a_tmem_cols(kind, kmma)) if a_tmem else a_descs[0][i]
        mmas.append(MmaOperands(a=a_op, b_desc=b_descs[0][i], idesc=idesc, d_tmem=0, sfa_tmem=sfa_addr,
                                sfb_tmem=sfb_addr, enable_input_d=enable, sp_meta_tmem=META_COL))
    used = TMEM_COLS
    programs = []
    for v in range(cg):
        programs.append(CtaProgram(
            smem=progs_smem[v], tmem_ncols=TMEM_COLS, preload=preload[v][:, :used],
            ld_col0=0, ld_ncols=_round(dcols, 8),
            cps=cps if v == 0 else (), mmas=mmas if v == 0 else (),
        ))
    # consistency: every CTA's descriptor values are the leader's (same offsets in both smem)
    for v in range(1, cg):
        if (not a_tmem and a_descs[v] != a_descs[0]) or b_descs[v] != b_descs[0]:
            raise AssertionError("internal: CTA images differ in layout; descriptors would not match")
    return CaseInputs(programs, layout, m, n, a, b, sfa, sfb, c, a_fmt, b_fmt, s_fmt,
                      extra={"nsf": nsf, "vs": vs_logical, "kmma": kmma, "nmma": nmma})


def _idesc_fields(kind, rt, m, n, ida, idb, sparse, k96) -> dict[str, Any]:
    f: dict[str, Any] = dict(m=m, n=n, sfa_id=ida, sfb_id=idb, sparse=int(sparse),
                             negate_a=int(bool(rt.get("negate_a"))), negate_b=int(bool(rt.get("negate_b"))),
                             transpose_a=int(bool(rt.get("transpose_a"))),
                             transpose_b=int(bool(rt.get("transpose_b"))),
                             scale_type=rt["stype"])
    if kind == "mxf8f6f4":
        f.update(atype=rt["atype"], btype=rt["btype"])
    else:
        f.update(k96=int(k96))
    return f


def _write_sf(tm, lanes, col, byte, vals, q_only, rt) -> None:
    vals_b = np.broadcast_to(vals[..., None], lanes.shape)
    colb = np.broadcast_to(col[..., None], lanes.shape)
    byteb = np.broadcast_to(byte[..., None], lanes.shape)
    if q_only is not None:
        decoy = np.uint8(rt.get("sf_decoy", 0x7F))  # 1.0 in UE8M0: a plausible, different scale
        keep = (lanes // 32) == int(q_only)
        vals_b = np.where(keep, vals_b, decoy)
    _put_bytes(tm, lanes, colb, byteb, vals_b)


def _a_tmem_cols(kind: str, kmma: int) -> int:
    return kmma // 8 if kind in ("mxf4", "mxf4nvf4") else kmma // 4


def _write_a_tmem(pre: np.ndarray, a_rows: np.ndarray, kind: str, fmt: str) -> None:
    """A into TMEM per 9.7.16.10.4.3/.5 (the readings of ``operands.gather_a_tmem``)."""
    rows, k = a_rows.shape
    if kind in ("mxf4", "mxf4nvf4"):
        nib = a_rows.reshape(rows, k // 8, 8).astype(np.uint32) << (4 * np.arange(8, dtype=np.uint32))
        pre[:rows, A_COL:A_COL + k // 8] = np.bitwise_or.reduce(nib, axis=2)
        return
    r, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    shift = {"e2m1": ops.A_TMEM_FP4_SHIFT, "e2m3": ops.A_TMEM_FP6_SHIFT, "e3m2": ops.A_TMEM_FP6_SHIFT}.get(fmt, 0)
    _put_bytes(pre, r, A_COL + kk // 4, kk % 4, (a_rows.astype(np.uint32) << shift) & 0xFF)


def _write_meta(pre: np.ndarray, meta: np.ndarray) -> None:
    rows, chunks = meta.shape
    r, c = np.meshgrid(np.arange(rows), np.arange(chunks), indexing="ij")
    acc = np.zeros((rows, chunks // 8 + 1), dtype=np.uint32)
    np.add.at(acc, (r, c // 8), meta.astype(np.uint32) << (4 * (c % 8)).astype(np.uint32))
    pre[:rows, META_COL:META_COL + acc.shape[1]] = acc


SPARSE_INDEX_VALUES = (0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b0110, 0b1110)
"""The meaningful 2:4 / 4:8 metadata values of 9.7.16.10.8.2/.3 (two 2-bit positions)."""


def _sparsify(a: np.ndarray, kind: str, rng) -> tuple[np.ndarray, np.ndarray]:
    """Zero A per a random meaningful metadata value per chunk; return (dense A, nibbles)."""
    pair = 2 if kind in ("mxf4", "mxf4nvf4") else 1
    m, k = a.shape
    chunk = 4 * pair
    nib = rng.choice(np.array(SPARSE_INDEX_VALUES), size=(m, k // chunk))
    p0, p1 = nib & 3, (nib >> 2) & 3
    keep = np.zeros((m, k // chunk, 4), dtype=bool)
    np.put_along_axis(keep, p0[..., None], True, axis=2)
    np.put_along_axis(keep, p1[..., None], True, axis=2)
    keep = np.repeat(keep, pair, axis=2).reshape(m, k)
    return np.where(keep, a, 0).astype(np.uint8), nib.astype(np.uint8)


def _compress(a: np.ndarray, kind: str, nib: np.ndarray) -> np.ndarray:
    """Packed M x K/2 A: the two kept slots of every chunk, in metadata order (low index first)."""
    pair = 2 if kind in ("mxf4", "mxf4nvf4") else 1
    m, k = a.shape
    chunk = 4 * pair
    v = a.reshape(m, k // chunk, 4, pair)
    p0, p1 = nib & 3, (nib >> 2) & 3
    s0 = np.take_along_axis(v, p0[..., None, None].astype(np.intp), axis=2)
    s1 = np.take_along_axis(v, p1[..., None, None].astype(np.intp), axis=2)
    return np.concatenate([s0, s1], axis=2).reshape(m, k // 2)


def _stage_cp(smems, sf_image, layout, n, cg):
    """Append SF atoms to every CTA's smem and list the tcgen05.cp ops that rebuild ``sf_image``.

    Every 4-column block of the SF region becomes one 512-byte atom copied with
    ``32x128b.warpx4`` (row r = lane r of quadrant 0, replicated by the copy), except the
    layout-B SFB region: 1024-byte sources copied with ``64x128b.warpx2::01_23`` (rows 0-31 =
    lanes 0-31, rows 32-63 = lanes 64-95). Descriptor: K-major, no swizzle, LBO 16, SBO 128.
    """
    cps = []
    new = []
    blocks = []
    used = np.flatnonzero(np.any(np.stack([t[:, SFA_COL:A_COL] for t in sf_image]) != 0, axis=(0, 1)))
    for c0 in sorted({SFA_COL + 4 * (int(u) // 4) for u in used}):
        code = 1 if (layout == "B" and c0 >= SFB_COL) else 0
        blocks.append((code, c0))
    for v in range(cg):
        sm = smems[v]
        parts = [sm]
        off = sm.size
        for code, c0 in blocks:
            cells = sf_image[v][:, c0:c0 + 4]
            rows = cells[0:32] if code == 0 else np.concatenate([cells[0:32], cells[64:96]])
            parts.append(np.ascontiguousarray(rows).view(np.uint8).reshape(-1))
            if v == 0:
                cps.append((code, c0, encode_smem_desc(off, 16, 128, swizzle="none")))
            off += parts[-1].size
        new.append(np.concatenate(parts))
    return new, cps


def _pad_contig(codes: np.ndarray, major: str, elem: str, swizzle: str) -> np.ndarray:
    """Zero-pad the contiguous extent (and the 8-row extent) to what ``encode_operand`` needs."""
    from reference.tcgen05.smem_desc import SWIZZLE_WIDTH
    from reference.tcgen05.smem_image import ELEMS_PER_CHUNK

    w = SWIZZLE_WIDTH[swizzle]
    per_w = w * ELEMS_PER_CHUNK[elem] // 16
    mn, k = codes.shape
    if major == "K":
        return np.pad(codes, ((0, (-mn) % 8), (0, (-k) % per_w)))
    return np.pad(codes, ((0, (-mn) % per_w), (0, (-k) % 8)))


def _round(x: int, a: int) -> int:
    return -(-x // a) * a


def expected_d(inp: CaseInputs, kind: str, *, negate_a: bool = False, negate_b: bool = False) -> np.ndarray:
    """Exact D of the LOGICAL matrices (``reference.gemm.block_scaled_gemm``): no encoder involved."""
    vs = inp.extra["vs"]
    sa, sb = inp.sfa, inp.sfb
    allowed = G.SCALED_KINDS[kind].scale_vs[inp.s_fmt]
    target = max(x for x in allowed if vs % x == 0)
    if target != vs:  # sparse: one scale spans vs logical K; spell it as vs/target equal blocks
        sa, sb = np.repeat(sa, vs // target, axis=1), np.repeat(sb, vs // target, axis=0)
    c = inp.c.astype(np.float64) if inp.c is not None else None
    a = -F.decode(inp.a_fmt, inp.a) if negate_a else inp.a
    b = -F.decode(inp.b_fmt, inp.b) if negate_b else inp.b
    return G.block_scaled_gemm(a, b, sa, sb, c, kind=kind, a_fmt=inp.a_fmt, b_fmt=inp.b_fmt,
                               scale_fmt=inp.s_fmt).astype(np.float32)


def values_check(fmt: str, codes: np.ndarray) -> np.ndarray:
    """Decoded values (used by diagnosis to rebuild alternatives)."""
    return F.decode(fmt, codes)
