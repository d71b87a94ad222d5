"""Seeded random PTX kernels for differential fuzzing (issue 22).

A kernel is a pure function of its seed: ``kernel(seed)`` draws a few instruction families, then a
body of 20-60 statements: single instructions (sometimes under a guard predicate), divergent
if/else blocks, data-dependent loops that reconverge, warp operations with exact member masks in
convergent code (``activemask``-masked votes inside divergent blocks) and shared-memory round trips
between the threads. Every result register is stored to its own output slot right after it is written,
so a difference between the VM and silicon is pinned to one instruction. Slots a thread never
reaches keep the 0xFF fill on both sides.

Frame: ``fz(.param .u64 p_in, .param .u64 p_out)``, one CTA of :data:`THREADS` threads (one warp: the
record stays small); thread ``t`` reads ``uint64[N_IN]`` at ``p_in + 8*N_IN*t`` and writes
``uint64[n_out]`` at ``p_out + 8*n_out*t``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mmacts.validation.fuzz.forms import FAMILIES, Form, all_forms
from mmacts.validation.fuzz.inputs import N_IN, kernel_inputs

PTX_VERSION = "8.4"
ARCH = "sm_90a"
THREADS = 32
POOL = {"h": 4, "r": 8, "rd": 6, "f": 6, "fd": 2, "p": 8}
"""Registers per class, loaded from the input slots (see :data:`mmacts.validation.fuzz.inputs.SLOT_KIND`)."""
_DECL = {"h": ".b16", "r": ".b32", "rd": ".b64", "f": ".f32", "fd": ".f64", "p": ".pred"}
_WIDTH = {"h": 16, "r": 32, "rd": 64, "f": 32, "fd": 64, "p": 32}


@dataclass
class Slot:
    """One output slot: the statement that wrote it and the register class stored."""

    text: str
    cls: str


@dataclass
class Kernel:
    """A generated kernel: its PTX and what each output slot holds. Launched as one CTA of
    :data:`THREADS` threads with parameters ``(in, out)``."""

    seed: int
    families: tuple[str, ...]
    ptx: str
    slots: list[Slot]
    forms: list[str] = field(default_factory=list)
    """Opcode of every drawn statement (what the kernel covers)."""

    entry = "fz"
    threads = THREADS
    grid = (1, 1, 1)
    block = (THREADS, 1, 1)
    n_param: int | None = None
    kind = "random"

    @property
    def n_out(self) -> int:
        return len(self.slots)

    @property
    def name(self) -> str:
        return f"seed{self.seed}"

    @property
    def classes(self) -> list[str]:
        return [s.cls for s in self.slots]

    def inputs(self) -> np.ndarray:
        return kernel_inputs(self.seed, self.threads)


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng([seed, 0xF022])
        self.seed = seed
        self.lines: list[str] = []
        self.slots: list[Slot] = []
        self.forms: list[str] = []
        self.labels = 0
        self.loops = 0
        fams = list(FAMILIES)
        k = int(self.rng.integers(2, 5))
        self.families = tuple(sorted(self.rng.choice(fams, size=k, replace=False).tolist()))
        self.pool = [f for f in all_forms() if f.family in self.families and not f.nan_unspecified]
        self.plain = [f for f in self.pool if not f.warp]

    # -------------------------------------------------------------------------- operands
    def reg(self, cls: str) -> str:
        return f"%{cls}{int(self.rng.integers(0, POOL[cls]))}"

    def distinct(self, classes: tuple[str, ...]) -> list[str]:
        """Destination registers, never one register twice (which result lands last is not defined)."""
        picks: dict[str, list[int]] = {}
        for c in dict.fromkeys(classes):  # ordered: set order varies between processes
            k = classes.count(c)
            picks[c] = [int(i) for i in self.rng.choice(POOL[c], size=k, replace=False)]
        return [f"%{c}{picks[c].pop(0)}" for c in classes]

    def src(self, spec: str, cls_imm_ok: bool = True) -> str:
        options = spec.split("|")
        choice = options[int(self.rng.integers(0, len(options)))]
        if choice.startswith("i:"):
            _, lo, hi = choice.split(":")
            lo_i, hi_i = int(lo), int(hi)
            edge = [lo_i, hi_i, lo_i + 1, (lo_i + hi_i) // 2]
            v = int(self.rng.choice(edge)) if self.rng.random() < 0.3 else int(self.rng.integers(lo_i, hi_i + 1))
            return str(v)
        return self.reg(choice)

    def store(self, reg: str, cls: str, text: str) -> None:
        off = 8 * len(self.slots)
        if cls == "p":
            self.lines.append(f"selp.u32 %ts, 1, 0, {reg};")
            self.lines.append(f"st.global.b32 [%gout+{off}], %ts;")
        else:
            self.lines.append(f"st.global.b{_WIDTH[cls]} [%gout+{off}], {reg};")
        self.slots.append(Slot(text, cls))

    # -------------------------------------------------------------------------- statements
    def op(self, form: Form, guard_ok: bool = True, mask: str = "0xffffffff") -> None:
        srcs = []
        for i, s in enumerate(form.srcs):
            o = self.src(s)
            if i in form.nonzero and o.startswith("%"):
                t = {"h": "%tnh", "r": "%tnr", "rd": "%tnd"}[s]
                w = _WIDTH[s]
                self.lines.append(f"setp.eq.b{w} %tq, {o}, 0;")
                self.lines.append(f"selp.b{w} {t}, 1, {o}, %tq;")
                o = t
            srcs.append(o)
        dsts = self.distinct(form.dsts)
        d = ("{" + ", ".join(dsts) + "}") if form.dst_vec else ("|".join(dsts) if form.pair else ", ".join(dsts))
        s = ("{" + ", ".join(srcs) + "}") if form.src_vec else ", ".join(srcs)
        if form.warp:
            s = f"{s}, {mask}"
        guard = ""
        if guard_ok and not form.warp and self.rng.random() < 0.15:
            guard = ("@!" if self.rng.random() < 0.5 else "@") + self.reg("p") + " "
        text = f"{guard}{form.opcode} {d}{', ' if s else ''}{s};" if d else f"{guard}{form.opcode} {s};"
        self.lines.append(text)
        self.forms.append(form.opcode)
        for r, c in zip(dsts, form.dsts, strict=True):
            self.store(r, c, text)

    def draw(self, convergent: bool) -> Form:
        pool = self.pool if convergent else self.plain
        return pool[int(self.rng.integers(0, len(pool)))]

    def block(self, n: int, convergent: bool) -> None:
        for _ in range(n):
            self.op(self.draw(convergent))
            if not convergent and "warp" in self.families and self.rng.random() < 0.15:
                self.masked_vote()

    def masked_vote(self) -> None:
        """A vote among exactly the threads active here (divergent code): the mask is activemask's."""
        self.lines.append("activemask.b32 %tm;")
        d, p = self.reg("r"), self.reg("p")
        text = f"vote.sync.ballot.b32 {d}, {p}, %tm;"
        self.lines.append(text)
        self.forms.append("vote.sync.ballot.b32")
        self.store(d, "r", text)

    def if_else(self) -> None:
        i = self.labels
        self.labels += 1
        p = self.reg("p")
        neg = "!" if self.rng.random() < 0.5 else ""
        self.lines.append(f"@{neg}{p} bra $Lelse{i};")
        self.block(int(self.rng.integers(1, 6)), convergent=False)
        self.lines.append(f"bra $Lend{i};")
        self.lines.append(f"$Lelse{i}:")
        self.block(int(self.rng.integers(1, 6)), convergent=False)
        self.lines.append(f"$Lend{i}:")

    def loop(self) -> None:
        i = self.loops
        self.loops += 1
        r = self.reg("r")
        self.lines += [f"and.b32 %tb{i}, {r}, 3;", f"add.u32 %tb{i}, %tb{i}, 1;", f"mov.u32 %tc{i}, 0;",
                       f"$Lloop{i}:"]
        self.block(int(self.rng.integers(1, 5)), convergent=False)
        self.lines += [f"add.u32 %tc{i}, %tc{i}, 1;", f"setp.lt.u32 %tl, %tc{i}, %tb{i};", f"@%tl bra $Lloop{i};"]

    def shared_round_trip(self) -> None:
        """Every thread stores a register to shared memory, the CTA syncs, each thread loads another
        thread's word, the CTA syncs again before the words are reused."""
        wide = self.rng.random() < 0.5
        cls, w = ("rd", 64) if wide else ("r", 32)
        a, d = self.reg(cls), self.reg(cls)
        k, c = int(self.rng.integers(1, THREADS)) | 1, int(self.rng.integers(0, THREADS))
        self.lines += [f"st.shared.b{w} [%gsa], {a};", "bar.sync 0;", f"mad.lo.u32 %ts, %gtid, {k}, {c};",
                       f"and.b32 %ts, %ts, {THREADS - 1};", "shl.b32 %ts, %ts, 3;", "add.u32 %ts, %ts, %gsm;"]
        text = f"ld.shared.b{w} {d}, [%ts];  // thread (tid*{k}+{c})%{THREADS}'s {a}"
        self.lines.append(f"ld.shared.b{w} {d}, [%ts];")
        self.lines.append("bar.sync 0;")
        self.forms.append(f"ld.shared.b{w}")
        self.store(d, cls, text)

    def body(self) -> None:
        n = int(self.rng.integers(20, 61))
        while len(self.forms) < n:
            x = self.rng.random()
            if x < 0.12:
                self.if_else()
            elif x < 0.20 and self.loops < 4:
                self.loop()
            elif x < 0.25:
                self.shared_round_trip()
            else:
                self.op(self.draw(convergent=True))


def _frame(g: _Gen) -> str:
    decl = "\n".join(f"    .reg {_DECL[c]} %{c}<{n}>;" for c, n in POOL.items())
    loops = "".join(f", %tb{i}, %tc{i}" for i in range(g.loops))
    loads = []
    for i in range(POOL["rd"]):
        loads.append(f"ld.global.u64 %rd{i}, [%gin+{8 * i}];")
    for i in range(POOL["r"]):
        loads.append(f"ld.global.u32 %r{i}, [%gin+{48 + 4 * i}];")
    for i in range(POOL["f"]):
        loads.append(f"ld.global.f32 %f{i}, [%gin+{80 + 4 * i}];")
    for i in range(POOL["fd"]):
        loads.append(f"ld.global.f64 %fd{i}, [%gin+{104 + 8 * i}];")
    for i in range(POOL["h"]):
        loads.append(f"ld.global.u16 %h{i}, [%gin+{120 + 2 * i}];")
    loads.append("ld.global.u32 %ts, [%gin+128];")
    for i in range(POOL["p"]):
        loads += [f"and.b32 %tm, %ts, {1 << i};", f"setp.ne.u32 %p{i}, %tm, 0;"]
    body = "\n".join(ln if ln.endswith(":") else "    " + ln for ln in g.lines)
    fams = ", ".join(g.families)
    return f"""//
// mmacts PTX fuzz kernel, seed {g.seed} (families: {fams})
//
.version {PTX_VERSION}
.target {ARCH}
.address_size 64

.shared .align 8 .b8 fz_sm[{8 * THREADS}];

.visible .entry fz(
    .param .u64 p_in,
    .param .u64 p_out
)
{{
{decl}
    .reg .pred %tq, %tl;
    .reg .b16 %tnh;
    .reg .b32 %gtid, %gsm, %gsa, %ts, %tm, %tnr{loops};
    .reg .b64 %gin, %gout, %goff, %tnd;
    ld.param.u64 %gin, [p_in];
    ld.param.u64 %gout, [p_out];
    cvta.to.global.u64 %gin, %gin;
    cvta.to.global.u64 %gout, %gout;
    mov.u32 %gtid, %tid.x;
    mul.wide.u32 %goff, %gtid, {8 * N_IN};
    add.s64 %gin, %gin, %goff;
    mul.wide.u32 %goff, %gtid, {8 * len(g.slots)};
    add.s64 %gout, %gout, %goff;
    mov.u32 %gsm, fz_sm;
    shl.b32 %gsa, %gtid, 3;
    add.u32 %gsa, %gsa, %gsm;
{chr(10).join("    " + ln for ln in loads)}
{body}
    ret;
}}
"""


def kernel(seed: int) -> Kernel:
    """The fuzz kernel of ``seed`` (deterministic: same seed, same PTX, on any machine)."""
    g = _Gen(seed)
    g.body()
    return Kernel(seed, g.families, _frame(g), g.slots, g.forms)


def catalog_kernel() -> str:
    """One kernel holding every form of the table once (no guards, no control flow): what the test
    that ptxas accepts every form assembles, in one ptxas run."""
    g = _Gen(0)
    for f in all_forms():
        g.op(f, guard_ok=False)
    return _frame(g)
