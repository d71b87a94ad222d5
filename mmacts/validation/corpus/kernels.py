"""The PTX-semantics corpus: small sm_90a kernels, one module each, that exercise the non-MMA
instructions the PTX VM implements, thread by thread, on random inputs read from global memory.

Every kernel has the entry signature ``NAME(.param .u64 in, .param .u64 out, .param .u32 n)``:

* ``in`` is a ``uint64[threads, n_in]`` array: thread ``gid`` reads its slots at ``in + 8*n_in*gid``
  (a narrow load reads the low bytes of a slot; the bytes above carry random garbage on purpose);
* ``out`` is a ``uint64[threads, n_out]`` array pre-filled with 0xFF bytes: thread ``gid`` writes
  its slots at ``out + 8*n_out*gid`` (a narrow store leaves the slot's upper bytes 0xFF);
* ``n`` is how many threads work: ``gid >= n`` exits at once (``n = threads - n_skip``).

``gid`` is the linear thread id over a 3-D block and a 2-D (or 3-D) grid:
``((ctaid.z*nctaid.y + ctaid.y)*nctaid.x + ctaid.x) * ntid.x*ntid.y*ntid.z + tid_linear``, where
``tid_linear = (tid.z*ntid.y + tid.y)*ntid.x + tid.x``. The body sees ``%gt`` (tid_linear), ``%gbs``
(block size), ``%gid``, ``%gin`` / ``%gout`` (this thread's slots) and ``%gin0`` / ``%gout0`` (the
buffers' bases, global addresses).

Registers in a body are declared automatically from their names: ``%pN`` .pred, ``%hN`` .b16,
``%rN`` .b32, ``%rdN`` .b64, ``%fN`` .f32.

Nothing here needs a GPU: :func:`corpus` builds the kernels, :meth:`Kernel.inputs` the inputs
(fixed seed per kernel name). ``group`` is ``core`` for what issue 12 lists, ``extra`` for
instructions the VM may implement later (shfl/vote, atomics, fp8 cvt, rounding modes, ...).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

PTX_VERSION = "8.4"
ARCH = "sm_90a"
U64 = np.uint64
MASK64 = (1 << 64) - 1

InputGen = Callable[[np.random.Generator, int], np.ndarray]


# ------------------------------------------------------------------------------------ kernel type
@dataclass(frozen=True)
class Kernel:
    """One corpus kernel: its PTX body, launch shape and input recipe."""

    name: str
    doc: str
    body: str
    n_in: int
    n_out: int
    gen: InputGen = field(repr=False, compare=False)
    block: tuple[int, int, int] = (8, 4, 2)
    grid: tuple[int, int, int] = (2, 2, 1)
    n_skip: int = 0
    shared: str = ""
    """Module-scope declarations (``.shared`` variables) placed before the entry."""
    group: str = "core"
    cluster: tuple[int, int, int] = (1, 1, 1)
    """Cluster shape (``.reqnctapercluster``); (1, 1, 1) launches without a cluster directive."""

    @property
    def threads(self) -> int:
        b, g = self.block, self.grid
        return b[0] * b[1] * b[2] * g[0] * g[1] * g[2]

    @property
    def n(self) -> int:
        return self.threads - self.n_skip

    @property
    def seed(self) -> int:
        return zlib.crc32(self.name.encode())

    def inputs(self) -> np.ndarray:
        """``uint64[threads, n_in]``, deterministic (seed from the kernel's name)."""
        x = np.asarray(self.gen(np.random.default_rng(self.seed), self.threads), dtype=U64)
        assert x.shape == (self.threads, self.n_in), (self.name, x.shape)
        return np.ascontiguousarray(x)

    def ptx(self) -> str:
        return module_ptx(self)


_REG_CLASSES = (("rd", ".b64"), ("r", ".b32"), ("h", ".b16"), ("f", ".f32"), ("p", ".pred"))
_REG_RE = re.compile(r"%(rd|r|h|f|p)(\d+)\b")


def _declarations(body: str) -> str:
    top: dict[str, int] = {}
    for cls, num in _REG_RE.findall(body):
        top[cls] = max(top.get(cls, -1), int(num))
    return "\n".join(f"    .reg {ty} %{cls}<{top[cls] + 1}>;" for cls, ty in _REG_CLASSES if cls in top)


def module_ptx(k: Kernel) -> str:
    """The whole PTX module of ``k`` (header, shared declarations, entry)."""
    body = "\n".join("    " + ln.strip() if ln.strip() and not ln.strip().endswith(":") else ln.strip()
                     for ln in k.body.strip().splitlines())
    doc = "\n".join("// " + ln if ln else "//" for ln in k.doc.strip().splitlines())
    shared = ("\n" + k.shared.strip() + "\n") if k.shared.strip() else ""
    cluster = f"\n.reqnctapercluster {k.cluster[0]}, {k.cluster[1]}, {k.cluster[2]}" if k.cluster != (1, 1, 1) else ""
    return f"""//
// mmacts PTX-semantics corpus kernel `{k.name}` ({k.group})
{doc}
//
.version {PTX_VERSION}
.target {ARCH}
.address_size 64
{shared}
.visible .entry {k.name}(
    .param .u64 p_in,
    .param .u64 p_out,
    .param .u32 p_n
){cluster}
{{
    .reg .pred %gq;
    .reg .b32 %gtx, %gty, %gtz, %gnx, %gny, %gnz, %gcx, %gcy, %gcz, %gncx, %gncy, %gt, %gbs, %gb, %gid, %gn;
    .reg .b64 %gin0, %gout0, %gin, %gout, %goff;
{_declarations(k.body)}
    ld.param.u64 %gin0, [p_in];
    ld.param.u64 %gout0, [p_out];
    ld.param.u32 %gn, [p_n];
    cvta.to.global.u64 %gin0, %gin0;
    cvta.to.global.u64 %gout0, %gout0;
    mov.u32 %gtx, %tid.x;
    mov.u32 %gty, %tid.y;
    mov.u32 %gtz, %tid.z;
    mov.u32 %gnx, %ntid.x;
    mov.u32 %gny, %ntid.y;
    mov.u32 %gnz, %ntid.z;
    mov.u32 %gcx, %ctaid.x;
    mov.u32 %gcy, %ctaid.y;
    mov.u32 %gcz, %ctaid.z;
    mov.u32 %gncx, %nctaid.x;
    mov.u32 %gncy, %nctaid.y;
    mad.lo.u32 %gt, %gtz, %gny, %gty;
    mad.lo.u32 %gt, %gt, %gnx, %gtx;
    mul.lo.u32 %gbs, %gnx, %gny;
    mul.lo.u32 %gbs, %gbs, %gnz;
    mad.lo.u32 %gb, %gcz, %gncy, %gcy;
    mad.lo.u32 %gb, %gb, %gncx, %gcx;
    mad.lo.u32 %gid, %gb, %gbs, %gt;
    setp.ge.u32 %gq, %gid, %gn;
    @%gq bra $Ldone;
    mul.wide.u32 %goff, %gid, {8 * k.n_in};
    add.s64 %gin, %gin0, %goff;
    mul.wide.u32 %goff, %gid, {8 * k.n_out};
    add.s64 %gout, %gout0, %goff;
{body}
$Ldone:
    ret;
}}
"""


def bounded_wait(n: int, try_wait: str) -> str:
    """PTX lines retrying ``try_wait`` (an ``mbarrier.try_wait`` whose first operand is its predicate) until it
    succeeds or 10^6 tries have passed -- every corpus wait is bounded, so a kernel that would hang ends and its
    record shows the failed wait. Uses ``%r2n``, ``%p2n``, ``%p3n`` and the label ``$L_wn``."""
    done = try_wait.split()[1].rstrip(",")
    return (f"mov.u32 %r2{n}, 0;\n$L_w{n}:\n{try_wait}\nadd.u32 %r2{n}, %r2{n}, 1;\n"
            f"setp.lt.u32 %p2{n}, %r2{n}, 1000000;\nnot.pred %p3{n}, {done};\nand.pred %p3{n}, %p3{n}, %p2{n};\n"
            f"@%p3{n} bra $L_w{n};\n")


# ------------------------------------------------------------------------------------ input recipes
def _garbage_above(rng: np.random.Generator, vals: np.ndarray, bits: int) -> np.ndarray:
    """Put random bits above the low ``bits`` of each u64 slot (narrow loads must ignore them)."""
    vals = vals.astype(U64)
    if bits >= 64:
        return vals
    junk = rng.integers(0, 1 << 63, size=vals.shape, dtype=np.int64).astype(U64) << U64(1)
    low = U64((1 << bits) - 1)
    return (vals & low) | (junk & ~low)


def edge_ints(bits: int) -> np.ndarray:
    """Edge values of a ``bits``-wide integer (as unsigned patterns)."""
    m = (1 << bits) - 1
    h = 1 << (bits - 1)
    v = {0, 1, 2, 3, m, m - 1, m - 2, h, h - 1, h + 1, h - 2, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF,
         0x10000, 0x5555555555555555, 0xAAAAAAAAAAAAAAAA, 0x0F0F0F0F0F0F0F0F, 0x7FFFFFFF, 0x80000000,
         0xFFFFFFFF, 0x100000000, 0x123456789ABCDEF0}
    for s in range(bits):
        v.add(1 << s)
        v.add((1 << s) - 1)
        v.add(m ^ (1 << s))
    return np.array(sorted(x & m for x in v), dtype=U64)


def rand_ints(rng: np.random.Generator, n: int, bits: int) -> np.ndarray:
    """A mix: edge values, full-width random, small magnitudes (both signs), random bit lengths."""
    m = (1 << bits) - 1
    full = rng.integers(0, 1 << 63, size=n, dtype=np.int64).astype(U64) * U64(2) + rng.integers(
        0, 2, size=n).astype(U64)
    full &= U64(m)
    edge = rng.choice(edge_ints(bits), size=n)
    small = (rng.integers(-20, 21, size=n).astype(np.int64).astype(U64)) & U64(m)
    nb = rng.integers(0, bits + 1, size=n)
    short = np.array([int(f) & ((1 << int(b)) - 1) for f, b in zip(full, nb, strict=True)], dtype=U64)
    pick = rng.integers(0, 4, size=n)
    return np.choose(pick, [edge, full, small, short]).astype(U64)


def related(rng: np.random.Generator, a: np.ndarray, bits: int) -> np.ndarray:
    """A second operand: often equal to ``a``, or ``a`` +- 1, else independent."""
    m = U64((1 << bits) - 1)
    b = rand_ints(rng, a.size, bits)
    pick = rng.integers(0, 10, size=a.size)
    b = np.where(pick < 2, a, b)
    b = np.where(pick == 2, (a + U64(1)) & m, b)
    b = np.where(pick == 3, (a - U64(1)) & m, b)
    return b.astype(U64)


def int_slots(*widths: int, relate: bool = True) -> InputGen:
    """Slots of the given bit widths; slot 1 related to slot 0 when both have the same width."""

    def gen(rng: np.random.Generator, n: int) -> np.ndarray:
        cols = []
        for i, w in enumerate(widths):
            if i == 1 and relate and widths[0] == w:
                v = related(rng, cols[0] & U64((1 << w) - 1), w)
            else:
                v = rand_ints(rng, n, w)
            cols.append(_garbage_above(rng, v, w))
        return np.stack(cols, axis=1)

    return gen


F32_SPECIAL = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
               0x7F800001, 0xFF800001, 0x7FBFFFFF, 0x7FFFFFFF, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF,
               0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800001, 0x3F7FFFFF, 0x4B000000, 0x4B7FFFFF,
               0x3F000000, 0x3FC00000, 0x40000000, 0xCF000000, 0x4F000000, 0x4F800000, 0x5F000000, 0x5F800000,
               0xDF000000, 0x43800000, 0xC3000000, 0x33800000, 0x3E800000, 0x00400000, 0x43FF0000, 0x47600000]


def rand_f32(rng: np.random.Generator, n: int) -> np.ndarray:
    """f32 bit patterns: specials, any bits, moderate normals, subnormals, near-integers."""
    special = rng.choice(np.array(F32_SPECIAL, dtype=np.uint32), size=n)
    anybits = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    normal = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 21, size=n))).astype(np.float32).view(np.uint32)
    sub = rng.integers(0, 1 << 23, size=n).astype(np.uint32) | (rng.integers(0, 2, size=n).astype(np.uint32) << 31)
    near = (rng.integers(-300, 300, size=n) + rng.choice([0.0, 0.5, 0.25, 0.75, 1e-3], size=n)).astype(
        np.float32).view(np.uint32)
    pick = rng.integers(0, 5, size=n)
    return np.choose(pick, [special, anybits, normal, sub, near]).astype(np.uint32)


def f32_slots(count: int, relate: bool = True) -> InputGen:
    """``count`` f32 slots; slot 1 often equals slot 0 (or its negation) for comparisons."""

    def gen(rng: np.random.Generator, n: int) -> np.ndarray:
        cols = [rand_f32(rng, n) for _ in range(count)]
        if relate and count > 1:
            pick = rng.integers(0, 8, size=n)
            cols[1] = np.where(pick == 0, cols[0], cols[1])
            cols[1] = np.where(pick == 1, cols[0] ^ np.uint32(0x80000000), cols[1])
            cols[1] = np.where(pick == 2, cols[0] + np.uint32(1), cols[1])
        return np.stack([_garbage_above(rng, c.astype(U64), 32) for c in cols], axis=1)

    return gen


def concat_gens(*gens: InputGen) -> InputGen:
    def gen(rng: np.random.Generator, n: int) -> np.ndarray:
        return np.concatenate([g(rng, n) for g in gens], axis=1)

    return gen


# ------------------------------------------------------------------------------------ body helpers
INT_TYPES = {"u8": (8, False), "u16": (16, False), "u32": (32, False), "u64": (64, False),
             "s8": (8, True), "s16": (16, True), "s32": (32, True), "s64": (64, True)}


def _cls(bits: int) -> str:
    return {16: "h", 32: "r", 64: "rd"}[max(16, bits)]


class Body:
    """Accumulates PTX lines, allocating registers and output slots."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.next: dict[str, int] = {}
        self.slot = 0

    def reg(self, cls: str) -> str:
        i = self.next.get(cls, 0)
        self.next[cls] = i + 1
        return f"%{cls}{i}"

    def __call__(self, *lines: str) -> None:
        self.lines.extend(lines)

    def load(self, ty: str, slot: int, bits: int) -> str:
        r = self.reg(_cls(bits))
        self(f"ld.global.{ty} {r}, [%gin+{8 * slot}];")
        return r

    def store(self, reg: str, bits: int) -> int:
        """Store ``reg`` (``bits`` wide register) to the next output slot; returns the slot."""
        s = self.slot
        self.slot += 1
        self(f"st.global.b{max(16, bits)} [%gout+{8 * s}], {reg};")
        return s

    def op(self, text: str, bits: int) -> str:
        """``text`` with ``{d}`` for a fresh destination register of ``bits``; stores it."""
        d = self.reg(_cls(bits))
        self(text.format(d=d))
        self.store(d, bits)
        return d

    def pred_mask(self, preds: list[str]) -> None:
        """Pack predicates into one u32 (bit i = preds[i]) and store it."""
        acc = self.reg("r")
        self(f"mov.u32 {acc}, 0;")
        for i, p in enumerate(preds):
            t = self.reg("r")
            self(f"selp.u32 {t}, {1 << i}, 0, {p};", f"or.b32 {acc}, {acc}, {t};")
        self.store(acc, 32)

    def text(self) -> str:
        return "\n".join(self.lines)


def _kernel(name: str, doc: str, b: Body, n_in: int, gen: InputGen, **kw) -> Kernel:
    return Kernel(name=name, doc=doc, body=b.text(), n_in=n_in, n_out=b.slot, gen=gen, **kw)


ALU = {"grid": (4, 2, 1), "n_skip": 3}
"""Launch shape of the per-thread ALU kernels: 512 threads, the last 3 exit at once."""


# ------------------------------------------------------------------------------------ kernels
def arith(ty: str) -> Kernel:
    bits, signed = INT_TYPES[ty]
    b = Body()
    a, x, c = (b.load(ty, i, bits) for i in range(3))
    for t in ("add", "sub", "mul.lo", "mul.hi", "min", "max"):
        b.op(f"{t}.{ty} {{d}}, {a}, {x};", bits)
    b.op(f"mad.lo.{ty} {{d}}, {a}, {x}, {c};", bits)
    b.op(f"mad.hi.{ty} {{d}}, {a}, {x}, {c};", bits)
    if bits < 64:
        wide = f"{ty[0]}{2 * bits}"
        c2 = b.load(wide, 3, 2 * bits)
        b.op(f"mul.wide.{ty} {{d}}, {a}, {x};", 2 * bits)
        b.op(f"mad.wide.{ty} {{d}}, {a}, {x}, {c2};", 2 * bits)
    if signed:
        b.op(f"neg.{ty} {{d}}, {a};", bits)
        b.op(f"abs.{ty} {{d}}, {a};", bits)
    if ty == "s32":
        b.op(f"add.sat.s32 {{d}}, {a}, {x};", bits)
        b.op(f"sub.sat.s32 {{d}}, {a}, {x};", bits)
        b.op(f"mad.hi.sat.s32 {{d}}, {a}, {x}, {c};", bits)
    if bits == 32:  # immediate operands, negative ones included
        b.op(f"add.{ty} {{d}}, {a}, -7;", bits)
        b.op(f"mul.lo.{ty} {{d}}, {a}, 0x9E3779B9;", bits)
    widths = (bits, bits, bits) + ((2 * bits,) if bits < 64 else ())
    return _kernel(f"arith_{ty}", f"""Integer arithmetic on .{ty} at the edges (wrap-around, high halves, widening):
add sub mul.lo mul.hi min max mad.lo mad.hi{' mul.wide mad.wide' if bits < 64 else ''}{' neg abs' if signed else ''}
{'add.sat sub.sat mad.hi.sat ' if ty == 's32' else ''}with operands loaded by ld.global.{ty} from the low bytes
of each slot."""
,
                   b, len(widths), int_slots(*widths), **ALU)


def logic(bits: int) -> Kernel:
    ty = f"b{bits}"
    b = Body()
    a, x = b.load(ty, 0, bits), b.load(ty, 1, bits)
    for t in ("and", "or", "xor"):
        b.op(f"{t}.{ty} {{d}}, {a}, {x};", bits)
    b.op(f"not.{ty} {{d}}, {a};", bits)
    b.op(f"cnot.{ty} {{d}}, {a};", bits)
    if bits >= 32:
        b.op(f"popc.{ty} {{d}}, {a};", 32)
        b.op(f"clz.{ty} {{d}}, {a};", 32)
        b.op(f"brev.{ty} {{d}}, {a};", bits)
        b.op(f"and.{ty} {{d}}, {a}, 0xF0F0F0F0;", bits)
    extra = " popc clz brev, an immediate mask" if bits >= 32 else ""
    return _kernel(f"logic_b{bits}", f"""Bitwise logic on .b{bits}: and or xor not cnot{extra}.""",
                   b, 2, int_slots(bits, bits, relate=False), **ALU)


def _shift_amounts(rng: np.random.Generator, n: int) -> np.ndarray:
    amt = rng.integers(0, 71, size=n).astype(U64)
    big = rng.choice(np.array([0xFFFFFFFF, 0x80000000, 0x100, 0x101, 0x7FFFFFFF, 255, 256 + 3], dtype=U64), size=n)
    return np.where(rng.integers(0, 8, size=n) == 0, big, amt)


def shift(bits: int) -> Kernel:
    b = Body()
    a = b.load(f"b{bits}", 0, bits)
    s = b.load("u32", 1, 32)
    for t in (f"shl.b{bits}", f"shr.b{bits}", f"shr.u{bits}", f"shr.s{bits}"):
        b.op(f"{t} {{d}}, {a}, {s};", bits)
    b.op(f"shl.b{bits} {{d}}, {a}, 3;", bits)
    b.op(f"shr.s{bits} {{d}}, {a}, {bits - 1};", bits)

    def gen(rng: np.random.Generator, n: int) -> np.ndarray:
        return np.stack([_garbage_above(rng, rand_ints(rng, n, bits), bits),
                         _garbage_above(rng, _shift_amounts(rng, n), 32)], axis=1)

    return _kernel(f"shift_b{bits}", f"""Shifts of a {bits}-bit value by a u32 amount 0..70 (and huge amounts):
shl.b{bits} shr.b{bits} shr.u{bits} shr.s{bits} (amounts at and past the width clamp), and immediate shifts.""",
                   b, 2, gen, **ALU)


def _field_args(rng: np.random.Generator, n: int, hi: int) -> np.ndarray:
    v = rng.integers(0, hi, size=n).astype(U64)
    junk = rng.integers(0, 1 << 24, size=n).astype(U64) << U64(8)
    return np.where(rng.integers(0, 6, size=n) == 0, v | junk, v)


def bitfield(bits: int) -> Kernel:
    b = Body()
    a, f = b.load(f"b{bits}", 0, bits), b.load(f"b{bits}", 1, bits)
    pos, ln = b.load("u32", 2, 32), b.load("u32", 3, 32)
    b.op(f"bfe.u{bits} {{d}}, {a}, {pos}, {ln};", bits)
    b.op(f"bfe.s{bits} {{d}}, {a}, {pos}, {ln};", bits)
    b.op(f"bfi.b{bits} {{d}}, {f}, {a}, {pos}, {ln};", bits)
    b.op(f"bfe.u{bits} {{d}}, {a}, 4, 9;", bits)
    if bits == 32:
        sel = b.load("b32", 4, 32)
        b.op(f"prmt.b32 {{d}}, {a}, {f}, {sel};", 32)
        b.op(f"prmt.b32 {{d}}, {a}, {f}, 0x3210;", 32)
        b.op(f"prmt.b32 {{d}}, {a}, {f}, 0xC8A5;", 32)

    def gen(rng: np.random.Generator, n: int) -> np.ndarray:
        cols = [_garbage_above(rng, rand_ints(rng, n, bits), bits), _garbage_above(rng, rand_ints(rng, n, bits), bits),
                _field_args(rng, n, bits + 8), _field_args(rng, n, bits + 8)]
        if bits == 32:
            cols.append(rng.integers(0, 1 << 63, size=n, dtype=np.int64).astype(U64))
        return np.stack(cols, axis=1)

    return _kernel(f"bitfield_b{bits}", f"""
Bit fields on {bits} bits: bfe.u/.s and bfi with position/length 0..{bits + 7} (only their low 8
bits count: some carry junk above){'; prmt.b32 default mode with random selectors' if bits == 32 else ''}
{'(sign-replicate bit 3 included)' if bits == 32 else ''}."""
,
                   b, 5 if bits == 32 else 4, gen, **ALU)


def _int_range(ty: str) -> tuple[int, int]:
    bits, signed = INT_TYPES[ty]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def sat_applies(dst: str, src: str) -> bool:
    """ptxas takes cvt.sat between integers only where the source range does not fit the destination."""
    (slo, shi), (dlo, dhi) = _int_range(src), _int_range(dst)
    return not (dlo <= slo and shi <= dhi)


def cvt_from(src: str, sat: bool) -> Kernel:
    sbits, _ = INT_TYPES[src]
    b = Body()
    a = b.load(src, 0, sbits)
    b.store(a, sbits)  # the load itself: zero- or sign-extended into the register
    for dst, (dbits, _) in INT_TYPES.items():
        if dst == src or (sat and not sat_applies(dst, src)):
            continue
        q = ".sat" if sat else ""
        b.op(f"cvt{q}.{dst}.{src} {{d}}, {a};", dbits)
    name = f"cvt{'_sat' if sat else ''}_from_{src}"
    return _kernel(name, f"""
cvt{'.sat' if sat else ''} from .{src} to every other integer type u8..u64/s8..s64{' it can overflow' if sat else ''},
each result
stored from a register of max(16, width) bits (a u8/s8 destination's extension in the register shows);
slot 0 holds ld.global.{src} itself (zero or sign extension into a {max(16, sbits)}-bit register).""",
                   b, 1, int_slots(sbits), **ALU)


SETP_INT = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")


def setp_int(ty: str) -> Kernel:
    bits = int(ty[1:])
    b = Body()
    a, x = b.load(ty, 0, bits), b.load(ty, 1, bits)
    cmps = {"u": SETP_INT, "s": SETP_INT[:6], "b": SETP_INT[:2]}[ty[0]]
    preds = []
    for c in cmps:
        p = b.reg("p")
        b(f"setp.{c}.{ty} {p}, {a}, {x};")
        preds.append(p)
    b.pred_mask(preds)
    # selp on the first few predicates, of the compared type
    for p in preds[:4]:
        b.op(f"selp.{ty if ty[0] != 'b' else 'b' + str(bits)} {{d}}, {a}, {x}, {p};", bits)
    return _kernel(f"setp_{ty}", f"""setp.{{{','.join(cmps)}}}.{ty} packed into a bit mask (bit i = comparison i),
and selp.{ty} on the first four predicates. Operand b is often equal to a or a +- 1.""",
                   b, 2, int_slots(bits, bits), **ALU)


SETP_F32 = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")


def setp_f32() -> Kernel:
    b = Body()
    a, x = b.reg("f"), b.reg("f")
    b(f"ld.global.f32 {a}, [%gin+0];", f"ld.global.f32 {x}, [%gin+8];")
    preds = []
    for c in SETP_F32:
        p = b.reg("p")
        b(f"setp.{c}.f32 {p}, {a}, {x};")
        preds.append(p)
    b.pred_mask(preds)
    for p in preds[2:4]:
        d = b.reg("f")
        b(f"selp.f32 {d}, {a}, {x}, {p};", f"st.global.f32 [%gout+{8 * b.slot}], {d};")
        b.slot += 1
    return _kernel("setp_f32", """
setp on .f32, ordered and unordered (eq ne lt le gt ge equ neu ltu leu gtu geu num nan),
on NaNs (quiet, signalling, negative, payloads), infinities, signed zeros, subnormals; packed into a mask;
selp.f32 on two of them.""", b, 2, f32_slots(2), **ALU)


def pred_logic() -> Kernel:
    b = Body()
    a, x, c = (b.load("s32", i, 32) for i in range(3))
    p0, p1, p2 = b.reg("p"), b.reg("p"), b.reg("p")
    b(f"setp.lt.s32 {p0}, {a}, {x};", f"setp.gt.s32 {p1}, {x}, {c};", f"setp.eq.s32 {p2}, {a}, {c};")
    outs = [p0, p1, p2]
    for t in ("and", "or", "xor"):
        d = b.reg("p")
        b(f"{t}.pred {d}, {p0}, {p1};")
        outs.append(d)
    d = b.reg("p")
    b(f"not.pred {d}, {p2};")
    outs.append(d)
    d = b.reg("p")
    b(f"and.pred {d}, {p0}, !{p1};")
    outs.append(d)
    q1, q2 = b.reg("p"), b.reg("p")
    b(f"setp.le.s32 {q1}|{q2}, {a}, {c};")  # q2 = !q1
    outs += [q1, q2]
    for t in ("and", "or", "xor"):
        r1, r2 = b.reg("p"), b.reg("p")
        b(f"setp.ne.{t}.s32 {r1}|{r2}, {a}, {x}, {p1};")
        outs += [r1, r2]
    r = b.reg("p")
    b(f"setp.ge.and.u32 {r}, {a}, {c}, !{p0};")
    outs.append(r)
    b.pred_mask(outs)
    # predicated execution: @p / @!p on arithmetic and on stores
    v = b.reg("r")
    b(f"mov.u32 {v}, 100;", f"@{p0} add.u32 {v}, {v}, {a};", f"@!{p1} mul.lo.u32 {v}, {v}, 3;",
      f"@{p2} mov.u32 {v}, 7;")
    b.store(v, 32)
    w = b.reg("r")
    b(f"mov.u32 {w}, 0x11111111;", f"@!{p0} st.global.b32 [%gout+{8 * b.slot}], {w};",
      f"@{p0} st.global.b32 [%gout+{8 * b.slot + 4}], {a};")
    b.slot += 1
    return _kernel("pred_logic", """
Predicates: and/or/xor/not on .pred (a negated source too), setp with two destinations
(p|q), setp.{and,or,xor} combining with a third predicate, and predicated execution (@p / @!p) of
arithmetic and of stores (the last slot: one half written, the other left 0xFF).""",
                   b, 3, int_slots(32, 32, 32), **ALU)


def float_ops() -> Kernel:
    b = Body()
    a, x, c = b.reg("f"), b.reg("f"), b.reg("f")
    b(f"ld.global.f32 {a}, [%gin+0];", f"ld.global.f32 {x}, [%gin+8];", f"ld.global.f32 {c}, [%gin+16];")
    for t in (f"add.rn.f32 {{d}}, {a}, {x};", f"sub.rn.f32 {{d}}, {a}, {x};", f"mul.rn.f32 {{d}}, {a}, {x};",
              f"fma.rn.f32 {{d}}, {a}, {x}, {c};", f"neg.f32 {{d}}, {a};", f"abs.f32 {{d}}, {a};",
              f"min.f32 {{d}}, {a}, {x};", f"max.f32 {{d}}, {a}, {x};", "mov.f32 {d}, 0f3FC00000;"):
        d = b.reg("f")
        b(t.format(d=d), f"st.global.f32 [%gout+{8 * b.slot}], {d};")
        b.slot += 1
    return _kernel("float_f32", """f32 arithmetic with explicit .rn (no contraction): add sub mul fma, neg abs min max
(NaN operands: quiet, signalling, payloads), a hex immediate; subnormals kept (no .ftz).""",
                   b, 3, f32_slots(3), **ALU)


def float_rounding() -> Kernel:
    b = Body()
    a, x, c = b.reg("f"), b.reg("f"), b.reg("f")
    b(f"ld.global.f32 {a}, [%gin+0];", f"ld.global.f32 {x}, [%gin+8];", f"ld.global.f32 {c}, [%gin+16];")
    ops = []
    for rnd in ("rz", "rm", "rp"):
        ops += [f"add.{rnd}.f32 {{d}}, {a}, {x};", f"mul.{rnd}.f32 {{d}}, {a}, {x};",
                f"fma.{rnd}.f32 {{d}}, {a}, {x}, {c};"]
    ops += [f"add.rn.ftz.f32 {{d}}, {a}, {x};", f"mul.rn.sat.f32 {{d}}, {a}, {x};", f"min.NaN.f32 {{d}}, {a}, {x};",
            f"max.NaN.f32 {{d}}, {a}, {x};"]
    for t in ops:
        d = b.reg("f")
        b(t.format(d=d), f"st.global.f32 [%gout+{8 * b.slot}], {d};")
        b.slot += 1
    return _kernel("float_rounding", """f32 add/mul/fma with .rz .rm .rp; add.ftz, mul.sat, min/max.NaN.""",
                   b, 3, f32_slots(3), group="extra", **ALU)


def cvt_float() -> Kernel:
    b = Body()
    a = b.reg("f")
    b(f"ld.global.f32 {a}, [%gin+0];")
    i32, u64 = b.load("s32", 1, 32), b.load("s64", 2, 64)
    for t, bits in ((f"cvt.rni.s32.f32 {{d}}, {a};", 32), (f"cvt.rzi.s32.f32 {{d}}, {a};", 32),
                    (f"cvt.rmi.u32.f32 {{d}}, {a};", 32), (f"cvt.rpi.s64.f32 {{d}}, {a};", 64),
                    (f"cvt.rzi.u16.f32 {{d}}, {a};", 16), (f"cvt.rn.f32.s32 {{d}}, {i32};", 32),
                    (f"cvt.rz.f32.u32 {{d}}, {i32};", 32), (f"cvt.rn.f32.s64 {{d}}, {u64};", 32),
                    (f"cvt.rn.f16.f32 {{d}}, {a};", 16), (f"cvt.rn.bf16.f32 {{d}}, {a};", 16),
                    (f"cvt.rni.f32.f32 {{d}}, {a};", 32)):
        d = b.reg({16: "h", 32: "r", 64: "rd"}[bits])
        b(t.format(d=d))
        b.store(d, bits)
    return _kernel("cvt_float", """cvt between f32 and integers (rni rzi rmi rpi; saturating on overflow, NaN -> 0),
integer -> f32 (rn rz), f32 -> f16 / bf16 (rn), f32 -> integral f32 (rni).""",
                   b, 3, concat_gens(f32_slots(1), int_slots(32, 64)), group="extra", **ALU)


def cvt_fp8() -> Kernel:
    b = Body()
    a, x = b.reg("f"), b.reg("f")
    b(f"ld.global.f32 {a}, [%gin+0];", f"ld.global.f32 {x}, [%gin+8];")
    raw = b.load("b16", 2, 16)
    for fmt in ("e4m3x2", "e5m2x2"):
        d = b.reg("h")
        b(f"cvt.rn.satfinite.{fmt}.f32 {d}, {a}, {x};")
        b.store(d, 16)
        e = b.reg("r")
        b(f"cvt.rn.f16x2.{fmt} {e}, {raw};")
        b.store(e, 32)
    return _kernel("cvt_fp8", """fp8 conversions (what MMA operands are made of): cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32
(two f32 -> packed fp8 pair) and cvt.rn.f16x2.{e4m3x2,e5m2x2} of a random 16-bit pair.""",
                   b, 3, concat_gens(f32_slots(2), int_slots(16)), group="extra", **ALU)


def bits_extra() -> Kernel:
    b = Body()
    a, x, s = b.load("b32", 0, 32), b.load("b32", 1, 32), b.load("u32", 2, 32)
    a64 = b.load("b64", 3, 64)
    for t in (f"shf.l.wrap.b32 {{d}}, {a}, {x}, {s};", f"shf.r.wrap.b32 {{d}}, {a}, {x}, {s};",
              f"shf.l.clamp.b32 {{d}}, {a}, {x}, {s};", f"shf.r.clamp.b32 {{d}}, {a}, {x}, {s};",
              f"bfind.u32 {{d}}, {a};", f"bfind.s32 {{d}}, {a};", f"bfind.shiftamt.u32 {{d}}, {a};",
              f"bfind.u64 {{d}}, {a64};", f"lop3.b32 {{d}}, {a}, {x}, {s}, 0xE8;",
              f"prmt.b32.f4e {{d}}, {a}, {x}, {s};", f"prmt.b32.b4e {{d}}, {a}, {x}, {s};",
              f"prmt.b32.rc8 {{d}}, {a}, {x}, {s};", f"prmt.b32.ecl {{d}}, {a}, {x}, {s};",
              f"prmt.b32.ecr {{d}}, {a}, {x}, {s};", f"prmt.b32.rc16 {{d}}, {a}, {x}, {s};",
              f"mul24.lo.u32 {{d}}, {a}, {x};", f"sad.u32 {{d}}, {a}, {x}, {s};"):
        b.op(t, 32)

    def gen(rng: np.random.Generator, n: int) -> np.ndarray:
        return np.stack([rand_ints(rng, n, 32), rand_ints(rng, n, 32), _shift_amounts(rng, n),
                         rand_ints(rng, n, 64)], axis=1)

    return _kernel("bits_extra", """shf (l/r, wrap/clamp), bfind (.u32 .s32 .shiftamt .u64), lop3, prmt's other modes
(f4e b4e rc8 ecl ecr rc16), mul24.lo, sad.""", b, 4, gen, group="extra", **ALU)


def divrem() -> Kernel:
    b = Body()
    for i, ty in enumerate(("u32", "s32", "u64", "s64")):
        bits = int(ty[1:])
        a, x = b.load(ty, 2 * i, bits), b.load(ty, 2 * i + 1, bits)
        b.op(f"div.{ty} {{d}}, {a}, {x};", bits)
        b.op(f"rem.{ty} {{d}}, {a}, {x};", bits)

    def gen(rng: np.random.Generator, n: int) -> np.ndarray:
        cols = []
        for bits in (32, 32, 64, 64):
            a = rand_ints(rng, n, bits)
            d = rand_ints(rng, n, bits)
            d = np.where(d == 0, U64(3), d)
            cols += [a, d]
        return np.stack(cols, axis=1)

    return _kernel("divrem", """div and rem for u32 s32 u64 s64 (divisor never 0; INT_MIN / -1 included).""",
                   b, 8, gen, group="extra", **ALU)


def branches() -> Kernel:
    body = """
ld.global.u32 %r0, [%gin+0];
ld.global.u32 %r1, [%gin+8];
mov.u32 %r2, 0;
and.b32 %r3, %r0, 1;
setp.eq.u32 %p0, %r3, 0;
@%p0 bra $L_even;
mad.lo.u32 %r2, %r0, 3, 1;
bra.uni $L_join1;
$L_even:
shr.u32 %r2, %r0, 1;
and.b32 %r4, %r0, 6;
setp.ne.u32 %p1, %r4, 2;
@%p1 bra $L_join1;
xor.b32 %r2, %r2, 0xDEADBEEF;
$L_join1:
and.b32 %r5, %r1, 3;
setp.eq.u32 %p2, %r5, 0;
@%p2 bra $L_c0;
setp.eq.u32 %p2, %r5, 1;
@%p2 bra $L_c1;
setp.eq.u32 %p2, %r5, 2;
@!%p2 bra $L_c3;
add.u32 %r2, %r2, 200;
bra $L_join2;
$L_c0:
add.u32 %r2, %r2, 1000;
bra $L_join2;
$L_c1:
sub.u32 %r2, %r2, 77;
bra $L_join2;
$L_c3:
not.b32 %r2, %r2;
$L_join2:
st.global.u32 [%gout+0], %r2;
st.shared.u32 [br_sm+%gt*4], %r2;
bar.sync 0;
add.u32 %r6, %gt, 1;
rem.u32 %r6, %r6, %gbs;
shl.b32 %r7, %r6, 2;
mov.u32 %r8, br_sm;
add.u32 %r8, %r8, %r7;
ld.shared.u32 %r9, [%r8];
st.global.u32 [%gout+8], %r9;
"""
    body = body.replace("[br_sm+%gt*4]", "[%r11]").replace(
        "st.shared.u32 [%r11], %r2;", "shl.b32 %r10, %gt, 2;\nmov.u32 %r11, br_sm;\nadd.u32 %r11, %r11, %r10;\n"
        "st.shared.u32 [%r11], %r2;")
    return Kernel("branch_divergent", """Divergent if/else and a 4-way switch chosen per thread from its data (@p bra,
@!p bra, bra.uni), nested; after reconvergence every thread stores its value to shared memory, bar.sync,
and reads its neighbour's (tid+1 mod block): a thread left behind would show.""",
                  body, 2, 2, int_slots(32, 32, relate=False), shared=".shared .align 16 .b32 br_sm[64];")


def loops() -> Kernel:
    body = """
ld.global.u32 %r0, [%gin+0];
ld.global.u32 %r1, [%gin+8];
and.b32 %r2, %r0, 63;
mov.u32 %r3, 0;
mov.u32 %r4, 0x12345;
setp.eq.u32 %p0, %r2, 0;
@%p0 bra $L_after1;
$L_loop1:
mad.lo.u32 %r4, %r4, 0x9E3779B1, %r3;
add.u32 %r3, %r3, 1;
setp.lt.u32 %p1, %r3, %r2;
@%p1 bra $L_loop1;
$L_after1:
st.global.u32 [%gout+0], %r4;
st.global.u32 [%gout+4], %r3;
mov.u32 %r5, %r1;
mov.u32 %r6, 0;
$L_collatz:
setp.le.u32 %p2, %r5, 1;
setp.ge.u32 %p3, %r6, 300;
or.pred %p4, %p2, %p3;
@%p4 bra $L_cdone;
and.b32 %r7, %r5, 1;
setp.eq.u32 %p5, %r7, 0;
@%p5 shr.u32 %r5, %r5, 1;
@!%p5 mad.lo.u32 %r5, %r5, 3, 1;
add.u32 %r6, %r6, 1;
bra $L_collatz;
$L_cdone:
st.global.u32 [%gout+8], %r6;
st.global.u32 [%gout+12], %r5;
shr.u32 %r8, %r0, 8;
and.b32 %r8, %r8, 7;
mov.u32 %r9, 0;
mov.u32 %r10, 0;
$L_outer:
setp.ge.u32 %p6, %r9, %r8;
@%p6 bra $L_outer_done;
mov.u32 %r11, 0;
$L_inner:
add.u32 %r10, %r10, %r11;
xor.b32 %r10, %r10, %r9;
add.u32 %r11, %r11, 1;
setp.gt.u32 %p7, %r11, %r9;
@!%p7 bra $L_inner;
add.u32 %r9, %r9, 1;
setp.eq.u32 %p8, %r10, 13;
@%p8 bra $L_outer_done;
bra $L_outer;
$L_outer_done:
st.global.u32 [%gout+16], %r10;
st.global.u32 [%gout+20], %r9;
bar.sync 0;
st.global.u32 [%gout+24], %gt;
"""
    return Kernel("loops", """Loops with data-dependent trip counts that reconverge: a counted loop (0..63 trips),
a Collatz walk (capped at 300 steps, predicated body), nested loops with an early break; then bar.sync
(every thread must get there).""", body, 2, 4, int_slots(32, 32, relate=False))


def bar_reduce() -> Kernel:
    body = """
ld.global.u32 %r0, [%gin+0];
shl.b32 %r1, %gt, 2;
mov.u32 %r2, red_sm;
add.u32 %r2, %r2, %r1;
st.shared.u32 [%r2], %r0;
bar.sync 0;
shr.u32 %r3, %gbs, 1;
$L_red:
setp.eq.u32 %p0, %r3, 0;
@%p0 bra $L_red_done;
setp.lt.u32 %p1, %gt, %r3;
@!%p1 bra $L_skip;
shl.b32 %r4, %r3, 2;
add.u32 %r5, %r2, %r4;
ld.shared.u32 %r6, [%r5];
ld.shared.u32 %r7, [%r2];
add.u32 %r7, %r7, %r6;
st.shared.u32 [%r2], %r7;
$L_skip:
bar.sync 0;
shr.u32 %r3, %r3, 1;
bra.uni $L_red;
$L_red_done:
ld.shared.u32 %r8, [red_sm];
st.global.u32 [%gout+0], %r8;
bar.sync 1, 64;
mov.u32 %r9, scan_sm;
add.u32 %r9, %r9, %r1;
st.shared.u32 [%r9], %r0;
barrier.sync 0;
mov.u32 %r10, 1;
$L_scan:
setp.ge.u32 %p2, %r10, %gbs;
@%p2 bra $L_scan_done;
mov.u32 %r11, 0;
setp.ge.u32 %p3, %gt, %r10;
shl.b32 %r12, %r10, 2;
sub.u32 %r13, %r9, %r12;
@%p3 ld.shared.u32 %r11, [%r13];
bar.sync 0;
ld.shared.u32 %r14, [%r9];
add.u32 %r14, %r14, %r11;
st.shared.u32 [%r9], %r14;
bar.sync 0;
shl.b32 %r10, %r10, 1;
bra $L_scan;
$L_scan_done:
ld.shared.u32 %r15, [%r9];
st.global.u32 [%gout+8], %r15;
"""
    return Kernel("bar_reduce", """bar.sync inside loops: a tree reduction of the block's 64 inputs (divergent if inside
the loop) and a Hillis-Steele inclusive scan; bar.sync 1, 64 (named barrier with a count) and
barrier.sync 0. Slot 0: block sum (every thread), slot 1: the thread's inclusive prefix sum.""",
                  body, 1, 2, int_slots(32), shared=".shared .align 16 .b32 red_sm[64];\n"
                         ".shared .align 16 .b32 scan_sm[64];")


def shared_scalar() -> Kernel:
    body = """
ld.global.u64 %rd0, [%gin+0];
ld.global.u32 %r0, [%gin+8];
mov.u32 %r1, sh_a;
shl.b32 %r2, %gt, 3;
add.u32 %r3, %r1, %r2;
st.shared.u64 [%r3], %rd0;
mov.u32 %r4, sh_b;
add.u32 %r5, %r4, %gt;
st.shared.u8 [%r5], %r0;
shl.b32 %r6, %gt, 1;
mov.u32 %r7, sh_c;
add.u32 %r7, %r7, %r6;
cvt.u16.u32 %h0, %r0;
shr.u16 %h0, %h0, 3;
st.shared.u16 [%r7], %h0;
bar.sync 0;
add.u32 %r8, %gt, 17;
rem.u32 %r8, %r8, %gbs;
shl.b32 %r9, %r8, 3;
add.u32 %r9, %r1, %r9;
and.b32 %r10, %r0, 7;
add.u32 %r11, %r9, %r10;
ld.shared.u8 %r12, [%r11];
st.global.u32 [%gout+0], %r12;
ld.shared.s8 %r13, [%r11];
st.global.u32 [%gout+4], %r13;
and.b32 %r14, %r0, 6;
add.u32 %r15, %r9, %r14;
ld.shared.u16 %h1, [%r15];
st.global.u16 [%gout+8], %h1;
ld.shared.s16 %r16, [%r15];
st.global.u32 [%gout+12], %r16;
and.b32 %r17, %r0, 4;
add.u32 %r18, %r9, %r17;
ld.shared.u32 %r19, [%r18];
st.global.u32 [%gout+16], %r19;
ld.shared.u64 %rd1, [%r9];
st.global.u64 [%gout+24], %rd1;
ld.shared.s8 %h2, [%r11];
st.global.u16 [%gout+32], %h2;
and.b32 %r20, %gt, 0xFFFFFFFC;
add.u32 %r21, %r4, %r20;
ld.shared.u32 %r22, [%r21];
st.global.u32 [%gout+40], %r22;
and.b32 %r23, %r6, 0xFFFFFFFC;
mov.u32 %r24, sh_c;
add.u32 %r24, %r24, %r23;
ld.shared.u32 %r25, [%r24];
st.global.u32 [%gout+48], %r25;
ld.shared.u64 %rd2, [sh_a+8];
st.global.u64 [%gout+56], %rd2;
st.global.u8 [%gout+64], %r0;
st.global.b16 [%gout+66], %h0;
"""
    return Kernel("shared_scalar", """
Shared-memory scalar ld/st of u8/u16/u32/u64 (s8/s16 sign extension into 16- and 32-bit
registers): each thread stores a u64, a byte and a half-word; after bar.sync it reads another thread's
(tid+17 mod 64) bytes at data-chosen offsets (little-endian byte order), whole words made of four
threads' bytes, and an immediate-offset address; narrow global stores (u8, b16) at the end.""",
                  body, 2, 9, int_slots(64, 32, relate=False),
                  shared=".shared .align 16 .b8 sh_a[512];\n.shared .align 16 .b8 sh_b[64];\n"
                         ".shared .align 16 .b8 sh_c[128];")


def shared_vector() -> Kernel:
    body = """
ld.global.v2.u32 {%r0, %r1}, [%gin+0];
ld.global.v2.u64 {%rd0, %rd1}, [%gin+16];
ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%gin+32];
mov.u32 %r6, sv_a;
shl.b32 %r7, %gt, 4;
add.u32 %r8, %r6, %r7;
st.shared.v4.u32 [%r8], {%r0, %r1, %r2, %r3};
mov.u32 %r9, sv_b;
add.u32 %r10, %r9, %r7;
st.shared.v2.u64 [%r10], {%rd0, %rd1};
mov.u32 %r11, sv_c;
shl.b32 %r12, %gt, 3;
add.u32 %r13, %r11, %r12;
cvt.u16.u32 %h0, %r4;
cvt.u16.u32 %h1, %r5;
shr.u32 %r14, %r4, 16;
cvt.u16.u32 %h2, %r14;
shr.u32 %r15, %r5, 16;
cvt.u16.u32 %h3, %r15;
st.shared.v4.u16 [%r13], {%h0, %h1, %h2, %h3};
mov.u32 %r16, sv_d;
shl.b32 %r17, %gt, 2;
add.u32 %r18, %r16, %r17;
st.shared.v4.u8 [%r18], {%r0, %r1, %r2, %r3};
bar.sync 0;
add.u32 %r19, %gt, 33;
rem.u32 %r19, %r19, %gbs;
shl.b32 %r20, %r19, 4;
add.u32 %r21, %r6, %r20;
ld.shared.v4.u32 {%r22, %r23, %r24, %r25}, [%r21];
st.global.v4.u32 [%gout+0], {%r22, %r23, %r24, %r25};
add.u32 %r26, %r9, %r20;
ld.shared.v2.u64 {%rd2, %rd3}, [%r26];
st.global.v2.u64 [%gout+16], {%rd3, %rd2};
shl.b32 %r27, %r19, 3;
add.u32 %r28, %r11, %r27;
ld.shared.v2.u32 {%r29, %r30}, [%r28];
st.global.v2.u32 [%gout+32], {%r30, %r29};
ld.shared.v4.u16 {%h4, %h5, %h6, %h7}, [%r28];
st.global.v4.u16 [%gout+40], {%h7, %h6, %h5, %h4};
shl.b32 %r31, %r19, 2;
add.u32 %r32, %r16, %r31;
ld.shared.v4.u8 {%r33, %r34, %r35, %r36}, [%r32];
st.global.v4.u32 [%gout+48], {%r33, %r34, %r35, %r36};
ld.shared.v2.u16 {%h8, %h9}, [%r32];
st.global.v2.u16 [%gout+64], {%h9, %h8};
ld.shared.v2.u8 {%h10, %h11}, [%r32+2];
st.global.v2.u8 [%gout+68], {%h11, %h10};
ld.shared.v2.f32 {%f0, %f1}, [%r21+8];
st.global.v2.f32 [%gout+72], {%f1, %f0};
"""
    return Kernel("shared_vector", """
Vector ld/st: global v2.u32 v2.u64 v4.u32 loads; shared st/ld of v4.u32 v2.u64 v4.u16 v4.u8
v2.u32 v2.u16 v2.u8 v2.f32 across threads (tid+33 mod 64, after bar.sync), reinterpreting one vector
width as another (v2.u32 over v4.u16, v2.u16 over v4.u8); global v4.u32 v2.u64 v2.u32 v4.u16 v2.u16
v2.u8 v2.f32 stores, elements swapped to show their order.""",
                  body, 6, 10, int_slots(32, 32, 64, 64, 32, 32, relate=False),
                  shared=".shared .align 16 .b8 sv_a[1024];\n.shared .align 16 .b8 sv_b[1024];\n"
                         ".shared .align 16 .b8 sv_c[512];\n.shared .align 16 .b8 sv_d[256];")


def mbarrier_phases() -> Kernel:
    body = """
mov.u32 %r0, mb_bar;
setp.eq.u32 %p0, %gt, 0;
@%p0 mbarrier.init.shared::cta.b64 [%r0], %gbs;
bar.sync 0;
mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r0], 0;
mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r0], 1;
bar.sync 0;
mbarrier.arrive.shared::cta.b64 %rd0, [%r0];
""" + bounded_wait(0, "mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r0], 0;") + """\
mbarrier.test_wait.parity.shared::cta.b64 %p4, [%r0], 0;
mbarrier.test_wait.parity.shared::cta.b64 %p5, [%r0], 1;
mbarrier.test_wait.shared::cta.b64 %p6, [%r0], %rd0;
bar.sync 0;
shr.u32 %r1, %gbs, 1;
setp.lt.u32 %p7, %gt, %r1;
@%p7 mbarrier.arrive.shared::cta.b64 %rd1, [%r0], 2;
bar.sync 0;
mbarrier.test_wait.parity.shared::cta.b64 %p8, [%r0], 1;
mbarrier.test_wait.parity.shared::cta.b64 %p9, [%r0], 0;
""" + bounded_wait(1, "mbarrier.try_wait.parity.shared::cta.b64 %p10, [%r0], 1;") + """\
bar.sync 0;
@%p7 mbarrier.arrive_drop.shared::cta.b64 %rd2, [%r0];
@!%p7 mbarrier.arrive.shared::cta.b64 %rd2, [%r0];
""" + bounded_wait(2, "mbarrier.try_wait.parity.shared::cta.b64 %p11, [%r0], 0;") + """\
bar.sync 0;
mbarrier.test_wait.parity.shared::cta.b64 %p12, [%r0], 1;
@!%p7 mbarrier.arrive.shared::cta.b64 %rd3, [%r0];
bar.sync 0;
mbarrier.test_wait.parity.shared::cta.b64 %p13, [%r0], 1;
mbarrier.test_wait.parity.shared::cta.b64 %p14, [%r0], 0;
bar.sync 0;
@%p0 mbarrier.inval.shared::cta.b64 [%r0];
"""
    b = Body()
    b(body)
    b.pred_mask(["%p1", "%p2", "%p3", "%p4", "%p5", "%p6", "%p8", "%p9", "%p10", "%p11", "%p12", "%p13", "%p14"])
    return _kernel("mbarrier_phases", """mbarrier over phases, each observed only after a bar.sync (so the answers are
deterministic): init with the block size; test_wait.parity 0/1 before any arrival (current phase pending,
preceding one complete); phase 0: every thread arrives, try_wait.parity loop, test_wait.parity and
test_wait with the arrive's state; phase 1: half the threads arrive with count 2; phase 2: that half
arrive_drop (the expected count halves), the other half arrive; phase 3 completes with the other half
alone. Bits of slot 0 in order: p1 p2 p3 p4 p5 p6 p8 p9 p10 p11 p12 p13 p14.""",
                   b, 1, int_slots(32), shared=".shared .align 8 .b64 mb_bar;")


def mbarrier_tx() -> Kernel:
    body = """
mov.u32 %r0, mt_bar;
setp.eq.u32 %p0, %gt, 0;
setp.lt.u32 %p1, %gt, 8;
@%p0 mbarrier.init.shared::cta.b64 [%r0], %gbs;
bar.sync 0;
@%p0 mbarrier.arrive.expect_tx.shared::cta.b64 %rd0, [%r0], 256;
@!%p0 mbarrier.arrive.shared::cta.b64 %rd0, [%r0];
bar.sync 0;
mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r0], 0;
bar.sync 0;
@%p1 mbarrier.complete_tx.shared::cta.b64 [%r0], 16;
bar.sync 0;
mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r0], 0;
bar.sync 0;
@%p1 mbarrier.complete_tx.shared::cta.b64 [%r0], 16;
bar.sync 0;
mbarrier.test_wait.parity.shared::cta.b64 %p4, [%r0], 0;
mbarrier.test_wait.parity.shared::cta.b64 %p5, [%r0], 1;
bar.sync 0;
@%p0 mbarrier.expect_tx.shared::cta.b64 [%r0], 32;
bar.sync 0;
mbarrier.arrive.shared::cta.b64 %rd1, [%r0];
bar.sync 0;
mbarrier.test_wait.parity.shared::cta.b64 %p6, [%r0], 1;
bar.sync 0;
@%p0 mbarrier.complete_tx.shared::cta.b64 [%r0], 32;
bar.sync 0;
mbarrier.test_wait.parity.shared::cta.b64 %p7, [%r0], 1;
"""
    b = Body()
    b(body)
    b.pred_mask(["%p2", "%p3", "%p4", "%p5", "%p6", "%p7"])
    return _kernel("mbarrier_tx", """
mbarrier transaction counts: thread 0 arrive.expect_tx 256 bytes, the others arrive; the
phase completes only once 8 threads x 2 rounds of complete_tx 16 bytes land; then expect_tx 32 on the
next phase, every thread arrives, complete_tx 32 completes it. Bits: p2 p3 p4 p5 p6 p7.""",
                   b, 1, int_slots(32), shared=".shared .align 8 .b64 mt_bar;")


def sregs(name: str, block: tuple[int, int, int], grid: tuple[int, int, int]) -> Kernel:
    b = Body()
    for sreg in ("%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z",
                 "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid", "%lanemask_eq", "%lanemask_lt", "%lanemask_le",
                 "%lanemask_gt", "%lanemask_ge"):
        r = b.reg("r")
        b(f"mov.u32 {r}, {sreg};")
        b(f"st.global.u32 [%gout+{4 * b.slot}], {r};")
        b.slot += 1
    b.slot = (b.slot + 1) // 2
    q = b.reg("r")
    b(f"mov.u32 {q}, %gid;", f"st.global.u32 [%gout+{8 * b.slot}], {q};")
    b.slot += 1
    partial = (block[0] * block[1] * block[2]) % 32
    return Kernel(name, f"""Special registers with a 3-D block {block} and a grid {grid}: %tid %ntid %ctaid
%nctaid (x y z), %laneid and the %lanemask_* family (lanes counted over the linear thread id, so warps
straddle y/z rows{'; the block is not a multiple of 32: the last warp is partial' if partial else ''}),
packed two u32 per slot; the last slot is the prologue's linear id.""", b.text(), 1, b.slot,
                  int_slots(32), block=block, grid=grid)


def mov_pack() -> Kernel:
    body = """
ld.global.u32 %r0, [%gin+0];
ld.global.u32 %r1, [%gin+8];
ld.global.u64 %rd0, [%gin+16];
mov.b64 %rd1, {%r0, %r1};
st.global.u64 [%gout+0], %rd1;
mov.b64 {%r2, %r3}, %rd0;
st.global.u32 [%gout+8], %r3;
st.global.u32 [%gout+12], %r2;
mov.b32 {%h0, %h1}, %r0;
mov.b32 %r4, {%h1, %h0};
st.global.u32 [%gout+16], %r4;
mov.b64 {%h2, %h3, %h4, %h5}, %rd0;
mov.b64 %rd2, {%h5, %h4, %h3, %h2};
st.global.u64 [%gout+24], %rd2;
mov.b64 %rd3, {%r1, %r1};
st.global.u64 [%gout+32], %rd3;
mov.u64 %rd4, 0xFEDCBA9876543210;
mov.b64 {%r5, %r6}, %rd4;
st.global.v2.u32 [%gout+40], {%r5, %r6};
mov.b32 %f0, %r0;
mov.b32 %r7, %f0;
st.global.u32 [%gout+48], %r7;
mov.u32 %r8, 0xFFFFFFFF;
mov.u16 %h6, 0x8001;
mov.b32 %r9, {%h6, %h0};
st.global.u32 [%gout+52], %r9;
"""
    return Kernel("mov_pack", """mov of vectors: 64-bit pack/unpack {lo, hi} from/to two b32 and four b16, 32-bit
pack/unpack from/to two b16 (element 0 is the low half), 64-bit and 16-bit immediates, f32 <-> b32 moves.""",
                  body, 3, 7, int_slots(32, 32, 64, relate=False))


def address_spaces() -> Kernel:
    body = """
ld.global.u32 %r0, [%gin+0];
mov.u64 %rd0, as_sm;
shl.b32 %r1, %gt, 2;
cvt.u64.u32 %rd1, %r1;
add.u64 %rd2, %rd0, %rd1;
cvta.shared.u64 %rd3, %rd2;
st.u32 [%rd3], %r0;
bar.sync 0;
add.u32 %r2, %gt, 5;
rem.u32 %r2, %r2, %gbs;
shl.b32 %r3, %r2, 2;
mov.u32 %r4, as_sm;
add.u32 %r4, %r4, %r3;
ld.shared.u32 %r5, [%r4];
st.global.u32 [%gout+0], %r5;
cvta.to.shared.u64 %rd4, %rd3;
setp.eq.u64 %p0, %rd4, %rd2;
selp.u32 %r6, 1, 0, %p0;
st.global.u32 [%gout+4], %r6;
ld.param.u64 %rd5, [p_in];
cvta.to.global.u64 %rd6, %rd5;
cvta.global.u64 %rd7, %rd6;
setp.eq.u64 %p1, %rd7, %rd5;
selp.u32 %r7, 1, 0, %p1;
st.global.u32 [%gout+8], %r7;
sub.u64 %rd8, %gin, %rd6;
add.u64 %rd9, %rd5, %rd8;
ld.u64 %rd10, [%rd9+8];
st.global.u64 [%gout+16], %rd10;
ld.u32 %r8, [%rd3];
st.global.u32 [%gout+12], %r8;
isspacep.shared %p2, %rd3;
isspacep.global %p3, %rd3;
isspacep.global %p4, %rd9;
isspacep.shared %p5, %rd9;
selp.u32 %r9, 1, 0, %p2;
selp.u32 %r10, 2, 0, %p3;
selp.u32 %r11, 4, 0, %p4;
selp.u32 %r12, 8, 0, %p5;
or.b32 %r9, %r9, %r10;
or.b32 %r9, %r9, %r11;
or.b32 %r9, %r9, %r12;
st.global.u32 [%gout+24], %r9;
cvta.global.u64 %rd11, %gout;
st.u32 [%rd11+28], %r0;
"""
    return Kernel("address_spaces", """
Generic addressing: cvta.shared of a shared variable's address, a generic st through it,
ld.shared by another thread (tid+5) after bar.sync; cvta.to.shared round trip; cvta.to.global /
cvta.global round trip of the param pointer, a generic ld.u64 and st.u32 through global pointers;
isspacep.shared / isspacep.global of both (no raw address is recorded: they differ by machine).""",
                  body, 2, 4, int_slots(32, 64, relate=False), shared=".shared .align 16 .b32 as_sm[64];")


def local_memory() -> Kernel:
    body = """
.local .align 8 .b8 lm_buf[64];
ld.global.u32 %r0, [%gin+0];
ld.global.u32 %r1, [%gin+8];
mov.u32 %r2, 0;
$L_fill:
shl.b32 %r3, %r2, 2;
mov.u32 %r4, lm_buf;
add.u32 %r4, %r4, %r3;
mad.lo.u32 %r5, %r2, %r0, %r1;
st.local.u32 [%r4], %r5;
add.u32 %r2, %r2, 1;
setp.lt.u32 %p0, %r2, 16;
@%p0 bra $L_fill;
and.b32 %r6, %r1, 15;
shl.b32 %r6, %r6, 2;
mov.u32 %r7, lm_buf;
add.u32 %r7, %r7, %r6;
ld.local.u32 %r8, [%r7];
st.global.u32 [%gout+0], %r8;
ld.local.u64 %rd0, [lm_buf+8];
st.global.u64 [%gout+8], %rd0;
"""
    return Kernel("local_memory", """
Per-thread .local array: a loop fills 16 words, a data-chosen word and a u64 are read
back.""", body, 2, 2, int_slots(32, 32, relate=False), group="extra")


def warp_ops() -> Kernel:
    body = """
ld.global.u32 %r0, [%gin+0];
ld.global.u32 %r1, [%gin+8];
and.b32 %r2, %r1, 31;
shfl.sync.idx.b32 %r3, %r0, %r2, 31, 0xFFFFFFFF;
st.global.u32 [%gout+0], %r3;
shfl.sync.up.b32 %r4|%p0, %r0, 3, 0, 0xFFFFFFFF;
st.global.u32 [%gout+4], %r4;
shfl.sync.down.b32 %r5|%p1, %r0, 5, 31, 0xFFFFFFFF;
st.global.u32 [%gout+8], %r5;
shfl.sync.bfly.b32 %r6|%p2, %r0, 9, 31, 0xFFFFFFFF;
st.global.u32 [%gout+12], %r6;
shfl.sync.idx.b32 %r7|%p3, %r0, %r2, 0x1C0F, 0xFFFFFFFF;
st.global.u32 [%gout+16], %r7;
and.b32 %r8, %r0, 1;
setp.eq.u32 %p4, %r8, 1;
vote.sync.ballot.b32 %r9, %p4, 0xFFFFFFFF;
st.global.u32 [%gout+20], %r9;
vote.sync.all.pred %p5, %p4, 0xFFFFFFFF;
vote.sync.any.pred %p6, %p4, 0xFFFFFFFF;
vote.sync.uni.pred %p7, %p4, 0xFFFFFFFF;
@%p4 bra $L_odd;
add.u32 %r10, %r0, 1;
bra $L_join;
$L_odd:
sub.u32 %r10, %r0, 1;
$L_join:
vote.sync.ballot.b32 %r11, %p4, 0xFFFFFFFF;
setp.eq.u32 %p8, %r11, %r9;
shfl.sync.bfly.b32 %r12, %r10, 1, 31, 0xFFFFFFFF;
st.global.u32 [%gout+24], %r12;
"""
    b = Body()
    b(body)
    b.slot = 4
    b.pred_mask(["%p0", "%p1", "%p2", "%p3", "%p5", "%p6", "%p7", "%p8"])
    return _kernel("warp_ops", """
Warp-level: shfl.sync idx (data-chosen source lane) / up / down / bfly with their validity
predicates and a segmented clamp (c = 0x1C0F), vote.sync ballot/all/any/uni, and a ballot + shfl after a
divergent branch (the warp must have reconverged). Block (32, 2, 1): whole warps.""",
                   b, 2, int_slots(32, 32, relate=False), block=(32, 2, 1), grid=(2, 2, 1), group="extra")


def atomics() -> Kernel:
    body = """
ld.global.u32 %r0, [%gin+0];
mov.u32 %r1, at_sm;
setp.lt.u32 %p0, %gt, 4;
shl.b32 %r2, %gt, 2;
add.u32 %r3, %r1, %r2;
@%p0 st.shared.u32 [%r3], 0;
bar.sync 0;
atom.shared.add.u32 %r4, [at_sm], %r0;
atom.shared.xor.b32 %r5, [at_sm+4], %r0;
atom.shared.max.u32 %r6, [at_sm+8], %r0;
red.shared.or.b32 [at_sm+12], %r0;
bar.sync 0;
ld.shared.v4.u32 {%r7, %r8, %r9, %r10}, [at_sm];
st.global.v4.u32 [%gout+0], {%r7, %r8, %r9, %r10};
"""
    return Kernel("atomics_shared", """
Shared-memory atomics whose final values do not depend on order: atom add/xor/max and
red.or over the block, read after bar.sync (the old values atom returns are order-dependent: not stored).""",
                  body, 1, 2, int_slots(32), shared=".shared .align 16 .b32 at_sm[4];", group="extra")


def corpus() -> list[Kernel]:
    """Every corpus kernel, in a fixed order."""
    ks: list[Kernel] = [arith(t) for t in ("u16", "u32", "u64", "s16", "s32", "s64")]
    ks += [logic(b) for b in (16, 32, 64)]
    ks += [shift(b) for b in (16, 32, 64)]
    ks += [bitfield(32), bitfield(64)]
    ks += [cvt_from(t, sat) for sat in (False, True) for t in INT_TYPES]
    ks += [setp_int(t) for t in ("u16", "u32", "u64", "s16", "s32", "s64", "b16", "b32", "b64")]
    ks += [setp_f32(), pred_logic(), float_ops()]
    ks += [branches(), loops(), bar_reduce(), shared_scalar(), shared_vector(), mbarrier_phases(), mbarrier_tx()]
    ks += [sregs("sregs_3d", (5, 3, 2), (3, 2, 1)), sregs("sregs_warps", (16, 3, 3), (2, 3, 1)), mov_pack(),
           address_spaces()]
    ks += [float_rounding(), cvt_float(), cvt_fp8(), bits_extra(), divrem(), local_memory(), warp_ops(), atomics()]
    return ks


def by_name() -> dict[str, Kernel]:
    return {k.name: k for k in corpus()}
