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

from dataclasses import dataclass, field
from functools import cache

import ml_dtypes
import numpy as np

from mmacts.spec import queries as Q
from reference.gemm import matmul64

from .collector import Collector, after, from_buffer, parse_usage
from .decode import BLOCK_SCALED_KINDS, catalog, decode_idesc, decode_smem_desc
from .smem_operand import byte_ranges, read_operand
from .tmem import LANES, split_taddr

COLS = 512

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
HOLDER = {"e4m3": (0, 8), "e5m2": (0, 8), "e2m3": (1, 6), "e3m2": (1, 6), "e2m1": (2, 4)}  # (shift, bits)
VALID_SF_IDS = {1: (0, 1, 2, 3), 2: (0, 2), 4: (0,), 3: (0, 1, 2, 3), 6: (0, 2)}
SPARSE_META_VALID = (0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b0110, 0b1110)


@cache
def _shapes(kind: str) -> tuple:
    return tuple(s for s in Q.tcgen05_shapes(catalog(), kind) if not s.ws)


K96_SHAPES_READINGS = ("m256-cg2-only", "also-m128")
"""Readings of AMB-K96-SHAPES. ``m256-cg2-only`` (the default): K = 96 only where Table 39 prints it (256xNxK1,
cta_group::2). ``also-m128``: a dense M = 128 MMA of a kind that Table 39 gives K1 = 96 also takes K = 96, with
either cta_group (CUTLASS's SM103 kernels issue ``cta_group::1`` M = 128 K = 96); opt-in through the VM
profile's ``readings`` (``{"AMB-K96-SHAPES": "also-m128"}``) so that such a run says which reading it rests on."""


def mma_k(kind: str, cta_group: int, sparse: bool, m: int, k96: bool, k96_shapes: str = "m256-cg2-only") -> int:
    """K of the MMA from Table 39 (the row matching kind/cta_group/sparsity/M); ``k96_shapes`` is the reading of
    AMB-K96-SHAPES (:data:`K96_SHAPES_READINGS`)."""
    if k96_shapes not in K96_SHAPES_READINGS:
        raise ValueError(f"AMB-K96-SHAPES reading must be one of {K96_SHAPES_READINGS}, not {k96_shapes!r}")
    ks = {s.K for s in _shapes(kind) if s.cta_group == cta_group and s.sparse == sparse and s.M == m}
    if not ks:
        raise ValueError(f"tcgen05.mma kind::{kind}: M = {m}, cta_group::{cta_group}, "
                         f"{'sparse' if sparse else 'dense'} is not a Table 39 shape")
    if k96:
        if 96 in ks:
            return 96
        if k96_shapes == "also-m128" and not sparse and m == 128 and any(s.K == 96 for s in _shapes(kind)):
            return 96
        raise ValueError(f"tcgen05.mma kind::{kind}: K = 96 (idesc bit 31) not in Table 39 for M = {m}, "
                         f"cta_group::{cta_group} [AMB-K96-SHAPES, reading {k96_shapes}]")
    ks.discard(96)
    return ks.pop()


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


def layout_of(m: int, cta_group: int, sparse: bool) -> str:
    if cta_group == 1 and m == 128:
        return "D"
    if cta_group == 2 and m == 256:
        return "A"
    if cta_group == 2 and m == 128:
        if sparse:
            raise ValueError("tcgen05.mma: M = 128 cta_group::2 sparse (Layout C) is not modelled")
        return "B"
    raise ValueError(f"tcgen05.mma: no block-scaled datapath layout for M = {m}, cta_group::{cta_group}")


def d_cells(layout: str, m: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cta, lane, column offset) of every D(m, n), each (M, N)."""
    mm, nn = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    if layout == "D":
        return np.zeros_like(mm), mm, nn
    if layout == "A":
        return mm // 128, mm % 128, nn
    h = nn // (n // 2)
    return mm // 64, mm % 64 + 64 * h, nn - h * (n // 2)


# --------------------------------------------------------------------------------------------- footprint


@dataclass
class MmaFootprint:
    smem_ranges: list[list[tuple[int, int]]]
    """per CTA: merged [start, end) shared-memory byte ranges read (A if from smem, B)."""
    tmem_read: list[np.ndarray]
    """per CTA: bool (128, 512) cells read (A in TMEM, SFA, SFB, metadata, D if enable-input-d)."""
    tmem_written: list[np.ndarray]
    """per CTA: bool (128, 512) cells written (D minus disabled lanes)."""
    warnings: list[str] = field(default_factory=list)


def _cells(tmem: np.ndarray, lane: np.ndarray, col: np.ndarray, mark: np.ndarray, what: str) -> np.ndarray:
    if col.size and (int(col.max()) >= COLS or int(lane.max()) >= LANES or int(col.min()) < 0):
        raise ValueError(f"tcgen05.mma: {what} runs outside 128 x 512 (column {int(col.max())})")
    mark[lane, col] = True
    return tmem[lane, col]


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
    ``k96_shapes``: the reading of AMB-K96-SHAPES (:data:`K96_SHAPES_READINGS`).
    """
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
    if kind == "mxf8f6f4":
        afmt, bfmt = f["atype_name"], f["btype_name"]
    else:
        afmt = bfmt = "e2m1"
    sfmt = f["scale_type_name"]
    nsf = scale_count(kind, scale_vec, sfmt, k, afmt, bfmt)
    for key in ("sfa_id", "sfb_id"):
        if f[key] not in VALID_SF_IDS[nsf]:
            raise ValueError(f"tcgen05.mma: {key} = {f[key]} not valid with {nsf} scale factors per row "
                             f"(valid {VALID_SF_IDS[nsf]})")
    if n % (2 * cg) and layout == "B":
        raise ValueError(f"tcgen05.mma: N = {n} not even per CTA for Layout B")
    vs = k // nsf
    rows_a, cols_b = m // cg, n // cg
    ka = k // 2 if sparse else k
    a_major = "MN" if f["transpose_a"] else "K"
    b_major = "MN" if f["transpose_b"] else "K"
    if a_is_tmem and f["transpose_a"]:
        raise ValueError("tcgen05.mma: transpose A set with A in tensor memory")
    two_x_two = layout == "B"
    fp = MmaFootprint([], [np.zeros((LANES, COLS), bool) for _ in range(cg)],
                      [np.zeros((LANES, COLS), bool) for _ in range(cg)])
    a_desc = None if a_is_tmem else decode_smem_desc(a)
    b_d = decode_smem_desc(b_desc)
    a_reps: list[list[np.ndarray]] = [[], []]  # per replica (2x2 halves), per CTA: A values (rows_a, K)
    b_parts = []
    colls = collectors if collectors is not None else [Collector() for _ in range(cg)]
    buf, cop = parse_usage(collector_usage, ws=False)
    a_sig = ("A", kind, afmt, m, ka, cg, layout)
    held = from_buffer(colls, buf, cop, a_sig)
    kept = []
    for v in range(cg):
        ranges: list[np.ndarray] = []
        if held is not None:
            vals = held[v]
        else:
            if a_is_tmem:
                reps = _read_a_tmem(tmems[v], a, rows_a, ka, kind, afmt, two_x_two, fp.tmem_read[v])
            else:
                cont = F8F6F4_SMEM_CONTAINER[afmt] if kind == "mxf8f6f4" else "fp4x2"
                codes, addr = read_operand(smems[v], a, rows_a, ka, major=a_major, container=cont, desc=a_desc)
                ranges.append(addr.ravel())
                reps = [codes]
            vals = [values(afmt, c) for c in reps]
        kept.append(vals)
        if sparse:
            vals = [_expand_sparse(x, tmems[v], sp_meta_taddr, kind, k, fp, v) for x in vals]
        a_reps[0].append(vals[0])
        a_reps[1].append(vals[-1])
        cont = F8F6F4_SMEM_CONTAINER[bfmt] if kind == "mxf8f6f4" else "fp4x2"
        codes, addr = read_operand(smems[v], b_desc, cols_b, k, major=b_major, container=cont, desc=b_d)
        ranges.append(addr.ravel())
        b_parts.append(values(bfmt, codes))
        fp.smem_ranges.append(byte_ranges(np.concatenate(ranges)))
    after(colls, buf, cop, a_sig, kept)
    a0 = np.concatenate(a_reps[0], axis=0)
    reps2 = len(a_reps[1]) == cg and any(x is not y for x, y in zip(a_reps[0], a_reps[1], strict=True))
    a1 = np.concatenate(a_reps[1], axis=0) if reps2 else a0
    bv = np.concatenate(b_parts, axis=0)
    if f["negate_a"]:
        a0, a1 = -a0, (-a1 if reps2 else None)
        a1 = a0 if a1 is None else a1
    if f["negate_b"]:
        bv = -bv
    cta, lane, dcol = d_cells(layout, m, n)
    sa, sb = _read_scales(tmems, f, sfa_taddr, sfb_taddr, sfmt, nsf, layout, m, n, cta, lane, fp)
    d_lane0, d_col0 = split_taddr(d_taddr, what="tcgen05.mma D address")
    if d_lane0:
        raise ValueError(f"tcgen05.mma: D address lane {d_lane0} (Layout {layout} needs lane alignment 0)")
    dl, dc = lane, d_col0 + dcol
    if int(dc.max()) >= COLS:
        raise ValueError(f"tcgen05.mma: D runs past column 511 (column {d_col0} + {int(dcol.max())})")
    old = None
    if enable_input_d:
        old = np.empty((m, n), dtype=np.uint32)
        for v in range(cg):
            sel = cta == v
            old[sel] = tmems[v][dl[sel], dc[sel]]
            fp.tmem_read[v][dl[sel], dc[sel]] = True
    half = (np.arange(n) >= n // 2) if two_x_two else None
    if arithmetic == "float64":
        acc = np.zeros((m, n), dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            for j in range(nsf):
                blk = slice(j * vs, (j + 1) * vs)
                p = matmul64(a0[:, blk], bv[:, blk].T)
                if reps2:
                    p = np.where(half[None, :], matmul64(a1[:, blk], bv[:, blk].T), p)
                acc += p * sa[j] * sb[j]
            if old is not None:
                acc = acc + old.view(np.float32).astype(np.float64)
            out = acc.astype(np.float32).view(np.uint32)
    else:
        out = _numeric(arithmetic, a0, a1 if reps2 else None, bv, sa, sb, old, half, afmt, bfmt, vs, nsf)
    write_d(tmems, fp, out, cta, dl, dc, disable_output_lane)
    return fp


def write_d(tmems: list[np.ndarray], fp: MmaFootprint, out: np.ndarray, cta: np.ndarray, lane: np.ndarray,
            col: np.ndarray, disable_output_lane: list[int] | None) -> None:
    """Store D (uint32 cells, shape (M, N)) at (cta, lane, col) in every CTA of the group, except the lanes
    ``disable-output-lane`` masks (bit i = TMEM lane i; with cta_group::2, words 4-7 are the peer CTA's)."""
    cg = len(tmems)
    keep = np.ones(out.shape, dtype=bool)
    if disable_output_lane is not None:
        words = [int(w) & 0xFFFFFFFF for w in disable_output_lane]
        if len(words) != 4 * cg:
            raise ValueError(f"tcgen05.mma: disable-output-lane needs {4 * cg} words for cta_group::{cg}")
        bits = np.array([(words[i // 32] >> (i % 32)) & 1 for i in range(128 * cg)], dtype=bool)
        keep = ~bits[cta * 128 + lane]
    for v in range(cg):
        sel = (cta == v) & keep
        tmems[v][lane[sel], col[sel]] = out[sel]
        fp.tmem_written[v][lane[sel], col[sel]] = True


def _read_a_tmem(tmem: np.ndarray, addr: int, rows: int, k: int, kind: str, fmt: str, two_x_two: bool,
                 mark: np.ndarray) -> list[np.ndarray]:
    """A codes (rows, k) per replica from TMEM (module docstring)."""
    lane0, col0 = split_taddr(addr, what="tcgen05.mma A address")
    if lane0:
        raise ValueError(f"tcgen05.mma: A address lane {lane0} (4x1/2x2 layouts need lane 0)")
    kk = np.arange(k)
    if kind == "mxf8f6f4":
        col, bit = kk // 4, 8 * (kk % 4)
        shift, bits = HOLDER[fmt]
    else:
        col, bit = kk // 8, 4 * (kk % 8)
        shift, bits = 0, 4
    out = []
    for base in (0, 64) if two_x_two else (0,):
        lanes = base + np.arange(rows)[:, None]
        cells = _cells(tmem, np.broadcast_to(lanes, (rows, k)), np.broadcast_to(col0 + col, (rows, k)), mark,
                       "A in tensor memory")
        out.append(((cells >> (bit + shift).astype(np.uint32)) & ((1 << bits) - 1)).astype(np.uint8))
    return out


def _expand_sparse(packed: np.ndarray, tmem: np.ndarray, meta_taddr: int | None, kind: str, k: int,
                   fp: MmaFootprint, v: int) -> np.ndarray:
    """Dense (rows, K) values of this CTA's rows from the packed (rows, K/2) and the metadata."""
    if meta_taddr is None:
        raise ValueError("tcgen05.mma.sp: no sparsity metadata address")
    lane0, col0 = split_taddr(meta_taddr, what="tcgen05.mma.sp metadata address")
    rows = packed.shape[0]
    pair = 2 if kind in ("mxf4", "mxf4nvf4") else 1
    chunk = 4 * pair
    nch = k // chunk
    c = np.arange(nch)
    lanes = np.broadcast_to(lane0 + np.arange(rows)[:, None], (rows, nch))
    cells = _cells(tmem, lanes, np.broadcast_to(col0 + c // 8, (rows, nch)), fp.tmem_read[v], "sparsity metadata")
    nib = (cells >> (4 * (c % 8)).astype(np.uint32)) & 0xF
    bad = ~np.isin(nib, SPARSE_META_VALID)
    if bad.any():
        r, cc = np.argwhere(bad)[0]
        fp.warnings.append(f"CTA {v}: sparsity metadata nibble {int(nib[r, cc]):#06b} (row {r}, chunk {cc}) is "
                           f"not a listed value: undefined behaviour (9.7.16.10.8)")
    pos = np.stack([nib & 3, (nib >> 2) & 3], axis=-1).astype(np.int64)  # (rows, chunks, 2)
    dense = np.zeros((rows, k), dtype=np.float64)
    vals = packed.reshape(rows, nch, 2, pair)
    for s in range(2):
        for p in range(pair):
            np.put_along_axis(dense, c[None, :] * chunk + pos[..., s] * pair + p, vals[:, :, s, p], axis=1)
    return dense


def _read_scales(tmems, f, sfa_taddr, sfb_taddr, sfmt, nsf, layout, m, n, cta, lane, fp):
    """SFA and SFB values, each (nsf, M, N), for every D cell (module docstring).

    Per CTA a small table (4 quadrants, MN index, nsf) is read for the (quadrant, MN index) pairs some
    D cell uses, then every D cell looks up its own (CTA, quadrant of its lane, row / column).
    """
    cg = len(tmems)
    two_x_two = layout == "B"
    q_cell = lane // 32
    j = np.arange(nsf)
    out = []
    for which, addr, sf_id in (("A", sfa_taddr, f["sfa_id"]), ("B", sfb_taddr, f["sfb_id"])):
        lane0, col0 = split_taddr(addr, ignore_bits_30_31=True, what=f"tcgen05.mma scale-{which} address")
        if lane0:
            raise ValueError(f"tcgen05.mma: scale-{which} address lane {lane0} (the SF layout starts at lane 0)")
        if which == "A":
            xs = np.arange(m // cg)
            c = 2 if two_x_two else 4
            quads = np.stack([xs // 32, 2 + xs // 32], 1) if two_x_two else (xs // 32)[:, None]
            x_cell = np.broadcast_to((np.arange(m) % (m // cg))[:, None], (m, n))
        elif two_x_two:
            half = n // 2
            xs = np.arange(half)
            c = 4
            quads = np.broadcast_to(np.arange(4)[None, :], (half, 4))  # half h is read by quadrants 2h, 2h+1
            x_cell = np.broadcast_to(np.arange(n)[None, :] % half, (m, n))
        else:
            xs = np.arange(n)
            c = 4 * -(-n // 128)
            quads = np.broadcast_to(np.arange(4)[None, :], (n, 4))
            x_cell = np.broadcast_to(np.arange(n)[None, :], (m, n))
        g = sf_id + j
        nq = quads.shape[1]
        ql = quads[:, :, None]  # (X, nq, 1)
        lanes = np.broadcast_to(32 * ql + (xs % 32)[:, None, None], (len(xs), nq, nsf))
        cols = np.broadcast_to((col0 + xs // 32)[:, None, None] + c * (g // 4)[None, None, :], (len(xs), nq, nsf))
        tab = np.zeros((cg, 4, len(xs), nsf), dtype=np.uint32)
        for v in range(cg):
            cells = _cells(tmems[v], lanes, cols, fp.tmem_read[v], f"scale-{which}")
            codes = (cells >> ((g % 4) * 8).astype(np.uint32)) & 0xFF
            tab[v, quads, np.broadcast_to(xs[:, None], quads.shape)] = codes
        vals = values(sfmt, tab)  # (cg, 4, X, nsf)
        out.append(np.stack([vals[..., jj][cta, q_cell, x_cell] for jj in range(nsf)]))
    return out[0], out[1]


def _numeric(model, a0, a1, bv, sa, sb, old, half, afmt, bfmt, vs, nsf) -> np.ndarray:
    from reference import numeric_model as NM

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
