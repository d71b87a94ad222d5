"""More PTX instructions: bit scans and logic (bfind, lop3, mul24, sad), warp-level ``.sync``
instructions (shfl.sync, vote.sync, activemask, bar.warp.sync), atomics (atom / red on shared and
global memory) and the fp8 forms of cvt.

Why these are exact too: they are the building blocks of data movement and packing around MMA
(fp8 operands are made with ``cvt.rn.satfinite.e4m3x2.f32``; fragments move between lanes with
``shfl.sync``); the silicon corpus (``mmacts/validation/corpus``) checks each against an H100 bit for bit.
Warp instructions follow the ISA's ``membermask`` rule: a thread executes once every thread named by
its mask has arrived (``Machine.warp_sync``); what the ISA leaves undefined (a mask without the
executing lane, naming an exited lane, reading a lane that does not execute the shuffle) is an error.
"""

from __future__ import annotations

import numpy as np

from mmacts.ptxvm import ops_core
from mmacts.ptxvm.errors import VmError, VmUnsupported
from mmacts.ptxvm.machine import Machine, handler
from mmacts.ptxvm.memory import SHARED_WINDOW, WINDOW_SIZE
from mmacts.ptxvm.parse import Instr
from mmacts.ptxvm.ptxtypes import PtxType, ptx_type

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


# ------------------------------------------------------------------------------------------ fp8 cvt
def _minifloat_values(ebits: int, mbits: int, bias: int, top: int) -> np.ndarray:
    """Values (float64) of the positive codes 0..top of a sign/exponent/mantissa format."""
    codes = np.arange(top + 1)
    e, mant = codes >> mbits, codes & ((1 << mbits) - 1)
    sub = mant * 2.0 ** (1 - bias - mbits)
    norm = (1 + mant / 2.0**mbits) * 2.0 ** (e - bias)
    return np.where(e == 0, sub, norm)


_FP8 = {  # format: (finite positive values by code, NaN code)
    "e4m3x2": (_minifloat_values(4, 3, 7, 0x7E), 0x7F),
    "e5m2x2": (_minifloat_values(5, 2, 15, 0x7B), 0x7F),
}


def _to_fp8(v: np.ndarray, fmt: str, relu: bool) -> np.ndarray:
    """float64 values (exactly an f32 or f16 each) to fp8 codes: round to nearest even,
    .satfinite (beyond the largest finite value, infinities included: the largest), NaN -> 0x7F;
    .relu: negatives -> +0."""
    vals, nan_code = _FP8[fmt]
    neg = np.signbit(v)
    ax = np.abs(v)
    hi = np.searchsorted(vals, np.minimum(ax, vals[-1]), side="left")
    lo = np.maximum(hi - 1, 0)
    with np.errstate(invalid="ignore"):  # NaN lanes: replaced by the NaN code below
        d_lo, d_hi = ax - vals[lo], vals[np.minimum(hi, len(vals) - 1)] - ax
    pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0))
    code = np.where(pick_hi, hi, lo)
    code = np.where(ax >= vals[-1], len(vals) - 1, code).astype(np.uint32)
    code = np.where(neg, code | np.uint32(0x80), code)
    if relu:
        code = np.where(neg, np.uint32(0), code)
    return np.where(np.isnan(v), np.uint32(nan_code), code).astype(np.uint32)


def _fp8_to_f16(codes: np.ndarray, fmt: str) -> np.ndarray:
    """fp8 codes to f16 bits (exact; NaN -> 0x7FFF; e5m2 infinities stay infinite)."""
    if fmt == "e5m2x2":
        bits = (codes.astype(np.uint32) << np.uint32(8)) & np.uint32(0xFFFF)
        nan = (codes & 0x7F) > 0x7C
        return np.where(nan, np.uint32(0x7FFF), bits).astype(np.uint16)
    vals, _ = _FP8[fmt]
    mag = codes & 0x7F
    f = vals[np.minimum(mag, len(vals) - 1)].astype(np.float16)
    f = np.where(codes & 0x80, -f, f).astype(np.float16).view(np.uint16)
    return np.where(mag == 0x7F, np.uint16(0x7FFF), f).astype(np.uint16)


_core_cvt = ops_core._cvt


@handler("cvt")
def _cvt(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """cvt, with the packed fp8 forms added to ops_core's: cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32
    d, a, b (``a`` to the upper byte, ``b`` to the lower), cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2
    d, a, and cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a (upper byte to the upper half)."""
    fmt = next((p for p in ins.parts[1:] if p in _FP8), None)
    if fmt is None:
        _core_cvt(m, ins, act)
        return
    if not ins.has("rn"):
        raise VmUnsupported(f"{ins.opcode}: fp8 conversions round with .rn")
    relu = ins.has("relu")
    src, dstfmt = ins.parts[-1], ins.parts[-2]
    ops = ins.operands
    if dstfmt == fmt:  # to fp8
        if not ins.has("satfinite"):
            raise VmError(f"{ins.opcode}: conversions to .{fmt} require .satfinite")
        if src == "f32" and len(ops) == 3:
            with np.errstate(invalid="ignore"):
                hi = m.read(ops[1], ptx_type("f32"), act).astype(np.float64)
                lo = m.read(ops[2], ptx_type("f32"), act).astype(np.float64)
        elif src == "f16x2" and len(ops) == 2:
            bits = m.read(ops[1], U32, act)
            hi = (bits >> np.uint32(16)).astype(np.uint16).view(np.float16).astype(np.float64)
            lo = (bits & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
        else:
            raise VmUnsupported(ins.opcode)
        r = (_to_fp8(hi, fmt, relu) << np.uint32(8)) | _to_fp8(lo, fmt, relu)
        m.write(ops[0], ptx_type("b16"), act, r.astype(np.uint16))
        return
    if dstfmt == "f16x2" and src == fmt and len(ops) == 2:
        raw = m.read(ops[1], ptx_type("b16"), act).astype(np.uint32)
        hi = _fp8_to_f16(raw >> np.uint32(8), fmt).astype(np.uint32)
        lo = _fp8_to_f16(raw & np.uint32(0xFF), fmt).astype(np.uint32)
        if relu:
            hi = np.where((hi & 0x8000) != 0, np.uint32(0), hi)
            lo = np.where((lo & 0x8000) != 0, np.uint32(0), lo)
        m.write(ops[0], U32, act, (hi << np.uint32(16)) | lo)
        return
    raise VmUnsupported(f"{ins.opcode} is not implemented")
