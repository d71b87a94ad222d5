"""Seeded, deterministic tensor-core fuzz launches for sm_90a: ``mma.sync`` fp8 and ``wgmma`` fp8/bf16.

Why a generator of its own (not the hopper_validation driver): that suite places *logical* matrices
through the project's encoders, so it only ever meets the descriptors and layouts the encoders make.
Here nothing is placed: the shared-memory image is random element codes and every descriptor field
(start address, leading/stride byte offsets, base offset, swizzle mode) is drawn at random, per
warpgroup and per K-step. Whatever the hardware reads through a descriptor, the VM must read the same
bytes and compute the same bits; the oracle is the silicon, not a reference.

Launch ``i`` of seed ``s`` depends only on ``(GEN_VERSION, s, i)``, never on ``count``, so a longer run
extends a shorter one. Every descriptor is kept inside its operand's region of the image under any
reading of the LBO/SBO roles (see :func:`operand_extent`), so a GPU never faults on an address.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

GEN_VERSION = 1
"""Bump when the launches a seed makes change (records made before then must be re-recorded)."""
ARCH = "sm_90a"
PTX_VERSION = "8.7"  # what mmacts.ptx.mma_sync_kernels uses for these forms (proven on an H100)
FP8 = ("e4m3", "e5m2")
SWIZZLES = ("none", "128B", "64B", "32B")
SWIZZLE_CODE = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
SMEM_LIMIT = 48 * 1024  # static shared memory without an opt-in attribute
WG_SMALL_NS = (8, 16, 24, 32, 48, 64)
"""Most wgmma N come from here (outputs are 256 bytes per N per warpgroup: the record stays small);
the rest are any multiple of 8 in [8, 256], every N the VM models."""

# ------------------------------------------------------------------------------------------ data


_FP8_SPECIALS = {
    # NaN, max finite, smallest normal, subnormals, zeros (both signs)
    "e4m3": (0x7F, 0xFF, 0x7E, 0xFE, 0x08, 0x88, 0x01, 0x81, 0x07, 0x87, 0x04, 0x00, 0x80),
    # Inf, NaNs (several payloads), max finite, smallest normal, subnormals, zeros
    "e5m2": (0x7C, 0xFC, 0x7D, 0x7E, 0x7F, 0xFD, 0xFF, 0x7B, 0xFB, 0x04, 0x84, 0x01, 0x81, 0x03, 0x00, 0x80),
}
_BF16_SPECIALS = (0x7FC0, 0xFFC0, 0x7F81, 0x7FFF, 0xFFA5, 0x7F80, 0xFF80, 0x7F7F, 0xFF7F, 0x0001, 0x8001,
                  0x007F, 0x0080, 0x0000, 0x8000)
_F32_SPECIALS = (0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA5A5A5, 0xFFFFFFFF, 0x7F800000, 0xFF800000,
                 0x7F7FFFFF, 0xFF7FFFFF, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x00000000,
                 0x80000000)
_F16_SPECIALS = (0x7E00, 0xFE00, 0x7C01, 0x7D55, 0x7C00, 0xFC00, 0x7BFF, 0xFBFF, 0x0001, 0x8001, 0x03FF,
                 0x0400, 0x0000, 0x8000)


@dataclass(frozen=True)
class DataClass:
    """How one case's data are drawn: the share of special codes (NaN/Inf/max/subnormal/zero), the
    share of zeros, and (bf16, C) the binary-exponent window of the finite values."""

    p_special: float
    p_zero: float
    exp_window: int
    c_mode: str  # random | zero | negzero | special
    exact: bool = False
    """Operands from +-{0.5, 1, 1.5, 2} and C in quarters: every sum is exact in an f32 (and in Hopper's
    13-bit fp8 window), so whatever the accumulator's numerics, a disagreement is an operand-reading one."""

    def as_dict(self) -> dict[str, Any]:
        return {"p_special": self.p_special, "p_zero": self.p_zero, "exp_window": self.exp_window,
                "c_mode": self.c_mode, "exact": self.exact}


def draw_class(rng: np.random.Generator, exact: bool = False) -> DataClass:
    if exact:
        return DataClass(0.0, float(rng.choice([0.0, 0.1])), 1, str(rng.choice(["random", "zero", "negzero"])),
                         True)
    return DataClass(p_special=float(rng.choice([0.0, 0.0, 0.01, 0.05, 0.3])),
                     p_zero=float(rng.choice([0.0, 0.0, 0.1, 0.5])),
                     exp_window=int(rng.choice([1, 3, 8, 20, 126])),
                     c_mode=str(rng.choice(["random", "random", "random", "zero", "negzero", "special"])))


_EXACT_CODES = {  # +-0.5, +-1, +-1.5, +-2
    "e4m3": (0x30, 0x38, 0x3C, 0x40, 0xB0, 0xB8, 0xBC, 0xC0),
    "e5m2": (0x38, 0x3C, 0x3E, 0x40, 0xB8, 0xBC, 0xBE, 0xC0),
    "bf16": (0x3F00, 0x3F80, 0x3FC0, 0x4000, 0xBF00, 0xBF80, 0xBFC0, 0xC000),
}


def _mix(rng: np.random.Generator, finite: np.ndarray, specials: tuple[int, ...], zero: tuple[int, ...],
         dc: DataClass) -> np.ndarray:
    u = rng.random(finite.shape)
    out = finite.copy()
    sp = u < dc.p_special
    out[sp] = rng.choice(np.asarray(specials, dtype=finite.dtype), size=int(sp.sum()))
    zr = (u >= dc.p_special) & (u < dc.p_special + dc.p_zero)
    out[zr] = rng.choice(np.asarray(zero, dtype=finite.dtype), size=int(zr.sum()))
    return out


def fp8_codes(rng: np.random.Generator, etype: str, shape: tuple[int, ...], dc: DataClass) -> np.ndarray:
    """uint8 codes: any finite code uniformly, then specials and zeros mixed in per ``dc``."""
    if dc.exact:
        return _mix(rng, rng.choice(np.asarray(_EXACT_CODES[etype], np.uint8), size=shape), (), (0x00, 0x80), dc)
    codes = rng.integers(0, 256, size=shape, dtype=np.uint8)
    if etype == "e4m3":
        bad = (codes & 0x7F) == 0x7F
        codes[bad] = codes[bad] ^ 0x01  # NaN -> the max finite code of that sign
    else:
        bad = (codes & 0x7C) == 0x7C
        codes[bad] = codes[bad] & 0xF3  # Inf/NaN exponent -> a finite one
    return _mix(rng, codes, _FP8_SPECIALS[etype], (0x00, 0x80), dc)


def bf16_codes(rng: np.random.Generator, shape: tuple[int, ...], dc: DataClass) -> np.ndarray:
    """uint16 codes: sign, exponent within ``dc.exp_window`` binades of 1, random mantissa; then specials."""
    if dc.exact:
        return _mix(rng, rng.choice(np.asarray(_EXACT_CODES["bf16"], np.uint16), size=shape), (), (0, 0x8000), dc)
    sign = rng.integers(0, 2, size=shape, dtype=np.uint16) << 15
    exp = np.clip(127 + rng.integers(-dc.exp_window, dc.exp_window + 1, size=shape), 1, 254).astype(np.uint16)
    man = rng.integers(0, 128, size=shape, dtype=np.uint16)
    return _mix(rng, sign | (exp << 7) | man, _BF16_SPECIALS, (0x0000, 0x8000), dc)


def f32_words(rng: np.random.Generator, shape: tuple[int, ...], dc: DataClass, scale_exp: int) -> np.ndarray:
    """C as f32 bit patterns (uint32) per ``dc.c_mode``."""
    if dc.c_mode in ("zero", "negzero"):
        return np.full(shape, 0 if dc.c_mode == "zero" else 0x80000000, dtype=np.uint32)
    if dc.exact:
        return (rng.integers(-64, 65, size=shape) * 0.25).astype(np.float32).view(np.uint32)
    v = (rng.standard_normal(shape) * 2.0 ** scale_exp).astype(np.float32).view(np.uint32)
    ps = max(dc.p_special, 0.1) if dc.c_mode == "special" else dc.p_special / 2
    return _mix(rng, v, _F32_SPECIALS, (0x00000000, 0x80000000), DataClass(ps, dc.p_zero / 4, 0, "random"))


def f16_words(rng: np.random.Generator, shape: tuple[int, ...], dc: DataClass, scale_exp: int) -> np.ndarray:
    """C as f16 bit patterns (uint16) per ``dc.c_mode``."""
    if dc.c_mode in ("zero", "negzero"):
        return np.full(shape, 0 if dc.c_mode == "zero" else 0x8000, dtype=np.uint16)
    if dc.exact:
        return (rng.integers(-64, 65, size=shape) * 0.25).astype(np.float16).view(np.uint16)
    with np.errstate(over="ignore"):
        v = (rng.standard_normal(shape) * 2.0 ** min(scale_exp, 12)).astype(np.float16).view(np.uint16)
    ps = max(dc.p_special, 0.1) if dc.c_mode == "special" else dc.p_special / 2
    return _mix(rng, v, _F16_SPECIALS, (0x0000, 0x8000), DataClass(ps, dc.p_zero / 4, 0, "random"))


# ------------------------------------------------------------------------------------------ launch


@dataclass
class Launch:
    """One fuzz launch: the module, the launch geometry and every kernel argument.

    ``args``: per kernel parameter ``(kind, key, value)``, kind ``in`` (a numpy array copied to the
    device), ``scalar`` (a numpy scalar) or ``out`` (``(shape, dtype)``, allocated and filled with 0xFF
    bytes before the launch on the GPU and on the VM). ``layout`` says how an output word maps to a
    D element (see ``records.element_of``); ``cases`` describes each warp/warpgroup's draw."""

    id: str
    family: str  # mma_sync | wgmma
    instrs: tuple[str, ...]
    """The MMA instruction of each K-step (opcode and immediates): the form a failure names."""
    ptx: str
    entry: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    args: list[tuple[str, str, Any]]
    layout: dict[str, Any]
    cases: list[dict[str, Any]] = field(default_factory=list)

    def manifest(self) -> dict[str, Any]:
        """The JSON-able description (arrays by key and shape, not by value)."""
        return {"id": self.id, "family": self.family, "instrs": list(self.instrs), "entry": self.entry,
                "grid": list(self.grid), "block": list(self.block), "shared_mem": self.shared_mem,
                "layout": self.layout, "cases": self.cases,
                "args": [{"kind": k, "key": key} | ({"shape": list(v[0]), "dtype": str(np.dtype(v[1]))}
                                                      if k == "out" else {"dtype": str(np.asarray(v).dtype)})
                         for k, key, v in self.args]}


def _header() -> str:
    return f".version {PTX_VERSION}\n.target {ARCH}\n.address_size 64\n"


def _vec(regs: list[str]) -> str:
    return "{" + ", ".join(regs) + "}"


# ------------------------------------------------------------------------------------------ mma.sync


def mma_opcode(dtype: str, a: str, b: str) -> str:
    return f"mma.sync.aligned.m16n8k32.row.col.{dtype}.{a}.{b}.{dtype}"


def mma_ptx(pairs: list[tuple[str, str]], dtype: str) -> str:
    """Entry ``fz_mma``: one warp per case; ``len(pairs)`` chained mma.sync (D of step s is C of s+1).

    Parameters: a u32[case, step, 32, 4], b u32[case, step, 32, 2], c u32[case, 32, CW], d u32[case, 32, CW]
    (CW = 4 for f32, 2 for f16x2), ncases."""
    steps = len(pairs)
    cw = 4 if dtype == "f32" else 2
    creg = "f32" if dtype == "f32" else "b32"
    v = "v4" if cw == 4 else "v2"
    c, d = [f"%c{i}" for i in range(cw)], [f"%d{i}" for i in range(cw)]
    lines = [
        "    mov.u32 %tx, %tid.x;", "    and.b32 %lane, %tx, 31;", "    shr.u32 %warp, %tx, 5;",
        "    mov.u32 %t0, %ctaid.x;", "    mov.u32 %t1, %ntid.x;", "    shr.u32 %t1, %t1, 5;",
        "    mad.lo.u32 %cs, %t0, %t1, %warp;", "    ld.param.u32 %n, [ncases];",
        "    setp.ge.u32 %p, %cs, %n;", "    @%p bra DONE;",
        f"    mul.lo.u32 %t2, %cs, {32 * steps};", "    add.u32 %t2, %t2, %lane;", "    cvt.u64.u32 %iab, %t2;",
        "    mad.lo.u32 %t2, %cs, 32, %lane;", "    cvt.u64.u32 %icd, %t2;",
    ]
    for p, stride, idx in (("pa", 16, "%iab"), ("pb", 8, "%iab"), ("pc", 4 * cw, "%icd"), ("pd", 4 * cw, "%icd")):
        r = "%r" + p[1]
        lines += [f"    ld.param.u64 {r}, [{p}];", f"    cvta.to.global.u64 {r}, {r};",
                  f"    mad.lo.u64 {r}, {idx}, {stride}, {r};"]
    lines.append(f"    ld.global.{v}.{creg} {_vec(c)}, [%rc];")
    for s, (at, bt) in enumerate(pairs):
        a = [f"%a{4 * s + i}" for i in range(4)]
        b = [f"%b{2 * s + i}" for i in range(2)]
        lines.append(f"    ld.global.v4.b32 {_vec(a)}, [%ra+{512 * s}];")
        lines.append(f"    ld.global.v2.b32 {_vec(b)}, [%rb+{256 * s}];")
        src = c if s == 0 else d
        lines.append(f"    {mma_opcode(dtype, at, bt)} {_vec(d)}, {_vec(a)}, {_vec(b)}, {_vec(src)};")
    lines.append(f"    st.global.{v}.{creg} [%rd], {_vec(d)};")
    return (_header() + "\n.visible .entry fz_mma(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd,"
            " .param .u32 ncases)\n{\n    .reg .pred %p;\n"
            f"    .reg .b32 %tx, %lane, %warp, %cs, %n, %t<3>, %a<{4 * steps}>, %b<{2 * steps}>;\n"
            f"    .reg .{creg} %c<{cw}>, %d<{cw}>;\n    .reg .b64 %iab, %icd, %ra, %rb, %rc, %rd;\n"
            + "\n".join(lines) + "\nDONE:\n    ret;\n}\n")


def gen_mma(rng: np.random.Generator, lid: str) -> Launch:
    dtype = str(rng.choice(["f32", "f16"]))
    steps = int(rng.integers(1, 4))
    same = rng.random() < 0.6
    p0 = (str(rng.choice(FP8)), str(rng.choice(FP8)))
    pairs = [p0 if same else (str(rng.choice(FP8)), str(rng.choice(FP8))) for _ in range(steps)]
    warps = int(rng.integers(1, 5))
    ncases = int(rng.integers(1, 9))
    cw = 4 if dtype == "f32" else 2
    exact = bool(rng.random() < 0.3)
    a = np.zeros((ncases, steps, 32, 16), np.uint8)
    b = np.zeros((ncases, steps, 32, 8), np.uint8)
    c = np.zeros((ncases, 32, cw), np.uint32)
    cases = []
    for i in range(ncases):
        dc = draw_class(rng, exact)
        scale = int(rng.integers(-12, 21))
        for s, (at, bt) in enumerate(pairs):
            a[i, s] = fp8_codes(rng, at, (32, 16), dc)  # every byte of a fragment is one element
            b[i, s] = fp8_codes(rng, bt, (32, 8), dc)
        if dtype == "f32":
            c[i] = f32_words(rng, (32, 4), dc, scale)
        else:
            c[i] = f16_words(rng, (32, 4), dc, scale).view(np.uint32).reshape(32, 2)
        cases.append({"data": dc.as_dict(), "c_scale_exp": scale})
    return Launch(
        id=lid, family="mma_sync", instrs=tuple(mma_opcode(dtype, at, bt) for at, bt in pairs),
        ptx=mma_ptx(pairs, dtype), entry="fz_mma", grid=(-(-ncases // warps), 1, 1), block=(32 * warps, 1, 1),
        shared_mem=0,
        args=[("in", "a", a.view(np.uint32).reshape(ncases, steps, 32, 4)),
              ("in", "b", b.view(np.uint32).reshape(ncases, steps, 32, 2)), ("in", "c", c),
              ("out", "d", ((ncases, 32, cw), np.uint32)), ("scalar", "ncases", np.uint32(ncases))],
        layout={"family": "mma_sync", "dtype": dtype, "out": "d", "exact": exact}, cases=cases)


# ------------------------------------------------------------------------------------------ wgmma


@dataclass(frozen=True)
class WgStep:
    """The immediates of one wgmma K-step (part of the module text)."""

    scale_a: int
    scale_b: int
    trans_a: int
    trans_b: int


def wg_opcode(n: int, at: str, bt: str, st: WgStep) -> str:
    k = 16 if at == "bf16" else 32
    imm = f"{st.scale_a}, {st.scale_b}" + (f", {st.trans_a}, {st.trans_b}" if at == "bf16" else "")
    return f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{at}.{bt} [imm {imm}]"


def wgmma_ptx(n: int, at: str, bt: str, steps: list[WgStep], img: int, commit: str) -> str:
    """Entry ``fz_wgmma``: one warpgroup per CTA; the image is copied to shared memory verbatim, made
    visible to the async proxy, then each K-step issues one wgmma with its own descriptors and scale-d.

    Parameters: img u8[case, img], desc u64[case, step, 2] (start field = offset in the image; the kernel
    adds the shared base), flag u32[case, step] (scale-d), c u32[case, 128, N/2], d u32[case, 128, N/2],
    ncases. ``commit``: ``one`` (one group), ``each`` (a group per step), ``each-wait1`` (and
    ``wait_group 1`` after each commit)."""
    nacc = n // 2
    ns = len(steps)
    d = [f"%d{i}" for i in range(nacc)]
    k = 16 if at == "bf16" else 32
    body = [
        "    mov.u32 %tx, %tid.x;", "    mov.u32 %cs, %ctaid.x;", "    ld.param.u32 %n, [ncases];",
        "    setp.ge.u32 %p, %cs, %n;", "    @%p bra DONE;", "    cvt.u64.u32 %cs64, %cs;",
        "    ld.param.u64 %rimg, [pimg];", "    cvta.to.global.u64 %rimg, %rimg;",
        f"    mad.lo.u64 %rimg, %cs64, {img}, %rimg;", "    mov.u64 %sb, smem;", "    shl.b32 %i, %tx, 4;",
        "COPY:", f"    setp.ge.u32 %ploop, %i, {img};", "    @%ploop bra COPIED;",
        "    cvt.u64.u32 %t64, %i;", "    add.u64 %src, %rimg, %t64;",
        "    ld.global.v4.b32 {%v0, %v1, %v2, %v3}, [%src];", "    add.u64 %src, %sb, %t64;",
        "    st.shared.v4.b32 [%src], {%v0, %v1, %v2, %v3};", "    add.u32 %i, %i, 2048;", "    bra COPY;",
        "COPIED:", "    fence.proxy.async.shared::cta;", "    bar.sync 0;", "    shr.u64 %sb4, %sb, 4;",
        "    ld.param.u64 %rdesc, [pdesc];", "    cvta.to.global.u64 %rdesc, %rdesc;",
        f"    mad.lo.u64 %rdesc, %cs64, {16 * ns}, %rdesc;",
        "    ld.param.u64 %rflag, [pflag];", "    cvta.to.global.u64 %rflag, %rflag;",
        f"    mad.lo.u64 %rflag, %cs64, {4 * ns}, %rflag;",
    ]
    for s in range(ns):
        body += [f"    ld.global.u64 %ad{s}, [%rdesc+{16 * s}];", f"    ld.global.u64 %bd{s}, [%rdesc+{16 * s + 8}];",
                 f"    add.u64 %ad{s}, %ad{s}, %sb4;", f"    add.u64 %bd{s}, %bd{s}, %sb4;",
                 f"    ld.global.u32 %f{s}, [%rflag+{4 * s}];", f"    setp.ne.u32 %ps{s}, %f{s}, 0;"]
    body += ["    cvt.u64.u32 %t64, %tx;", "    mad.lo.u64 %t64, %cs64, 128, %t64;",
             "    ld.param.u64 %rc, [pc];", "    cvta.to.global.u64 %rc, %rc;",
             f"    mad.lo.u64 %rc, %t64, {4 * nacc}, %rc;", "    ld.param.u64 %rd, [pd];",
             "    cvta.to.global.u64 %rd, %rd;", f"    mad.lo.u64 %rd, %t64, {4 * nacc}, %rd;"]
    body += [f"    ld.global.f32 %d{i}, [%rc+{4 * i}];" for i in range(nacc)]
    body.append("    wgmma.fence.sync.aligned;")
    for s, st in enumerate(steps):
        imm = [str(st.scale_a), str(st.scale_b)] + ([str(st.trans_a), str(st.trans_b)] if at == "bf16" else [])
        body.append(f"    wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{at}.{bt} {_vec(d)}, %ad{s}, %bd{s}, "
                    f"%ps{s}, {', '.join(imm)};")
        if commit != "one":
            body.append("    wgmma.commit_group.sync.aligned;")
            if commit == "each-wait1":
                body.append("    wgmma.wait_group.sync.aligned 1;")
    if commit == "one":
        body.append("    wgmma.commit_group.sync.aligned;")
    body.append("    wgmma.wait_group.sync.aligned 0;")
    body += [f"    st.global.f32 [%rd+{4 * i}], %d{i};" for i in range(nacc)]
    descs = ", ".join(f"%ad{s}, %bd{s}" for s in range(ns))
    return (_header() + f"\n.shared .align 1024 .b8 smem[{img}];\n\n"
            ".visible .entry fz_wgmma(.param .u64 pimg, .param .u64 pdesc, .param .u64 pflag, .param .u64 pc,"
            " .param .u64 pd, .param .u32 ncases)\n{\n"
            f"    .reg .pred %p, %ploop, %ps<{ns}>;\n"
            f"    .reg .b32 %tx, %cs, %n, %i, %f<{ns}>, %v<4>;\n    .reg .f32 %d<{nacc}>;\n"
            f"    .reg .b64 %rimg, %rdesc, %rflag, %rc, %rd, %cs64, %sb, %sb4, %src, %t64, {descs};\n"
            + "\n".join(body) + "\nDONE:\n    ret;\n}\n")


def operand_extent(mn: int, elem_bytes: int, lbo: int, sbo: int) -> int:
    """Bytes past the start address that an operand of ``mn`` rows/columns (K of 32 bytes) can touch,
    whichever of LBO/SBO strides which dimension: at most ``mn/8`` groups along M/N and 2 along K, each
    stride at most ``max(lbo, sbo)``, within-group offsets below 1024 (8 rows of a 128-B swizzle), and a
    swizzle XOR stays inside its 128-B block."""
    groups_mn = max(-(-mn // 8), -(-mn * elem_bytes // 16))
    groups_k = 2
    return (groups_mn - 1 + groups_k - 1) * max(lbo, sbo) + 1024 + 128


def _draw_desc_fields(rng: np.random.Generator, swz: str, mn_major: bool, canonical: bool) -> tuple[int, int]:
    """(LBO, SBO) in bytes: a canonical dense tile (``canonical``; else perturbed at times) or random
    multiples of 16."""
    w = {"none": 16, "32B": 32, "64B": 64, "128B": 128}[swz]
    if canonical or rng.random() < 0.5:
        if swz == "none":
            core = 128  # an 8 x 16-byte core matrix
            lbo, sbo = (core, 2 * core) if rng.random() < 0.5 else (core * int(rng.choice([2, 4, 8])), core)
            if mn_major:
                lbo, sbo = sbo, lbo
        else:
            lbo = int(rng.choice([16, 8 * w, 1024, 16 * int(rng.integers(1, 64))]))
            sbo = 8 * w
            if mn_major:
                lbo, sbo = 8 * w * int(rng.choice([1, 2])), 8 * w
        if not canonical and rng.random() < 0.2:
            sbo += 16 * int(rng.integers(-4, 5))
        return max(lbo, 0), max(sbo, 0)
    top = int(rng.choice([4, 16, 48]))
    return 16 * int(rng.integers(0, top)), 16 * int(rng.integers(0, top))


def _desc_word(start: int, lbo: int, sbo: int, base_offset: int, swz: str) -> int:
    return ((start >> 4) & 0x3FFF) | (((lbo >> 4) & 0x3FFF) << 16) | (((sbo >> 4) & 0x3FFF) << 32) | \
        ((base_offset & 7) << 49) | (SWIZZLE_CODE[swz] << 62)


def gen_wgmma(rng: np.random.Generator, lid: str) -> Launch:
    for _ in range(50):  # redraw a form whose operands cannot fit the shared memory
        la = _try_wgmma(rng, lid)
        if la is not None:
            return la
    raise RuntimeError(f"{lid}: no wgmma draw fits {SMEM_LIMIT} bytes of shared memory")


def _try_wgmma(rng: np.random.Generator, lid: str) -> Launch | None:
    bf16 = rng.random() < 0.4
    at, bt = ("bf16", "bf16") if bf16 else (str(rng.choice(FP8)), str(rng.choice(FP8)))
    eb = 2 if bf16 else 1
    n = int(rng.choice(WG_SMALL_NS)) if rng.random() < 0.75 else 8 * int(rng.integers(1, 33))
    ns = int(rng.integers(1, 5))
    fixed_trans = (int(rng.integers(0, 2)), int(rng.integers(0, 2))) if bf16 else (0, 0)
    steps = []
    for _ in range(ns):
        ta, tb = fixed_trans if (not bf16 or rng.random() < 0.7) else (int(rng.integers(0, 2)),
                                                                        int(rng.integers(0, 2)))
        steps.append(WgStep(-1 if rng.random() < 0.2 else 1, -1 if rng.random() < 0.2 else 1, ta, tb))
    commit = str(rng.choice(["one", "each", "each-wait1"]))
    # one descriptor regime per launch, so a silicon disagreement points at a family of fields:
    # canonical (dense tiles, K-steps advancing the start, base offset 0, as CUTLASS makes them), random
    # (any LBO/SBO/start/swizzle per step, base offset 0), base_offset (random, and random base offsets)
    regime = str(rng.choice(["canonical", "random", "base_offset"], p=[0.35, 0.3, 0.35]))
    canonical = regime == "canonical"
    exact = bool(rng.random() < 0.3)
    ncases = 1 if rng.random() < 0.6 else 2
    per_case = []
    need = [0, 0]  # bytes of the A and B regions
    for _ in range(ncases):
        dc = draw_class(rng, exact)
        ops = []
        for o, mn in ((0, 64), (1, n)):
            swz = str(rng.choice(SWIZZLES))
            per_step_swz = not canonical and rng.random() < 0.15
            advance = canonical or rng.random() < 0.6
            s0 = 1024 * int(rng.integers(0, 2)) if canonical else 16 * int(rng.integers(0, int(rng.choice([1, 8, 64]))))
            descs = []
            for s, st in enumerate(steps):
                sw = str(rng.choice(SWIZZLES)) if per_step_swz else swz
                mn_major = bool(st.trans_a if o == 0 else st.trans_b)
                lbo, sbo = _draw_desc_fields(rng, sw, mn_major, canonical)
                start = s0 + 32 * s if advance else 16 * int(rng.integers(0, 64))
                bo = int(rng.integers(0, 8)) if regime == "base_offset" and rng.random() < 0.7 else 0
                descs.append({"start": start, "lbo": lbo, "sbo": sbo, "base_offset": bo, "swizzle": sw,
                              "major": "MN" if mn_major else "K"})
                need[o] = max(need[o], start + operand_extent(mn, eb, lbo, sbo))
            ops.append(descs)
        per_case.append((dc, ops, bool(rng.random() < 0.5), [int(rng.random() < (0.5 if s == 0 else 0.85))
                                                             for s in range(ns)]))
    ra = -(-need[0] // 1024) * 1024
    rb = -(-need[1] // 1024) * 1024
    img = ra + rb
    if img > SMEM_LIMIT:
        return None
    imgs = np.zeros((ncases, img), np.uint8)
    desc = np.zeros((ncases, ns, 2), np.uint64)
    flags = np.zeros((ncases, ns), np.uint32)
    cs = np.zeros((ncases, 128, n // 2), np.uint32)
    cases = []
    for i, (dc, ops, _, fl) in enumerate(per_case):
        if bf16:
            imgs[i, :ra] = bf16_codes(rng, (ra // 2,), dc).view(np.uint8)
            imgs[i, ra:] = bf16_codes(rng, (rb // 2,), dc).view(np.uint8)
        else:
            imgs[i, :ra] = fp8_codes(rng, at, (ra,), dc)
            imgs[i, ra:] = fp8_codes(rng, bt, (rb,), dc)
        for o, base in ((0, 0), (1, ra)):
            for s, dd in enumerate(ops[o]):
                dd["start"] += base
                desc[i, s, o] = _desc_word(dd["start"], dd["lbo"], dd["sbo"], dd["base_offset"], dd["swizzle"])
        flags[i] = fl
        scale = int(rng.integers(-8, 25))
        # C is read only where step 0 accumulates: zeros elsewhere keep the record small
        cs[i] = f32_words(rng, (128, n // 2), dc, scale) if fl[0] else 0
        cases.append({"data": dc.as_dict(), "c_scale_exp": scale, "scale_d": fl, "a": ops[0], "b": ops[1]})
    return Launch(
        id=lid, family="wgmma", instrs=tuple(wg_opcode(n, at, bt, st) for st in steps),
        ptx=wgmma_ptx(n, at, bt, steps, img, commit), entry="fz_wgmma", grid=(ncases, 1, 1), block=(128, 1, 1),
        shared_mem=0,
        args=[("in", "img", imgs), ("in", "desc", desc), ("in", "flag", flags), ("in", "c", cs),
              ("out", "d", ((ncases, 128, n // 2), np.uint32)), ("scalar", "ncases", np.uint32(ncases))],
        layout={"family": "wgmma", "n": n, "out": "d", "commit": commit, "img": img, "a_region": ra,
                "regime": regime, "exact": exact},
        cases=cases)


# ------------------------------------------------------------------------------------------ corpus


def launch(seed: int, index: int) -> Launch:
    """Launch ``index`` of ``seed`` (independent of how many are drawn)."""
    rng = np.random.default_rng([GEN_VERSION, int(seed), int(index)])
    fam = "wgmma" if rng.random() < 0.55 else "mma_sync"
    lid = f"s{seed}.{index:04d}.{fam}"
    return gen_wgmma(rng, lid) if fam == "wgmma" else gen_mma(rng, lid)


def launches(seeds: list[int], count: int) -> list[Launch]:
    """``count`` launches of each seed, in order."""
    return [launch(s, i) for s in seeds for i in range(count)]
