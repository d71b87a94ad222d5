"""Semantics of warp-level ``mma.sync.aligned`` m16n8k32 / m16n8k64 (fp8; block_scale kinds).

Written from the PTX ISA (9.7.14.5 fragment descriptions of mma.m16n8k32 / m16n8k64 and
9.7.14.3 block scaling, /work/shared/spec/004_5735ece6e5426e1a.txt Tables 35-37) and
cutlass-facts.md §3.5/§6 where figures are missing. Independent of the project's encoders
(``reference.mma_sync``): every map here is stated from the logical element to the register
that holds it (lane, register, bit position), the inverse of how the encoders state it.

Notation: lane l of the warp, groupID g = l >> 2, threadID_in_group t = l & 3.

Fragments (element of the logical matrix -> lane, register, slot):

* A, m16n8k32, 8-bit slots: A[row][k] -> lane 4*(row % 8) + (k % 16) // 4, register
  (row // 8) + 2*(k // 16), byte k % 4.
* A, m16n8k64, 4-bit slots: lane 4*(row % 8) + (k % 32) // 8, register (row // 8) + 2*(k // 32),
  nibble k % 8.
* B (K x 8), m16n8k32: B[k][col] -> lane 4*col + (k % 16) // 4, register k // 16, byte k % 4;
  m16n8k64: lane 4*col + (k % 32) // 8, register k // 32, nibble k % 8.
* C/D f32: C[row][col] -> lane 4*(row % 8) + col // 2, register 2*(row // 8) + col % 2.
* C/D f16 (f16x2): lane 4*(row % 8) + col // 2, register row // 8, half col % 2 (low half first).

Element containers: under ``kind::mxf8f6f4`` (and the fp8 forms) every element has an 8-bit
slot. E2M1 sits in bits [5:2] of its slot (CUTLASS fp4_shift; AMB-FP4-HOLDER-BITS), E3M2/E2M3
at :data:`FP6_SHIFT` (default bits [5:0], the project's reading; AMB-MMASYNC-FP6-CONTAINER).
The other bits of a slot are not read. Under ``kind::mxf4``/``mxf4nvf4`` E2M1 is packed two per
byte, lower k in the lower nibble.

Scale metadata (9.7.14.3): SF_A of row r, index j comes from lane 4*(r % 8) + 2*thread-id-a +
r // 8 (the pair selected by thread-id-a, the lower lane of the pair for rows 0-7, the upper
for rows 8-15: CUTLASS SFALayout, AMB-MMASYNC-SFA-ROW-MAP), byte byte-id-a + j. SF_B of column
n, index j: lane 4*n + thread-id-b, byte byte-id-b + j. SF index j covers k in
[j*K/nsf, (j+1)*K/nsf) (nsf = 1, 2, 4 for scale_vec 1X/2X/4X; Table 35).

Everything takes a leading batch of warps: a (..., 32, na) etc.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from mmacts.ptxvm.errors import VmError, VmUnsupported
from mmacts.ptxvm.warpmma import exact_f32, numerics
from mmacts.ptxvm.warpmma import formats as fm
from mmacts.spec import catalog, queries

LANES = 32
M, N = 16, 8
FP8 = ("e4m3", "e5m2")
MXF8F6F4_TYPES = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")
SCALE_TYPES = ("ue8m0", "ue4m3")
KIND_K = {"mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}
NSF = {"1X": 1, "2X": 2, "4X": 4}
DEFAULT_SCALE_VEC = {"mxf8f6f4": "1X", "mxf4": "2X"}
"""An omitted .scale_vec_size (AMB-MMASYNC-SCALEVEC-DEFAULT, reading defaults-like-tcgen05); mxf4nvf4
has no default here (its block size would be a guess) and raises."""
FP6_SHIFT = 0
"""Bit position of an E3M2/E2M3 payload inside its 8-bit slot (AMB-MMASYNC-FP6-CONTAINER)."""
FP4_SHIFT_8BIT_SLOT = 2
"""Bit position of an E2M1 payload inside an 8-bit slot under kind::mxf8f6f4 (CUTLASS: bits [5:2])."""

_TYPE_TOKENS = {"f32", "f16", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "ue8m0", "ue4m3"}


@dataclass(frozen=True)
class MmaSyncForm:
    """The qualifiers of one mma.sync instruction that the semantics depend on."""

    shape: str  # m16n8k32 | m16n8k64
    dtype: str
    atype: str
    btype: str
    ctype: str
    kind: str | None = None  # None: plain fp8 mma.sync
    stype: str | None = None
    scale_vec: str | None = None  # 1X | 2X | 4X (block_scale only)

    @property
    def k(self) -> int:
        return int(self.shape.split("k")[-1])

    @property
    def block_scale(self) -> bool:
        return self.kind is not None

    @property
    def nsf(self) -> int:
        return NSF[self.scale_vec] if self.scale_vec else 0

    @property
    def regs(self) -> tuple[int, int, int, int]:
        """Registers per lane of (A, B, C, D)."""
        cw = 4 if self.ctype == "f32" else 2
        dw = 4 if self.dtype == "f32" else 2
        return 4, 2, cw, dw

    @property
    def path(self) -> str:
        return "mma_sync.block_scale" if self.block_scale else "mma_sync.fp8"


def _bad(opcode: str, why: str) -> ValueError:
    return ValueError(f"unsupported mma.sync form {opcode!r}: {why}")


def parse_mma_sync(opcode: str) -> MmaSyncForm:
    """Parse the dotted opcode (``mma.sync.aligned....``; operands, if present, are ignored).

    Both qualifier orders are accepted (shape first, or ``kind::``/``block_scale`` first, as
    CUTLASS writes some forms; AMB-MMASYNC-QUALIFIER-ORDER) -- the assembler decides legality.
    """
    text = opcode.strip().split()[0].rstrip(";")
    toks = text.split(".")
    if toks[:2] != ["mma", "sync"]:
        raise _bad(opcode, "not mma.sync")
    rest = toks[2:]
    if "aligned" not in rest:
        raise _bad(opcode, ".aligned is required")
    shape = kind = scale_vec = None
    block_scale = False
    layout: list[str] = []
    types: list[str] = []
    for t in rest:
        if t == "aligned":
            continue
        if t in ("m16n8k32", "m16n8k64"):
            shape = t
        elif t in ("row", "col"):
            layout.append(t)
        elif t.startswith("kind::"):
            kind = t.removeprefix("kind::")
        elif t == "block_scale":
            block_scale = True
        elif t.startswith("scale_vec::"):
            scale_vec = t.removeprefix("scale_vec::")
        elif t in _TYPE_TOKENS:
            types.append(t)
        else:
            raise _bad(opcode, f"qualifier .{t}")
    if shape is None:
        raise _bad(opcode, "shape must be m16n8k32 or m16n8k64")
    if layout != ["row", "col"]:
        raise _bad(opcode, "layout must be .row.col")
    if not block_scale:
        if kind is not None or scale_vec is not None:
            raise _bad(opcode, "kind/scale_vec without .block_scale (kind::f8f6f4 etc. not modelled)")
        if len(types) != 4:
            raise _bad(opcode, "expected .dtype.atype.btype.ctype")
        d, a, b, c = types
        if shape != "m16n8k32" or a not in FP8 or b not in FP8 or d not in ("f32", "f16") or c != d:
            raise _bad(opcode, "plain mma.sync is modelled for m16n8k32 .{f32,f16}.{e4m3,e5m2}x2.{same}")
        return MmaSyncForm(shape, d, a, b, c)
    if kind not in KIND_K:
        raise _bad(opcode, f"kind {kind!r} with .block_scale")
    if len(types) != 5:
        raise _bad(opcode, "expected .dtype.atype.btype.ctype.stype")
    d, a, b, c, s = types
    if scale_vec is None:
        if kind not in DEFAULT_SCALE_VEC:
            raise _bad(opcode, f"kind::{kind} needs an explicit .scale_vec")
        scale_vec = DEFAULT_SCALE_VEC[kind]
    if scale_vec not in NSF:
        raise _bad(opcode, f"scale_vec::{scale_vec}")
    if KIND_K[kind] != int(shape.split("k")[-1]):
        raise _bad(opcode, f"kind::{kind} has shape m16n8k{KIND_K[kind]}")
    if d != "f32" or c != "f32":
        raise _bad(opcode, "block_scale D and C are .f32")
    if (kind, a, b, s, scale_vec) not in _valid_block_scale_combos():
        raise _bad(opcode, "not a row of Table 36")
    return MmaSyncForm(shape, d, a, b, c, kind, s, scale_vec)


@cache
def _valid_block_scale_combos() -> frozenset[tuple[str, str, str, str, str]]:
    """Table 36 as data (``mmacts.spec``): (kind, atype, btype, stype, scale_vec)."""
    cat = catalog.load()
    return frozenset((c.kind, c.atype, c.btype, c.stype, c.scale_vec.split("::")[-1])
                     for c in queries.mma_sync_blockscale_combos(cat))


@cache
def valid_selectors(scale_vec: str) -> dict[str, tuple[int, ...]]:
    """Table 37 as data: valid values of byte-id-a, thread-id-a, byte-id-b, thread-id-b."""
    s = queries.mma_sync_selectors(catalog.load(), scale_vec)
    return {"bida": s.byte_id_a, "tida": s.thread_id_a, "bidb": s.byte_id_b, "tidb": s.thread_id_b}


# ----------------------------------------------------------------------------------- fragments

@dataclass(frozen=True)
class _Where:
    """For every logical element: lane, register and bit shift holding it (arrays of the logical shape)."""

    lane: np.ndarray
    reg: np.ndarray
    shift: np.ndarray


@cache
def _a_where(k: int) -> _Where:
    row, kk = np.meshgrid(np.arange(M), np.arange(k), indexing="ij")
    per = 4 if k == 32 else 8  # elements per register
    slot_bits = 32 // per
    span = k // 2  # k covered by one register pair
    lane = 4 * (row % 8) + (kk % span) // per
    reg = row // 8 + 2 * (kk // span)
    return _Where(lane, reg, (kk % per) * slot_bits)


@cache
def _b_where(k: int) -> _Where:
    kk, col = np.meshgrid(np.arange(k), np.arange(N), indexing="ij")
    per = 4 if k == 32 else 8
    slot_bits = 32 // per
    span = k // 2
    lane = 4 * col + (kk % span) // per
    reg = kk // span
    return _Where(lane, reg, (kk % per) * slot_bits)


@cache
def _cd_where(f16: bool) -> _Where:
    row, col = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")
    lane = 4 * (row % 8) + col // 2
    if f16:
        return _Where(lane, row // 8, 16 * (col % 2))
    return _Where(lane, 2 * (row // 8) + col % 2, np.zeros_like(row))


def _gather(regs: np.ndarray, w: _Where, width: int, extra_shift: int = 0) -> np.ndarray:
    r = np.asarray(regs, dtype=np.uint32)
    words = r[..., w.lane, w.reg]
    return (words >> (w.shift + extra_shift).astype(np.uint32)) & np.uint32((1 << width) - 1)


def _slot_shift(form: MmaSyncForm, etype: str) -> int:
    if form.k == 64:
        return 0
    if etype == "e2m1":
        return FP4_SHIFT_8BIT_SLOT
    if etype in ("e3m2", "e2m3"):
        return FP6_SHIFT
    return 0


def read_a(form: MmaSyncForm, a: np.ndarray) -> np.ndarray:
    """A register image (..., 32, 4) -> A values (..., 16, K) float64."""
    codes = _gather(a, _a_where(form.k), fm.element_bits(form.atype), _slot_shift(form, form.atype))
    return fm.decode_element(codes, form.atype)


def read_b(form: MmaSyncForm, b: np.ndarray) -> np.ndarray:
    """B register image (..., 32, 2) -> B values (..., K, 8) float64."""
    codes = _gather(b, _b_where(form.k), fm.element_bits(form.btype), _slot_shift(form, form.btype))
    return fm.decode_element(codes, form.btype)


def read_c(form: MmaSyncForm, c: np.ndarray) -> np.ndarray:
    """C register image -> C values (..., 16, 8) float64."""
    if form.ctype == "f32":
        return fm.f32_from_bits(_gather(c, _cd_where(False), 32))
    return fm.f16_from_bits(_gather(c, _cd_where(True), 16))


def write_d(form: MmaSyncForm, d: np.ndarray) -> np.ndarray:
    """D values (..., 16, 8) (exact in the D type) -> register image (..., 32, nd) uint32."""
    f16 = form.dtype == "f16"
    w = _cd_where(f16)
    bits = fm.f16_to_bits(d) if f16 else fm.f32_to_bits(d)
    nd = form.regs[3]
    out = np.zeros(d.shape[:-2] + (LANES, nd), dtype=np.uint32)
    # within one bit position the (lane, register) pairs are distinct, so plain assignment works
    for sh in np.unique(w.shift):
        m = w.shift == sh
        out[..., w.lane[m], w.reg[m]] |= bits[..., m] << np.uint32(sh)
    return out


def sfa_lane(row: np.ndarray, tida: int) -> np.ndarray:
    """Lane holding SF_A of A row ``row``: 4 (row % 8) + 2 thread-id-a + row // 8 -- the lane pair thread-id-a
    selects, its lower lane for rows 0-7 and the upper for rows 8-15 (AMB-MMASYNC-SFA-ROW-MAP)."""
    return 4 * (row % 8) + 2 * tida + row // 8


def sfb_lane(col: np.ndarray, tidb: int) -> np.ndarray:
    """Lane holding SF_B of B column ``col``: 4 col + thread-id-b."""
    return 4 * col + tidb


def sf_byte(operand: str, byte_id: int, j: np.ndarray) -> np.ndarray:
    """Byte of operand ``operand``'s (A or B) scale register that holds its SF index j: byte-id + j (9.7.14.3)."""
    return byte_id + j


def read_scales(form: MmaSyncForm, sfa: np.ndarray, sfb: np.ndarray, sel_a: tuple[int, int],
                sel_b: tuple[int, int], ue4m3_reading: str = "nan") -> tuple[np.ndarray, np.ndarray]:
    """scale-a-data / scale-b-data (..., 32) + selectors -> SF_A (..., 16, nsf), SF_B (..., nsf, 8) float64."""
    bida, tida = (int(x) for x in sel_a)
    bidb, tidb = (int(x) for x in sel_b)
    valid = valid_selectors(form.scale_vec)
    for name, v in (("byte-id-a", bida), ("thread-id-a", tida), ("byte-id-b", bidb), ("thread-id-b", tidb)):
        key = {"byte-id-a": "bida", "thread-id-a": "tida", "byte-id-b": "bidb", "thread-id-b": "tidb"}[name]
        if v not in valid[key]:
            raise ValueError(f"{name}={v} is undefined behaviour for scale_vec::{form.scale_vec} (Table 37)")
    nsf = form.nsf
    sfa = np.asarray(sfa, dtype=np.uint32)
    sfb = np.asarray(sfb, dtype=np.uint32)
    r, j = np.meshgrid(np.arange(M), np.arange(nsf), indexing="ij")
    code_a = (sfa[..., sfa_lane(r, tida)] >> (8 * sf_byte("A", bida, j)).astype(np.uint32)) & np.uint32(0xFF)
    j2, n = np.meshgrid(np.arange(nsf), np.arange(N), indexing="ij")
    code_b = (sfb[..., sfb_lane(n, tidb)] >> (8 * sf_byte("B", bidb, j2)).astype(np.uint32)) & np.uint32(0xFF)
    return (fm.decode_scale(code_a, form.stype, ue4m3_reading),
            fm.decode_scale(code_b, form.stype, ue4m3_reading))


def _as_form(q: MmaSyncForm | str) -> MmaSyncForm:
    return parse_mma_sync(q) if isinstance(q, str) else q


def execute_mma_sync(q: MmaSyncForm | str, a: np.ndarray, b: np.ndarray, c: np.ndarray, *,
                     sfa: np.ndarray | None = None, sfb: np.ndarray | None = None,
                     sel_a: tuple[int, int] = (0, 0), sel_b: tuple[int, int] = (0, 0),
                     arch: str, model: str | None = None, ue4m3_reading: str = "nan") -> np.ndarray:
    """One mma.sync per warp: register bits in, D register bits out.

    ``a`` (..., 32, 4), ``b`` (..., 32, 2), ``c`` (..., 32, 4 or 2) uint32 (leading axes: warps);
    ``sfa``/``sfb`` (..., 32) for block_scale forms; ``sel_a`` = (byte-id-a, thread-id-a),
    ``sel_b`` = (byte-id-b, thread-id-b) -- one selector pair for the whole batch (they are
    warp-uniform operands). ``arch`` picks the device profile (:mod:`numerics`); ``model``
    overrides it with a ``reference.numeric_model`` name. Returns D (..., 32, 4 or 2) uint32.
    """
    form = _as_form(q)
    na, nb, nc, _ = form.regs
    a, b, c = (np.asarray(x, dtype=np.uint32) for x in (a, b, c))
    for name, x, n in (("a", a, na), ("b", b, nb), ("c", c, nc)):
        if x.shape[-2:] != (LANES, n):
            raise ValueError(f"mma.sync {name}: expected (..., 32, {n}) registers, got {x.shape}")
    lead = np.broadcast_shapes(a.shape[:-2], b.shape[:-2], c.shape[:-2])
    A, B, C = read_a(form, a), read_b(form, b), read_c(form, c)
    A = np.broadcast_to(A, lead + A.shape[-2:])
    B = np.broadcast_to(B, lead + B.shape[-2:])
    C = np.broadcast_to(C, lead + C.shape[-2:])
    mdl = model or numerics.profile(form.path, arch)
    k = form.k
    out = "fp32" if form.dtype == "f32" else "fp16"
    SA = SB = None
    if form.block_scale:
        if sfa is None or sfb is None:
            raise ValueError("mma.sync block_scale needs scale-a-data and scale-b-data")
        SA, SB = read_scales(form, sfa, sfb, sel_a, sel_b, ue4m3_reading)
        SA = np.broadcast_to(SA, lead + SA.shape[-2:])
        SB = np.broadcast_to(SB, lead + SB.shape[-2:])
    if out == "fp32" and numerics.exact_model(mdl):
        # the exact model's bits from one float64 matrix product where that is provably exact (exact_f32);
        # the other elements (if any) from the model itself
        d, ok = exact_f32.matrix_dot(A, B, C, SA, SB)
        if not ok.all():
            d = d.reshape(-1, M, N)
            w, r, col = np.nonzero(~ok.reshape(-1, M, N))
            a2, b2, c2 = (x.reshape((-1,) + x.shape[-2:]) for x in (A, np.swapaxes(B, -1, -2), C))
            scales = () if SA is None or SB is None else (
                SA.reshape((-1,) + SA.shape[-2:])[w, r], np.swapaxes(SB, -1, -2).reshape(-1, N, form.nsf)[w, col])
            d[w, r, col] = numerics.dot(mdl, a2[w, r], b2[w, col], c2[w, r, col], out, (form.atype, form.btype),
                                        *scales)
        return write_d(form, d.reshape(lead + (M, N)))
    # rows of A against columns of B: V = prod(lead) * 16 * 8 dot products of length K
    av = np.broadcast_to(A[..., :, None, :], lead + (M, N, k)).reshape(-1, k)
    bv = np.broadcast_to(np.swapaxes(B, -1, -2)[..., None, :, :], lead + (M, N, k)).reshape(-1, k)
    cv = C.reshape(-1)
    if SA is not None and SB is not None:
        sav = np.broadcast_to(SA[..., :, None, :], lead + (M, N, form.nsf)).reshape(-1, form.nsf)
        sbv = np.broadcast_to(np.swapaxes(SB, -1, -2)[..., None, :, :], lead + (M, N, form.nsf)).reshape(-1, form.nsf)
        d = numerics.dot(mdl, av, bv, cv, out, (form.atype, form.btype), sav, sbv)
    else:
        d = numerics.dot(mdl, av, bv, cv, out, (form.atype, form.btype))
        if out == "fp16":
            d = _f16_infinities(form, arch, mdl, av, bv, cv, d, lead)
    return write_d(form, d.reshape(lead + (M, N)))


def _f16_infinities(form: MmaSyncForm, arch: str, mdl: str | object, av: np.ndarray, bv: np.ndarray,
                    cv: np.ndarray, d: np.ndarray, lead: tuple[int, ...]) -> np.ndarray:
    """An f16 accumulation's infinities as silicon treats them (:func:`numerics.ieee_nan`): a block
    that overflows to +-Inf meets an opposite infinity as NaN. Where the record decides it
    (``numerics.F16_INF_RULE_DECIDED``) those elements become NaN; elsewhere a D element where this
    reading and the model's input-only pre-check differ is refused, naming it and the deciding probe."""
    nan = numerics.ieee_nan(mdl, av, bv, cv, "fp16", (form.atype, form.btype))
    differ = nan != np.isnan(d)
    if not differ.any():
        return d
    name = mdl if isinstance(mdl, str) else getattr(mdl, "name", str(mdl))
    fam = numerics.arch_family(arch)
    i = int(np.flatnonzero(differ)[0])
    *w, row, col = (int(x) for x in np.unravel_index(i, lead + (M, N)))
    where = f"D({row}, {col})" + (f" of warp {w[0] if len(w) == 1 else tuple(w)}" if w else "")
    if np.any(np.isnan(d) & ~nan):  # the pre-check's NaNs are IEEE NaNs too: never expected
        raise VmError(f"mma.sync {form.dtype} on {arch}: {where}: the model's NaN is not a NaN of its IEEE blocks")
    if (form.path, fam, name) in numerics.F16_INF_RULE_DECIDED:
        return np.where(nan, np.nan, d)
    raise VmUnsupported(
        f"mma.sync {form.dtype}.{form.atype}.{form.btype}.{form.ctype} on {arch} (model {name}): {where}: an f16 "
        f"block overflows to +-Inf against an opposite infinity, and whether that gives NaN (H100 silicon) "
        f"or +-Inf is not decided for {fam} (AMB-MMASYNC-F16-OVERFLOW-INF); probe: {numerics.F16_INF_PROBE}")
