"""One kernel per instruction form over the edge-value table: the rule book behind the random kernels.

Why beside the random kernels: a random kernel pins a difference to one instruction, but its sources
are whatever earlier instructions left. A unit kernel runs a single form on every combination of
edge values of its source classes (sampled down to :data:`MAX_COMBOS` where the product is larger),
one combination a thread, so each silicon answer is a clean fact: this instruction, these bits in,
these bits out. NaN propagation, .ftz, saturation and conversion limits are read off these.

Frame: ``fu(.param .u64 p_in, .param .u64 p_out, .param .u32 p_n)``; thread ``gid`` reads its
sources from ``p_in + 32*gid`` (one u64 slot each), stores each destination to ``p_out + 8*n_dst*gid``.
Warp forms are left to the random kernels (they need whole convergent warps).
"""

from __future__ import annotations

import itertools
import zlib
from dataclasses import dataclass
from functools import cache

import numpy as np

from mmacts.validation.fuzz.forms import Form, all_forms
from mmacts.validation.fuzz.generate import _DECL, _WIDTH, ARCH, PTX_VERSION
from mmacts.validation.fuzz.inputs import F16_EDGES, F32_EDGES, F64_EDGES, I32_EDGES, I64_EDGES

MAX_COMBOS = 1024
BLOCK = 128
U64 = np.uint64
_LD = {"h": "b16", "r": "b32", "rd": "b64", "f": "f32", "fd": "f64", "p": "u32"}


@dataclass
class UnitKernel:
    """One form on the edge-value grid."""

    index: int
    form: Form
    ptx: str
    combos: np.ndarray
    """``uint64[n, n_src]``: each thread's source bits."""
    classes: list[str]

    entry = "fu"
    kind = "unit"

    @property
    def name(self) -> str:
        return f"unit{self.index}"

    @property
    def n_out(self) -> int:
        return len(self.classes)

    @property
    def n_param(self) -> int:
        return int(len(self.combos))

    @property
    def threads(self) -> int:
        return -(-len(self.combos) // BLOCK) * BLOCK

    @property
    def grid(self) -> tuple[int, int, int]:
        return (self.threads // BLOCK, 1, 1)

    @property
    def block(self) -> tuple[int, int, int]:
        return (BLOCK, 1, 1)

    def inputs(self) -> np.ndarray:
        x = np.zeros((self.threads, 4), dtype=U64)
        x[: len(self.combos), : self.combos.shape[1]] = self.combos
        return x


def _values(form: Form, cls: str) -> np.ndarray:
    packed = "f16x2" in form.opcode or "bf16x2" in form.opcode
    if cls == "h":
        return F16_EDGES.astype(U64)
    if cls == "r":
        if packed:
            e = F16_EDGES.astype(U64)
            hi = np.roll(e, 7)
            return np.concatenate([e | (hi << U64(16)), (e << U64(16)) | e])
        return np.unique(np.concatenate([I32_EDGES, F32_EDGES.astype(U64)]))
    if cls == "rd":
        return np.unique(np.concatenate([I64_EDGES, F64_EDGES]))
    if cls == "f":
        return F32_EDGES.astype(U64)
    if cls == "fd":
        return F64_EDGES
    if cls == "p":
        return np.array([0, 1], dtype=U64)
    raise ValueError(cls)


def _operand(spec: str) -> str:
    """A source spec's class (a register where allowed, else the immediate range)."""
    opts = spec.split("|")
    regs = [o for o in opts if not o.startswith("i:")]
    return regs[0] if regs else opts[0]


def _combos(form: Form, srcs: list[str]) -> np.ndarray:
    reg_srcs = [s for s in srcs if not s.startswith("i:")]
    lists = [_values(form, s) for s in reg_srcs]
    total = int(np.prod([len(v) for v in lists])) if lists else 1
    rng = np.random.default_rng(zlib.crc32(form.opcode.encode()) ^ len(form.srcs))
    if total <= MAX_COMBOS:
        rows = list(itertools.product(*lists)) if lists else [()]
        arr = np.array(rows, dtype=U64).reshape(len(rows), len(lists))
    else:
        arr = np.stack([v[rng.integers(0, len(v), size=MAX_COMBOS)] for v in lists], axis=1).astype(U64)
        for i in range(1, len(lists)):  # the diagonal too (x op x): NaN-with-itself rules
            if reg_srcs[i] == reg_srcs[0]:
                arr[:64, i] = arr[:64, 0]
    for i in np.flatnonzero([i in form.nonzero for i in range(len(reg_srcs))]):
        arr[:, i] = np.where(arr[:, i] == 0, U64(1), arr[:, i])
    return arr[_decidable(form, reg_srcs, arr)]


def _is_nan(bits: np.ndarray, cls: str, form: Form) -> np.ndarray:
    if cls in ("fd", "rd"):
        return np.isnan(bits.view(np.float64))
    if cls in ("f",) or (cls == "r" and "16x2" not in form.opcode):
        return np.isnan(bits.astype(np.uint32).view(np.float32))
    lanes = [(bits >> U64(s)) & U64(0xFFFF) for s in ((0, 16) if cls == "r" else (0,))]
    bf = "bf16" in form.opcode
    out = np.zeros(len(bits), dtype=bool)
    for ln in lanes:
        exp = (ln >> U64(7 if bf else 10)) & U64(0xFF if bf else 0x1F)
        man = ln & U64(0x7F if bf else 0x3FF)
        out |= (exp == U64(0xFF if bf else 0x1F)) & (man != 0)
    return out


def _decidable(form: Form, srcs: list[str], arr: np.ndarray) -> np.ndarray:
    """Rows whose answer the ISA and silicon decide, i.e. that the VM models rather than refuses: no NaN
    into an unspecified-NaN form; no two different NaNs into a double-precision operation (which one
    comes out depends on ptxas's operand order); no two NaNs into min/max.f64 unless one quiet NaN twice
    (DMNMX quiets, DSETP+SEL does not)."""
    keep = np.ones(len(arr), dtype=bool)
    if form.nan_unspecified:
        for i, c in enumerate(srcs):
            keep &= ~_is_nan(arr[:, i], c, form)
    if form.opcode.split(".")[0] in ("min", "max") and form.opcode.endswith(".f64"):  # DMNMX or DSETP+SEL
        a, b = arr[:, 0], arr[:, 1]
        both = _is_nan(a, "fd", form) & _is_nan(b, "fd", form)
        keep &= ~(both & ~((a == b) & ((a & U64(1 << 51)) != 0)))
    if form.opcode.endswith(".f64") and not form.opcode.startswith("cvt") and sum(c == "fd" for c in srcs) >= 2:
        nans = [(i, _is_nan(arr[:, i], "fd", form)) for i, c in enumerate(srcs) if c == "fd"]
        for a in range(len(nans)):
            for b in range(a + 1, len(nans)):
                (i, ni), (j, nj) = nans[a], nans[b]
                qi, qj = arr[:, i] | U64(1 << 51), arr[:, j] | U64(1 << 51)  # the quiet bit
                keep &= ~(ni & nj & (qi != qj))
    return keep


def _ptx(form: Form, srcs: list[str], index: int) -> str:
    regs: dict[str, int] = {}

    def new(c: str) -> str:
        regs[c] = regs.get(c, 0) + 1
        return f"%{c}{regs[c] - 1}"

    body, src_ops, slot = [], [], 0
    for s in srcs:
        if s.startswith("i:"):
            lo, hi = (int(x) for x in s.split(":")[1:])
            src_ops.append(str((lo + hi) // 2 + (zlib.crc32(form.opcode.encode()) % max(1, (hi - lo) // 2))))
            continue
        r = new(s)
        if s == "p":
            body += [f"ld.global.u32 %ts, [%gin+{8 * slot}];", f"setp.ne.u32 {r}, %ts, 0;"]
        else:
            body.append(f"ld.global.{_LD[s]} {r}, [%gin+{8 * slot}];")
        src_ops.append(r)
        slot += 1
    dsts = [new(c) for c in form.dsts]
    d = ("{" + ", ".join(dsts) + "}") if form.dst_vec else ("|".join(dsts) if form.pair else ", ".join(dsts))
    sops = ("{" + ", ".join(src_ops) + "}") if form.src_vec else ", ".join(src_ops)
    body.append(f"{form.opcode} {d}{', ' if sops else ''}{sops};")
    for i, (r, c) in enumerate(zip(dsts, form.dsts, strict=True)):
        if c == "p":
            body += [f"selp.u32 %ts, 1, 0, {r};", f"st.global.b32 [%gout+{8 * i}], %ts;"]
        else:
            body.append(f"st.global.b{_WIDTH[c]} [%gout+{8 * i}], {r};")
    decl = "\n".join(f"    .reg {_DECL[c]} %{c}<{n}>;" for c, n in regs.items())
    lines = "\n".join("    " + ln for ln in body)
    return f"""//
// mmacts PTX unit fuzz kernel {index}: {form.opcode} over the edge-value grid
//
.version {PTX_VERSION}
.target {ARCH}
.address_size 64

.visible .entry fu(
    .param .u64 p_in,
    .param .u64 p_out,
    .param .u32 p_n
)
{{
{decl}
    .reg .pred %tq;
    .reg .b32 %gtid, %gcta, %gntid, %gid, %gn, %ts;
    .reg .b64 %gin, %gout, %goff;
    ld.param.u64 %gin, [p_in];
    ld.param.u64 %gout, [p_out];
    ld.param.u32 %gn, [p_n];
    cvta.to.global.u64 %gin, %gin;
    cvta.to.global.u64 %gout, %gout;
    mov.u32 %gtid, %tid.x;
    mov.u32 %gcta, %ctaid.x;
    mov.u32 %gntid, %ntid.x;
    mad.lo.u32 %gid, %gcta, %gntid, %gtid;
    setp.ge.u32 %tq, %gid, %gn;
    @%tq bra $Ldone;
    mul.wide.u32 %goff, %gid, 32;
    add.s64 %gin, %gin, %goff;
    mul.wide.u32 %goff, %gid, {8 * len(form.dsts)};
    add.s64 %gout, %gout, %goff;
{lines}
$Ldone:
    ret;
}}
"""


@cache
def unit_kernels() -> tuple[UnitKernel, ...]:
    """Every non-warp form as a unit kernel, in the forms table's order."""
    out = []
    for i, f in enumerate(x for x in all_forms() if not x.warp):
        srcs = [_operand(s) for s in f.srcs]
        out.append(UnitKernel(i, f, _ptx(f, srcs, i), _combos(f, srcs), list(f.dsts)))
    return tuple(out)
