"""Core PTX instructions: integer and float arithmetic, logic, comparisons, conversions, moves,
loads and stores, control flow, barriers, fences and mbarriers.

Why exact integer semantics matter here: the suite's kernels compute addresses and record offsets
with ``mul.wide``, ``mad.lo``, shifts and ``cvt`` between widths; a VM that is lenient about a
wrap-around or a shift past the width would let a kernel bug through. Each rule below is the PTX
ISA's (chapter 9.7.1-9.7.3, 9.7.9, 9.7.13): shifts clamp at the width (``shl``/``shr.u`` give 0,
``shr.s`` the sign), ``mul.hi`` is the upper half of the full product, ``cvt`` truncates or
sign/zero-extends by the *source* type, ``.sat`` clamps, ``setp`` unordered comparisons are true
on NaN. Floats of every type (.f16 .bf16 .f32 .f64 and the x2 forms) go through
:mod:`mmacts.ptxvm.floatops` (one exact rounding in the instruction's mode, NaN rules per instruction
as H100 writes them). A qualifier a handler does not implement is refused by name (:data:`QUALIFIERS`).
Where H100 departs from the ISA text the silicon wins and the docstring says so (bfe/bfi on 64 bits
take the whole 32-bit position and length). The silicon corpus (``mmacts/validation/corpus``) and the fuzz
records (``mmacts/validation/fuzz``) check these rules against an H100 bit for bit.
"""

from __future__ import annotations

import functools

import numpy as np

from mmacts.ptxvm import floatops, fpnum
from mmacts.ptxvm import memory as mem
from mmacts.ptxvm.errors import VmError, VmHazard, VmMemoryFault, VmUnsupported
from mmacts.ptxvm.floatops import is_float_type
from mmacts.ptxvm.handlers import handler
from mmacts.ptxvm.machine import Machine, MbarrierState
from mmacts.ptxvm.memory import check_aligned
from mmacts.ptxvm.parse import Instr, Operand
from mmacts.ptxvm.ptxtypes import PtxType, is_type, ptx_type
from mmacts.ptxvm.scheduler import EXITED

U64 = np.uint64


@functools.lru_cache(maxsize=4096)
def _types(opcode: str) -> tuple[PtxType, ...]:
    return tuple(ptx_type(p) for p in opcode.split(".")[1:] if is_type(p))


def _ty(ins: Instr) -> PtxType:
    ts = _types(ins.opcode)
    if not ts:
        raise VmUnsupported(f"{ins.opcode}: no operand type")
    return ts[-1]


_RND4 = {"rn", "rz", "rm", "rp"}
_CMP = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu", "geu",
        "num", "nan"}
QUALIFIERS: dict[str, frozenset[str]] = {
    "add": frozenset(_RND4 | {"ftz", "sat"}), "sub": frozenset(_RND4 | {"ftz", "sat"}),
    "min": frozenset({"ftz", "NaN", "xorsign", "abs", "relu"}),
    "max": frozenset({"ftz", "NaN", "xorsign", "abs", "relu"}),
    "and": frozenset(), "or": frozenset(), "xor": frozenset(),
    "mul": frozenset(_RND4 | {"lo", "hi", "wide", "ftz", "sat"}),
    "mad": frozenset(_RND4 | {"lo", "hi", "wide", "ftz", "sat"}),
    "fma": frozenset(_RND4 | {"ftz", "sat", "relu"}),
    "neg": frozenset({"ftz"}), "abs": frozenset({"ftz"}), "not": frozenset(), "cnot": frozenset(),
    "popc": frozenset(), "clz": frozenset(), "brev": frozenset(),
    "setp": frozenset(_CMP | {"and", "or", "xor", "ftz"}), "selp": frozenset(),
    "cvt": frozenset(_RND4 | {"rni", "rzi", "rmi", "rpi", "ftz", "sat", "relu"}),
}
"""The qualifiers each of these handlers implements (types aside). Anything else (``add.cc``, ``cvt.rs``,
``cvt.rna``, ``min.relu`` on a type without it, ...) is refused by name, never ignored: an ignored
qualifier is a silently wrong answer."""


@functools.lru_cache(maxsize=8192)
def _unknown_qualifier(opcode: str) -> str | None:
    parts = opcode.split(".")
    allowed = QUALIFIERS.get(parts[0])
    if allowed is None:
        return None
    for p in parts[1:]:
        if not is_type(p) and p not in allowed:
            return p
    return None


def check_qualifiers(ins: Instr) -> None:
    """Refuse a qualifier the handler does not implement (see :data:`QUALIFIERS`)."""
    bad = _unknown_qualifier(ins.opcode)
    if bad is not None:
        raise VmUnsupported(f"{ins.opcode}: qualifier .{bad} is not implemented by the VM")


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
    check_qualifiers(ins)
    t = _ty(ins)
    d, a, b = ins.operands
    if t.kind == "pred":
        x, y = m.read(a, t, act), m.read(b, t, act)
        m.write(d, t, act, {"and": x & y, "or": x | y, "xor": x ^ y}[ins.base])
        return
    x, y = m.read(a, t, act), m.read(b, t, act)
    if is_float_type(t.name):
        same = a.kind == "reg" and b.kind == "reg" and a.name == b.name
        m.write(d, t, act, _float_arith(ins, t, x, y, same=same))
        return
    r = _int_binop(ins.base, x, y, t, ins.has("sat"))
    if ins.has("relu"):  # max.relu.s32 / min.relu.s32 (PTX 8.0): negative results clamp to 0
        if not (t.signed and ins.base in ("min", "max")):
            raise VmUnsupported(f"{ins.opcode}: .relu")
        r = np.maximum(r, t.dtype.type(0))
    m.write(d, t, act, r)
















def _bits(x: np.ndarray, t: PtxType) -> np.ndarray:
    return np.ascontiguousarray(x).view(t.udtype)


def _float_arith(ins: Instr, t: PtxType, x: np.ndarray, y: np.ndarray, z: np.ndarray | None = None,
                 same: bool = False) -> np.ndarray:
    """add sub mul fma min max on any float type (:mod:`mmacts.ptxvm.floatops`), values in and out."""
    srcs = [_bits(v, t) for v in ((x, y) if z is None else (x, y, z))]
    return floatops.arith(ins, ins.base, t.name, srcs, same).astype(t.udtype).view(t.dtype)








def _ftz(r: np.ndarray) -> np.ndarray:
    tiny = np.finfo(r.dtype).tiny
    return np.where(np.abs(r) < tiny, np.copysign(np.zeros_like(r), r), r)


@handler("mul")
def _mul(m: Machine, ins: Instr, act: np.ndarray) -> None:
    check_qualifiers(ins)
    t = _ty(ins)
    d, a, b = ins.operands
    x, y = m.read(a, t, act), m.read(b, t, act)
    if is_float_type(t.name):
        m.write(d, t, act, _float_arith(ins, t, x, y))
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
    check_qualifiers(ins)
    t = _ty(ins)
    d, a, b, c = ins.operands
    if is_float_type(t.name):
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
    """fma on any float type: the exact a*b+c rounded once in the instruction's mode (floatops)."""
    check_qualifiers(ins)
    t = _ty(ins)
    d, a, b, c = ins.operands
    if not is_float_type(t.name):
        raise VmUnsupported(ins.opcode)
    x, y, z = (m.read(o, t, act) for o in (a, b, c))
    m.write(d, t, act, _float_arith(ins, t, x, y, z))




@handler("neg", "abs", "not", "cnot", "popc", "clz", "brev")
def _unop(m: Machine, ins: Instr, act: np.ndarray) -> None:
    check_qualifiers(ins)
    t = _ty(ins)
    d, a = ins.operands
    x = m.read(a, t, act)
    n = ins.base
    if t.kind == "pred":
        if n != "not":
            raise VmUnsupported(ins.opcode)
        m.write(d, t, act, ~x)
        return
    if is_float_type(t.name):
        if n not in ("neg", "abs"):
            raise VmUnsupported(ins.opcode)
        m.write(d, t, act, floatops.unary(ins, n, t.name, _bits(x, t)).astype(t.udtype).view(t.dtype))
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


def _lowmask(n: np.ndarray) -> np.ndarray:
    """``(1 << n) - 1`` for ``n`` in 0..64 (uint64)."""
    n = n.astype(np.uint64)
    return np.where(n >= U64(64), U64(2**64 - 1), (U64(1) << np.minimum(n, U64(63))) - U64(1))


def _field_pos_len(m: Machine, ins: Instr, b, c, act: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Bit-field position and length operands. The ISA keeps their low 8 bits; H100 silicon does that
    for 32-bit fields but takes the whole 32-bit values for 64-bit fields (the corpus records it)."""
    u32 = ptx_type("u32")
    pos = m.read(b, u32, act).astype(np.uint64)
    ln = m.read(c, u32, act).astype(np.uint64)
    if bits == 32:
        pos, ln = pos & U64(0xFF), ln & U64(0xFF)
    return pos, ln


@handler("bfe")
def _bfe(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """bfe (9.7.1.x): ``d[i] = (i < len && pos+i <= msb) ? a[pos+i] : sbit``, where ``sbit`` is 0 for
    .u and for len 0, else ``a[min(pos+len-1, msb)]``."""
    t = _ty(ins)
    d, a, b, c = ins.operands
    x = _as_u(m.read(a, t, act), t).astype(np.uint64)
    pos, ln = _field_pos_len(m, ins, b, c, act, t.bits)
    msb = U64(t.bits - 1)
    room = np.where(pos > msb, U64(0), msb + U64(1) - np.minimum(pos, msb))
    take = np.minimum(ln, room)
    keep = _lowmask(take)
    r = (x >> np.minimum(pos, msb)) & keep
    if t.signed:
        sbit = (x >> np.minimum(pos + ln - U64(1), msb)) & U64(1)
        sbit = np.where(ln == 0, U64(0), sbit)
        r = r | np.where(sbit == 1, ~keep, U64(0))
    m.write(d, t, act, (r & U64(_mask(t.bits))).astype(t.udtype).view(t.dtype))


@handler("bfi")
def _bfi(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """bfi: ``f = b; f[pos+i] = a[i] for i < len and pos+i <= msb``."""
    t = _ty(ins)
    d, f, b, c, e = ins.operands
    a_ = _as_u(m.read(f, t, act), t).astype(np.uint64)
    b_ = _as_u(m.read(b, t, act), t).astype(np.uint64)
    pos, ln = _field_pos_len(m, ins, c, e, act, t.bits)
    msb = U64(t.bits - 1)
    room = np.where(pos > msb, U64(0), msb + U64(1) - np.minimum(pos, msb))
    sh = np.minimum(pos, msb)
    mask = _lowmask(np.minimum(ln, room)) << sh
    r = (b_ & ~mask) | ((a_ << sh) & mask)
    m.write(d, t, act, (r & U64(_mask(t.bits))).astype(t.udtype).view(t.dtype))


_PRMT_MODES = {  # mode -> for c[1:0] = 0..3: source byte of d.b0, d.b1, d.b2, d.b3 (9.7.8.7)
    "f4e": ((0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6)),
    "b4e": ((0, 7, 6, 5), (1, 0, 7, 6), (2, 1, 0, 7), (3, 2, 1, 0)),
    "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)),
    "ecl": ((0, 1, 2, 3), (1, 1, 2, 3), (2, 2, 2, 3), (3, 3, 3, 3)),
    "ecr": ((0, 0, 0, 0), (0, 1, 1, 1), (0, 1, 2, 2), (0, 1, 2, 3)),
    "rc16": ((0, 1, 0, 1), (2, 3, 2, 3), (0, 1, 0, 1), (2, 3, 2, 3)),
}


@handler("prmt")
def _prmt(m: Machine, ins: Instr, act: np.ndarray) -> None:
    d, a, b, c = ins.operands
    u32 = ptx_type("u32")
    x = m.read(a, u32, act).astype(np.uint64)
    y = m.read(b, u32, act).astype(np.uint64)
    s = m.read(c, u32, act).astype(np.uint64)
    mode = next((p for p in ins.parts[1:] if p in _PRMT_MODES), None)
    v = x | (y << U64(32))
    r = np.zeros(len(act), dtype=np.uint64)
    if mode is not None:  # the selector's low 2 bits pick a row of the mode's byte table
        table = np.array(_PRMT_MODES[mode], dtype=np.uint64)[(s & U64(3)).astype(np.int64)]
        for i in range(4):
            r |= ((v >> (table[:, i] * U64(8))) & U64(0xFF)) << U64(8 * i)
        m.write(d, u32, act, r.astype(np.uint32))
        return
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
    check_qualifiers(ins)
    t = _ty(ins)
    cmp = ins.parts[1]
    boolop = ins.parts[2] if ins.parts[2] in ("and", "or", "xor") else None
    dst = ins.operands[0]
    a, b = ins.operands[1], ins.operands[2]
    x, y = m.read(a, t, act), m.read(b, t, act)
    if is_float_type(t.name):
        if t.name not in ("f16", "f32", "f64"):
            raise VmUnsupported(f"{ins.opcode}: comparison of .{t.name}")
        x, y = floatops.compare_inputs(ins, t.name, _bits(x, t), _bits(y, t))
    r = _compare(cmp, x, y, t)
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
    check_qualifiers(ins)
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
    """Generic <-> state-space addresses (9.7.9.18). Global addresses are the same in both; the
    cluster's shared memory (a shared address carries the CTA's rank, ``memory.CLUSTER_RANK_SHIFT``) and the
    thread's local memory appear in the generic space at windows (``memory.SHARED_WINDOW`` /
    ``LOCAL_WINDOW``), the kernel's parameter block at ``PARAM_WINDOW``
    (``cvta.param`` of a ``__grid_constant__`` parameter). ``cvta.to`` of an address outside the
    window is undefined in the ISA: the VM refuses it."""
    t = _ty(ins)
    d, a = ins.operands
    sp = next((p for p in ins.parts[1:] if p not in ("to",) and not is_type(p)), "")
    if sp == "global":
        m.write(d, t, act, m.read(a, t, act))
        return
    base = {"shared": mem.SHARED_WINDOW, "shared::cta": mem.SHARED_WINDOW, "shared::cluster": mem.SHARED_WINDOW,
            "local": mem.LOCAL_WINDOW, "param": mem.PARAM_WINDOW}.get(sp)
    if base is None:
        raise VmUnsupported(f"{ins.opcode}: state space .{sp} is not implemented")
    x = _as_u(m.read(a, t, act), t).astype(np.uint64)
    if ins.has("to"):
        r = x - U64(base)
        if (r >= U64(mem.WINDOW_SIZE)).any():
            i = int(np.flatnonzero(r >= U64(mem.WINDOW_SIZE))[0])
            raise VmMemoryFault(f"{ins.opcode} of {int(x[i]):#x}, which is not in the generic .{sp} window@thread{i}")
    else:
        if t.bits != 64:
            raise VmUnsupported(f"{ins.opcode}: generic addresses are 64-bit")
        r = x + U64(base)
    m.write(d, t, act, r.astype(t.udtype).view(t.dtype))


@handler("isspacep")
def _isspacep(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """isspacep.{global,shared{::cta,::cluster},local,param} p, a: whether generic address ``a`` is in that
    space's window (global: outside the shared, local and param windows); shared::cta: the executing CTA's
    shared memory, shared::cluster: any CTA's of its cluster (by the rank bits)."""
    d, a = ins.operands
    x = m.read(a, ptx_type("u64"), act)
    in_sh = (x - U64(mem.SHARED_WINDOW)) < U64(mem.WINDOW_SIZE)
    in_lo = (x - U64(mem.LOCAL_WINDOW)) < U64(mem.WINDOW_SIZE)
    in_pa = (x - U64(mem.PARAM_WINDOW)) < U64(mem.WINDOW_SIZE)
    sp = ins.parts[1]
    if sp in ("shared", "shared::cta", "shared::cluster") and m.cluster_size > 1:  # by the address's rank bits
        rank = ((x - U64(mem.SHARED_WINDOW)) >> U64(mem.CLUSTER_RANK_SHIFT)).astype(np.int64)
        mine = m.rank_of_cta[m.cta[act]]
        r = in_sh & ((rank < m.cluster_size) if sp == "shared::cluster" else (rank == mine))
    elif sp in ("shared", "shared::cta", "shared::cluster"):
        r = in_sh
    elif sp == "local":
        r = in_lo
    elif sp == "param":
        r = in_pa
    elif sp == "global":
        r = ~(in_sh | in_lo | in_pa)
    else:
        raise VmUnsupported(f"{ins.opcode}: state space .{sp} is not implemented")
    m.write(d, ptx_type("pred"), act, r)


@handler("mapa")
def _mapa(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``mapa{.shared::cluster}.{u32,u64} d, a, b`` (9.7.9.21): the address of the variable at ``a`` in the
    CTA of cluster rank ``b``: the same byte offset, rank ``b`` in the rank bits (``memory.CLUSTER_RANK_SHIFT``).
    Without ``.shared::cluster``, ``a`` and ``d`` are generic addresses in the shared window. ``a`` must be a
    shared address of this cluster (else a fault). A rank ``b`` outside the cluster still maps (mapa only computes
    an address: CUTLASS's cluster-launch-control pipeline maps every rank up to the largest cluster and predicates
    off the use); an access through the address faults, naming the rank. A rank the address cannot hold faults."""
    t = _ty(ins)
    d, a, b = ins.operands
    x = _as_u(m.read(a, t, act), t).astype(np.uint64)
    rank = m.read(b, ptx_type("u32"), act).astype(np.int64)
    generic = not ins.has("shared::cluster")
    if generic:
        x = x - U64(mem.SHARED_WINDOW)
        if (x >= U64(mem.WINDOW_SIZE)).any():
            i = int(np.flatnonzero(x >= U64(mem.WINDOW_SIZE))[0])
            raise VmMemoryFault(f"{ins.opcode}: {int(x[i] + U64(mem.SHARED_WINDOW)):#x} is not a generic shared "
                                f"address@thread{i}")
    src_rank = (x >> U64(mem.CLUSTER_RANK_SHIFT)).astype(np.int64)
    bad = (rank >= 1 << (t.bits - mem.CLUSTER_RANK_SHIFT)) | (rank < 0) | (src_rank >= m.cluster_size)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise VmMemoryFault(f"{ins.opcode}: address {int(x[i]):#x} to cluster rank {int(rank[i])} -- the cluster "
                            f"has {m.cluster_size} CTAs@thread{i}")
    r = (x & U64(mem.SHARED_OFFSET_MASK)) | (rank.astype(np.uint64) << U64(mem.CLUSTER_RANK_SHIFT))
    if generic:
        r = r + U64(mem.SHARED_WINDOW)
    m.write(d, t, act, r.astype(t.udtype).view(t.dtype))


def _round_int(x: np.ndarray, mode: str | None) -> np.ndarray:
    """Round float64 ``x`` to an integral value (.rni: nearest even, .rzi, .rmi, .rpi)."""
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
    check_qualifiers(ins)
    ts = _types(ins.opcode)
    if len(ts) != 2:
        raise VmUnsupported(f"{ins.opcode}: expected two types")
    dt, st = ts
    if dt.name in ("f16x2", "bf16x2") and st.name == "f32" and len(ins.operands) == 3:
        d, a, b = ins.operands
        f32 = ptx_type("f32")
        hi, lo = _bits(m.read(a, f32, act), f32), _bits(m.read(b, f32, act), f32)
        m.write(d, dt, act, floatops.pack_x2(ins, dt.name, hi, lo).astype(dt.udtype))
        return
    d, a = ins.operands
    x = m.read(a, st, act)
    rnd = next((p for p in ins.parts[1:] if p in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")), None)
    sat = ins.has("sat")
    if not _is_float(dt) and not _is_float(st):
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
        m.write(d, dt, act, _cvt_float(ins, dt, st, x, rnd, sat))


def _is_float(t: PtxType) -> bool:
    return t.kind == "f" or t.name == "bf16"


def _int_to_f64_odd(x: np.ndarray, st: PtxType) -> np.ndarray:
    """An integer's value as float64, rounded to odd when it has more than 53 significant bits."""
    if st.bits <= 32:
        return x.astype(np.float64)
    v = x.view(np.int64) if st.signed else x.view(np.uint64)
    hi = (v >> v.dtype.type(32)).astype(np.float64) * 4294967296.0
    lo = (v.view(np.uint64) & U64(0xFFFFFFFF)).astype(np.float64)
    return fpnum.odd_sum(hi, lo)




def _cvt_float(ins: Instr, dt: PtxType, st: PtxType, x: np.ndarray, rnd: str | None, sat: bool) -> np.ndarray:
    """cvt with a float source or destination (9.7.9.21): float -> float (.rn/.rz/.rm/.rp when
    narrowing, .rni/.rzi/.rmi/.rpi to an integral value), int -> float (rounded once, exactly, in the
    instruction's mode), float -> int (rounded by .rni/.rzi/.rmi/.rpi, saturated to the destination
    range; NaN per :func:`_nan_to_int`). .ftz flushes f32 subnormal inputs and results, .sat clamps
    float results to [0, 1]. Rounding is :mod:`mmacts.ptxvm.fpnum`'s; a NaN float result is the
    format's canonical NaN (:data:`mmacts.ptxvm.floatops.CANONICAL_NAN`)."""
    ftz = ins.has("ftz")
    if _is_float(st):
        sbits = _bits(x, st)
        v = fpnum.decode(sbits, fpnum.FORMATS[st.name])
        # .ftz flushes an f32 source, but not on the way to .f16 (H100 rounds an f32 subnormal there
        # as it is: cvt.rp.ftz.f16.f32 of 2^-149 gives 2^-24; to .bf16 it flushes; fuzz records)
        if ftz and st.name == "f32" and dt.name != "f16":
            v = fpnum.flush(v, fpnum.F32)
    if _is_float(dt):
        dfmt = fpnum.FORMATS[dt.name]
        with np.errstate(all="ignore"):
            if _is_float(st):
                if rnd in ("rni", "rzi", "rmi", "rpi"):
                    if dt.bits != st.bits:
                        raise VmUnsupported(f"{ins.opcode}: .{rnd} between different widths")
                    r = _round_int(v, rnd)
                else:
                    r = fpnum.round_to(v, dfmt, rnd or "rn")
            else:
                if rnd in ("rni", "rzi", "rmi", "rpi"):
                    raise VmUnsupported(f"{ins.opcode}: integer rounding for an int -> float cvt")
                mode = rnd or "rn"
                if st.bits <= 32:
                    r = fpnum.round_to(x.astype(np.float64), dfmt, mode)
                elif dfmt.p <= 51:
                    r = fpnum.round_to(_int_to_f64_odd(x, st), dfmt, mode)
                else:
                    r = fpnum.int_to_float([int(i) for i in x.view(st.dtype)], dfmt, mode)
            if ftz and dt.name == "f32":  # tininess after rounding, unbounded exponent (fpnum.tiny)
                src = v if _is_float(st) else r
                r = np.where(fpnum.tiny(src, fpnum.F32, rnd if rnd in fpnum.MODES else "rn"),
                             np.copysign(0.0, r), r)
            if sat:  # NaN -> +0, as the ISA says and H100 does (but see AMB-FUZZ-CVT-SAT-NAN)
                r = np.where(r > 0, np.minimum(r, 1.0), 0.0)
        nan = np.isnan(r)
        bits = fpnum.encode(r, dfmt).astype(dfmt.udtype)
        if nan.any():
            sfmt = fpnum.FORMATS[st.name]
            if dfmt is sfmt:  # cvt.rni.f64.f64 and kin: the operand NaN, as arithmetic does
                bits = np.where(nan, floatops.arith_nan(sfmt, [sbits]), bits)
            else:
                bits = np.where(nan, floatops.cvt_nan(sbits, sfmt, dfmt, ftz), bits)
        return bits.view(dt.dtype)
    # float -> int: round, saturate to the destination's range (PTX float->int always saturates)
    r = _round_int(v, rnd)
    lo = -(2 ** (dt.bits - 1)) if dt.signed else 0
    hi = 2 ** (dt.bits - 1) - 1 if dt.signed else 2**dt.bits - 1
    nan = np.isnan(r)
    r = np.where(nan, 0.0, r)
    over, under = r >= float(hi), r <= float(lo)
    mid = np.where(over | under, 0.0, r)
    out = (mid.astype(np.int64).view(np.uint64) if dt.signed or dt.bits < 64 else mid.astype(np.uint64))
    out = np.where(over, U64(hi & (2**64 - 1)), np.where(under, U64(lo & (2**64 - 1)), out))
    out = np.where(nan, U64(_nan_to_int(st, dt)), out)
    return out.astype(dt.udtype).view(dt.dtype)


def _nan_to_int(st: PtxType, dt: PtxType) -> int:
    """What a float -> integer cvt writes for NaN (the ISA says 0; H100, fuzz records): from .f64 the
    destination's top bit (0x80, 0x8000, ... as that type: .s8 is -128), from .f16/.bf16/.f32 0 for
    destinations up to 32 bits and 0x8000000000000000 for .u64 and .s64."""
    if st.name == "f64" or dt.bits == 64:
        return 1 << (dt.bits - 1)
    return 0


# ------------------------------------------------------------------------------------------ memory
def _space(ins: Instr) -> str:
    """The state space an ld / st / atom names: ``shared`` (the executing CTA's, ``.shared{::cta}``),
    ``shared::cluster`` (any CTA of the cluster, by the address's rank bits), global, param, local, const or
    generic."""
    for p in ins.parts[1:]:
        if p.startswith("shared"):
            if p == "shared::cluster":
                return p
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
    raw = m.load(sp, m.address(a, act), nb, act)
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
    m.store(sp, m.address(a, act), data, act, ins)


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
                for c in np.unique(m.peer[m.cta[act]]):  # a thread may have written a peer CTA's memory
                    w = m.smem_writer[c]
                    w[np.isin(w, act)] = -1
            return
        raise VmUnsupported(ins.opcode)
    m.notify("fence", ins, act)


@handler("mbarrier")
def _mbarrier(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """mbarrier.init / arrive / arrive_drop / try_wait(.parity) / test_wait(.parity) / expect_tx /
    complete_tx / inval (9.7.13.15). The object is the executing CTA's (``.shared{::cta}``), or for arrive,
    expect_tx and complete_tx with ``.shared::cluster`` any CTA's of the cluster (a remote arrive: CUTLASS's
    consumer releasing a peer's stage), named by the address's rank bits; a remote arrive returns no state."""
    op = ins.parts[1]
    u32, u64, pred = ptx_type("u32"), ptx_type("u64"), ptx_type("pred")
    ops = ins.operands
    if op == "init":
        ctas, offs = _mbar_at(m, ins, ops[0], act, False)
        cnt = m.read(ops[1], u32, act)
        for c, a, n in zip(ctas, offs, cnt, strict=True):
            if not 1 <= int(n) <= (1 << 20) - 1:
                raise VmError(f"mbarrier.init count {int(n)} out of range")
            m.mbarriers[(int(c), int(a))] = MbarrierState(int(n), int(n))
        return
    if op in ("arrive", "arrive_drop"):
        _mbar_arrive(m, ins, act)
        return
    if op in ("expect_tx", "complete_tx"):
        ctas, offs = _mbar_at(m, ins, ops[0], act, True)
        cnt = m.read(ops[1], u32, act)
        for c, a, n in zip(ctas, offs, cnt, strict=True):
            mb = _mb(m, int(c), int(a), ins)
            if op == "expect_tx":
                mb.tx += int(n)
            else:
                mb.tx -= int(n)
                arrive(m, mb, 0)
        return
    if op in ("try_wait", "test_wait"):
        ctas, offs = _mbar_at(m, ins, ops[1], act, False)
        parity = ins.has("parity")
        if parity:
            want = m.read(ops[2], u32, act).astype(np.int64) & 1
        else:
            want = m.read(ops[2], u64, act).astype(np.int64)
        done = np.zeros(len(act), dtype=bool)
        for i, (c, a) in enumerate(zip(ctas, offs, strict=True)):
            mb = _mb(m, int(c), int(a), ins)
            if not _phase_done(mb, int(want[i]), parity):
                m.notify("mbarrier_wait", int(c), int(a))  # the async engine may complete work now
            done[i] = _phase_done(mb, int(want[i]), parity)
        m.write(ops[0], pred, act, done)
        if not done.all():
            m.spin(act[~done])
        return
    if op == "inval":
        ctas, offs = _mbar_at(m, ins, ops[0], act, False)
        for c, a in zip(ctas, offs, strict=True):
            m.mbarriers.pop((int(c), int(a)), None)
        return
    raise VmUnsupported(f"{ins.opcode} is not implemented")


def _mbar_arrive(m: Machine, ins: Instr, act: np.ndarray) -> None:
    """``mbarrier.arrive{.expect_tx}`` / ``arrive_drop`` ``state, [addr]{, count}`` on a local or (``.shared::cluster``)
    remote object."""
    ops = ins.operands
    has_state = ops[0].kind == "reg" or ops[0].kind == "sink"
    aop = ops[1] if has_state else ops[0]
    ctas, offs = _mbar_at(m, ins, aop, act, True)
    count_op = ops[2] if has_state and len(ops) > 2 else (ops[1] if not has_state and len(ops) > 1 else None)
    cnt = m.read(count_op, ptx_type("u32"), act) if count_op is not None else np.ones(len(act), dtype=np.uint32)
    if has_state and ops[0].kind == "reg" and (ctas != m.cta[act]).any():
        i = int(np.flatnonzero(ctas != m.cta[act])[0])
        raise VmError(f"{ins.opcode}: an arrive on another CTA's mbarrier returns no state (write the sink _, "
                      f"9.7.13.15.13)@thread{i}")
    states = np.zeros(len(act), dtype=np.uint64)
    expect_tx = ins.has("expect_tx")
    for i, (c, a) in enumerate(zip(ctas, offs, strict=True)):
        mb = _mb(m, int(c), int(a), ins)
        states[i] = mb.phase
        if expect_tx:
            mb.tx += int(cnt[i])
            arrive_n = 1
        else:
            arrive_n = int(cnt[i])
        if ins.parts[1] == "arrive_drop":
            mb.expected -= arrive_n
        arrive(m, mb, arrive_n)
    if has_state and ops[0].kind == "reg":
        m.write(ops[0], ptx_type("u64"), act, states)


def _mbar_at(m: Machine, ins: Instr, op: Operand, act: np.ndarray, remote: bool) -> tuple[np.ndarray, np.ndarray]:
    """(chunk CTA, offset) of the mbarrier each active thread names: a ``.shared{::cta}`` address, a
    ``.shared::cluster`` one (only where ``remote``: arrive, expect_tx, complete_tx), or with no state space a
    generic address in the shared window. 8-byte aligned."""
    addrs = m.address(op, act)
    cluster = ins.has("shared::cluster")
    if not any(p.startswith("shared") for p in ins.parts):
        addrs = addrs - U64(mem.SHARED_WINDOW)
        if (addrs >= U64(mem.WINDOW_SIZE)).any():
            i = int(np.flatnonzero(addrs >= U64(mem.WINDOW_SIZE))[0])
            raise VmMemoryFault(f"{ins.opcode}: generic address {int(addrs[i] + U64(mem.SHARED_WINDOW)):#x} is not in "
                                f"shared memory@thread{i}")
        cluster = remote
    if cluster and not remote:
        raise VmUnsupported(f"{ins.opcode}: .shared::cluster is not a state space of mbarrier.{ins.parts[1]}")
    ctas, offs = m.shared_target(addrs, act, f"mbarrier.{ins.parts[1]}", cluster)
    check_aligned(offs, 8, "shared")
    return ctas, offs


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
    m.spin(act)
