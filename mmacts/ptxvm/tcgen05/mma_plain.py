"""``tcgen05.mma{.ws}{.sp}`` of the kinds without block scaling (kind::f16, ::tf32, ::f8f6f4, ::i8).

Spec: 9.7.16.10.9.1-.4 (syntax, operands), Table 39 (shapes, incl. ``.ws``), Table 42 (idesc),
9.7.16.10.5 (datapath layouts), 9.7.16.4.3 / Table 45 (zero-column mask), 9.7.16.10.4.1 (D packing),
9.7.16.10.8 (sparsity), the collector (``collector.py``).

What one MMA does: D = A . B + D (enable-input-d), or D = A . B + D * 2^-s with ``scale-input-d`` s
in [0, 15] (kind::f16 / ::tf32 only), or D = A . B; TMEM lanes whose ``disable-output-lane`` bit is 1
are not written (bit i of the vector, word 0 first, is TMEM lane i; ``cta_group::2``: words 4-7 are
the peer CTA's lanes -- this module's reading of "the size of the vector is 8").

Datapath layouts D, A, B, F (M = 64), E and G (.ws M = 64 / 32): ``datapath`` (9.7.16.10.5).

Reading "same-lane" for everything A-side: the D cell in TMEM lane L uses the A row (A in TMEM),
and the sparsity-metadata row, found at the operand's base lane + (L - D's base lane). It is the
existing AMB-A-TMEM-LAYOUT "duplicated-b" reading extended to E/G (each N part has its own copy)
and the spec's "same Tensor Memory lane alignment across matrices A, D and the sparsity metadata"
(9.7.16.10.5, 9.7.16.10.8.5) for F.

Element containers: shared memory f16/bf16 16-bit, tf32 in 32-bit words, e4m3/e5m2/u8/s8 8-bit,
e2m3/e3m2/e2m1 the padded 16-byte chunks of kind::mxf8f6f4 (9.7.16.10.4.4 names only mxf8f6f4; the
VM's reading: kind::f8f6f4 uses the same). A in TMEM: 16-bit elements two per column (lower k in
bits 0-15), tf32 one per column, 8-bit holders four per column (lowest k in byte 0; 4/6-bit types
at the holder bits of kind::mxf8f6f4, ``tmem_operand.HOLDER``). TF32 values: the top 19 bits of the fp32
container (low 13 mantissa bits ignored -- truncation, the VM's reading). D (9.7.16.10.4.1): f32 /
s32 one per column; f16 in the low 16 bits of a column, the upper 16 bits written as 0 (reading).

Sparsity (.sp): kind::f8f6f4 and ::i8 (2:4; the sparsity selector must be 0, 9.7.16.10.8.4.5/6)
use the block-scaled module's metadata reading (AMB-SPARSE-META-TMEM "lane-row-nibble"). kind::f16
and ::tf32 select metadata sub-columns with the selector (Figures 262-265, missing): refused.

Zero-column mask (``.ws`` only, Table 45): sub-mask i (1, 2 or 4 of them for M = 128, 64, 32) covers
D columns [i N/S, (i+1) N/S); it is the periodic sequence that starts with value fs_i, runs of 1s
(column zeroed) being Skip Span + 1 long and runs of 0s (B used) Use Span + 1 long, with its first
sc_i elements dropped. This is what Examples 2-4 show (and CUTLASS's code); the table's own
descriptions of Skip/Use Span say the opposite (cutlass-facts §8 #2). Non-Zero Mask = 0: no column is
zeroed. Column Shift c: D column n uses B column n + c (Example 4: "columns from 2 to 129"), so B
is read with N + c columns; c at most 16 for M = 32 and 32 otherwise. The idesc "maximum shift" field
(bits 30-31) is a performance hint for B reuse and is not checked against c (reading).

Arithmetic: ``"float64"`` (the only one here) -- every product is exact in float64 for these
formats; the K products and the (scaled) old D are summed in float64 and rounded once to the D type
(round-to-nearest-even). This is the exact result whenever the float64 sum is exact (the suite's
exact-by-construction data); for other data it is "float64 accumulation, one final rounding", not
the hardware's (unknown) internal accumulation. kind::i8: exact integer dot products plus the old
D, wrapped to 32 bits, or clamped to the int32 range with the Saturate bit (Table 42 bit 3).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from . import collector as C
from .datapath import DecodedMma, MmaFootprint, d_address, d_cells, d_columns, layout_of, mma_k, read_old_d, write_d
from .decode import decode_idesc
from .mma import values
from .smem_operand import byte_ranges, read_operand
from .tmem import LANES, split_taddr
from .tmem_operand import HOLDER, a_tmem_codes, expand_sparse, first_unlisted_nibble, metadata_nibbles

PLAIN_KINDS = ("f16", "tf32", "f8f6f4", "i8")
FMT = {"unsigned 8b": "u8", "signed 8b": "s8"}
SMEM_CONTAINER = {"f16": "b16", "bf16": "b16", "tf32": "b32", "e4m3": "b8", "e5m2": "b8", "u8": "b8", "s8": "b8",
                  "e2m3": "p6", "e3m2": "p6", "e2m1": "p4"}
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "u8": 8, "s8": 8, "e2m3": 8, "e3m2": 8, "e2m1": 8}


def zero_column_mask(word: int, m: int, n: int) -> tuple[np.ndarray, int]:
    """(bool (N,) columns forced to zero, column shift) of a Table 45 descriptor (module docstring)."""
    word = int(word) & ((1 << 64) - 1)
    if (word >> 36) & 0x7 or word >> 62:
        raise ValueError(f"zero-column mask descriptor {word:#018x}: reserved bits 36-38 / 62-63 set")
    shift = (word >> 56) & 0x3F
    if shift > (16 if m == 32 else 32):
        raise ValueError(f"zero-column mask descriptor: column shift {shift} > {16 if m == 32 else 32} for M = {m}")
    mask = np.zeros(n, dtype=bool)
    if not (word >> 39) & 1:
        return mask, shift
    ones, zeros = ((word >> 40) & 0xFF) + 1, ((word >> 48) & 0xFF) + 1
    subs = {128: 1, 64: 2, 32: 4}[m]
    width = n // subs
    for i in range(subs):
        sc, fs = (word >> (8 * i)) & 0xFF, (word >> (32 + i)) & 1
        seq: list[int] = []
        val = fs
        while len(seq) < sc + width:
            seq += [val] * (ones if val else zeros)
            val ^= 1
        mask[i * width:(i + 1) * width] = np.array(seq[sc:sc + width], dtype=bool)
    return mask, shift


def plain_values(fmt: str, codes: np.ndarray) -> np.ndarray:
    codes = np.asarray(codes)
    if fmt == "f16":
        return codes.astype(np.uint16).view(np.float16).astype(np.float64)
    if fmt == "bf16":
        return codes.astype(np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)
    if fmt == "tf32":
        return (codes.astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if fmt == "u8":
        return codes.astype(np.uint8).astype(np.int64)
    if fmt == "s8":
        return codes.astype(np.uint8).view(np.int8).astype(np.int64)
    return values(fmt, codes)


# --------------------------------------------------------------------------------------------- decode, check


@dataclass(frozen=True)
class _PlainMma(DecodedMma):
    """One MMA without block scaling as its idesc and qualifiers decode, every rule on them checked."""

    ws: bool
    dfmt: str


def _check_operands(kind: str, cta_group: int, tmems: list[np.ndarray], smems: list[np.ndarray], *, ws: bool,
                    arithmetic: str, scale_input_d: int | None, disable_output_lane: list[int] | None,
                    zero_column_mask_desc: int | None) -> int:
    """The checks that need no idesc: the kind, the CTA arrays, the operands ``.ws`` takes or refuses; returns
    the cta_group."""
    if kind not in PLAIN_KINDS:
        raise ValueError(f"tcgen05.mma: kind::{kind} is not a kind without block scaling")
    cg = int(cta_group)
    if cg not in (1, 2) or len(tmems) != cg or len(smems) != cg:
        raise ValueError(f"tcgen05.mma cta_group::{cg}: needs {cg} TMEM and smem arrays")
    if ws and cg != 1:
        raise ValueError("tcgen05.mma.ws: only cta_group::1 (Table 39)")
    if arithmetic != "float64":
        raise ValueError(f"tcgen05.mma kind::{kind}: arithmetic {arithmetic!r} not modelled (float64 only)")
    if scale_input_d is not None:
        if kind not in ("f16", "tf32"):
            raise ValueError(f"tcgen05.mma: scale-input-d is only valid for kind::tf32 / kind::f16, not kind::{kind}")
        if not 0 <= int(scale_input_d) <= 15:
            raise ValueError(f"tcgen05.mma: scale-input-d = {scale_input_d} outside [0, 15]")
    if ws and (disable_output_lane is not None or scale_input_d is not None):
        raise ValueError("tcgen05.mma.ws: no disable-output-lane / scale-input-d operands (9.7.16.10.9.3)")
    if zero_column_mask_desc is not None and not ws:
        raise ValueError("tcgen05.mma: a zero-column mask descriptor needs .ws")
    return cg


def _decode(kind: str, cg: int, idesc: int, *, sparse: bool, ws: bool, a_is_tmem: bool,
            sp_meta_taddr: int | None) -> _PlainMma:
    """Shape, formats and layout from the idesc, each rule checked where its operands are known."""
    f = decode_idesc(kind, idesc)
    if bool(f["sparse"]) != bool(sparse):
        raise ValueError(f"tcgen05.mma: idesc sparsity bit = {f['sparse']} but the instruction is "
                         f"{'.sp' if sparse else 'dense'}")
    m, n = f["m"], f["n"]
    k = mma_k(kind, cg, sparse, m, ws=ws, n=n)
    afmt = FMT.get(f["atype_name"], f["atype_name"])
    bfmt = FMT.get(f["btype_name"], f["btype_name"])
    if kind == "f16" and f["dtype_name"] == "f16" and (afmt, bfmt) != ("f16", "f16"):
        raise ValueError(f"tcgen05.mma kind::f16: dtype F16 needs F16 inputs, got {afmt}/{bfmt} (Table 39)")
    if kind == "f16" and afmt != bfmt:
        raise ValueError(f"tcgen05.mma kind::f16: atype {afmt} and btype {bfmt} differ (Table 39)")
    if sparse:
        if kind in ("f16", "tf32"):
            raise ValueError(f"tcgen05.mma.sp kind::{kind}: the sparsity-selector metadata layouts (Figures "
                             "262-265) are missing from the spec; not modelled")
        if f["sparsity_selector"]:
            raise ValueError(f"tcgen05.mma.sp kind::{kind}: sparsity selector {f['sparsity_selector']} must be 0 "
                             "(9.7.16.10.8.4.5/6)")
        if sp_meta_taddr is None:
            raise ValueError("tcgen05.mma.sp: no sparsity metadata address")
    if a_is_tmem and f["transpose_a"]:
        raise ValueError("tcgen05.mma: transpose A set with A in tensor memory")
    return _PlainMma(kind=kind, cg=cg, f=f, m=m, n=n, k=k, layout=layout_of(m, cg, sparse, ws), afmt=afmt, bfmt=bfmt,
                     sparse=bool(sparse), a_is_tmem=a_is_tmem, ws=ws, dfmt=f["dtype_name"])


# --------------------------------------------------------------------------------------------- MMA


def execute_mma_plain(*, kind: str, cta_group: int, tmems: list[np.ndarray], smems: list[np.ndarray], d_taddr: int,
                      a: int, b_desc: int, idesc: int, enable_input_d: bool, a_is_tmem: bool = False,
                      sparse: bool = False, sp_meta_taddr: int | None = None, ws: bool = False,
                      disable_output_lane: list[int] | None = None, scale_input_d: int | None = None,
                      zero_column_mask_desc: int | None = None, collectors: list[C.Collector] | None = None,
                      collector_usage: str | None = None, arithmetic: str = "float64") -> MmaFootprint:
    """Execute one non-block-scaled MMA on the CTA (pair)'s TMEM arrays in place; return its footprint.

    ``tmems``/``smems``/``collectors``: one per CTA, leader first. ``a``: A's smem descriptor or A's
    TMEM address (``a_is_tmem``). ``collector_usage``: the instruction's ``collector::x::op`` part.

    Steps: check and decode the instruction, place D, fetch A (a table per CTA indexed by the D lane that uses
    each row) and B, expand sparse A with its metadata, read the old D, compute, write D back.
    """
    cg = _check_operands(kind, cta_group, tmems, smems, ws=ws, arithmetic=arithmetic, scale_input_d=scale_input_d,
                         disable_output_lane=disable_output_lane, zero_column_mask_desc=zero_column_mask_desc)
    mma = _decode(kind, cg, idesc, sparse=sparse, ws=ws, a_is_tmem=a_is_tmem, sp_meta_taddr=sp_meta_taddr)
    d_lane0, d_col0 = d_address(d_taddr, mma.layout)
    cta, lane, dcol = d_cells(mma.layout, mma.m, mma.n, d_lane0)
    dc = d_columns(d_col0, dcol)
    fp = MmaFootprint.blank(cg, [[] for _ in range(cg)])
    colls = collectors if collectors is not None else [C.Collector() for _ in range(cg)]
    buf, cop = C.parse_usage(collector_usage, ws=ws)
    zmask, shift = (np.zeros(mma.n, dtype=bool), 0) if zero_column_mask_desc is None else \
        zero_column_mask(zero_column_mask_desc, mma.m, mma.n)
    a_tabs = _a_tables(mma, tmems, smems, a, d_lane0, cta, lane, colls, buf, cop, fp)
    bv = _b_values(mma, smems, b_desc, shift, colls, buf, cop, fp)
    fp.smem_ranges = [byte_ranges(np.concatenate(r)) if r else [] for r in fp.smem_ranges]
    bv = np.where(zmask[:, None], 0, bv)
    if sparse:
        a_tabs = _expand_tables(mma, a_tabs, tmems, sp_meta_taddr, d_lane0, cta, lane, fp)
    a_cell = np.stack(a_tabs)[cta, lane]  # (M, N, K)
    if mma.f.get("negate_a"):
        a_cell = -a_cell
    if mma.f.get("negate_b"):
        bv = -bv
    old = read_old_d(tmems, fp, cta, lane, dc) if enable_input_d else None
    write_d(tmems, fp, _compute(mma, a_cell, bv, old, scale_input_d), cta, lane, dc, disable_output_lane)
    return fp


# --------------------------------------------------------------------------------------------- fetch A, B


def _a_tables(mma: _PlainMma, tmems: list[np.ndarray], smems: list[np.ndarray], a: int, d_lane0: int,
              cta: np.ndarray, lane: np.ndarray, collectors: list[C.Collector], buf: str, cop: str,
              fp: MmaFootprint) -> list[np.ndarray]:
    """Per CTA a table (128 lanes, K') of A rows indexed by the D lane that uses the row (module docstring):
    from the collector buffer, TMEM or shared memory."""
    held = None if mma.ws else C.from_buffer(collectors, buf, cop, mma.a_sig)
    tabs = list(held) if held is not None else [_a_table(mma, v, tmems[v], smems[v], a, d_lane0, cta, lane, fp)
                                                for v in range(mma.cg)]
    if not mma.ws:
        C.after(collectors, buf, cop, mma.a_sig, tabs)
    return tabs


def _a_table(mma: _PlainMma, v: int, tmem: np.ndarray, smem: np.ndarray, a: int, d_lane0: int, cta: np.ndarray,
             lane: np.ndarray, fp: MmaFootprint) -> np.ndarray:
    """CTA ``v``'s A table from TMEM (the row in the D cell's own lane) or from shared memory."""
    sel = cta == v
    tab = np.zeros((LANES, mma.ka), dtype=np.int64 if mma.kind == "i8" else np.float64)
    if mma.a_is_tmem:
        a_lane0, a_col0 = split_taddr(a, what="tcgen05.mma A address")
        if a_lane0 != d_lane0:
            raise ValueError(f"tcgen05.mma: A address lane {a_lane0} differs from D's {d_lane0} (same lane "
                             "alignment, 9.7.16.10.5)")
        used = np.unique(lane[sel])
        bits = BITS[mma.afmt]
        codes = a_tmem_codes(tmem, used, a_col0, mma.ka, bits, HOLDER.get(mma.afmt) if bits == 8 else None,
                             fp.tmem_read[v])
        tab[used] = plain_values(mma.afmt, codes)
        return tab
    rows_a = mma.m // mma.cg
    codes, addr = read_operand(smem, a, rows_a, mma.ka, major=mma.major("a"), container=SMEM_CONTAINER[mma.afmt])
    fp.smem_ranges[v].append(addr.ravel())
    rows = plain_values(mma.afmt, codes)
    mm = np.broadcast_to(np.arange(mma.m)[:, None], cta.shape)
    tab[lane[sel]] = rows[mm[sel] - v * rows_a]
    return tab


def _b_values(mma: _PlainMma, smems: list[np.ndarray], b_desc: int, shift: int, collectors: list[C.Collector],
              buf: str, cop: str, fp: MmaFootprint) -> np.ndarray:
    """B values (N, K): from a ``.ws`` collector buffer or shared memory, ``shift`` columns on (Table 45)."""
    b_sig = ("B", mma.kind, mma.bfmt, mma.n, mma.k, shift)
    held = C.from_buffer(collectors, buf, cop, b_sig) if mma.ws else None
    if held is not None:
        bv = held[0]
    else:
        parts = []
        for v in range(mma.cg):
            codes, addr = read_operand(smems[v], b_desc, mma.n // mma.cg + shift, mma.k, major=mma.major("b"),
                                       container=SMEM_CONTAINER[mma.bfmt])
            fp.smem_ranges[v].append(addr.ravel())
            parts.append(plain_values(mma.bfmt, codes)[shift:])
        bv = np.concatenate(parts, axis=0)
    if mma.ws:
        C.after(collectors, buf, cop, b_sig, [bv])
    return bv


def _expand_tables(mma: _PlainMma, tabs: list[np.ndarray], tmems: list[np.ndarray], sp_meta_taddr: int,
                   d_lane0: int, cta: np.ndarray, lane: np.ndarray, fp: MmaFootprint) -> list[np.ndarray]:
    """Each CTA's lane table expanded to K with the 2:4 metadata of the same lane (module docstring)."""
    m_lane0, m_col0 = split_taddr(sp_meta_taddr, what="tcgen05.mma.sp metadata address")
    if mma.layout == "F" and m_lane0 != d_lane0:
        raise ValueError(f"tcgen05.mma.sp: metadata lane {m_lane0} differs from D's {d_lane0} (Layout F needs "
                         "the same alignment, 9.7.16.10.8.5)")
    dense = []
    for v in range(mma.cg):
        used = np.unique(lane[cta == v])
        meta_lanes = m_lane0 + used - d_lane0
        nib = metadata_nibbles(tmems[v], meta_lanes, m_col0, mma.k // 4, fp.tmem_read[v])
        bad = first_unlisted_nibble(nib)
        if bad is not None:
            r, c = bad
            fp.warnings.append(f"CTA {v}: sparsity metadata nibble {int(nib[r, c]):#06b} (lane {int(meta_lanes[r])}, "
                               f"chunk {c}) is not a listed value: undefined behaviour (9.7.16.10.8.2)")
        t = np.zeros((LANES, mma.k), dtype=tabs[v].dtype)
        t[used] = expand_sparse(tabs[v][used], nib, mma.k, 1)
        dense.append(t)
    return dense


# --------------------------------------------------------------------------------------------- compute


def _compute(mma: _PlainMma, a_cell: np.ndarray, bv: np.ndarray, old: np.ndarray | None,
             scale_input_d: int | None) -> np.ndarray:
    """D cells (uint32, (M, N)): kind::i8 exact integers plus the old D, wrapped (or saturated) to 32 bits; else
    the float64 sum of the K products and the old D (times 2^-scale-input-d), rounded once to the D type."""
    if mma.kind == "i8":
        acc = np.einsum("mnk,nk->mn", a_cell, bv)
        if old is not None:
            acc = acc + old.view(np.int32).astype(np.int64)
        if mma.f.get("saturate"):
            acc = np.clip(acc, -(1 << 31), (1 << 31) - 1)
        return (acc & 0xFFFFFFFF).astype(np.uint32)
    f16 = mma.dfmt == "f16"
    with np.errstate(invalid="ignore", over="ignore"):
        acc = np.sum(a_cell * bv[None, :, :], axis=2)
        if old is not None:
            if f16:
                prev = (old & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)
            else:
                prev = old.view(np.float32).astype(np.float64)
            acc = acc + prev * (2.0 ** -int(scale_input_d or 0))
        if f16:
            return acc.astype(np.float16).view(np.uint16).astype(np.uint32)
        return acc.astype(np.float32).view(np.uint32)
