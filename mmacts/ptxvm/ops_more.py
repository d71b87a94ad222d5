"""More PTX instructions: bit scans and logic (bfind, lop3, mul24, sad), warp-level ``.sync``
instructions (shfl.sync, vote.sync, activemask, bar.warp.sync), atomics (atom / red on shared and
global memory) and the packed narrow-float forms of cvt (fp8, and sm_100a's fp6, fp4 and ue8m0).

Why these are exact too: they are the building blocks of data movement and packing around MMA
(fp8 operands are made with ``cvt.rn.satfinite.e4m3x2.f32``; fragments move between lanes with
``shfl.sync``); the silicon corpus (``mmacts/validation/corpus``) checks each against an H100 bit for bit, except
the sm_100a-only conversions (fp6, fp4, ue8m0: no H100 runs them), whose tests work from the ISA's text.
Warp instructions follow the ISA's ``membermask`` rule: a thread executes once every thread named by
its mask has arrived (``Machine.warp_sync``); what the ISA leaves undefined (a mask without the
executing lane, naming an exited lane, reading a lane that does not execute the shuffle) is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mmacts.ptxvm import fpnum, mufu, ops_core
from mmacts.ptxvm.errors import VmError, VmUnsupported
from mmacts.ptxvm.handlers import handler
from mmacts.ptxvm.machine import Machine
from mmacts.ptxvm.memory import SHARED_WINDOW, WINDOW_SIZE
from mmacts.ptxvm.parse import Instr, Operand
from mmacts.ptxvm.ptxtypes import PtxType, ptx_type
from mmacts.ptxvm.scheduler import BLOCKED

U64 = np.uint64
U32 = ptx_type("u32")
PRED = ptx_type("pred")


def _ty(ins: Instr) -> PtxType:
    return ops_core._ty(ins)


# ------------------------------------------------------------------------------------------ bits
@handler("bfind")
def _bfind(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """bfind{.shiftamt}.{u32,s32,u64,s64} d, a: bit position of the most significant non-sign bit
    (for a negative signed value, the most significant 0); 0xFFFFFFFF when there is none.
    ``.shiftamt`` gives the left shift that moves it to the msb instead."""
    t = _ty(ins)
    d, a = ins.operands
    x = ops_core._as_u(m.read(a, t, act), t).astype(np.uint64)
    if t.signed:
        neg = (x >> U64(t.bits - 1)) & U64(1) == 1
        x = np.where(neg, ~x & U64(ops_core._mask(t.bits)), x)
    n = ops_core._bitlen(x, t.bits)
    pos = n - 1
    if ins.has("shiftamt"):
        pos = (t.bits - 1) - pos
    r = np.where(n == 0, np.int64(0xFFFFFFFF), pos).astype(np.uint32)
    m.write(d, U32, act, r)


@handler("lop3")
def _lop3(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """lop3.b32 d, a, b, c, immLut: bit i of d is bit ``(a_i << 2) | (b_i << 1) | c_i`` of immLut."""
    if len(ins.operands) != 5 or ins.operands[0].kind == "vec":
        raise VmUnsupported(f"{ins.opcode}: only the form lop3.b32 d, a, b, c, immLut is implemented")
    t = _ty(ins)
    d, a, b, c, lut = ins.operands
    if lut.kind != "imm":
        raise VmError(f"{ins.opcode}: immLut must be an immediate")
    x, y, z = (ops_core._as_u(m.read(o, t, act), t) for o in (a, b, c))
    r = np.zeros(len(act), dtype=t.udtype)
    for k in range(8):
        if (lut.value >> k) & 1:
            r |= (x if k & 4 else ~x) & (y if k & 2 else ~y) & (z if k & 1 else ~z)
    m.write(d, t, act, r.view(t.dtype))


@handler("mul24")
def _mul24(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """mul24.{lo,hi}.{u32,s32}: the 48-bit product of the operands' low 24 bits (sign-extended for
    .s32); .lo its low 32 bits, .hi bits 47..16."""
    t = _ty(ins)
    d, a, b = ins.operands
    x, y = (ops_core._as_u(m.read(o, t, act), t).astype(np.int64) & 0xFFFFFF for o in (a, b))
    if t.signed:
        x, y = np.where(x >= 1 << 23, x - (1 << 24), x), np.where(y >= 1 << 23, y - (1 << 24), y)
    p = (x * y).view(np.uint64)
    r = (p >> U64(16)) if ins.has("hi") else p
    m.write(d, t, act, (r & U64(0xFFFFFFFF)).astype(np.uint32).view(t.dtype))


@handler("sad")
def _sad(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """sad.type d, a, b, c: ``d = c + |a - b|`` (wrapping at the type's width)."""
    t = _ty(ins)
    d, a, b, c = ins.operands
    x, y = m.read(a, t, act), m.read(b, t, act)
    z = ops_core._as_u(m.read(c, t, act), t)
    big = np.maximum(x, y)
    small = np.minimum(x, y)
    diff = ops_core._as_u(big, t) - ops_core._as_u(small, t)
    m.write(d, t, act, (z + diff).view(t.dtype))


# ------------------------------------------------------------------------------------------ warp
def _member_masks(m: Machine, ins: Instr, op, act: np.ndarray) -> np.ndarray:
    return m.read(op, U32, act).astype(np.uint32)


def _warp_groups(m: Machine, run: np.ndarray) -> tuple[np.ndarray, int]:
    """Per executing thread, the index of its warp among the executing warps, and how many."""
    gw = m.gwarp[run]
    if gw[0] == gw[-1]:
        return np.zeros(len(run), dtype=np.int64), 1
    uniq, inv = np.unique(gw, return_inverse=True)
    return inv, len(uniq)


def _lane_bits(m: Machine, run: np.ndarray) -> np.ndarray:
    return np.left_shift(np.uint32(1), m.lane[run].astype(np.uint32))


def _or_per_warp(bits: np.ndarray, wi: np.ndarray, nw: int) -> np.ndarray:
    out = np.zeros(nw, dtype=np.uint32)
    np.bitwise_or.at(out, wi, bits)
    return out


@handler("shfl")
def _shfl(m: Machine, ins: Instr, act: np.ndarray) -> bool:
    """shfl.sync.{up,down,bfly,idx}.b32 d[|p], a, b, c, membermask (9.7.8.6), the ISA's pseudo-code:
    ``c[4:0]`` is the clamp, ``c[12:8]`` the segment mask; a source lane out of range gives the
    thread its own ``a`` and ``p`` false."""
    if not ins.has("sync"):
        raise VmUnsupported(f"{ins.opcode}: only shfl.sync is implemented (shfl without .sync is not on sm_70+)")
    mode = next((p for p in ins.parts[1:] if p in ("up", "down", "bfly", "idx")), None)
    if mode is None or _ty(ins).bits != 32:
        raise VmUnsupported(ins.opcode)
    dst, a, b, c, mm = ins.operands
    run = m.warp_sync(ins, act, _member_masks(m, ins, mm, act))
    if len(run):
        val = m.read(a, U32, run)
        bval = m.read(b, U32, run).astype(np.int64) & 31
        cv = m.read(c, U32, run).astype(np.int64)
        cval, seg = cv & 31, (cv >> 8) & 31
        lane = m.lane[run].astype(np.int64)
        max_lane = (lane & seg) | (cval & ~seg)
        min_lane = lane & seg
        if mode == "up":
            j = lane - bval
            ok = j >= max_lane
        elif mode == "down":
            j = lane + bval
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bval
            ok = j <= max_lane
        else:
            j = min_lane | (bval & ~seg)
            ok = j <= max_lane
        j = np.where(ok, j, lane)
        wi, nw = _warp_groups(m, run)
        src = np.zeros((nw, 32), dtype=np.uint32)
        have = np.zeros((nw, 32), dtype=bool)
        src[wi, lane] = val
        have[wi, lane] = True
        if not have[wi, j].all():
            i = int(np.flatnonzero(~have[wi, j])[0])
            raise VmError(f"{ins.opcode} reads lane {int(j[i])}, which does not execute it (the value is "
                          f"unpredictable)@thread{i}")
        r = src[wi, j]
        if dst.kind == "vec":
            m.write(dst.items[0], U32, run, r)
            m.write(dst.items[1], PRED, run, ok)
        else:
            m.write(dst, U32, run, r)
        m.pc[run] += 1
    return True


@handler("vote")
def _vote(m: Machine, ins: Instr, act: np.ndarray) -> bool:
    """vote.sync.{all,any,uni}.pred d, {!}p, membermask and vote.sync.ballot.b32 d, {!}p, membermask
    over the threads of the mask (9.7.8.5)."""
    if not ins.has("sync"):
        raise VmUnsupported(f"{ins.opcode}: only vote.sync is implemented (vote without .sync is not on sm_70+)")
    mode = next((p for p in ins.parts[1:] if p in ("all", "any", "uni", "ballot")), None)
    if mode is None:
        raise VmUnsupported(ins.opcode)
    d, p, mm = ins.operands
    masks = _member_masks(m, ins, mm, act)
    run = m.warp_sync(ins, act, masks)
    if len(run):
        masks = masks[np.isin(act, run)] if len(run) != len(act) else masks
        pv = m.read(p, PRED, run)
        wi, nw = _warp_groups(m, run)
        bits = _lane_bits(m, run)
        ex = _or_per_warp(bits, wi, nw)[wi] & masks
        ballot = _or_per_warp(np.where(pv, bits, np.uint32(0)), wi, nw)[wi] & masks
        if mode == "ballot":
            m.write(d, U32, run, ballot)
        else:
            r = {"all": ballot == ex, "any": ballot != 0, "uni": (ballot == ex) | (ballot == 0)}[mode]
            m.write(d, PRED, run, r)
        m.pc[run] += 1
    return True


@handler("activemask")
def _activemask(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """activemask.b32 d: the lanes of the warp executing this instruction together."""
    wi, nw = _warp_groups(m, act)
    m.write(ins.operands[0], U32, act, _or_per_warp(_lane_bits(m, act), wi, nw)[wi])


@handler("bar.warp")
def _bar_warp(m: Machine, ins: Instr, act: np.ndarray) -> bool:
    """bar.warp.sync membermask: wait until every thread of the mask has arrived."""
    if ins.opcode != "bar.warp.sync":
        raise VmUnsupported(ins.opcode)
    run = m.warp_sync(ins, act, _member_masks(m, ins, ins.operands[0], act))
    m.pc[run] += 1
    return True


# ------------------------------------------------------------------------------------------ atomics
_ATOM_OPS = ("and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max")


@handler("atom", "red")
def _atom(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """atom{.space}.op.type d, [a], b{, c} and red{.space}.op.type [a], b on .shared / .global /
    generic addresses (9.7.13.5-6). The VM applies the threads' operations one at a time in thread
    order (a valid serialisation: each is atomic); ``atom`` returns the value each one found."""
    if any(p in ("v2", "v4", "v8", "noftz") or p.startswith(("bf16", "f16")) for p in ins.parts):
        raise VmUnsupported(f"{ins.opcode} is not implemented")
    op = next((p for p in ins.parts[1:] if p in _ATOM_OPS), None)
    if op is None:
        raise VmUnsupported(f"{ins.opcode}: no operation")
    t = _ty(ins)
    if t.bits not in (32, 64) or (t.kind == "f" and op != "add"):
        raise VmUnsupported(f"{ins.opcode} is not implemented")
    sp = ops_core._space(ins)
    if sp not in ("shared", "shared::cluster", "global", "generic"):
        raise VmUnsupported(f"{ins.opcode}: state space .{sp}")
    ops = ins.operands
    if ins.base == "atom":
        dst, aop, rest = ops[0], ops[1], ops[2:]
    else:
        if op == "cas" or op == "exch":
            raise VmUnsupported(f"{ins.opcode} is not implemented")
        dst, aop, rest = None, ops[0], ops[1:]
    if len(rest) != (2 if op == "cas" else 1):
        raise VmError(f"{ins.opcode}: wrong number of operands")
    addrs = m.address(aop, act)
    nb = t.nbytes
    old_bits = m.load(sp, addrs, nb, act).view(t.udtype).reshape(-1)
    bv = ops_core._as_u(m.read(rest[0], t, act), t)
    cv = ops_core._as_u(m.read(rest[1], t, act), t) if op == "cas" else None
    mask = ops_core._mask(t.bits)
    owner = _atom_owner(m, sp, addrs, act)
    cur: dict[tuple[int, int], int] = {}
    first: dict[tuple[int, int], int] = {}
    olds = np.empty(len(act), dtype=t.udtype)
    for i in range(len(act)):
        key = (int(owner[i]), int(addrs[i]))
        o = cur.get(key)
        if o is None:
            o = int(old_bits[i])
            first[key] = i
        olds[i] = o
        cur[key] = _atom_apply(op, t, o, int(bv[i]), int(cv[i]) if cv is not None else 0, mask)
    idx = np.array(list(first.values()), dtype=np.int64)
    data = np.array(list(cur.values()), dtype=t.udtype).view(np.uint8).reshape(len(idx), nb)
    m.store(sp, addrs[idx], data, act[idx], ins)
    if dst is not None:
        m.write(dst, t, act, olds.view(t.dtype))


def _atom_owner(m: Machine, sp: str, addrs: np.ndarray, act: np.ndarray) -> np.ndarray:
    """Per thread, the chunk CTA whose shared memory its atomic address names (its own for .shared, the one the
    rank bits name for .shared::cluster and generic shared addresses), -1 for global: with the address, the key
    that serialises the threads' operations on one location."""
    if sp in ("shared", "shared::cluster"):
        return m.shared_target(addrs, act, "atomic", sp == "shared::cluster")[0]
    if sp == "generic":
        in_sh = (addrs - U64(SHARED_WINDOW)) < U64(WINDOW_SIZE)
        owner = np.full(len(act), -1)
        if in_sh.any():
            owner[in_sh] = m.shared_target(addrs[in_sh] - U64(SHARED_WINDOW), act[in_sh], "atomic", True)[0]
        return owner
    return np.full(len(act), -1)


def _atom_apply(op: str, t: PtxType, old: int, b: int, c: int, mask: int) -> int:
    """One atomic operation on bit patterns ``old`` and ``b`` (``c``: cas's new value)."""
    if op == "and":
        return old & b
    if op == "or":
        return old | b
    if op == "xor":
        return old ^ b
    if op == "exch":
        return b
    if op == "cas":
        return c if old == b else old
    if op == "inc":
        return 0 if old >= b else (old + 1) & mask
    if op == "dec":
        return b if old == 0 or old > b else old - 1
    if t.kind == "f":  # add.f32 / add.f64: round to nearest even (f32: subnormals flushed, 9.7.13.5)
        fd = np.dtype(f"float{t.bits}")
        ud = np.dtype(f"uint{t.bits}")
        x, y = np.array([old], ud).view(fd), np.array([b], ud).view(fd)
        if t.bits == 32:
            x, y = ops_core._ftz(x), ops_core._ftz(y)
        with np.errstate(all="ignore"):
            r = x + y
        if t.bits == 32:
            r = ops_core._ftz(r)
        return int(r.view(ud)[0])
    if t.signed:
        half = 1 << (t.bits - 1)
        so, sb = (old ^ half) - half, (b ^ half) - half
    else:
        so, sb = old, b
    if op == "add":
        return (old + b) & mask
    if op == "min":
        return old if so <= sb else b
    if op == "max":
        return old if so >= sb else b
    raise VmUnsupported(f"atom.{op}")


# ------------------------------------------------------------------------------------------ narrow-float cvt
def _minifloat_values(ebits: int, mbits: int, bias: int, top: int) -> np.ndarray:
    """Values (float64) of the positive codes 0..top of a sign/exponent/mantissa format."""
    codes = np.arange(top + 1)
    e, mant = codes >> mbits, codes & ((1 << mbits) - 1)
    sub = mant * 2.0 ** (1 - bias - mbits)
    norm = (1 + mant / 2.0**mbits) * 2.0 ** (e - bias)
    return np.where(e == 0, sub, norm)


@dataclass(frozen=True)
class _Narrow:
    """One packed narrow float type of cvt (9.7.9.21): its finite positive values by code, sign bit,
    NaN code (``None``: the format has no NaN, and .satfinite turns a NaN into +MAX_NORM), the width of
    one element in the packed register, and the packed register's type."""

    values: np.ndarray
    sign: int
    nan: int | None
    width: int
    packed: str


_NARROW = {
    "e4m3x2": _Narrow(_minifloat_values(4, 3, 7, 0x7E), 0x80, 0x7F, 8, "b16"),
    "e5m2x2": _Narrow(_minifloat_values(5, 2, 15, 0x7B), 0x80, 0x7F, 8, "b16"),
    "e2m3x2": _Narrow(_minifloat_values(2, 3, 1, 0x1F), 0x20, None, 8, "b16"),
    "e3m2x2": _Narrow(_minifloat_values(3, 2, 3, 0x1F), 0x20, None, 8, "b16"),
    "e2m1x2": _Narrow(_minifloat_values(2, 1, 1, 0x7), 0x8, None, 4, "b8"),
}
_NOT_IMPLEMENTED_CVT = frozenset({"e2m1x4", "e4m3x4", "e5m2x4", "e2m3x4", "e3m2x4", "s2f6x2", "rs", "rna"})
UE8M0_REGISTER = "AMB-CVT-UE8M0-EDGES"
"""The register entry of the .ue8m0x2 inputs the ISA leaves open (the VM refuses them)."""
UE8M0_ZERO_BF16 = {"clamp": 0x0040, "shift": 0x0000}
"""bf16 bits of ue8m0 code 0x00 under the readings of :data:`UE8M0_REGISTER` that give them (2^-127 as a bf16
subnormal, or +0); ``cvt.rn.bf16x2.ue8m0x2`` takes one only where the launch's profile names it
(``{"readings": {UE8M0_REGISTER: "clamp"}}``), else refuses code 0x00. Why: the SM120 block-scale-factor epilogue
(CUTLASS example 79b) converts a pair whose upper code is always 0x00 and discards that half; the peer runs the kernel
under each reading and asks that the outputs agree, so no verdict rests on one."""


def _to_narrow(v: np.ndarray, fmt: str, relu: bool) -> np.ndarray:
    """float64 values (each exactly an f32, f16 or bf16) to codes of ``fmt``: round to nearest even,
    .satfinite (beyond the largest finite value, infinities included: the sign-preserved largest);
    NaN -> the NaN code, or +MAX_NORM where the format has no NaN (e2m1, e2m3, e3m2); .relu: negatives
    (and -0) -> +0."""
    f = _NARROW[fmt]
    vals = f.values
    neg = np.signbit(v)
    ax = np.abs(v)
    hi = np.searchsorted(vals, np.minimum(ax, vals[-1]), side="left")
    lo = np.maximum(hi - 1, 0)
    with np.errstate(invalid="ignore"):  # NaN lanes: replaced by the NaN code below
        d_lo, d_hi = ax - vals[lo], vals[np.minimum(hi, len(vals) - 1)] - ax
    pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0))
    code = np.where(pick_hi, hi, lo)
    code = np.where(ax >= vals[-1], len(vals) - 1, code).astype(np.uint32)
    code = np.where(neg, code | np.uint32(f.sign), code)
    if relu:
        code = np.where(neg, np.uint32(0), code)
    nan = f.nan if f.nan is not None else len(vals) - 1
    return np.where(np.isnan(v), np.uint32(nan), code).astype(np.uint32)


def _narrow_to_f16(codes: np.ndarray, fmt: str) -> np.ndarray:
    """Codes of ``fmt`` to f16 bits (exact: every value of these formats is an f16; NaN -> 0x7FFF;
    e5m2 infinities stay infinite)."""
    if fmt == "e5m2x2":
        bits = (codes.astype(np.uint32) << np.uint32(8)) & np.uint32(0xFFFF)
        nan = (codes & 0x7F) > 0x7C
        return np.where(nan, np.uint32(0x7FFF), bits).astype(np.uint16)
    f = _NARROW[fmt]
    mag = codes & (f.sign - 1)
    h = f.values[np.minimum(mag, len(f.values) - 1)].astype(np.float16)
    h = np.where(codes & f.sign, -h, h).astype(np.float16).view(np.uint16)
    if f.nan is not None:
        h = np.where(mag == f.nan, np.uint16(0x7FFF), h)
    return h.astype(np.uint16)


def _pair_operands(m: Machine, ins: Instr, act: np.ndarray, src: str) -> tuple[np.ndarray, np.ndarray]:
    """The two float64 values a packed conversion converts: ``a``, ``b`` of ``.f32`` (``d, a, b``), or
    the upper and lower halves of one ``.f16x2`` / ``.bf16x2`` operand (``d, a``)."""
    ops = ins.operands
    if src == "f32" and len(ops) == 3:
        f32 = ptx_type("f32")
        with np.errstate(invalid="ignore"):
            return (m.read(ops[1], f32, act).astype(np.float64), m.read(ops[2], f32, act).astype(np.float64))
    if src in ("f16x2", "bf16x2") and len(ops) == 2:
        fmt = fpnum.F16 if src == "f16x2" else fpnum.BF16
        bits = m.read(ops[1], U32, act)
        return fpnum.decode(bits >> np.uint32(16), fmt), fpnum.decode(bits & np.uint32(0xFFFF), fmt)
    raise VmUnsupported(f"{ins.opcode} with {len(ops)} operands is not implemented")


def _only(ins: Instr, allowed: set[str]) -> None:
    extra = [p for p in ins.parts[1:-2] if p not in allowed]
    if extra:
        raise VmUnsupported(f"{ins.opcode}: qualifier .{extra[0]} is not implemented for this conversion")


def _cvt_to_narrow(m: Machine, ins: Instr, act: np.ndarray, fmt: str, src: str) -> None:
    """cvt.rn.satfinite{.relu}.<fmt>.{f32,f16x2,bf16x2}: ``a`` (or the upper half of ``a``) to the upper
    element of ``d``, ``b`` (the lower half) to the lower; fp6 elements sit in the low 6 bits of their
    byte, the top two bits zero; e2m1x2 writes one byte, ``a`` in bits 7:4."""
    _only(ins, {"rn", "satfinite", "relu"})
    if not ins.has("rn"):
        raise VmUnsupported(f"{ins.opcode}: conversions to .{fmt} round with .rn")
    if not ins.has("satfinite"):
        raise VmError(f"{ins.opcode}: conversions to .{fmt} require .satfinite (9.7.9.21)")
    hi, lo = _pair_operands(m, ins, act, src)
    relu = ins.has("relu")
    f = _NARROW[fmt]
    r = (_to_narrow(hi, fmt, relu) << np.uint32(f.width)) | _to_narrow(lo, fmt, relu)
    t = ptx_type(f.packed)
    m.write(ins.operands[0], t, act, r.astype(t.udtype))


def _cvt_from_narrow(m: Machine, ins: Instr, act: np.ndarray, fmt: str) -> None:
    """cvt.rn{.relu}.f16x2.<fmt> d, a: the upper element of ``a`` to the upper half of ``d``. fp6 inputs
    must have their byte's top two bits zero (the ISA defines no other input: refused)."""
    _only(ins, {"rn", "relu"})
    if not ins.has("rn") or len(ins.operands) != 2:
        raise VmUnsupported(f"{ins.opcode}: only cvt.rn{{.relu}}.f16x2.{fmt} d, a is defined")
    f = _NARROW[fmt]
    raw = m.read(ins.operands[1], ptx_type(f.packed), act).astype(np.uint32)
    el = np.uint32((1 << f.width) - 1)
    codes = [(raw >> np.uint32(f.width)) & el, raw & el]
    if f.sign == 0x20 and ((codes[0] | codes[1]) & 0xC0).any():
        raise VmUnsupported(f"{ins.opcode}: an input byte with its two top bits set (the ISA converts only "
                            f"values whose 2 MSBs are 0)")
    halves = [_narrow_to_f16(c, fmt).astype(np.uint32) for c in codes]
    if ins.has("relu"):
        halves = [np.where((h & 0x8000) != 0, np.uint32(0), h) for h in halves]
    m.write(ins.operands[0], U32, act, (halves[0] << np.uint32(16)) | halves[1])


def _to_ue8m0(v: np.ndarray, mode: str, satfinite: bool, ins: Instr) -> np.ndarray:
    """float64 values (each exactly an f32 or bf16) to .ue8m0 codes (2^(code - 127), 0xFF NaN; no sign,
    no zero, no infinity): .rz the largest power of two not above the value, .rp the smallest not below;
    NaN -> 0xFF; with .satfinite a value beyond MAX_NORM (2^127, code 0xFE; +inf included) -> 0xFE.
    What the ISA leaves open is refused by name (register :data:`UE8M0_REGISTER`): a negative input
    (the format has no sign), .rz of a value below 2^-127 (zero included: nothing lies toward zero), and
    a result beyond 2^127 without .satfinite (the format has no infinity). .rp of zero or of a value below
    2^-127 is 2^-127 (code 0), the smallest value not below it."""
    nan = np.isnan(v)
    w = np.where(nan, 1.0, v)
    if (w < 0).any():
        raise VmUnsupported(f"{ins.opcode}: a negative input (.ue8m0 has no sign and the ISA does not say what a "
                            f"negative value converts to; {UE8M0_REGISTER})")
    tiny = w < 2.0**-127
    if mode == "rz" and tiny.any():
        raise VmUnsupported(f"{ins.opcode}: .rz of a value below 2^-127 (no .ue8m0 value lies toward zero; "
                            f"{UE8M0_REGISTER})")
    fin = np.isfinite(w)
    frac, k = np.frexp(np.where(fin & ~tiny, w, 1.0))  # w = frac * 2^k, frac in [0.5, 1)
    e = k - 1 + ((mode == "rp") & (frac != 0.5))
    code = np.where(tiny, 0, e + 127)
    over = (code > 254) | ~fin
    if over.any() and not satfinite:
        raise VmUnsupported(f"{ins.opcode}: a result beyond 2^127 without .satfinite (.ue8m0 has no infinity; "
                            f"{UE8M0_REGISTER})")
    code = np.where(over, 254, code)
    return np.where(nan, 255, code).astype(np.uint32)


def _cvt_to_ue8m0(m: Machine, ins: Instr, act: np.ndarray, src: str) -> None:
    """cvt.{rz,rp}{.satfinite}.ue8m0x2.{f32,bf16x2}: ``a`` (the upper half of ``a``) to bits 15:8 of ``d``.
    .relu appears in the ISA's notes for the .bf16x2 source, but its .relu paragraph does not cover
    .ue8m0x2 (no zero to clamp to): refused."""
    _only(ins, {"rz", "rp", "satfinite"})
    mode = "rz" if ins.has("rz") else "rp" if ins.has("rp") else None
    if mode is None:
        raise VmError(f"{ins.opcode}: conversions to .ue8m0x2 need .rz or .rp (9.7.9.21)")
    if src not in ("f32", "bf16x2"):
        raise VmUnsupported(f"{ins.opcode}: .ue8m0x2 converts from .f32 or .bf16x2")
    hi, lo = _pair_operands(m, ins, act, src)
    sat = ins.has("satfinite")
    r = (_to_ue8m0(hi, mode, sat, ins) << np.uint32(8)) | _to_ue8m0(lo, mode, sat, ins)
    m.write(ins.operands[0], ptx_type("b16"), act, r.astype(np.uint16))


def _cvt_from_ue8m0(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """cvt.rn.bf16x2.ue8m0x2 d, a: the upper byte of ``a`` to the upper half of ``d``; code c (1..254) is
    2^(c - 127), the bf16 with exponent field c. Codes 0 (2^-127, a bf16 subnormal) and 0xFF (NaN) are
    refused: the ISA gives neither's bf16 bits, and CUTLASS reads this instruction as a plain shift
    (``float_ue8m0_t::convert_to_float``), which would give 0 and +inf (register :data:`UE8M0_REGISTER`)."""
    _only(ins, {"rn"})
    if not ins.has("rn") or len(ins.operands) != 2:
        raise VmUnsupported(f"{ins.opcode}: only cvt.rn.bf16x2.ue8m0x2 d, a is defined")
    raw = m.read(ins.operands[1], ptx_type("b16"), act).astype(np.uint32)
    codes = [raw >> np.uint32(8), raw & np.uint32(0xFF)]
    zero = UE8M0_ZERO_BF16.get(m.reading(UE8M0_REGISTER))
    if zero is not None and not any((c == 0xFF).any() for c in codes):  # the caller's named reading for code 0
        h = [np.where(c == 0, np.uint32(zero), c << np.uint32(7)) for c in codes]
        m.write(ins.operands[0], U32, act, (h[0] << np.uint32(16)) | h[1])
        return
    for c in codes:
        if ((c == 0) | (c == 0xFF)).any():
            raise VmUnsupported(f"{ins.opcode}: .ue8m0 code {int(c[(c == 0) | (c == 0xFF)][0]):#04x} (the ISA "
                                f"gives its .bf16 bits nowhere; {UE8M0_REGISTER})")
    m.write(ins.operands[0], U32, act, (codes[0] << np.uint32(23)) | (codes[1] << np.uint32(7)))


_core_cvt = ops_core._cvt


@handler("cvt")
def _cvt(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """cvt, with the packed narrow-float forms (PTX ISA 9.1, 9.7.9.21) added to ops_core's:
    cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2,e2m3x2,e3m2x2,e2m1x2}.{f32,f16x2,bf16x2},
    cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2,e2m3x2,e3m2x2,e2m1x2}, cvt.{rz,rp}{.satfinite}.ue8m0x2.{f32,bf16x2}
    and cvt.rn.bf16x2.ue8m0x2. Operand order, as the ISA's Semantics block has it: ``a`` (or the upper
    half of a packed source) goes to the upper element of ``d``. The .x4 forms, ``.rs``, ``.rna`` to these
    types and .s2f6x2 are refused by name."""
    dst, src = ins.parts[-2], ins.parts[-1]
    if dst in _NOT_IMPLEMENTED_CVT or src in _NOT_IMPLEMENTED_CVT or (
            (dst in _NARROW or dst == "ue8m0x2") and any(p in _NOT_IMPLEMENTED_CVT for p in ins.parts)):
        raise VmUnsupported(f"{ins.opcode} is not implemented")
    if dst in _NARROW:
        _cvt_to_narrow(m, ins, act, dst, src)
    elif src in _NARROW and dst == "f16x2":
        _cvt_from_narrow(m, ins, act, src)
    elif dst == "ue8m0x2":
        _cvt_to_ue8m0(m, ins, act, src)
    elif src == "ue8m0x2" and dst == "bf16x2":
        _cvt_from_ue8m0(m, ins, act)
    elif src in _NARROW or src == "ue8m0x2":
        raise VmUnsupported(f"{ins.opcode} is not implemented")
    else:
        _core_cvt(m, ins, act)


# ------------------------------------------------------------------------------------------ rcp.approx
@handler("rcp")
def _rcp(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """rcp.approx{.ftz}.f32 d, a (9.7.3.13): the multi-function unit's reciprocal, whose bits the ISA does
    not give (at most 1 ulp from 1/a; +-0 -> +-inf, +-inf -> +-0, NaN -> NaN): produced from the table
    recorded on silicon (:mod:`mmacts.ptxvm.mufu`), refused by name without one. The IEEE forms
    (rcp.{rn,rz,rm,rp}) and rcp.approx.ftz.f64 are not implemented."""
    if ins.opcode not in ("rcp.approx.f32", "rcp.approx.ftz.f32"):
        raise VmUnsupported(f"{ins.opcode} is not implemented (the VM has rcp.approx{{.ftz}}.f32 only)")
    d, a = ins.operands
    f32 = ptx_type("f32")
    bits = m.read(a, f32, act).view(np.uint32)
    m.write(d, f32, act, mufu.rcp_approx(bits, ins.has("ftz")).view(np.float32))


# ------------------------------------------------------------------------------------------ bar.red
@dataclass
class _RedArrival:
    threads: np.ndarray
    values: np.ndarray
    dest: Operand
    op: str


class _BarRedState:
    """Per (CTA, barrier) the arrivals of the barrier's current bar.red phase."""

    def __init__(self, _m: Machine) -> None:
        self.phase: dict[tuple[int, int], list[_RedArrival]] = {}


@handler("bar.red", "barrier.red", "bar.cta.red", "barrier.cta.red")
def _bar_red(m: Machine, ins: Instr, act: np.ndarray) -> bool:
    """``barrier{.cta}.red.popc{.aligned}.u32 d, a{, b}, {!}c`` / ``.red.{and,or}{.aligned}.pred p, a{, b},
    {!}c`` and the ``bar{.cta}.red`` spellings (9.7.13.1): a ``bar.sync`` on barrier ``a`` (``b`` threads,
    default all of the CTA) that also reduces the predicate ``c`` over the participating threads: .popc
    counts the true ones, .and / .or combine them; every participant receives the result.

    How, without a hook in the barrier machinery: each arrival records its predicates and destination,
    then rewrites every recorded participant's destination with the reduction over the phase so far. A
    waiting thread cannot read its register, so what it sees on release is the reduction over every
    participant. A phase's records end when its threads have left the barrier. The ISA leaves mixing
    bar.red with bar.sync / bar.arrive on one barrier unpredictable and requires one operator: errors."""
    op = next((p for p in ins.parts[1:] if p in ("popc", "and", "or")), None)
    want = "u32" if op == "popc" else "pred"
    if op is None or ins.parts[-1] != want:
        raise VmUnsupported(f"{ins.opcode}: expected .red.popc.u32 or .red.{{and,or}}.pred")
    ops = ins.operands
    if len(ops) not in (3, 4):
        raise VmError(f"{ins.opcode} takes d, a{{, b}}, {{!}}c")
    bid = m.read(ops[1], U32, act)
    cnt = m.read(ops[2], U32, act) if len(ops) == 4 else np.zeros(len(act), dtype=np.uint32)
    if len(np.unique(bid)) != 1 or len(np.unique(cnt)) != 1:
        raise VmError(f"threads of one {ins.opcode} name different barriers or thread counts")
    b, count = int(bid[0]), int(cnt[0])
    if b > 15 or count % 32:
        raise VmError(f"{ins.opcode}: barrier {b} / thread count {count} (0..15, a multiple of the warp size)")
    if ins.base == "bar" or ins.has("aligned"):
        m.check_converged(ins, act)
    pred = m.read(ops[-1], PRED, act)
    st = m.hook("bar.red", _BarRedState)
    for c in np.unique(m.cta[act]):
        key = (int(c), b)
        mine = m.cta[act] == c
        waiting = np.flatnonzero((m.status == BLOCKED) & (m.cta == c) & (m.bar_id == b))
        phase = [r for r in st.phase.get(key, []) if np.isin(r.threads, waiting).all()]
        if phase and phase[0].op != op:
            raise VmError(f"{ins.opcode}: barrier {b} reduces with .{phase[0].op} in this phase (one operator)")
        known = np.concatenate([r.threads for r in phase]) if phase else np.zeros(0, dtype=np.int64)
        if not np.isin(waiting, known).all():
            raise VmError(f"{ins.opcode}: barrier {b} has threads waiting in bar.sync / bar.arrive (mixing them with "
                          f"bar.red is unpredictable, 9.7.13.1)")
        phase.append(_RedArrival(act[mine], pred[mine], ops[0], op))
        st.phase[key] = phase
    m.block(act, b, count)
    for c in np.unique(m.cta[act]):
        phase = st.phase[(int(c), b)]
        allp = np.concatenate([r.values for r in phase])
        res = int(allp.sum()) if op == "popc" else bool(allp.all()) if op == "and" else bool(allp.any())
        for r in phase:
            t = PRED if op != "popc" else U32
            m.write(r.dest, t, r.threads, np.full(len(r.threads), res, dtype=t.dtype))
    return True
