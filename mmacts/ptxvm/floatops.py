"""Float instruction semantics on raw bits: add sub mul fma min max neg abs setp-inputs and cvt, for
.f16 .bf16 .f32 .f64 and the packed .f16x2 .bf16x2 forms.

Every rule here is either the PTX ISA's (9.7.3 half precision, 9.7.4 single/double, 9.7.9.21 cvt)
or, where the ISA leaves it open (the bits of a NaN result, float-to-integer conversion of NaN), what
an H100 answers: the differential fuzz records (``validation/fuzz``) pin each rule bit for bit, and
``mmacts/ambiguity/register.yaml`` names the ones the ISA text does not state. Rounding is
:mod:`mmacts.ptxvm.fpnum`'s (exact result, one rounding in the instruction's mode).
"""

from __future__ import annotations

import numpy as np

from mmacts.ptxvm.errors import VmUnsupported
from mmacts.ptxvm.fpnum import BF16, F16, F32, F64, MODES, Fmt, decode, encode, flush, odd_sum, round_exact, round_to
from mmacts.ptxvm.parse import Instr

U64 = np.uint64

FLOAT_TYPES: dict[str, tuple[Fmt, int]] = {"f16": (F16, 1), "bf16": (BF16, 1), "f32": (F32, 1), "f64": (F64, 1),
                                           "f16x2": (F16, 2), "bf16x2": (BF16, 2)}
"""Type name -> (format, lanes)."""

CANONICAL_NAN = {F16: 0x7FFF, BF16: 0x7FFF, F32: 0x7FFFFFFF}
"""The NaN H100 writes for a NaN result of half and single arithmetic (add sub mul fma min max neg abs)
and of conversions between them: all ones but the sign (fuzz records; the ISA says "canonical NaN").
Double precision is different, see :func:`f64_nan`."""

F64_DEFAULT_NAN = 0xFFF8000000000000
"""What H100 double arithmetic writes for an invalid operation with no NaN operand (inf - inf, 0 * inf):
the negative quiet NaN with no payload (fuzz records)."""


def quiet(bits: np.ndarray, src: Fmt, dst: Fmt) -> np.ndarray:
    """A NaN of ``src`` carried into ``dst`` the way H100's double-precision paths do: sign kept, the
    payload's top bits kept (shifted left or truncated), the quiet bit set."""
    b = np.asarray(bits).astype(np.uint64)
    ms, md = src.p - 1, dst.p - 1
    mant = b & U64((1 << ms) - 1)
    mant = mant << U64(md - ms) if md >= ms else mant >> U64(ms - md)
    sign = (b >> U64(src.bits - 1)) & U64(1)
    exp_ones = U64(((1 << (dst.bits - dst.p)) - 1) << md)
    out = (sign << U64(dst.bits - 1)) | exp_ones | mant | U64(1 << (md - 1))
    return out.astype(dst.udtype)


def f64_nan(srcs: list[np.ndarray]) -> np.ndarray:
    """The NaN an H100 double-precision operation writes: a NaN operand quieted, sign and payload
    kept, taken from ``b`` first, then ``c``, then ``a`` (``d = a*b + c``; two-operand forms: ``b``
    then ``a``); with no NaN operand (an invalid operation), :data:`F64_DEFAULT_NAN` (fuzz records)."""
    out = np.full(len(srcs[0]), U64(F64_DEFAULT_NAN), dtype=np.uint64)
    order = [srcs[0], srcs[2], srcs[1]] if len(srcs) == 3 else list(srcs)  # lowest priority first
    for s in order:
        b = np.asarray(s).astype(np.uint64)
        isn = np.isnan(b.view(np.float64))
        out = np.where(isn, quiet(b, F64, F64), out)
    return out


def is_float_type(name: str) -> bool:
    return name in FLOAT_TYPES


def _split(bits: np.ndarray, n: int, fmt: Fmt) -> list[np.ndarray]:
    if n == 1:
        return [np.asarray(bits).astype(fmt.udtype)]
    b = np.asarray(bits).astype(np.uint32)
    return [(b & np.uint32(0xFFFF)).astype(np.uint16), (b >> np.uint32(16)).astype(np.uint16)]


def _join(parts: list[np.ndarray], n: int) -> np.ndarray:
    if n == 1:
        return parts[0]
    return (parts[0].astype(np.uint32) | (parts[1].astype(np.uint32) << np.uint32(16))).astype(np.uint32)


def rounding(ins: Instr, default: str = "rn") -> str:
    return next((p for p in ins.parts[1:] if p in MODES), default)


def _ftz_applies(ins: Instr, fmt: Fmt) -> bool:
    return ins.has("ftz") and fmt in (F32, F16)


def _with_nan(r: np.ndarray, fmt: Fmt, srcs: list[np.ndarray] | None = None) -> np.ndarray:
    """``r`` encoded in ``fmt``, NaNs replaced by the NaN H100 writes (``srcs``: the operands' bits,
    for double precision's propagation)."""
    bits = encode(r, fmt).astype(fmt.udtype)
    nan = np.isnan(r)
    if nan.any():
        if fmt is F64:
            bits = np.where(nan, f64_nan(srcs or []), bits) if srcs else np.where(nan, U64(F64_DEFAULT_NAN), bits)
        else:
            bits = np.where(nan, fmt.udtype.type(CANONICAL_NAN[fmt]), bits)
    return bits


# ------------------------------------------------------------------------------------ arithmetic
def _exact_rounded(op: str, v: list[np.ndarray], fmt: Fmt, mode: str, ftz: bool = False) -> np.ndarray:
    """add/sub/mul/fma of float64 values of ``fmt``, rounded once to ``fmt`` in ``mode``. ``ftz``:
    tiny results (IEEE tininess after rounding, :func:`mmacts.ptxvm.fpnum.tiny`) become zeros of
    their sign. f64: an fma whose product is finite and whose addend is infinite is the addend."""
    with np.errstate(all="ignore"):
        if fmt is F64:
            if op == "add":
                r = v[0] + v[1]
            elif op == "sub":
                r = v[0] - v[1]
            elif op == "mul":
                r = v[0] * v[1]
            else:
                r = v[0] * v[1] + v[2]
            if mode == "rn" and op != "fma":
                return r
            fin = np.all([np.isfinite(x) for x in v], axis=0)
            if op == "fma":  # a finite product (however large) plus an infinity is that infinity
                r = np.where(np.isfinite(v[0]) & np.isfinite(v[1]) & np.isinf(v[2]), v[2], r)
            if fin.any():
                ex = round_exact(op, tuple(x[fin] for x in v), fmt, mode)
                r = r.copy()
                r[fin] = ex
            return r
        if op == "mul":
            return round_to(v[0] * v[1], fmt, mode, ftz)
        p, q = (v[0] * v[1], v[2]) if op == "fma" else (v[0], v[1] if op == "add" else -v[1])
        s = odd_sum(p, q)
        r = round_to(s, fmt, mode, ftz)
        # IEEE 754 6.3: an exact zero sum is +0 in every mode but .rm (-0), unless both addends are
        # zeros of the same sign (that sign)
        zero = (s == 0) & ~((p == 0) & (q == 0) & (np.signbit(p) == np.signbit(q)))
        if zero.any():
            r = np.where(zero, -0.0 if mode == "rm" else 0.0, r)
        return r


def _minmax(ins: Instr, op: str, fmt: Fmt, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """min/max: a NaN input gives the other input (.NaN: NaN); -0 < +0; .xorsign.abs: of |x| and
    |y|, with the sign bit x.sign ^ y.sign."""
    with np.errstate(all="ignore"):
        xs = ins.has("xorsign")
        if xs:
            neg = np.signbit(x) ^ np.signbit(y)
            x, y = np.abs(x), np.abs(y)
        fn = np.fmin if op == "min" else np.fmax
        r = fn(x, y)
        both0 = (x == 0) & (y == 0)
        if both0.any():
            sx, sy = np.signbit(x), np.signbit(y)
            nz = (sx | sy) if op == "min" else (sx & sy)
            r = np.where(both0, np.where(nz, -0.0, 0.0), r)
        if ins.has("NaN"):
            r = np.where(np.isnan(x) | np.isnan(y), np.nan, r)
        if xs:
            r = np.where(np.isnan(r), r, np.where(neg, -np.abs(r), np.abs(r)))
        if ins.has("relu"):
            r = np.where(r <= 0, 0.0, r)
        return r


def _refuse_f64_minmax_nans(ins: Instr, srcs: list[np.ndarray]) -> None:
    """min/max.f64 of two NaNs: DMNMX returns one quieted, a DSETP+SEL pair (which ptxas also emits)
    returns one raw; unless both operands are the same quiet NaN the bits depend on the compiler."""
    a, b = (np.asarray(x).astype(np.uint64) for x in srcs[:2])
    both = np.isnan(a.view(np.float64)) & np.isnan(b.view(np.float64))
    same_quiet = (a == b) & ((a & U64(1 << 51)) != 0)
    bad = both & ~same_quiet
    if bad.any():
        t = int(np.flatnonzero(bad)[0])
        raise VmUnsupported(f"{ins.opcode} of two NaNs ({int(a[t]):#x}, {int(b[t]):#x}): quieted or not depends on "
                            f"the instruction ptxas picks (AMB-FUZZ-F64-NAN-CHOICE)@thread{t}")


def _refuse_nan_choice(ins: Instr, fmt: Fmt, srcs: list[np.ndarray]) -> None:
    """Double precision returns one of its NaN operands, quieted; with two NaNs that differ once quieted,
    which one depends on
    the operand order ptxas emits (it commutes freely: ``sub.f64 d, a, b`` picked ``a``'s NaN in one
    kernel, ``b``'s in another; fuzz records). The ISA does not say: the VM refuses the case."""
    if fmt is not F64 or len(srcs) < 2:
        return
    b = [np.asarray(s).astype(np.uint64) for s in srcs]
    nan = [np.isnan(x.view(np.float64)) for x in b]
    for i in range(len(b)):
        for j in range(i + 1, len(b)):
            clash = nan[i] & nan[j] & (quiet(b[i], F64, F64) != quiet(b[j], F64, F64))
            if clash.any():
                t = int(np.flatnonzero(clash)[0])
                raise VmUnsupported(f"{ins.opcode} of two different NaNs ({int(b[i][t]):#x}, {int(b[j][t]):#x}): "
                                    f"which one H100 returns depends on ptxas's operand order@thread{t}")


def arith(ins: Instr, op: str, tname: str, srcs: list[np.ndarray], same: bool = False) -> np.ndarray:
    """``op`` (add sub mul fma min max) on the raw bits ``srcs`` of type ``tname``; raw bits out.
    ``same``: .f16/.f32/.f64 min/max whose two sources are one register: ptxas folds it to a move, so
    the operand's bits pass unchanged, NaN payloads and signalling NaNs included (exact for every other
    value too, since min(x, x) = x); .bf16 and the packed forms are not folded (canonical NaN). Fuzz
    records (AMB-FUZZ-MINMAX-SAME-REGISTER)."""
    fmt, n = FLOAT_TYPES[tname]
    folds = n == 1 and fmt is not BF16  # H100 + ptxas 13.5: .f16 .f32 .f64 fold; .bf16 and the x2 forms do not
    if same and folds and op in ("min", "max") and not any(ins.has(q) for q in ("xorsign", "ftz", "NaN")):
        return np.asarray(srcs[0]).copy()
    if fmt is F64 and op in ("min", "max"):
        _refuse_f64_minmax_nans(ins, srcs)
    _refuse_nan_choice(ins, fmt, srcs)
    lanes = [_split(s, n, fmt) for s in srcs]
    out = []
    for i in range(n):
        v = [decode(ls[i], fmt) for ls in lanes]
        ftz = _ftz_applies(ins, fmt)
        if ftz:
            v = [flush(x, fmt) for x in v]
        if op in ("min", "max"):
            r = _minmax(ins, op, fmt, v[0], v[1])
        else:
            mode = rounding(ins)
            if mode != "rn" and fmt in (F16, BF16):
                raise VmUnsupported(f"{ins.opcode}: half-precision arithmetic rounds with .rn only")
            r = _exact_rounded("fma" if op == "mad" else op, v, fmt, mode, ftz)
            with np.errstate(invalid="ignore"):
                if ins.has("sat"):
                    r = np.where(r > 0, np.minimum(r, 1.0), 0.0)
                if ins.has("relu"):  # negative results and -0 become +0; NaN stays NaN
                    r = np.where(r <= 0, 0.0, r)
        out.append(_with_nan(r, fmt, [ls[i] for ls in lanes]))
    return _join(out, n)


def unary(ins: Instr, op: str, tname: str, src: np.ndarray) -> np.ndarray:
    """neg / abs on raw bits: the sign bit flipped / cleared (.ftz: subnormal inputs flushed first);
    a NaN input is refused: the ISA leaves the result unspecified and ptxas implements neg/abs per use,
    as an add (canonical or quieted NaN) or as a sign-bit LOP (payload kept; AMB-FUZZ-NEG-ABS-NAN)."""
    fmt, n = FLOAT_TYPES[tname]
    out = []
    for lane in _split(src, n, fmt):
        v = decode(lane, fmt)
        if np.isnan(v).any():
            t = int(np.flatnonzero(np.isnan(v))[0])
            raise VmUnsupported(f"{ins.opcode} of a NaN ({int(lane[t]):#x}): the ISA leaves the result NaN "
                                "unspecified and ptxas picks per use (an FADD/DADD quiets or canonicalises it, a "
                                f"sign-bit LOP keeps the payload; fuzz records)@thread{t}")
        if _ftz_applies(ins, fmt):
            v = flush(v, fmt)
        r = -v if op == "neg" else np.abs(v)
        out.append(_with_nan(r, fmt, [lane]))
    return _join(out, n)


def arith_nan(fmt: Fmt, srcs: list[np.ndarray]) -> np.ndarray:
    """The NaN an arithmetic result of ``fmt`` takes (canonical, or double's propagation)."""
    if fmt is F64:
        return f64_nan(srcs)
    return np.full(len(srcs[0]), fmt.udtype.type(CANONICAL_NAN[fmt]), dtype=fmt.udtype)


def pack_x2(ins: Instr, tname: str, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """``cvt{.rn,.rz}{.relu}.{f16x2,bf16x2}.f32 d, a, b``: ``a`` (f32 bits) to the upper half, ``b`` to
    the lower, each rounded once in the instruction's mode; .relu: negatives and -0 to +0; NaN: the
    canonical half NaN."""
    fmt, _ = FLOAT_TYPES[tname]
    mode = rounding(ins)
    halves = []
    for src in (lo, hi):
        v = decode(src, F32)
        r = round_to(v, fmt, mode)
        if ins.has("relu"):
            with np.errstate(invalid="ignore"):
                r = np.where(r <= 0, 0.0, r)
        halves.append(_with_nan(r, fmt))
    return _join(halves, 2)


def cvt_nan(src_bits: np.ndarray, src: Fmt, dst: Fmt, ftz: bool) -> np.ndarray:
    """What H100 writes for ``cvt`` of a NaN between float formats (fuzz records): through the double
    path (either side .f64) the NaN is carried (:func:`quiet`; with .ftz on an .f32 source the
    canonical f32 NaN is carried); .bf16 -> .f32 is a plain shift of the bits (no quieting; with .ftz:
    canonical); every other pair writes the destination's canonical NaN."""
    if src is F64 or dst is F64:
        b = np.full(len(src_bits), U64(CANONICAL_NAN[F32])) if (ftz and src is F32) else src_bits
        return quiet(b, src, dst)
    if src is BF16 and dst is F32 and not ftz:
        return (np.asarray(src_bits).astype(np.uint32) << np.uint32(16)).astype(np.uint32)
    return np.full(len(src_bits), dst.udtype.type(CANONICAL_NAN[dst]), dtype=dst.udtype)


def compare_inputs(ins: Instr, tname: str, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """setp's float operands as float64 (.ftz: subnormal inputs compare as zeros)."""
    fmt, _ = FLOAT_TYPES[tname]
    vx, vy = decode(x, fmt), decode(y, fmt)
    if _ftz_applies(ins, fmt):
        vx, vy = flush(vx, fmt), flush(vy, fmt)
    return vx, vy
