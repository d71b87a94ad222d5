"""``tcgen05.mma{.sp}.cta_group::{1,2}.kind::{mxf8f6f4,mxf4,mxf4nvf4}.block_scale`` executed on TMEM/smem images.

What one MMA does (9.7.16.10, 9.7.16.10.7): D = (A * scale_A) . (B * scale_B) + D (or without D when
enable-input-d is false). Shapes, K and the scale-vector rules come from the catalog (Tables 39, 54,
55); operands are read through the descriptors (``smem_operand``), from TMEM (A, scale factors,
sparsity metadata) and D is written per the datapath layout (9.7.16.10.5).

Layouts (Table 39 admits for block-scaled kinds: M=128 ::1, M=128/256 ::2; M=128 ::2 sparse is not in
Table 39):
  D  M=128 ::1  : D(m, n) at lane m, column n.
  A  M=256 ::2  : CTA m // 128, lane m % 128, column n.
  B  M=128 ::2  : CTA m // 64, m' = m % 64: n < N/2 -> lane m', column n; else lane 64 + m', column n - N/2
                  (cutlass-facts §5.1).
A (smem): CTA v holds rows v*M/cg..; B: CTA v holds columns v*N/cg.. (cutlass-facts §4.4, §7.5).

Scale factors (cutlass-facts §1; register ids in brackets): SF index g = SF_ID + j for the MMA's
k-block j; MN index x of this CTA: lane 32q + x % 32, column base + x // 32 + C * (g // 4), byte g % 4,
C = 4 for SFA 4x1, 2 for SFA 2x2, 4 * ceil(N / 128) for SFB 4x1, 4 for SFB 2x2
[AMB-SFB-GROUP-STRIDE-LAYOUT-B]. Layout B SFB: n in half h = n // (N/2) uses x = n - h*N/2 and lanes of
quadrants 2h, 2h+1 [AMB-SF-LAYOUT-B-QUADRANT]. K = 96 continues into the next group's column
[AMB-SF-FIGURES-K96]. Which copy: the D cell in lane L reads the copy in L's own quadrant q = L // 32
[AMB-SF-QUADRANT, reading "row_quadrant"]. SF address bits 30-31 ignored [AMB-SF-ADDR-BITS3031].
Valid SF IDs: 1 SF per row -> byte offset 0-3; 2 -> half-word offset 0/2; 4 -> 0; K=96 block32 (3) ->
0-3; K=96 block16 (6) -> 0/2 (9.7.16.10.7.2.x prose) [AMB-SFID-4X-TABLE44: 4X requires 0].
Omitted .scale_vectorsize: mxf8f6f4 -> 1X [AMB-SCALEVEC-DEFAULT-MXF8F6F4]; mxf4 -> block32
[AMB-SCALEVEC-DEFAULT-MXF4]; mxf4nvf4 -> error. Sparse MMAs keep Table 54's count; one SF covers
K/count logical elements [AMB-SPARSE-SF-COUNT].

A in TMEM [AMB-A-TMEM-LAYOUT "duplicated-b"]: row x of the CTA at lane x (4x1) or lanes x and 64 + x
(2x2; the D cell in lane L uses the copy in L's half). mxf8f6f4: one 8-bit holder per element, four per
cell, lowest k in byte 0; E2M1 at holder bits [5:2] [AMB-FP4-HOLDER-BITS], E2M3/E3M2 at [6:1]
[AMB-FP6-HOLDER-BITS]. mxf4/mxf4nvf4: eight E2M1 per cell, even k in the low nibble.

Sparse metadata [AMB-SPARSE-META-TMEM "lane-row-nibble"]: row x of the CTA in lane meta_lane + x; chunk c
(4 elements for 2:4, 8 = four pairs for mxf4* 4:8) has nibble c at column meta_col + c // 8, bits
4 * (c % 8); the nibble holds two 2-bit positions, low first. Nibbles outside the spec's list are UB:
reported in ``MmaFootprint.warnings``.

Value formats: E4M3 (fn), E5M2 (IEEE), E2M3/E3M2/E2M1 (no NaN/Inf) [AMB-FP4FP6-NO-NAN], UE8M0 (0xFF
NaN) [AMB-UE8M0-FF], UE4M3 = E4M3 of the low 7 bits, 0x7F NaN, codes >= 0x80 NaN [AMB-UE4M3-SIGN
reading "nan"].

Arithmetic: ``"float64"`` -- per k-block j an exact float64 block dot product, multiplied by its two
scales, summed over j in float64, plus the old D, rounded once to fp32 (the exact answer for
exact-by-construction data); or the name of a ``reference.numeric_model`` model (one dot product per D
cell, old D as C).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import ml_dtypes
import numpy as np

from mmacts.spec import queries as Q
from reference import numeric_model as NM
from reference.gemm import matmul64

from .collector import Collector, after, from_buffer, parse_usage
from .datapath import (
    DecodedMma,
    MmaFootprint,
    d_address,
    d_cells,
    d_columns,
    layout_of,
    mma_k,
    read_old_d,
    tmem_cells,
    write_d,
)
from .decode import BLOCK_SCALED_KINDS, catalog, decode_idesc, decode_smem_desc
from .smem_operand import byte_ranges, read_operand
from .tmem import split_taddr
from .tmem_operand import HOLDER, a_tmem_codes, a_tmem_lanes, expand_sparse, first_unlisted_nibble, metadata_nibbles

# --------------------------------------------------------------------------------------------- values


@cache
def value_table(fmt: str) -> np.ndarray:
    """float64 value of every code of ``fmt`` (index = code)."""
    ml = {"e4m3": (ml_dtypes.float8_e4m3fn, 256), "e5m2": (ml_dtypes.float8_e5m2, 256),
          "e2m3": (ml_dtypes.float6_e2m3fn, 64), "e3m2": (ml_dtypes.float6_e3m2fn, 64),
          "e2m1": (ml_dtypes.float4_e2m1fn, 16), "ue8m0": (ml_dtypes.float8_e8m0fnu, 256)}
    if fmt in ml:
        dt, n = ml[fmt]
        t = np.arange(n, dtype=np.uint8).view(dt).astype(np.float64)
    elif fmt == "ue4m3":
        t = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
        t[0x80:] = np.nan
    else:
        raise ValueError(f"unknown value format {fmt!r}")
    t.setflags(write=False)
    return t


def values(fmt: str, codes: np.ndarray) -> np.ndarray:
    t = value_table(fmt)
    codes = np.asarray(codes)
    if codes.size and int(codes.max()) >= t.size:
        raise ValueError(f"{fmt}: code {int(codes.max()):#x} does not fit the format")
    return t[codes.astype(np.intp)]


# --------------------------------------------------------------------------------------------- rules

F8F6F4_SMEM_CONTAINER = {"e4m3": "b8", "e5m2": "b8", "e2m3": "p6", "e3m2": "p6", "e2m1": "p4"}
VALID_SF_IDS = {1: (0, 1, 2, 3), 2: (0, 2), 4: (0,), 3: (0, 1, 2, 3), 6: (0, 2)}


def _canon_sv(scale_vec: str | None) -> str | None:
    if scale_vec is None:
        return None
    s = scale_vec.strip().lstrip(".")
    if s in ("1X", "2X", "4X"):
        s = "scale_vec::" + s
    return s


@cache
def _rules() -> tuple:
    return tuple(Q.scale_vec_rules(catalog()))


def scale_count(kind: str, scale_vec: str | None, stype: str, k: int, atype: str, btype: str) -> int:
    """Scale factors per row per MMA (Tables 54/55 joined by the catalog)."""
    sv = _canon_sv(scale_vec)
    if sv is None:
        if kind == "mxf8f6f4":
            sv = "scale_vec::1X"
        elif kind == "mxf4":
            sv = "block32"
        else:
            raise ValueError("tcgen05.mma kind::mxf4nvf4 needs an explicit .scale_vec/.block qualifier")
    rules = [r for r in _rules() if r.kind == kind and r.scale_vec == sv and r.stype == stype]
    if not rules:
        raise ValueError(f"tcgen05.mma kind::{kind}: .{sv} with scale type {stype} is not in Table 55")
    for r in rules:
        if k in r.K:
            if atype not in r.element_types or btype not in r.element_types:
                raise ValueError(f"tcgen05.mma kind::{kind}: types {atype}/{btype} not allowed (Table 55)")
            return r.sf_per_row
    raise ValueError(f"tcgen05.mma kind::{kind}: .{sv} not valid with K = {k} (Table 54)")


# --------------------------------------------------------------------------------------------- decode, check


@dataclass(frozen=True)
class _Mma(DecodedMma):
    """One block-scaled MMA as its idesc and qualifiers decode, every rule on them checked."""

    sfmt: str
    nsf: int
    """Scale factors per row (Tables 54/55); each covers ``vs`` = K / nsf elements of K."""

    @property
    def vs(self) -> int:
        return self.k // self.nsf

    @property
    def two_x_two(self) -> bool:
        return self.layout == "B"

    def container(self, fmt: str) -> str:
        return F8F6F4_SMEM_CONTAINER[fmt] if self.kind == "mxf8f6f4" else "fp4x2"


def _decode(kind: str, cta_group: int, tmems: list[np.ndarray], smems: list[np.ndarray], idesc: int, *,
            sparse: bool, scale_vec: str | None, arch: str | None, a_is_tmem: bool, scale_input_d: int | None,
            k96_shapes: str) -> _Mma:
    """The MMA's shape, formats and scale count from its idesc and qualifiers, each rule checked where its
    operands are known (the first broken rule is the one reported)."""
    if kind not in BLOCK_SCALED_KINDS:
        raise ValueError(f"tcgen05.mma: kind::{kind} is not modelled (block-scaled kinds only)")
    cg = int(cta_group)
    if cg not in (1, 2) or len(tmems) != cg or len(smems) != cg:
        raise ValueError(f"tcgen05.mma cta_group::{cg}: needs {cg} TMEM and smem arrays")
    if scale_input_d is not None:
        raise ValueError(f"tcgen05.mma: scale-input-d is only valid for kind::tf32 / kind::f16, not kind::{kind}")
    f = decode_idesc(kind, idesc)
    if bool(f["sparse"]) != bool(sparse):
        raise ValueError(f"tcgen05.mma: idesc sparsity bit = {f['sparse']} but the instruction is "
                         f"{'.sp' if sparse else 'dense'}")
    m, n, k96 = f["m"], f["n"], bool(f["k96"])
    if k96 and arch is not None and not arch.startswith("sm_103"):
        raise ValueError(f"tcgen05.mma: K = 96 (idesc bit 31) needs sm_103a, target is {arch}")
    k = mma_k(kind, cg, sparse, m, k96, k96_shapes)
    layout = layout_of(m, cg, sparse)
    afmt, bfmt = (f["atype_name"], f["btype_name"]) if kind == "mxf8f6f4" else ("e2m1", "e2m1")
    nsf = scale_count(kind, scale_vec, f["scale_type_name"], k, afmt, bfmt)
    for key in ("sfa_id", "sfb_id"):
        if f[key] not in VALID_SF_IDS[nsf]:
            raise ValueError(f"tcgen05.mma: {key} = {f[key]} not valid with {nsf} scale factors per row "
                             f"(valid {VALID_SF_IDS[nsf]})")
    if n % (2 * cg) and layout == "B":
        raise ValueError(f"tcgen05.mma: N = {n} not even per CTA for Layout B")
    if a_is_tmem and f["transpose_a"]:
        raise ValueError("tcgen05.mma: transpose A set with A in tensor memory")
    return _Mma(kind=kind, cg=cg, f=f, m=m, n=n, k=k, layout=layout, afmt=afmt, bfmt=bfmt, sparse=bool(sparse),
                a_is_tmem=a_is_tmem, sfmt=f["scale_type_name"], nsf=nsf)


# --------------------------------------------------------------------------------------------- MMA


def execute_mma(*, kind: str, cta_group: int, tmems: list[np.ndarray], smems: list[np.ndarray], d_taddr: int,
                a: int, b_desc: int, idesc: int, enable_input_d: bool, sfa_taddr: int, sfb_taddr: int,
                a_is_tmem: bool = False, sparse: bool = False, sp_meta_taddr: int | None = None,
                scale_vec: str | None = None, arch: str | None = None,
                disable_output_lane: list[int] | None = None, scale_input_d: int | None = None,
                arithmetic: str = "float64", collectors: list | None = None,
                collector_usage: str | None = None, k96_shapes: str = "m256-cg2-only") -> MmaFootprint:
    """Execute one block-scaled MMA on the CTA (pair)'s TMEM arrays in place; return its footprint.

    ``tmems``/``smems``: one per CTA, leader first. ``a``: A's smem descriptor, or A's TMEM address when
    ``a_is_tmem``. ``scale_vec``: the instruction's qualifier ("1X"/"2X"/"4X"/"block16"/"block32"/None).
    ``arch``: when given, K = 96 needs an sm_103 target (9.7.16.2.1.1). ``disable_output_lane``: 4 (::1)
    or 8 (::2, words 0-3 for the leader's lanes, 4-7 for the peer's: this module's reading) 32-bit words
    (the PTX syntax has no such operand for block-scaled kinds and ptxas refuses it; kept for the API).
    ``collectors``/``collector_usage``: the A collector buffers of the CTAs and the instruction's
    ``collector::a::op`` part (``collector.py``: use/lastuse take A from the buffer, not from memory).
    ``k96_shapes``: the reading of AMB-K96-SHAPES (``datapath.K96_SHAPES_READINGS``).

    Steps: decode and check the instruction, fetch A and B, fetch the scale factors, read the old D, compute,
    write D back.
    """
    mma = _decode(kind, cta_group, tmems, smems, idesc, sparse=sparse, scale_vec=scale_vec, arch=arch,
                  a_is_tmem=a_is_tmem, scale_input_d=scale_input_d, k96_shapes=k96_shapes)
    fp = MmaFootprint.blank(mma.cg)
    ops = _fetch_operands(mma, tmems, smems, a, b_desc, sp_meta_taddr, collectors, collector_usage, fp)
    cta, lane, dcol = d_cells(mma.layout, mma.m, mma.n)
    sa, sb = _read_scales(tmems, mma.f, sfa_taddr, sfb_taddr, mma.sfmt, mma.nsf, mma.layout, mma.m, mma.n, cta,
                          lane, fp)
    _, d_col0 = d_address(d_taddr, mma.layout)
    dc = d_columns(d_col0, dcol)
    old = read_old_d(tmems, fp, cta, lane, dc) if enable_input_d else None
    out = _compute(mma, arithmetic, ops, sa, sb, old)
    write_d(tmems, fp, out, cta, lane, dc, disable_output_lane)
    return fp


# --------------------------------------------------------------------------------------------- fetch A, B


@dataclass(frozen=True)
class _Operands:
    """A and B values, negated as the idesc says."""

    a: np.ndarray
    """(M, K) A values of the CTA (pair)."""
    a_upper: np.ndarray | None
    """The 2x2 datapath's second copy of A (read by D columns n >= N/2) where it is not the first."""
    b: np.ndarray
    """(N, K) B values."""


def _fetch_operands(mma: _Mma, tmems: list[np.ndarray], smems: list[np.ndarray], a: int, b_desc: int,
                    sp_meta_taddr: int | None, collectors: list | None, collector_usage: str | None,
                    fp: MmaFootprint) -> _Operands:
    """A (from shared memory, TMEM or the collector buffer; expanded with its metadata when sparse) and B of
    every CTA; the shared-memory bytes read go into ``fp``."""
    a_desc = None if mma.a_is_tmem else decode_smem_desc(a)
    b_d = decode_smem_desc(b_desc)
    colls = collectors if collectors is not None else [Collector() for _ in range(mma.cg)]
    buf, cop = parse_usage(collector_usage, ws=False)
    held = from_buffer(colls, buf, cop, mma.a_sig)
    kept = []
    copies: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])  # per A copy (2x2 halves), per CTA: (rows, K)
    b_parts = []
    for v in range(mma.cg):
        ranges: list[np.ndarray] = []
        vals = held[v] if held is not None else _a_values(mma, tmems[v], smems[v], a, a_desc, fp.tmem_read[v], ranges)
        kept.append(vals)
        if mma.sparse:
            vals = [_expand(mma, x, tmems[v], sp_meta_taddr, fp, v) for x in vals]
        copies[0].append(vals[0])
        copies[1].append(vals[-1])
        codes, addr = read_operand(smems[v], b_desc, mma.n // mma.cg, mma.k, major=mma.major("b"),
                                   container=mma.container(mma.bfmt), desc=b_d)
        ranges.append(addr.ravel())
        b_parts.append(values(mma.bfmt, codes))
        fp.smem_ranges.append(byte_ranges(np.concatenate(ranges)))
    after(colls, buf, cop, mma.a_sig, kept)
    a0 = np.concatenate(copies[0], axis=0)
    a1 = np.concatenate(copies[1], axis=0) if any(x is not y for x, y in zip(*copies, strict=True)) else None
    bv = np.concatenate(b_parts, axis=0)
    if mma.f["negate_a"]:
        a0, a1 = -a0, (None if a1 is None else -a1)
    return _Operands(a0, a1, -bv if mma.f["negate_b"] else bv)


def _a_values(mma: _Mma, tmem: np.ndarray, smem: np.ndarray, a: int, a_desc: dict | None, mark: np.ndarray,
              ranges: list[np.ndarray]) -> list[np.ndarray]:
    """This CTA's A values (rows, K/2 if sparse else K), one array per copy (module docstring)."""
    if mma.a_is_tmem:
        reps = _read_a_tmem(mma, tmem, a, mark)
    else:
        codes, addr = read_operand(smem, a, mma.m // mma.cg, mma.ka, major=mma.major("a"),
                                   container=mma.container(mma.afmt), desc=a_desc)
        ranges.append(addr.ravel())
        reps = [codes]
    return [values(mma.afmt, c) for c in reps]


def _read_a_tmem(mma: _Mma, tmem: np.ndarray, addr: int, mark: np.ndarray) -> list[np.ndarray]:
    """A codes (rows, K) per copy from TMEM (module docstring; ``tmem_operand``)."""
    lane0, col0 = split_taddr(addr, what="tcgen05.mma A address")
    if lane0:
        raise ValueError(f"tcgen05.mma: A address lane {lane0} (4x1/2x2 layouts need lane 0)")
    bits, holder = (8, HOLDER[mma.afmt]) if mma.kind == "mxf8f6f4" else (4, None)
    return [a_tmem_codes(tmem, a_tmem_lanes(mma.m // mma.cg, copy), col0, mma.ka, bits, holder, mark)
            for copy in range(2 if mma.two_x_two else 1)]


def _expand(mma: _Mma, packed: np.ndarray, tmem: np.ndarray, meta_taddr: int | None, fp: MmaFootprint,
            v: int) -> np.ndarray:
    """Dense (rows, K) values of this CTA's rows from the packed (rows, K/2) and the metadata."""
    if meta_taddr is None:
        raise ValueError("tcgen05.mma.sp: no sparsity metadata address")
    lane0, col0 = split_taddr(meta_taddr, what="tcgen05.mma.sp metadata address")
    pair = 2 if mma.kind in ("mxf4", "mxf4nvf4") else 1
    nib = metadata_nibbles(tmem, lane0 + np.arange(packed.shape[0]), col0, mma.k // (4 * pair), fp.tmem_read[v])
    bad = first_unlisted_nibble(nib)
    if bad is not None:
        r, c = bad
        fp.warnings.append(f"CTA {v}: sparsity metadata nibble {int(nib[r, c]):#06b} (row {r}, chunk {c}) is "
                           f"not a listed value: undefined behaviour (9.7.16.10.8)")
    return expand_sparse(packed, nib, mma.k, pair)


# --------------------------------------------------------------------------------------------- scale factors


def sf_index(sf_id: int, j: np.ndarray) -> np.ndarray:
    """SF index g of the MMA's k-block j: the idesc's SF ID plus j (9.7.16.10.7.2/.3)."""
    return sf_id + j


def sf_byte(g: np.ndarray) -> np.ndarray:
    """Which byte of a 32-bit SF cell holds SF index g: byte g % 4 (four consecutive indices per cell)."""
    return g % 4


def sf_lane(quadrant: np.ndarray, x: np.ndarray) -> np.ndarray:
    """TMEM lane of the SF of MN index x in the copy of lane quadrant ``quadrant``: 32 q + x % 32."""
    return 32 * quadrant + x % 32


def sf_column(col0: int, x: np.ndarray, g: np.ndarray, group_stride: int) -> np.ndarray:
    """TMEM column of SF index g of MN index x: the address column, plus x // 32, plus a group stride per four
    SF indices (:func:`sf_group_stride`)."""
    return col0 + x // 32 + group_stride * (g // 4)


def sf_group_stride(which: str, two_x_two: bool, n: int) -> int:
    """Columns between SF groups g // 4 of scale-``which`` [AMB-SFB-GROUP-STRIDE-LAYOUT-B]: SFA 4 (4x1) or 2
    (2x2); SFB 4 * ceil(N / 128) (4x1) or 4 (2x2)."""
    if which == "A":
        return 2 if two_x_two else 4
    return 4 if two_x_two else 4 * -(-n // 128)


def sf_copy_read_by(which: str, cta: np.ndarray, lane: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(CTA, lane quadrant) of the SF copy the D cell at (cta, lane) reads: its own CTA's, in the quadrant of
    its own lane [AMB-SF-QUADRANT, reading "row_quadrant"]."""
    return cta, lane // 32


def _sf_rows(which: str, two_x_two: bool, m: int, n: int, cg: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(MN indices x a CTA holds SFs of, (X, copies) quadrants holding each, (M, N) the x of every D cell)."""
    if which == "A":
        xs = np.arange(m // cg)
        quads = np.stack([xs // 32, 2 + xs // 32], 1) if two_x_two else (xs // 32)[:, None]
        return xs, quads, np.broadcast_to((np.arange(m) % (m // cg))[:, None], (m, n))
    if two_x_two:  # N half h is read by quadrants 2h, 2h+1 [AMB-SF-LAYOUT-B-QUADRANT]
        half = n // 2
        xs = np.arange(half)
        return xs, np.broadcast_to(np.arange(4)[None, :], (half, 4)), np.broadcast_to(np.arange(n)[None, :] % half,
                                                                                      (m, n))
    xs = np.arange(n)
    return xs, np.broadcast_to(np.arange(4)[None, :], (n, 4)), np.broadcast_to(np.arange(n)[None, :], (m, n))


def _read_scales(tmems, f, sfa_taddr, sfb_taddr, sfmt, nsf, layout, m, n, cta, lane, fp):
    """SFA and SFB values, each (nsf, M, N), for every D cell (module docstring)."""
    return tuple(_read_sf(which, tmems, addr, f[key], sfmt, nsf, layout == "B", m, n, cta, lane, fp)
                 for which, addr, key in (("A", sfa_taddr, "sfa_id"), ("B", sfb_taddr, "sfb_id")))


def _read_sf(which: str, tmems: list[np.ndarray], addr: int, sf_id: int, sfmt: str, nsf: int, two_x_two: bool,
             m: int, n: int, cta: np.ndarray, lane: np.ndarray, fp: MmaFootprint) -> np.ndarray:
    """Scale-``which`` values (nsf, M, N) of every D cell.

    Per CTA a small table (4 quadrants, MN index, nsf) is read for the (quadrant, MN index) pairs some
    D cell uses, then every D cell looks up its own copy (:func:`sf_copy_read_by`) and row / column.
    """
    lane0, col0 = split_taddr(addr, ignore_bits_30_31=True, what=f"tcgen05.mma scale-{which} address")
    if lane0:
        raise ValueError(f"tcgen05.mma: scale-{which} address lane {lane0} (the SF layout starts at lane 0)")
    cg = len(tmems)
    xs, quads, x_cell = _sf_rows(which, two_x_two, m, n, cg)
    g = sf_index(sf_id, np.arange(nsf))
    shape = (len(xs), quads.shape[1], nsf)
    lanes = np.broadcast_to(sf_lane(quads[:, :, None], xs[:, None, None]), shape)
    cols = np.broadcast_to(sf_column(col0, xs[:, None, None], g[None, None, :], sf_group_stride(which, two_x_two, n)),
                           shape)
    tab = np.zeros((cg, 4, len(xs), nsf), dtype=np.uint32)
    for v in range(cg):
        cells = tmem_cells(tmems[v], lanes, cols, fp.tmem_read[v], f"scale-{which}")
        tab[v, quads, np.broadcast_to(xs[:, None], quads.shape)] = (cells >> (sf_byte(g) * 8).astype(np.uint32)) & 0xFF
    vals = values(sfmt, tab)  # (cg, 4, X, nsf)
    copy_cta, copy_quadrant = sf_copy_read_by(which, cta, lane)
    return np.ascontiguousarray(np.moveaxis(vals[copy_cta, copy_quadrant, x_cell], -1, 0))  # (nsf, M, N)


# --------------------------------------------------------------------------------------------- compute


def _compute(mma: _Mma, arithmetic: str, ops: _Operands, sa: np.ndarray, sb: np.ndarray,
             old: np.ndarray | None) -> np.ndarray:
    """D (uint32 fp32 bits, (M, N)): ``float64`` -- per k-block an exact float64 block dot product times its two
    scales, summed in float64 with the old D and rounded once; else the named numeric model."""
    half = (np.arange(mma.n) >= mma.n // 2) if mma.two_x_two else None
    if arithmetic != "float64":
        return _numeric(arithmetic, ops.a, ops.a_upper, ops.b, sa, sb, old, half, mma.afmt, mma.bfmt, mma.vs, mma.nsf)
    acc = np.zeros((mma.m, mma.n), dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(mma.nsf):
            blk = slice(j * mma.vs, (j + 1) * mma.vs)
            p = matmul64(ops.a[:, blk], ops.b[:, blk].T)
            if ops.a_upper is not None:
                p = np.where(half[None, :], matmul64(ops.a_upper[:, blk], ops.b[:, blk].T), p)
            acc += p * sa[j] * sb[j]
        if old is not None:
            acc = acc + old.view(np.float32).astype(np.float64)
        return acc.astype(np.float32).view(np.uint32)


def _numeric(model, a0, a1, bv, sa, sb, old, half, afmt, bfmt, vs, nsf) -> np.ndarray:
    if model not in NM.MODELS:
        raise ValueError(f"tcgen05.mma: unknown arithmetic {model!r} (float64 or a numeric_model name)")
    m, n = sa.shape[1:]
    if a0.shape[1] != vs * nsf:
        raise ValueError("tcgen05.mma: numeric-model arithmetic needs K = scales x vector size")
    a_rows = np.repeat(a0, n, axis=0)
    if a1 is not None:
        a_rows = np.where(np.tile(half, m)[:, None], np.repeat(a1, n, axis=0), a_rows)
    c = np.zeros(m * n) if old is None else old.view(np.float32).astype(np.float64).reshape(-1)
    d = NM.dot(model, a_rows, np.tile(bv, (m, 1)), c, "fp32", in_format=(afmt, bfmt),
               scale_a=np.moveaxis(sa, 0, -1).reshape(m * n, nsf),
               scale_b=np.moveaxis(sb, 0, -1).reshape(m * n, nsf))
    return d.reshape(m, n).astype(np.float32).view(np.uint32)
