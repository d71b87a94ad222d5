"""Core PTX instructions: integer and float arithmetic, logic, comparisons, conversions, moves,
loads and stores, control flow, barriers, fences and mbarriers.

Why exact integer semantics matter here: the suite's kernels compute addresses and record offsets
with ``mul.wide``, ``mad.lo``, shifts and ``cvt`` between widths; a VM that is lenient about a
wrap-around or a shift past the width would let a kernel bug through. Each rule below is the PTX
ISA's (chapter 9.7.1-9.7.3, 9.7.9, 9.7.13): shifts clamp at the width (``shl``/``shr.u`` give 0,
``shr.s`` the sign), ``mul.hi`` is the upper half of the full product, ``cvt`` truncates or
sign/zero-extends by the *source* type, ``.sat`` clamps, ``setp`` unordered comparisons are true
on NaN. The silicon corpus (``mmacts/ptxvm/corpus``) checks these rules against an H100 bit for bit.
"""

from __future__ import annotations

import functools

import numpy as np

from mmacts.ptxvm.errors import VmError, VmHazard, VmMemoryFault, VmUnsupported
from mmacts.ptxvm.machine import EXITED, Machine, MbarrierState, handler
from mmacts.ptxvm.memory import check_aligned
from mmacts.ptxvm.parse import Instr
from mmacts.ptxvm.ptxtypes import PtxType, is_type, ptx_type

U64 = np.uint64


@functools.lru_cache(maxsize=4096)
def _types(opcode: str) -> tuple[PtxType, ...]:
    return tuple(ptx_type(p) for p in opcode.split(".")[1:] if is_type(p))


def _ty(ins: Instr) -> PtxType:
    ts = _types(ins.opcode)
    if not ts:
        raise VmUnsupported(f"{ins.opcode}: no operand type")
    return ts[-1]


def _mask(bits: int) -> int:
    return (1 << bits) - 1


def _wide(t: PtxType) -> PtxType:
    return ptx_type(f"{t.kind}{t.bits * 2}")


def _as_u(v: np.ndarray, t: PtxType) -> np.ndarray:
    return np.ascontiguousarray(v).view(t.udtype)


# ------------------------------------------------------------------------------------------ integer
def _mul_full(a: np.ndarray, b: np.ndarray, t: PtxType) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) halves of the exact product, as unsigned bits of ``t``'s width."""
    if t.bits <= 32:
        w = np.int64 if t.signed else np.uint64
        p = a.astype(w) * b.astype(w)
        pu = p.view(np.uint64) if p.dtype == np.int64 else p
        lo = (pu & U64(_mask(t.bits))).astype(t.udtype)
        hi = ((pu >> U64(t.bits)) & U64(_mask(t.bits))).astype(t.udtype)
        return lo, hi
    # 64 x 64 -> 128 via 32-bit limbs (unsigned), then the signed correction
    au, bu = _as_u(a, t), _as_u(b, t)
    m32 = U64(0xFFFFFFFF)
    a0, a1, b0, b1 = au & m32, au >> U64(32), bu & m32, bu >> U64(32)
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> U64(32)) + (p01 & m32) + (p10 & m32)
    lo = (p00 & m32) | ((mid & m32) << U64(32))
    hi = p11 + (p01 >> U64(32)) + (p10 >> U64(32)) + (mid >> U64(32))
    if t.signed:
        hi = hi - np.where(a.view(np.int64) < 0, bu, U64(0)) - np.where(b.view(np.int64) < 0, au, U64(0))
    return lo, hi


def _int_binop(name: str, a: np.ndarray, b: np.ndarray, t: PtxType, sat: bool = False) -> np.ndarray:
    if name in ("add", "sub"):
        if sat:
            if not (t.signed and t.bits == 32):
                raise VmUnsupported(f"{name}.sat.{t.name}")
            r = a.astype(np.int64) + (b.astype(np.int64) if name == "add" else -b.astype(np.int64))
            return np.clip(r, -(2**31), 2**31 - 1).astype(np.int32)
        au, bu = _as_u(a, t), _as_u(b, t)
        r = au + bu if name == "add" else au - bu
        return r.view(t.dtype)
    if name in ("min", "max"):
        return (np.minimum if name == "min" else np.maximum)(a, b)
    if name in ("and", "or", "xor"):
        au, bu = _as_u(a, t), _as_u(b, t)
        return {"and": au & bu, "or": au | bu, "xor": au ^ bu}[name].view(t.dtype)
    raise VmUnsupported(name)


def _shift(kind: str, a: np.ndarray, amt: np.ndarray, t: PtxType) -> np.ndarray:
    """PTX shifts: amounts >= the width clamp (shl/shr.u -> 0, shr.s -> all sign bits)."""
    amt = amt.astype(np.uint64)
    big = amt >= U64(t.bits)
    sh = np.where(big, U64(0), amt).astype(t.udtype)
    if kind == "shl":
        r = _as_u(a, t) << sh
        return np.where(big, t.udtype.type(0), r).astype(t.udtype).view(t.dtype)
    if t.signed:
        s = a.view(t.dtype)
        r = s >> sh.astype(t.dtype)
        full = np.where(s < 0, t.dtype.type(-1), t.dtype.type(0))
        return np.where(big, full, r).astype(t.dtype)
    r = _as_u(a, t) >> sh
    return np.where(big, t.udtype.type(0), r).astype(t.udtype).view(t.dtype)


@handler("add", "sub", "min", "max", "and", "or", "xor")
def _binop(m: Machine, ins: Instr, act: np.ndarray) -> None:
    t = _ty(ins)
    d, a, b = ins.operands
    if t.kind == "pred":
        x, y = m.read(a, t, act), m.read(b, t, act)
        m.write(d, t, act, {"and": x & y, "or": x | y, "xor": x ^ y}[ins.base])
        return
    x, y = m.read(a, t, act), m.read(b, t, act)
    if t.kind == "f":
        _check_rounding(ins)
        with np.errstate(all="ignore"):
            if ins.base == "add":
                r = x + y
            elif ins.base == "sub":
                r = x - y
            elif ins.base in ("min", "max"):
                r = _fminmax(ins.base, x, y)
            else:
                raise VmUnsupported(ins.opcode)
        if ins.has("ftz"):
            r = _ftz(r)
        if ins.has("sat"):
            r = np.where(np.isnan(r), 0, np.clip(r, 0, 1)).astype(t.dtype)
        m.write(d, t, act, r.astype(t.dtype))
        return
    m.write(d, t, act, _int_binop(ins.base, x, y, t, ins.has("sat")))


def _check_rounding(ins: Instr) -> None:
    for r in ("rz", "rm", "rp"):
        if ins.has(r):
            raise VmUnsupported(f"{ins.opcode}: rounding .{r} is not implemented (only .rn)")


def _fminmax(name: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """PTX min/max.f32: if one input is NaN the other is returned; -0 < +0."""
    fn = np.fmin if name == "min" else np.fmax
    r = fn(x, y)
    both0 = (x == 0) & (y == 0)
    if both0.any():
        sx, sy = np.signbit(x), np.signbit(y)
        neg = (sx | sy) if name == "min" else (sx & sy)
        r = np.where(both0, np.where(neg, -0.0, 0.0).astype(x.dtype), r)
    return r


def _ftz(r: np.ndarray) -> np.ndarray:
    tiny = np.finfo(r.dtype).tiny
    return np.where(np.abs(r) < tiny, np.copysign(np.zeros_like(r), r), r)


@handler("mul")
def _mul(m: Machine, ins: Instr, act: np.ndarray) -> None:
    t = _ty(ins)
    d, a, b = ins.operands
    x, y = m.read(a, t, act), m.read(b, t, act)
    if t.kind == "f":
        _check_rounding(ins)
        with np.errstate(all="ignore"):
            r = (x * y).astype(t.dtype)
        if ins.has("ftz"):
            r = _ftz(r)
        m.write(d, t, act, r)
        return
    lo, hi = _mul_full(x, y, t)
    if ins.has("wide"):
        w = _wide(t)
        full = lo.astype(w.udtype) | (hi.astype(w.udtype) << w.udtype.type(t.bits))
        m.write(d, w, act, full.view(w.dtype))
    elif ins.has("hi"):
        m.write(d, t, act, hi.view(t.dtype))
    else:
        m.write(d, t, act, lo.view(t.dtype))


@handler("mad")
def _mad(m: Machine, ins: Instr, act: np.ndarray) -> None:
    t = _ty(ins)
    d, a, b, c = ins.operands
    if t.kind == "f":
        return _fma(m, ins, act)
    x, y = m.read(a, t, act), m.read(b, t, act)
    lo, hi = _mul_full(x, y, t)
    if ins.has("wide"):
        w = _wide(t)
        full = lo.astype(w.udtype) | (hi.astype(w.udtype) << w.udtype.type(t.bits))
        z = m.read(c, w, act).view(w.udtype)
        m.write(d, w, act, (full + z).view(w.dtype))
        return
    z = m.read(c, t, act).view(t.udtype)
    part = hi if ins.has("hi") else lo
    if ins.has("sat"):
        if not (t.signed and t.bits == 32 and ins.has("hi")):
            raise VmUnsupported(ins.opcode)
        r = hi.view(np.int32).astype(np.int64) + z.view(np.int32).astype(np.int64)
        m.write(d, t, act, np.clip(r, -(2**31), 2**31 - 1).astype(np.int32))
        return
    m.write(d, t, act, (part + z).view(t.dtype))


@handler("fma")
def _fma(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """fma.rn.f32: the exact a*b+c rounded once (round-to-odd in float64, then to float32)."""
    t = _ty(ins)
    d, a, b, c = ins.operands
    _check_rounding(ins)
    x, y, z = (m.read(o, t, act) for o in (a, b, c))
    if t.bits == 32:
        r = _fma32(x, y, z)
    elif t.bits == 64:
        raise VmUnsupported("fma.f64 is not implemented")
    else:
        raise VmUnsupported(ins.opcode)
    if ins.has("ftz"):
        r = _ftz(r)
    if ins.has("sat"):
        r = np.where(np.isnan(r), 0, np.clip(r, 0, 1)).astype(t.dtype)
    m.write(d, t, act, r)


def _fma32(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        p = x.astype(np.float64) * y.astype(np.float64)  # exact: 48 significant bits
        zz = z.astype(np.float64)
        s = p + zz
        # TwoSum error of the float64 addition; if inexact, make the result round-to-odd so the
        # second rounding (to float32) is correct
        bp = s - zz
        err = (p - bp) + (zz - (s - bp))
        bits = s.view(np.uint64)
        inexact = (err != 0) & np.isfinite(s)
        even = (bits & U64(1)) == 0
        fix = inexact & even
        toward = np.where((err > 0) == (s > 0), U64(1), U64(0))
        adj = np.where(fix, np.where(toward == 1, bits + U64(1), bits - U64(1)), bits)
        # s was rounded to nearest: if the error pushes outwards, the odd neighbour is outward
        s2 = np.where(fix, adj.view(np.float64), s)
        return s2.astype(np.float32)


@handler("neg", "abs", "not", "cnot", "popc", "clz", "brev")
def _unop(m: Machine, ins: Instr, act: np.ndarray) -> None:
    t = _ty(ins)
    d, a = ins.operands
    x = m.read(a, t, act)
    n = ins.base
    if t.kind == "pred":
        if n != "not":
            raise VmUnsupported(ins.opcode)
        m.write(d, t, act, ~x)
        return
    if t.kind == "f":
        bits = x.view(t.udtype)
        sign = t.udtype.type(1 << (t.bits - 1))
        if n == "neg":
            m.write(d, t, act, (bits ^ sign).view(t.dtype))
        elif n == "abs":
            m.write(d, t, act, (bits & t.udtype.type(_mask(t.bits - 1))).view(t.dtype))
        else:
            raise VmUnsupported(ins.opcode)
        return
    u = _as_u(x, t)
    if n == "neg":
        r = (t.udtype.type(0) - u).view(t.dtype)
    elif n == "abs":
        s = x.view(ptx_type(f"s{t.bits}").dtype)
        r = np.where(s < 0, (t.udtype.type(0) - u), u).astype(t.udtype).view(t.dtype)
    elif n == "not":
        r = (~u).view(t.dtype)
    elif n == "cnot":
        r = (u == 0).astype(t.udtype).view(t.dtype)
    elif n == "popc":
        r = _popc(u, t.bits).astype(np.uint32)
        m.write(d, ptx_type("u32"), act, r)
        return
    elif n == "clz":
        r = (t.bits - _bitlen(u, t.bits)).astype(np.uint32)
        m.write(d, ptx_type("u32"), act, r)
        return
    else:  # brev
        r = _brev(u, t.bits).view(t.dtype)
    m.write(d, t, act, r)


def _popc(u: np.ndarray, bits: int) -> np.ndarray:
    v = u.astype(np.uint64)
    c = np.zeros(len(v), dtype=np.uint64)
    for _ in range(bits):
        c += v & U64(1)
        v >>= U64(1)
    return c


def _bitlen(u: np.ndarray, bits: int) -> np.ndarray:
    v = u.astype(np.uint64)
    n = np.zeros(len(v), dtype=np.int64)
    for i in range(bits):
        n = np.where((v >> U64(i)) & U64(1) == 1, i + 1, n)
    return n


def _brev(u: np.ndarray, bits: int) -> np.ndarray:
    v = u.astype(np.uint64)
    r = np.zeros(len(v), dtype=np.uint64)
    for i in range(bits):
        r |= ((v >> U64(i)) & U64(1)) << U64(bits - 1 - i)
    return r.astype(np.dtype(f"uint{bits}"))


@handler("shl", "shr")
def _shifts(m: Machine, ins: Instr, act: np.ndarray) -> None:
    t = _ty(ins)
    d, a, b = ins.operands
    x = m.read(a, t, act)
    amt = m.read(b, ptx_type("u32"), act)
    m.write(d, t, act, _shift(ins.base, x, amt, t))


@handler("shf")
def _shf(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """Funnel shift: shf.{l,r}.{wrap,clamp}.b32 d, a, b, c (b:a is the 64-bit value)."""
    d, a, b, c = ins.operands
    u32 = ptx_type("u32")
    lo = m.read(a, u32, act).astype(np.uint64)
    hi = m.read(b, u32, act).astype(np.uint64)
    n = m.read(c, u32, act).astype(np.uint64)
    n = n & U64(31) if ins.has("wrap") else np.minimum(n, U64(32))
    v = (hi << U64(32)) | lo
    if ins.has("l"):
        r = ((v << n) >> U64(32)) & U64(0xFFFFFFFF)
    else:
        r = (v >> n) & U64(0xFFFFFFFF)
    m.write(d, u32, act, r.astype(np.uint32))


@handler("bfe")
def _bfe(m: Machine, ins: Instr, act: np.ndarray) -> None:
    t = _ty(ins)
    d, a, b, c = ins.operands
    x = _as_u(m.read(a, t, act), t).astype(np.uint64)
    pos = m.read(b, ptx_type("u32"), act).astype(np.uint64) & U64(0xFF)
    ln = m.read(c, ptx_type("u32"), act).astype(np.uint64) & U64(0xFF)
    w = U64(t.bits)
    sh = np.minimum(pos, w - U64(1))
    field = np.where(pos >= w, U64(0), x >> sh)
    ln_c = np.minimum(ln, w)
    keep = np.where(ln_c >= U64(64), U64(2**64 - 1), (U64(1) << ln_c) - U64(1))
    r = field & keep
    if t.signed:
        # sign bit: bit (pos+len-1) of a, or a's msb if beyond; 0 when len == 0
        sbit_pos = np.minimum(pos + ln - U64(1), w - U64(1))
        sbit = (x >> sbit_pos) & U64(1)
        sbit = np.where(ln == 0, U64(0), sbit)
        ext = np.where((sbit == 1) & (ln_c < w), ~keep, U64(0))
        r = r | ext
    m.write(d, t, act, r.astype(t.udtype).view(t.dtype))


@handler("bfi")
def _bfi(m: Machine, ins: Instr, act: np.ndarray) -> None:
    t = _ty(ins)
    d, f, b, c, e = ins.operands
    a_ = _as_u(m.read(f, t, act), t).astype(np.uint64)
    b_ = _as_u(m.read(b, t, act), t).astype(np.uint64)
    pos = m.read(c, ptx_type("u32"), act).astype(np.uint64) & U64(0xFF)
    ln = m.read(e, ptx_type("u32"), act).astype(np.uint64) & U64(0xFF)
    w = U64(t.bits)
    ln_c = np.minimum(ln, w)
    keep = np.where(ln_c >= U64(64), U64(2**64 - 1), (U64(1) << ln_c) - U64(1))
    sh = np.minimum(pos, U64(63))
    mask = np.where(pos >= w, U64(0), (keep << sh)) & U64(_mask(t.bits))
    r = (b_ & ~mask) | ((a_ << sh) & mask)
    m.write(d, t, act, r.astype(t.udtype).view(t.dtype))


@handler("prmt")
def _prmt(m: Machine, ins: Instr, act: np.ndarray) -> None:
    d, a, b, c = ins.operands
    u32 = ptx_type("u32")
    x = m.read(a, u32, act).astype(np.uint64)
    y = m.read(b, u32, act).astype(np.uint64)
    s = m.read(c, u32, act).astype(np.uint64)
    mode = next((p for p in ins.parts[2:] if p in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")), None)
    if mode is not None:
        raise VmUnsupported(f"prmt mode .{mode} is not implemented")
    v = x | (y << U64(32))
    r = np.zeros(len(act), dtype=np.uint64)
    for i in range(4):
        sel = (s >> U64(4 * i)) & U64(0xF)
        byte = (v >> ((sel & U64(7)) * U64(8))) & U64(0xFF)
        rep = (sel & U64(8)) != 0
        byte = np.where(rep, np.where((byte & U64(0x80)) != 0, U64(0xFF), U64(0)), byte)
        r |= byte << U64(8 * i)
    m.write(d, u32, act, r.astype(np.uint32))


@handler("div", "rem")
def _divrem(m: Machine, ins: Instr, act: np.ndarray) -> None:
    t = _ty(ins)
    if t.kind == "f":
        raise VmUnsupported(f"{ins.opcode} is not implemented")
    d, a, b = ins.operands
    x, y = m.read(a, t, act), m.read(b, t, act)
    if (y == 0).any():
        raise VmError(f"{ins.base} by zero (the PTX ISA leaves the result unspecified)")
    if t.signed:
        q = np.trunc(x.astype(np.float64) / y.astype(np.float64)) if t.bits < 64 else None
        if q is None:
            qq = np.array([int(abs(int(p)) // abs(int(r))) * (1 if (int(p) < 0) == (int(r) < 0) else -1)
                           for p, r in zip(x, y, strict=True)], dtype=object)
            q = qq.astype(np.int64)
        q = q.astype(np.int64)
        r = x.astype(np.int64) - q * y.astype(np.int64)
        out = q if ins.base == "div" else r
        m.write(d, t, act, out.astype(t.dtype))
    else:
        out = x // y if ins.base == "div" else x % y
        m.write(d, t, act, out.astype(t.dtype))


# ------------------------------------------------------------------------------------------ compare
_ORDERED = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}


def _compare(cmp: str, x: np.ndarray, y: np.ndarray, t: PtxType) -> np.ndarray:
    if t.kind == "f":
        nan = np.isnan(x) | np.isnan(y)
        with np.errstate(invalid="ignore"):
            if cmp == "num":
                return ~nan
            if cmp == "nan":
                return nan
            if cmp.endswith("u") and cmp[:-1] in _ORDERED:
                return _ORDERED[cmp[:-1]](x, y) | nan
            if cmp == "ne":
                return np.not_equal(x, y) & ~nan
            return _ORDERED[cmp](x, y) & ~nan
    if cmp in ("lo", "ls", "hi", "hs"):
        x, y = _as_u(x, t), _as_u(y, t)
    elif t.kind == "b" and cmp not in ("eq", "ne"):
        raise VmError(f"setp.{cmp} needs a signed or unsigned type, not .{t.name}")
    return _ORDERED[cmp](x, y)


@handler("setp")
def _setp(m: Machine, ins: Instr, act: np.ndarray) -> None:
    t = _ty(ins)
    cmp = ins.parts[1]
    boolop = ins.parts[2] if ins.parts[2] in ("and", "or", "xor") else None
    dst = ins.operands[0]
    a, b = ins.operands[1], ins.operands[2]
    r = _compare(cmp, m.read(a, t, act), m.read(b, t, act), t)
    pred = ptx_type("pred")
    q = ~r
    if boolop:
        c = m.read(ins.operands[3], pred, act)
        fn = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[boolop]
        r, q = fn(r, c), fn(~r, c)
    if dst.kind == "vec":
        m.write(dst.items[0], pred, act, r)
        m.write(dst.items[1], pred, act, q)
    else:
        m.write(dst, pred, act, r)


@handler("selp")
def _selp(m: Machine, ins: Instr, act: np.ndarray) -> None:
    t = _ty(ins)
    d, a, b, c = ins.operands
    p = m.read(c, ptx_type("pred"), act)
    m.write(d, t, act, np.where(p, m.read(a, t, act), m.read(b, t, act)))


# ------------------------------------------------------------------------------------------ moves
@handler("mov")
def _mov(m: Machine, ins: Instr, act: np.ndarray) -> None:
    t = _ty(ins)
    d, a = ins.operands
    if d.kind == "vec":  # unpack: mov.b64 {lo, hi}, %rd
        src = _as_u(m.read(a, t, act), t).astype(np.uint64)
        k = len(d.items)
        w = t.bits // k
        et = ptx_type(f"b{w}")
        for i, it in enumerate(d.items):
            m.write(it, et, act, ((src >> U64(w * i)) & U64(_mask(w))).astype(et.udtype))
        return
    if a.kind == "vec":  # pack: mov.b64 %rd, {lo, hi}
        k = len(a.items)
        w = t.bits // k
        et = ptx_type(f"b{w}")
        v = np.zeros(len(act), dtype=np.uint64)
        for i, it in enumerate(a.items):
            v |= m.read(it, et, act).astype(np.uint64) << U64(w * i)
        m.write(d, t, act, v.astype(t.udtype).view(t.dtype))
        return
    m.write(d, t, act, m.read(a, t, act))


@handler("cvta")
def _cvta(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """Generic <-> state-space addresses. The VM's generic window is identity for global; shared
    addresses are not representable generically here (a kernel that converts one is refused)."""
    t = _ty(ins)
    d, a = ins.operands
    if not ins.has("global"):
        raise VmUnsupported(f"{ins.opcode}: only the global state space is implemented")
    m.write(d, t, act, m.read(a, t, act))


def _round_int(x: np.ndarray, mode: str | None) -> np.ndarray:
    if mode in (None, "rzi", "rz"):
        return np.trunc(x)
    if mode in ("rni", "rn"):
        return np.rint(x)
    if mode in ("rmi", "rm"):
        return np.floor(x)
    if mode in ("rpi", "rp"):
        return np.ceil(x)
    raise VmUnsupported(f"cvt rounding .{mode}")


@handler("cvt")
def _cvt(m: Machine, ins: Instr, act: np.ndarray) -> None:
    ts = _types(ins.opcode)
    if len(ts) != 2:
        raise VmUnsupported(f"{ins.opcode}: expected two types")
    dt, st = ts
    d, a = ins.operands
    x = m.read(a, st, act)
    rnd = next((p for p in ins.parts[1:] if p in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")), None)
    sat = ins.has("sat")
    if dt.kind != "f" and st.kind != "f":
        # integer -> integer: the source value (sign- or zero-extended by the source type), then
        # truncation to the destination width, or with .sat a clamp to the destination's range
        wide = x.astype(np.int64) if st.signed else _as_u(x, st).astype(np.uint64)
        if sat:
            lo = -(2 ** (dt.bits - 1)) if dt.signed else 0
            hi = 2 ** (dt.bits - 1) - 1 if dt.signed else 2**dt.bits - 1
            if wide.dtype == np.uint64:
                wide = np.minimum(wide, np.uint64(min(hi, 2**64 - 1)))
            else:
                wide = np.clip(wide, max(lo, -(2**63)), min(hi, 2**63 - 1))
        bits = wide.view(np.uint64) if wide.dtype == np.int64 else wide
        m.write(d, dt, act, bits.astype(dt.udtype).view(dt.dtype))
        return
    with np.errstate(all="ignore"):
        if dt.kind == "f" and st.kind == "f":
            if dt.bits < st.bits and rnd not in (None, "rn"):
                raise VmUnsupported(f"{ins.opcode}: rounding .{rnd}")
            r = x.astype(dt.dtype)
            if rnd in ("rni", "rzi", "rmi", "rpi"):
                r = _round_int(r, rnd).astype(dt.dtype)
            if ins.has("ftz"):
                r = _ftz(r)
            if sat:
                r = np.where(np.isnan(r), 0, np.clip(r, 0, 1)).astype(dt.dtype)
            m.write(d, dt, act, r)
            return
        if dt.kind == "f":  # int -> float (.rn default)
            if rnd not in (None, "rn"):
                raise VmUnsupported(f"{ins.opcode}: rounding .{rnd}")
            if st.bits == 64:
                raise VmUnsupported(f"{ins.opcode}: 64-bit integer to float")
            m.write(d, dt, act, x.astype(np.float64).astype(dt.dtype))
            return
        # float -> int: round, saturate (always, PTX float->int conversions saturate), NaN -> 0
        r = _round_int(x.astype(np.float64), rnd)
        lo = -(2 ** (dt.bits - 1)) if dt.signed else 0
        hi = 2 ** (dt.bits - 1) - 1 if dt.signed else 2**dt.bits - 1
        r = np.where(np.isnan(r), 0, np.clip(r, lo, hi))
        if dt.bits == 64:
            raise VmUnsupported(f"{ins.opcode}: float to 64-bit integer")
        m.write(d, dt, act, r.astype(np.int64).astype(dt.dtype))


# ------------------------------------------------------------------------------------------ memory
def _space(ins: Instr) -> str:
    for p in ins.parts[1:]:
        if p.startswith("shared"):
            if p not in ("shared", "shared::cta"):
                raise VmUnsupported(f"{ins.opcode}: state space .{p}")
            return "shared"
        if p in ("global", "param", "local", "const"):
            return p
    return "generic"


def _vec_width(ins: Instr) -> int:
    for p in ins.parts[1:]:
        if p in ("v2", "v4", "v8"):
            return int(p[1])
    return 1


@handler("ld")
def _ld(m: Machine, ins: Instr, act: np.ndarray) -> None:
    t = _ty(ins)
    sp = _space(ins)
    nv = _vec_width(ins)
    d, a = ins.operands
    nb = t.nbytes * nv
    if sp == "param":
        off = m.address(a, act)
        lo = int(off[0])
        if lo + nb > m.params.size:
            raise VmMemoryFault(f"ld.param past the parameter block ({lo}+{nb} > {m.params.size})")
        raw = np.broadcast_to(m.params[lo:lo + nb], (len(act), nb)).copy()
    elif sp == "global" or sp == "generic":
        addrs = m.address(a, act)
        check_aligned(addrs, nb, "global")
        raw = m.gmem.load(addrs, nb)
    elif sp == "shared":
        raw = m.shared_load(m.address(a, act), nb, act)
    else:
        raise VmUnsupported(f"{ins.opcode}: state space .{sp}")
    vals = raw.reshape(len(act), nv, t.nbytes)
    items = d.items if d.kind == "vec" else (d,)
    if len(items) != nv:
        raise VmError(f"{ins.opcode}: {len(items)} destinations for .v{nv}")
    for i, it in enumerate(items):
        bits = np.ascontiguousarray(vals[:, i, :]).view(t.udtype).reshape(len(act))
        m.write(it, t, act, bits.view(t.dtype))


@handler("st")
def _st(m: Machine, ins: Instr, act: np.ndarray) -> None:
    t = _ty(ins)
    sp = _space(ins)
    nv = _vec_width(ins)
    a, s = ins.operands
    items = s.items if s.kind == "vec" else (s,)
    if len(items) != nv:
        raise VmError(f"{ins.opcode}: {len(items)} sources for .v{nv}")
    cols = [np.ascontiguousarray(m.read(it, t, act)).view(t.udtype).view(np.uint8).reshape(len(act), t.nbytes)
            for it in items]
    data = np.concatenate(cols, axis=1)
    nb = data.shape[1]
    addrs = m.address(a, act)
    if sp in ("global", "generic"):
        check_aligned(addrs, nb, "global")
        m.gmem.store(addrs, data)
    elif sp == "shared":
        check_aligned(addrs, nb, "shared")
        m.shared_store(addrs, data, act, ins)
    else:
        raise VmUnsupported(f"{ins.opcode}: state space .{sp}")


# ------------------------------------------------------------------------------------------ control
@handler("bra")
def _bra(m: Machine, ins: Instr, act: np.ndarray) -> bool:
    tgt = ins.operands[0]
    if tgt.name not in m.labels:
        raise VmError(f"branch to unknown label {tgt.name}")
    m.pc[act] = m.labels[tgt.name]
    return True


@handler("ret", "exit")
def _ret(m: Machine, ins: Instr, act: np.ndarray) -> bool:
    m.status[act] = EXITED
    m.notify("exit", act)
    m._release_barriers()
    return True


@handler("bar", "barrier")
def _bar(m: Machine, ins: Instr, act: np.ndarray) -> bool:
    if ins.parts[1] == "cluster":
        if ins.has("arrive"):
            m.cl_arrive[act] += 1
            m._release_barriers()
            return False
        if ins.has("wait"):
            m.block(act, -2)
            return True
        raise VmUnsupported(ins.opcode)
    if ins.has("arrive") or ins.has("red"):
        raise VmUnsupported(f"{ins.opcode} is not implemented (only bar.sync / barrier.sync)")
    ops = ins.operands
    u32 = ptx_type("u32")
    bid = m.read(ops[0], u32, act) if ops else np.zeros(len(act), dtype=np.uint32)
    if len(np.unique(bid)) != 1:
        raise VmError("threads of one bar.sync name different barriers")
    count = int(m.read(ops[1], u32, act)[0]) if len(ops) > 1 else 0
    if count and count % 32:
        raise VmError(f"bar.sync thread count {count} is not a multiple of the warp size")
    m.block(act, int(bid[0]), count)
    return True


@handler("fence", "membar")
def _fence(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """Memory fences. The VM's generic memory is sequentially consistent, so ordering fences are
    no-ops; ``fence.proxy.async`` is not: it makes the thread's generic-proxy shared-memory writes
    visible to the async proxy (tcgen05.mma / tcgen05.cp / wgmma read it), which the VM checks."""
    if ins.parts[1] == "proxy" and "async" in ins.parts[2:] or ins.opcode.startswith("fence.proxy.async"):
        if ins.opcode in ("fence.proxy.async", "fence.proxy.async.shared::cta", "fence.proxy.async.shared::cluster",
                          "fence.proxy.async.global"):
            if ins.opcode != "fence.proxy.async.global":
                for c in np.unique(m.cta[act]):
                    w = m.smem_writer[c]
                    w[np.isin(w, act)] = -1
            return
        raise VmUnsupported(ins.opcode)
    m.notify("fence", ins, act)


@handler("mbarrier")
def _mbarrier(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """mbarrier.init / arrive / arrive_drop / try_wait(.parity) / test_wait(.parity) / expect_tx /
    complete_tx / inval on shared::cta objects (9.7.13.15)."""
    op = ins.parts[1]
    u32, u64, pred = ptx_type("u32"), ptx_type("u64"), ptx_type("pred")
    if any(p.startswith("shared::cluster") for p in ins.parts) and op not in ("try_wait", "test_wait"):
        pass
    ops = ins.operands
    if op == "init":
        addrs = m.address(ops[0], act)
        cnt = m.read(ops[1], u32, act)
        check_aligned(addrs, 8, "shared")
        for t, a, c in zip(act, addrs, cnt, strict=True):
            if not 1 <= int(c) <= (1 << 20) - 1:
                raise VmError(f"mbarrier.init count {int(c)} out of range")
            m.mbarriers[(int(m.cta[t]), int(a))] = MbarrierState(int(c), int(c))
        return
    if op in ("arrive", "arrive_drop"):
        has_state = ops[0].kind == "reg" or ops[0].kind == "sink"
        aop = ops[1] if has_state else ops[0]
        addrs = m.address(aop, act)
        count_op = ops[2] if has_state and len(ops) > 2 else (ops[1] if not has_state and len(ops) > 1 else None)
        cnt = m.read(count_op, u32, act) if count_op is not None else np.ones(len(act), dtype=np.uint32)
        states = np.zeros(len(act), dtype=np.uint64)
        expect_tx = ins.has("expect_tx")
        for i, (t, a) in enumerate(zip(act, addrs, strict=True)):
            mb = _mb(m, int(m.cta[t]), int(a), ins)
            states[i] = mb.phase
            if expect_tx:
                mb.tx += int(cnt[i])
                arrive_n = 1
            else:
                arrive_n = int(cnt[i])
            if op == "arrive_drop":
                mb.expected -= arrive_n
            arrive(m, mb, arrive_n)
        if has_state and ops[0].kind == "reg":
            m.write(ops[0], u64, act, states)
        return
    if op in ("expect_tx", "complete_tx"):
        addrs = m.address(ops[0], act)
        cnt = m.read(ops[1], u32, act)
        for t, a, c in zip(act, addrs, cnt, strict=True):
            mb = _mb(m, int(m.cta[t]), int(a), ins)
            if op == "expect_tx":
                mb.tx += int(c)
            else:
                mb.tx -= int(c)
                arrive(m, mb, 0)
        return
    if op in ("try_wait", "test_wait"):
        addrs = m.address(ops[1], act)
        parity = ins.has("parity")
        if parity:
            want = m.read(ops[2], u32, act).astype(np.int64) & 1
        else:
            want = m.read(ops[2], u64, act).astype(np.int64)
        done = np.zeros(len(act), dtype=bool)
        for i, (t, a) in enumerate(zip(act, addrs, strict=True)):
            c = int(m.cta[t])
            mb = _mb(m, c, int(a), ins)
            if not _phase_done(mb, int(want[i]), parity):
                m.notify("mbarrier_wait", c, int(a))  # the async engine may complete work now
            done[i] = _phase_done(mb, int(want[i]), parity)
        m.write(ops[0], pred, act, done)
        if not done.all():
            m.spin_pc = int(m.pc[act[0]])
        return
    if op == "inval":
        for t, a in zip(act, m.address(ops[0], act), strict=True):
            m.mbarriers.pop((int(m.cta[t]), int(a)), None)
        return
    raise VmUnsupported(f"{ins.opcode} is not implemented")


def _mb(m: Machine, cta: int, addr: int, ins: Instr) -> MbarrierState:
    mb = m.mbarriers.get((cta, addr))
    if mb is None:
        raise VmError(f"mbarrier at shared::cta {addr:#x} of CTA {m.ctas[cta]} used before mbarrier.init")
    return mb


def _phase_done(mb: MbarrierState, want: int, parity: bool) -> bool:
    if parity:
        return (mb.phase & 1) != want
    return mb.phase != want


def arrive(m: Machine, mb: MbarrierState, n: int) -> None:
    """``n`` arrivals on ``mb``; the phase completes when pending arrivals and tx count reach 0."""
    mb.pending -= n
    if mb.pending < 0:
        raise VmHazard(f"mbarrier over-arrived ({-mb.pending} more arrivals than its expected count)")
    if mb.pending == 0 and mb.tx == 0:
        mb.phase += 1
        mb.pending = mb.expected


@handler("nanosleep")
def _nanosleep(m: Machine, ins: Instr, act: np.ndarray) -> None:
    m.spin_pc = int(m.pc[act[0]])
