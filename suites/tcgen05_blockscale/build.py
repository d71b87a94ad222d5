"""From a case to what the kernel (and the model) consume: logical data -> encoded CTA programs.

Why here and not in the model: the encoding is the *host's* job (what a kernel author puts in
shared and tensor memory); the model only decodes. Encoders used: ``reference.tcgen05.idesc``
(Tables 43/44), ``reference.tcgen05.smem_desc`` / ``smem_image`` (descriptor + operand images),
``reference.tcgen05.tmem_image.write_sf`` / ``write_a`` (scale factors and A in tensor memory,
cutlass-facts §1.1/§1.4/§3.4: the figures are missing) and ``cp_decompress.compress_*`` (the
raw-cp probe). The model reads the same places back with the matching reference DECODERS
(``read_sf``, ``read_a``, ``decode_operand``, ``cp_to_tmem``).

Data recipes: ``exact`` (``reference.gemm.exact_recipe``: every partial sum representable, so any
accumulation order gives one answer: pass/fail), ``random:<model>`` (uniform random codes, compared
with a numeric model: observe), ``probe:<name>`` (an open reading: observe).

TMEM column plan (relative to the allocation, 512 columns): D at 0; SFA at ``SFA_COL``; SFB at
``SFB_COL``; A (when in TMEM) at ``A_COL``; sparse metadata at ``META_COL``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from mmacts.cases.model import Case
from mmacts.core.recipe import RANDOM
from reference import formats as F
from reference import gemm as G
from reference import numeric_model as NM
from reference.tcgen05 import cp_decompress as CD
from reference.tcgen05 import tmem_image as TI
from reference.tcgen05.idesc import encode_idesc, mma_k
from reference.tcgen05.smem_desc import SWIZZLE_WIDTH, decode_smem_desc, encode_smem_desc
from reference.tcgen05.smem_image import ELEMS_PER_CHUNK, OperandImage, decode_operand, encode_operand
from reference.tcgen05_model import machine
from reference.tcgen05_model import operands as ops
from reference.tcgen05_model.program import CtaProgram, MmaOperands
from suites.tcgen05_blockscale.fields import Tcgen05Form, Tcgen05Runtime, mma_records

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


def nsf_per_mma(kind: str, scale_vec: str | None, k96: bool) -> int:
    return machine.scale_count(kind, scale_vec, k96)[0]


def build(case: Case, rng_seed: int | None = None) -> CaseInputs:
    """Build the inputs of ``case`` (a block-scaled MMA case of this suite), in the order a kernel author
    would: the logical data, each CTA's shared-memory images and descriptors, the tensor-memory preloads
    (scale factors, A, old D, metadata) and SF copies, the MMA operands, the CTA programs."""
    fm, rt = mma_records(case)
    p = _plan(fm, rt)
    seed = case.seed if rng_seed is None else rng_seed
    rng = np.random.default_rng(seed + 7919)
    data = _logical_data(case, rt, p, seed, rng)
    smem = _smem_images(fm, rt, p, data)
    preload, cps, smem_per_cta = _tmem_images(rt, p, data, smem.smem)
    programs = _programs(fm, rt, p, data, smem, smem_per_cta, preload, cps, _mma_operands(rt, p, smem))
    out = CaseInputs(programs, p.layout, p.m, p.n, data.a, data.b, data.sfa, data.sfb, data.c, p.a_fmt, p.b_fmt,
                     p.s_fmt, extra={"nsf": p.nsf, "vs": p.vs_logical, "kmma": p.kmma, "nmma": p.nmma,
                                     "walk": dict(a_desc=None if p.a_tmem else smem.a_descs[0][0],
                                                  b_desc=smem.b_descs[0][0], a_major=smem.a_major,
                                                  b_major=smem.b_major, a_elem=smem.a_elem, b_elem=smem.b_elem,
                                                  rows_a=p.rows_a, cols_b=p.cols_b)})
    if rt.cp_probe:
        _cp_probe(out, rt, rng)
    return out


@dataclass(frozen=True)
class _Plan:
    """What a case's form and run-time fields fix before any data: the geometry of its MMAs."""

    kind: str
    cg: int
    sparse: bool
    a_tmem: bool
    nmma: int
    """MMAs issued (one per collector entry)."""
    m: int
    n: int
    k96: bool
    layout: str
    kmma: int
    """K of one MMA."""
    nsf: int
    """Scale factors per row (column) of one MMA."""
    a_fmt: str
    b_fmt: str
    s_fmt: str

    @property
    def vs_logical(self) -> int:
        """K elements one scale factor covers (logical, dense K)."""
        return self.kmma // self.nsf

    @property
    def ktot(self) -> int:
        return self.kmma * self.nmma

    @property
    def rows_a(self) -> int:
        """A rows (M) one CTA holds."""
        return self.m // self.cg

    @property
    def cols_b(self) -> int:
        """B columns (N) one CTA holds."""
        return self.n // self.cg


def _plan(fm: Tcgen05Form, rt: Tcgen05Runtime) -> _Plan:
    kind, cg, sparse, k96, m = fm.kind, int(fm.cta_group), bool(fm.sparse), bool(rt.k96), int(rt.m)
    return _Plan(kind=kind, cg=cg, sparse=sparse, a_tmem=bool(fm.a_tmem), nmma=len(fm.collectors), m=m, n=int(rt.n),
                 k96=k96, layout=machine.layout_of(m, cg), kmma=mma_k(kind, sparse=sparse, k96=k96),
                 nsf=nsf_per_mma(kind, fm.scale_vec, k96), a_fmt=rt.atype, b_fmt=rt.btype, s_fmt=rt.stype)


@dataclass
class _Logical:
    """The logical matrices (codes) and what the sparse form stores of A."""

    a: np.ndarray
    b: np.ndarray
    sfa: np.ndarray
    sfb: np.ndarray
    c: np.ndarray | None
    meta: np.ndarray | None
    """Sparse: the metadata nibble of every A chunk."""
    a_store: np.ndarray
    """A as the kernel holds it (sparse: the kept half of every chunk)."""


def _logical_data(case: Case, rt: Tcgen05Runtime, p: _Plan, seed: int, rng: np.random.Generator) -> _Logical:
    """Exact by construction, or random for the numeric-model cases; then what the probes plant in it."""
    vs_recipe = p.vs_logical if not p.sparse else p.vs_logical // 2
    if is_random(case):
        if p.sparse:
            raise ValueError("random-data cases are dense")
        data = random_data(p.m, p.n, p.ktot, p.nsf * p.nmma, p.a_fmt, p.b_fmt, p.s_fmt, seed,
                           with_c=bool(rt.enable_d))
    else:
        data = G.exact_recipe(p.kind, p.m, p.n, p.ktot, a_fmt=p.a_fmt, b_fmt=p.b_fmt, scale_fmt=p.s_fmt,
                              vs=vs_recipe, seed=seed, zero_c=not rt.enable_d)
    a, b = np.asarray(data.a, dtype=np.uint8), np.asarray(data.b, dtype=np.uint8)
    sfa, sfb = np.asarray(data.scale_a, dtype=np.uint8), np.asarray(data.scale_b, dtype=np.uint8)
    if p.sparse:
        # one scale per vs_logical: keep every other recipe scale column, duplicate back
        sfa, sfb = sfa[:, ::2], sfb[::2, :]
    if rt.sf_nan_7f:
        # probe ue4m3_nan_scale: the UE4M3 NaN pattern 0x7F as SFA of row 5 (block 1), SFB of column 7 (block 2)
        sfa, sfb = sfa.copy(), sfb.copy()
        sfa[5, 1 % sfa.shape[1]] = 0x7F
        sfb[2 % sfb.shape[0], 7] = 0x7F
    if rt.a_reuse:
        # collector cases: every MMA of the sequence uses the first K slice of A (filled once)
        a = np.tile(a[:, :p.kmma], (1, p.nmma))
    c = np.asarray(data.c, dtype=np.float32) if rt.enable_d else None
    meta = None
    if p.sparse:
        a, meta = _sparsify(a, p.kind, rng)
    return _Logical(a, b, sfa, sfb, c, meta, _compress(a, p.kind, meta) if p.sparse else a)


@dataclass
class _SmemImages:
    """Every CTA's shared-memory image and the descriptors of each MMA (per CTA: one word per MMA)."""

    a_major: str
    b_major: str
    a_elem: str
    b_elem: str
    smem: list[np.ndarray] = field(default_factory=list)
    a_descs: list[list[int]] = field(default_factory=list)
    b_descs: list[list[int]] = field(default_factory=list)


def _smem_images(fm: Tcgen05Form, rt: Tcgen05Runtime, p: _Plan, d: _Logical) -> _SmemImages:
    """Per-CTA shared-memory images (A unless in TMEM, B, the decoy A of the collector probe)."""
    out = _SmemImages(a_major="MN" if rt.transpose_a else "K", b_major="MN" if rt.transpose_b else "K",
                      a_elem=ops.container_for(p.kind, p.a_fmt), b_elem=ops.container_for(p.kind, p.b_fmt))
    for v in range(p.cg):
        _cta_smem(fm, rt, p, d, v, out)
    return out


def _cta_smem(fm: Tcgen05Form, rt: Tcgen05Runtime, p: _Plan, d: _Logical, v: int, out: _SmemImages) -> None:
    """CTA ``v``'s image and descriptors, appended to ``out``."""
    sw_a, sw_b = rt.swizzle_a, rt.swizzle_b
    a_rows = d.a_store[v * p.rows_a:(v + 1) * p.rows_a]
    b_rows = d.b[:, v * p.cols_b:(v + 1) * p.cols_b].T  # (N/cg, K)
    pieces = []
    base = 0
    if not p.a_tmem:
        # a_base_shift / b_base_shift: start the operand inside its swizzle repeat, so the
        # descriptor carries a non-zero base offset (Table 40 bits 49-51, 9.7.16.4.1)
        a0 = int(rt.a_base_shift)
        sm_a, img_a = encode_operand(_pad_contig(a_rows, out.a_major, out.a_elem, sw_a), major=out.a_major,
                                     swizzle=sw_a, elem=out.a_elem, base_address=a0)
        pieces.append((0, sm_a))
        base = _round(a0 + img_a.nbytes, 1024)
        step = p.kmma // 2 if p.sparse else p.kmma
        out.a_descs.append([img_a.desc_for(k_offset=0 if rt.a_reuse else i * step) for i in range(p.nmma)])
        if rt.lbo_absolute:
            out.a_descs[-1] = [absolute_lbo(w, img_a, p.kind, p.kmma) for w in out.a_descs[-1]]
    base += int(rt.b_base_shift)
    sm_b, img_b = encode_operand(_pad_contig(b_rows, out.b_major, out.b_elem, sw_b), major=out.b_major,
                                 swizzle=sw_b, elem=out.b_elem, base_address=base)
    pieces.append((base, sm_b[base:]))
    total = _round(base + img_b.nbytes, 1024)
    if rt.a_decoy and not p.a_tmem:
        # probe collector_reuse: the use/lastuse MMAs' descriptors name a DECOY A (the rows reversed):
        # a tensor core that takes A from the collector buffer ignores it, one that reloads reads it
        sm_d, img_d = encode_operand(_pad_contig(a_rows[::-1], out.a_major, out.a_elem, sw_a), major=out.a_major,
                                     swizzle=sw_a, elem=out.a_elem, base_address=total)
        pieces.append((total, sm_d[total:]))
        out.a_descs[-1] = [img_d.desc_for(k_offset=0) if fm.collectors[i] in ("use", "lastuse") else w
                           for i, w in enumerate(out.a_descs[-1])]
        total = _round(total + img_d.nbytes, 1024)
    smem = np.zeros(total, dtype=np.uint8)
    for off, arr in pieces:
        smem[off:off + arr.size] = arr
    out.b_descs.append([img_b.desc_for(k_offset=i * p.kmma) for i in range(p.nmma)])
    if rt.lbo_absolute:
        out.b_descs[-1] = [absolute_lbo(w, img_b, p.kind, p.kmma) for w in out.b_descs[-1]]
    out.smem.append(smem)


def _sf_images(rt: Tcgen05Runtime, p: _Plan, d: _Logical) -> list[np.ndarray]:
    """Every CTA's tensor memory holding only its scale factors (SFA and SFB at their SF IDs)."""
    tm = [TI.new_tmem() for _ in range(p.cg)]
    dp = sf_datapath(p.layout)
    sfb_ctas = [d.sfb] * p.cg
    if rt.sfb_peer_x2 and p.cg == 2:
        # the peer CTA's SFB copy is the leader's times 2 in every element, so whose copy scales which D
        # rows shows (probe sfb_peer_copy: the spec does not say which copy a peer's D lanes read)
        sfb_ctas = [d.sfb, doubled_scales(d.sfb, p.s_fmt)]
    q_only = rt.sf_quadrant_only  # probe: SF only in one quadrant, decoys elsewhere
    for v in range(p.cg):
        # SF index g counts from byte 0 of the base column: the MMA with SF ID i reads g = i + j
        _write_sf(tm[v], sf_slots(d.sfa[v * p.rows_a:(v + 1) * p.rows_a], int(rt.sfa_id)), SFA_COL, "A", dp, p.n,
                  q_only, rt.sf_decoy)
        _write_sf(tm[v], sf_slots(sfb_ctas[v].T, int(rt.sfb_id)), SFB_COL, "B", dp, p.n, q_only, rt.sf_decoy)
    return tm


def _tmem_images(rt: Tcgen05Runtime, p: _Plan, d: _Logical,
                 smem: list[np.ndarray]) -> tuple[list[np.ndarray], list, list[np.ndarray]]:
    """(preload per CTA, the SF tcgen05.cp ops, smem per CTA with the cp sources appended): SF preloaded
    (``st`` staging) or poisoned and copied (``cp``), A when in TMEM, the sparse metadata, the old D."""
    sf_image = _sf_images(rt, p, d)
    preload = [np.zeros((128, TMEM_COLS), dtype=np.uint32) for _ in range(p.cg)]
    stage = rt.sf_stage
    for v in range(p.cg):
        if stage == "st":
            preload[v][:, SFA_COL:A_COL] = sf_image[v][:, SFA_COL:A_COL]
        else:
            preload[v][:, SFA_COL:A_COL] = SF_POISON
    cps: list = []
    if stage == "cp":
        smem, cps = _stage_cp(smem, sf_image, p.layout, p.n, p.cg)
        if rt.drop_cps:  # control: the SF copies never land, the columns keep their NaN poison
            cps = []
    for v in range(p.cg):
        rows = slice(v * p.rows_a, (v + 1) * p.rows_a)
        if p.a_tmem:
            _write_a_tmem(preload[v], d.a_store[rows], p.kind, p.a_fmt, p.layout)
        if p.sparse:
            _write_meta(preload[v], d.meta[rows])
    cta, lane, dcol = machine.d_placement(p.layout, p.m, p.n)
    if d.c is not None:
        for v in range(p.cg):
            sel = cta == v
            preload[v][lane[sel], dcol[sel]] = d.c[sel].view(np.uint32)
    return preload, cps, smem


def _mma_operands(rt: Tcgen05Runtime, p: _Plan, smem: _SmemImages) -> list[MmaOperands]:
    """Each MMA's operands: the leader's descriptors, the idesc with its SF IDs, the SF addresses (SF IDs
    past 3 step to the next 4-SF group of columns)."""
    mmas = []
    dirty = bool(rt.sf_addr_dirty)
    dp = sf_datapath(p.layout)
    for i in range(p.nmma):
        ta, tb = int(rt.sfa_id) + i * p.nsf, int(rt.sfb_id) + i * p.nsf
        ida, idb = ta % 4, tb % 4
        ga = TI.sf_group_columns("A", datapath=dp, n=p.n) * (ta // 4)
        gb = TI.sf_group_columns("B", datapath=dp, n=p.n) * (tb // 4)
        idesc = encode_idesc(p.kind, _idesc_fields(p.kind, rt, p.m, p.n, ida, idb, p.sparse, p.k96), strict=False)
        sfa_addr = SFA_COL + ga + ((ida << 30) if dirty else 0)
        sfb_addr = SFB_COL + gb + ((idb << 30) if dirty else 0)
        enable = bool(rt.enable_d) or i > 0
        a_op = (A_COL + i * _a_tmem_cols(p.kind, p.kmma)) if p.a_tmem else smem.a_descs[0][i]
        mmas.append(MmaOperands(a=a_op, b_desc=smem.b_descs[0][i], idesc=idesc, d_tmem=0, sfa_tmem=sfa_addr,
                                sfb_tmem=sfb_addr, enable_input_d=enable, sp_meta_tmem=META_COL))
    return mmas


def _programs(fm: Tcgen05Form, rt: Tcgen05Runtime, p: _Plan, d: _Logical, smem: _SmemImages,
              smem_per_cta: list[np.ndarray], preload: list[np.ndarray], cps: list,
              mmas: list[MmaOperands]) -> list[CtaProgram]:
    """One program per CTA (the leader issues the copies and MMAs); the overwrite probe's patch."""
    dcols = p.n // 2 if p.layout == "B" else p.n
    programs = [CtaProgram(smem=smem_per_cta[v], tmem_ncols=TMEM_COLS, preload=preload[v][:, :TMEM_COLS],
                           ld_col0=0, ld_ncols=_round(dcols, 8),
                           cps=cps if v == 0 else (), mmas=mmas if v == 0 else ())
                for v in range(p.cg)]
    if fm.a_overwrite:
        # probe collector_reuse: after the fill completed the kernel writes a DECOY A (rows reversed, same layout)
        # over A's bytes; a use that takes A from the collector still sees the filled A
        a0 = d.a_store[:p.rows_a]
        sm_d, img_d = encode_operand(_pad_contig(a0[::-1], smem.a_major, smem.a_elem, rt.swizzle_a),
                                     major=smem.a_major, swizzle=rt.swizzle_a, elem=smem.a_elem, base_address=0)
        programs[0] = replace(programs[0], smem_patch=np.ascontiguousarray(sm_d[:_round(img_d.nbytes, 16)]))
    # consistency: every CTA's descriptor values are the leader's (same offsets in both smem)
    for v in range(1, p.cg):
        if (not p.a_tmem and smem.a_descs[v] != smem.a_descs[0]) or smem.b_descs[v] != smem.b_descs[0]:
            raise AssertionError("internal: CTA images differ in layout; descriptors would not match")
    return programs


def absolute_lbo(word: int, img: OperandImage, kind: str, kmma: int) -> int:
    """``word`` in the absolute LBO mode (Table 40 bit 52, 9.7.16.3.1.2) where its K slice straddles the
    128-byte swizzle row: the 48-byte K of a K = 96 fp4 MMA that starts at byte 96 of the row (the third MMA
    of a row). LBO is then the byte address of the row's next 128-byte slice, where ``encode_operand`` put
    the bytes past byte 127 (reading "same-row-term" of AMB-ABSOLUTE-LBO-CHUNKS: row r of the second chunk
    at LBO + the same row term as the first). Other words (slices inside one row) stay relative."""
    if kind not in ("mxf4", "mxf4nvf4") or img.major != "K" or img.swizzle != "128B":
        raise ValueError("absolute LBO mode: K-major fp4 operands with the 128B swizzle only (9.7.16.3.1.2.1)")
    d = decode_smem_desc(word)
    if d.base_offset or d.start_address % 128 + kmma // 2 <= 128:
        return word
    return replace(d, lbo=d.start_address - d.start_address % 128 + img.stride_cols, lbo_absolute=True).word()


def is_random(case: Case) -> bool:
    """Random-data cases (recipe ``random:<numeric model>``): compared with a numeric model."""
    return case.parsed_recipe.is_kind(RANDOM)


def random_data(m: int, n: int, k: int, nsf: int, a_fmt: str, b_fmt: str, s_fmt: str, seed: int, *,
                with_c: bool) -> G.GemmData:
    """Uniform random finite codes (zeros, subnormals and the largest values included), scales
    near 1 (UE8M0 2^-6..2^6; every finite non-zero UE4M3 up to 8) so no product overflows, and
    fp32 C of the products' size: data whose D depends on the accumulation order and
    rounding, for the numeric-model comparison. ``d`` is left empty (no exact answer)."""
    rng = np.random.default_rng(seed + 104729)
    a = rng.choice(F.finite_codes(a_fmt), size=(m, k)).astype(np.uint8)
    b = rng.choice(F.finite_codes(b_fmt), size=(k, n)).astype(np.uint8)
    sc = F.finite_codes(s_fmt)
    sv = F.decode(s_fmt, sc)
    pool = sc[(sv > 0) & (sv >= 2.0**-6) & (sv <= (8.0 if s_fmt == "ue4m3" else 2.0**6))]
    sa = rng.choice(pool, size=(m, nsf)).astype(np.uint8)
    sb = rng.choice(pool, size=(nsf, n)).astype(np.uint8)
    c = np.zeros((m, n))
    if with_c:
        c = (rng.standard_normal((m, n)) * np.exp2(rng.integers(-4, 8, (m, n)))).astype(np.float32)
        c = c.astype(np.float64)
    return G.GemmData(a, b, sa, sb, c, np.full((m, n), np.nan), a_fmt, b_fmt, s_fmt, k // nsf)


CP_PROBE_CODES = {("b4x16_p64", "128x128b"): 5, ("b6x16_p32", "128x128b"): 6,
                  ("b4x16_p64", "32x128b"): 7, ("b6x16_p32", "32x128b"): 8}
"""(source format, shape) -> run-time cp code (``program.CP_CODES``)."""
CP_PROBE_PAD = 0xA5
"""Written into the padding bytes of every source chunk: a copy that leaks padding shows it."""


def _cp_probe(inp: CaseInputs, rt: Tcgen05Runtime, rng: np.random.Generator) -> None:
    """Raw-TMEM probe of tcgen05.cp decompression: replace the programs by one cp + ld.

    Source: 4- or 6-bit codes (never all zero in a cell) packed 16 per 16-byte chunk by the
    reference encoder ``cp_decompress.compress_*`` (pad bytes ``0xA5``), rows
    at 16-byte stride (K-major, no swizzle, LBO 16, SBO 128). No MMA: the commit tracks the cp.
    The read-back window is the cp's four destination columns; ``extra['raw_codes']`` keeps the
    logical (lane, 16) codes for ``expected_raw_cells``.
    """
    src_fmt, shape = rt.cp_probe, rt.cp_shape
    code = CP_PROBE_CODES[(src_fmt, shape)]
    bits = 4 if src_fmt == "b4x16_p64" else 6
    rows = 128 if shape == "128x128b" else 32
    codes = rng.integers(1, 1 << bits, size=(rows, 16)).astype(np.uint8)
    if bits == 4:  # the encoder takes containers; any shift gives the same packed chunk
        src = CD.compress_b4x16_p64(codes << 2, shift=2, pad_value=CP_PROBE_PAD)
    else:
        src = CD.compress_b6x16_p32(codes << 1, shift=1, pad_value=CP_PROBE_PAD)
    src = src.reshape(-1)
    smem = np.zeros(_round(src.size, 1024), dtype=np.uint8)
    smem[:src.size] = src
    desc = encode_smem_desc(0, 16, 128, swizzle="none")
    lanes = np.arange(128)
    inp.extra.update(raw_codes=codes[lanes % rows], raw_bits=bits, raw_cols=4)
    inp.programs = [CtaProgram(smem=smem, tmem_ncols=TMEM_COLS, preload=np.zeros((128, A_COL + 8), np.uint32),
                               ld_col0=A_COL, ld_ncols=8, cps=[(code, A_COL, desc)], mmas=())]


def expected_raw_cells(inp: CaseInputs, fp4_shift: int = 2, fp6_shift: int = 1) -> np.ndarray:
    """(128, 4) fp32 view of the cells a decompressing cp should leave: destination byte e of a
    lane = code e << shift (FP4 [5:2], FP6 [6:1]: cutlass-facts §3.4), 4 bytes per cell, lowest
    byte first -- written here from that rule, not through the reference decoder."""
    codes = inp.extra["raw_codes"].astype(np.uint32)
    shift = fp4_shift if inp.extra["raw_bits"] == 4 else fp6_shift
    cont = (codes << np.uint32(shift)) & np.uint32(0xFF)
    cells = cont.reshape(128, 4, 4) << (np.uint32(8) * np.arange(4, dtype=np.uint32))
    return np.bitwise_or.reduce(cells, axis=2).astype(np.uint32).view(np.float32)


def decode_output(inp: CaseInputs, dumps: list[np.ndarray]) -> np.ndarray:
    """What a case returns from its raw read-back windows: D (M x N, fp32) for MMA cases, the
    raw cells (fp32 view) for the raw-TMEM probes."""
    if "raw_cols" in inp.extra:
        return np.ascontiguousarray(np.asarray(dumps[0], dtype=np.uint32)[:, :inp.extra["raw_cols"]]).view(
            np.float32)
    d = machine.decode_d(dumps, inp.layout, inp.m, inp.n, lane_align=int(inp.extra.get("d_lane", 0)))
    if inp.extra.get("d_s32"):  # kind::i8: the s32 cells as values (exact in fp32 for the suite's data) or,
        less = inp.extra.get("d_s32_less")  # near the s32 limits, less the old D (in int64: exact again)
        if less is not None:
            return (d.view(np.int32).astype(np.int64) - less).astype(np.float32)
        return d.view(np.int32).astype(np.float32)
    if inp.extra.get("d_f16"):  # an f16 D: the low 16 bits of each cell (9.7.16.10.4.1)
        return (d.view(np.uint32) & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float32)
    return d


def _idesc_fields(kind: str, rt: Tcgen05Runtime, m: int, n: int, ida: int, idb: int, sparse: bool,
                  k96: bool) -> dict[str, Any]:
    f: dict[str, Any] = dict(m=m, n=n, sfa_id=ida, sfb_id=idb, sparse=int(sparse),
                             negate_a=int(bool(rt.negate_a)), negate_b=int(bool(rt.negate_b)),
                             transpose_a=int(bool(rt.transpose_a)), transpose_b=int(bool(rt.transpose_b)),
                             scale_type=rt.stype)
    if kind == "mxf8f6f4":
        f.update(atype=rt.atype, btype=rt.btype)
    else:
        f.update(k96=int(k96))
    return f


def sf_datapath(layout: str) -> str:
    """``reference.tcgen05.tmem_image`` datapath name of a block-scaled layout: Layout B
    (M=128, cta_group::2) is the 2x2 datapath, Layouts A and D the 4x1 one (9.7.16.10.5)."""
    return "2x2" if layout == "B" else "4x1"


def sf_slots(sf: np.ndarray, sf_id: int) -> np.ndarray:
    """(X, sf_id + F) SF block: index g = sf_id + f holds scale f; slots below the ID stay 0
    (UE8M0 2^-127 / UE4M3 0: a wrong SF ID reads them and the result is visibly wrong). The host's one
    statement of where an SF ID puts the scales (mutant ``sf-host.sf-id-slot`` shifts it by one slot)."""
    return np.concatenate([np.zeros((sf.shape[0], sf_id), dtype=np.uint8), sf.astype(np.uint8)], axis=1)


def _write_sf(tm: np.ndarray, block: np.ndarray, col: int, which: str, dp: str, n: int,
              q_only: int | None, decoy_code: int) -> None:
    """SF bytes with the REFERENCE encoder (``tmem_image.write_sf``; the model reads them back
    with ``read_sf``). The quadrant probe keeps the true copy only in lanes 32q..32q+31 and puts
    a plausible decoy scale into every other copy (positions found with the same encoder)."""
    TI.write_sf(tm, block, addr=TI.taddr(0, col), which=which, datapath=dp, n=n)
    if q_only is None:
        return
    where = TI.write_sf(TI.new_tmem(), np.full(block.shape, 0xFF, np.uint8), addr=TI.taddr(0, col),
                        which=which, datapath=dp, n=n)
    decoy = np.uint32(int(decoy_code) * 0x01010101)  # 0x7F: 1.0 in UE8M0
    other = (np.arange(128) // 32 != int(q_only))[:, None]
    mask = np.where(other, where, np.uint32(0))
    tm[:] = (tm & ~mask) | (decoy & mask)


def _a_tmem_cols(kind: str, kmma: int) -> int:
    return kmma // 8 if kind in ("mxf4", "mxf4nvf4") else kmma // 4


def _write_a_tmem(pre: np.ndarray, a_rows: np.ndarray, kind: str, fmt: str, layout: str) -> None:
    """A into TMEM with the REFERENCE encoder ``tmem_image.write_a`` (9.7.16.10.4.3/.5); the model
    reads it back with ``read_a``. 4/6-bit codes sit in 8-bit holders at the hypothesis
    positions ``operands.A_TMEM_FP4_SHIFT``/``A_TMEM_FP6_SHIFT`` (probe ``a_tmem_holder``)."""
    img = TI.new_tmem()
    TI.write_a(img, a_rows, addr=TI.taddr(0, A_COL), elem=ops.a_tmem_elem(kind, fmt), datapath=sf_datapath(layout),
               fp4_shift=ops.A_TMEM_FP4_SHIFT, fp6_shift=ops.A_TMEM_FP6_SHIFT)
    cols = slice(A_COL, A_COL + _a_tmem_cols(kind, a_rows.shape[1]))
    pre[:, cols] = img[:, cols]


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
    w = SWIZZLE_WIDTH[swizzle]
    per_w = w * ELEMS_PER_CHUNK[elem] // 16
    mn, k = codes.shape
    if major == "K":
        return np.pad(codes, ((0, (-mn) % 8), (0, (-k) % per_w)))
    return np.pad(codes, ((0, (-mn) % per_w), (0, (-k) % 8)))


def _round(x: int, a: int) -> int:
    return -(-x // a) * a


def doubled_scales(codes: np.ndarray, fmt: str) -> np.ndarray:
    """The scale codes whose values are twice ``codes``' (a power of two: exact products stay exact)."""
    out = F.encode(fmt, F.decode(fmt, codes) * 2.0)
    if not np.array_equal(F.decode(fmt, out), F.decode(fmt, codes) * 2.0):
        raise ValueError(f"{fmt} scales cannot all be doubled exactly")
    return np.asarray(out, dtype=np.uint8)


def expected_peer_sfb(inp: CaseInputs, kind: str, **flags: bool) -> np.ndarray:
    """Exact D when each CTA's D lanes are scaled by the SFB copy in their own tensor memory (the peer's is the
    leader's x 2): the rows a CTA holds (``machine.d_placement``) get that CTA's copy."""
    d0 = expected_d(inp, kind, **flags)
    d1 = expected_d(replace(inp, sfb=doubled_scales(inp.sfb, inp.s_fmt)), kind, **flags)
    cta, _, _ = machine.d_placement(inp.layout, inp.m, inp.n)
    return np.where(cta == 1, d1, d0).astype(np.float32)


def walked_operands(inp: CaseInputs) -> tuple[np.ndarray, np.ndarray]:
    """A (M, K) and B (K, N) codes as the REFERENCE's descriptor walk (``smem_image.decode_operand``: its
    swizzle, base-offset and stride reading) reads them from every CTA's image, for one-MMA dense cases
    with A in shared memory. The hypothesis of the base-offset probes: the VM reads the images with its own
    decoder, so the two readings of AMB-SDESC-BASEOFFSET meet here, not only in the encoder's placement."""
    w = inp.extra["walk"]
    kk = inp.extra["kmma"]
    a_parts, b_parts = [], []
    for prog in inp.programs:
        a_parts.append(decode_operand(prog.smem, w["a_desc"], mn=w["rows_a"], k=kk, major=w["a_major"],
                                      elem=w["a_elem"]))
        b_parts.append(decode_operand(prog.smem, w["b_desc"], mn=w["cols_b"], k=kk, major=w["b_major"],
                                      elem=w["b_elem"]))
    return np.concatenate(a_parts, axis=0).astype(np.uint8), np.concatenate(b_parts, axis=0).T.astype(np.uint8)


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


def expected_model(inp: CaseInputs, kind: str, model: str, *, negate_a: bool = False,
                   negate_b: bool = False) -> np.ndarray:
    """D of the LOGICAL matrices under numeric model ``model`` (``reference.numeric_model.dot``):
    one (M*N)-vector batch, C aligned as the model says, scales per K block."""
    av, bv = F.decode(inp.a_fmt, inp.a), F.decode(inp.b_fmt, inp.b)
    if negate_a:
        av = -av
    if negate_b:
        bv = -bv
    sa, sb = F.decode(inp.s_fmt, inp.sfa), F.decode(inp.s_fmt, inp.sfb)
    m, n = inp.m, inp.n
    a_v = np.repeat(av, n, axis=0)
    b_v = np.tile(bv.T, (m, 1))
    c = np.zeros(m * n) if inp.c is None else inp.c.astype(np.float64).reshape(-1)
    d = NM.dot(model, a_v, b_v, c, "fp32", in_format=(inp.a_fmt, inp.b_fmt),
               scale_a=np.repeat(sa, n, axis=0), scale_b=np.tile(sb.T, (m, 1)))
    return d.reshape(m, n).astype(np.float32)


def values_check(fmt: str, codes: np.ndarray) -> np.ndarray:
    """Decoded values (used by diagnosis to rebuild alternatives)."""
    return F.decode(fmt, codes)
