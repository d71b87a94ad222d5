"""The instruction forms the PTX fuzzer draws from, one :class:`Form` per opcode spelling.

Why a table and not free generation: every form must be valid PTX for sm_90a (ptxas accepts it; a
test assembles each one), and its operands must have register classes the generator can feed. The
table is checked against the VM's handler registry (:data:`mmacts.ptxvm.handlers.HANDLERS`): every
handler is exercised by some form here or named in :data:`NOT_FUZZED` with the reason, so an
instruction the VM learns is fuzzed the day it lands (the test fails until it is in one of the two).

Register classes: ``h`` .b16, ``r`` .b32, ``rd`` .b64, ``f`` .f32, ``fd`` .f64, ``p`` .pred. A source
``i:LO:HI`` is an immediate drawn from ``[LO, HI]``; ``r|i:LO:HI`` either a register or such an
immediate.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Form:
    """One instruction spelling: ``opcode dsts, srcs``."""

    opcode: str
    dsts: tuple[str, ...]
    srcs: tuple[str, ...]
    handler: str
    """The VM handler key this form runs (a key of ``HANDLERS``)."""
    family: str
    """A coarse group (``int``, ``f32``, ``cvt``, ...): a kernel draws from a few families."""
    nonzero: tuple[int, ...] = ()
    """Source positions the generator makes non-zero (divisors: the PTX ISA leaves x/0 unspecified)."""
    warp: bool = False
    """A ``.sync`` warp operation with the full member mask: only in convergent code."""
    dst_vec: bool = False
    """The destinations are written as one vector operand ``{d0, d1}``."""
    src_vec: bool = False
    """The sources are read as one vector operand ``{s0, s1}``."""
    pair: bool = False
    """Two destinations written as ``d0|d1`` (setp, shfl)."""
    nan_unspecified: bool = False
    """A NaN operand gives an unspecified NaN (neg/abs: ptxas emits an add or a sign-bit LOP per use,
    and the VM refuses NaNs there): never drawn into random kernels (their values are anything), and
    run by the unit kernels on the non-NaN edge values only."""


_ICLS = {8: "h", 16: "h", 32: "r", 64: "rd"}
_FCLS = {"f16": "h", "bf16": "h", "f32": "f", "f64": "fd", "f16x2": "r", "bf16x2": "r"}
INT_TYPES = ("s16", "u16", "s32", "u32", "s64", "u64")
BIT_TYPES = ("b16", "b32", "b64")


def _icls(t: str) -> str:
    return _ICLS[int(t[1:])]


def _opt(*qs: str) -> list[str]:
    """Optional qualifiers: every subset in order, as dotted suffixes ('' included)."""
    out = []
    for k in range(len(qs) + 1):
        for c in itertools.combinations(qs, k):
            out.append("".join("." + q for q in c))
    return out


def _integer_forms() -> list[Form]:
    F: list[Form] = []
    for t in INT_TYPES:
        c = _icls(t)
        for op in ("add", "sub", "min", "max"):
            F.append(Form(f"{op}.{t}", (c,), (c, c), op, "int"))
        F.append(Form(f"mul.lo.{t}", (c,), (c, c), "mul", "int"))
        F.append(Form(f"mul.hi.{t}", (c,), (c, c), "mul", "int"))
        F.append(Form(f"mad.lo.{t}", (c,), (c, c, c), "mad", "int"))
        F.append(Form(f"mad.hi.{t}", (c,), (c, c, c), "mad", "int"))
        F.append(Form(f"div.{t}", (c,), (c, c), "div", "int", nonzero=(1,)))
        F.append(Form(f"rem.{t}", (c,), (c, c), "rem", "int", nonzero=(1,)))
        F.append(Form(f"sad.{t}", (c,), (c, c, c), "sad", "int"))
        if t[0] == "s":
            F.append(Form(f"abs.{t}", (c,), (c,), "abs", "int"))
            F.append(Form(f"neg.{t}", (c,), (c,), "neg", "int"))
        if t[1:] in ("16", "32"):
            w = _icls(t[0] + str(2 * int(t[1:])))
            F.append(Form(f"mul.wide.{t}", (w,), (c, c), "mul", "int"))
            F.append(Form(f"mad.wide.{t}", (w,), (c, c, w), "mad", "int"))
    F.append(Form("add.sat.s32", ("r",), ("r", "r"), "add", "int"))
    F.append(Form("sub.sat.s32", ("r",), ("r", "r"), "sub", "int"))
    F.append(Form("mad.hi.sat.s32", ("r",), ("r", "r", "r"), "mad", "int"))
    for t in ("s32", "u32"):
        F.append(Form(f"mul24.lo.{t}", ("r",), ("r", "r"), "mul24", "int"))
        F.append(Form(f"mul24.hi.{t}", ("r",), ("r", "r"), "mul24", "int"))
    return F


def _bit_forms() -> list[Form]:
    F: list[Form] = []
    for t in BIT_TYPES:
        c = _icls(t)
        for op in ("and", "or", "xor"):
            F.append(Form(f"{op}.{t}", (c,), (c, c), op, "bits"))
        F.append(Form(f"not.{t}", (c,), (c,), "not", "bits"))
        F.append(Form(f"cnot.{t}", (c,), (c,), "cnot", "bits"))
        F.append(Form(f"shl.{t}", (c,), (c, "r|i:0:70"), "shl", "bits"))
        F.append(Form(f"shr.{t}", (c,), (c, "r|i:0:70"), "shr", "bits"))
    for t in ("s16", "u16", "s32", "u32", "s64", "u64"):
        c = _icls(t)
        F.append(Form(f"shr.{t}", (c,), (c, "r|i:0:70"), "shr", "bits"))
    for op in ("and", "or", "xor"):
        F.append(Form(f"{op}.pred", ("p",), ("p", "p"), op, "bits"))
    F.append(Form("not.pred", ("p",), ("p",), "not", "bits"))
    for t in ("b32", "b64"):
        c = _icls(t)
        F.append(Form(f"popc.{t}", ("r",), (c,), "popc", "bits"))
        F.append(Form(f"clz.{t}", ("r",), (c,), "clz", "bits"))
        F.append(Form(f"brev.{t}", (c,), (c,), "brev", "bits"))
        F.append(Form(f"bfi.{t}", (c,), (c, c, "r|i:0:70", "r|i:0:70"), "bfi", "bits"))
    for t in ("u32", "s32", "u64", "s64"):
        c = _icls(t)
        F.append(Form(f"bfind.{t}", ("r",), (c,), "bfind", "bits"))
        F.append(Form(f"bfind.shiftamt.{t}", ("r",), (c,), "bfind", "bits"))
        F.append(Form(f"bfe.{t}", (c,), (c, "r|i:0:70", "r|i:0:70"), "bfe", "bits"))
    for d in ("l", "r"):
        for m in ("wrap", "clamp"):
            F.append(Form(f"shf.{d}.{m}.b32", ("r",), ("r", "r", "r|i:0:40"), "shf", "bits"))
    for m in ("", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"):
        F.append(Form(f"prmt.b32{m}", ("r",), ("r", "r", "r|i:0:65535"), "prmt", "bits"))
    F.append(Form("lop3.b32", ("r",), ("r", "r", "r", "i:0:255"), "lop3", "bits"))
    return F


def _compare_forms() -> list[Form]:
    F: list[Form] = []
    icmp = ("eq", "ne", "lt", "le", "gt", "ge")
    ucmp = ("lo", "ls", "hi", "hs")
    fcmp = icmp + ("equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
    for t in INT_TYPES + BIT_TYPES:
        c = _icls(t)
        cmps = ("eq", "ne") if t[0] == "b" else icmp + (ucmp if t[0] == "u" else ())
        for cmp in cmps:
            F.append(Form(f"setp.{cmp}.{t}", ("p",), (c, c), "setp", "cmp"))
    for t in ("f32", "f64"):
        c = _FCLS[t]
        for cmp in fcmp:
            for ftz in ((".ftz",) if t == "f32" else ()) + ("",):
                F.append(Form(f"setp.{cmp}{ftz}.{t}", ("p",), (c, c), "setp", "cmp"))
    for cmp in fcmp:
        F.append(Form(f"setp.{cmp}.f16", ("p",), ("h", "h"), "setp", "f16"))
        F.append(Form(f"setp.{cmp}.ftz.f16", ("p",), ("h", "h"), "setp", "f16"))
    for boolop in ("and", "or", "xor"):
        F.append(Form(f"setp.lt.{boolop}.s32", ("p", "p"), ("r", "r", "p"), "setp", "cmp", pair=True))
        F.append(Form(f"setp.gtu.{boolop}.f32", ("p", "p"), ("f", "f", "p"), "setp", "cmp", pair=True))
        F.append(Form(f"setp.ne.{boolop}.f64", ("p",), ("fd", "fd", "p"), "setp", "cmp"))
    F.append(Form("setp.hi.u64", ("p", "p"), ("rd", "rd"), "setp", "cmp", pair=True))
    for t, c in (("b16", "h"), ("b32", "r"), ("b64", "rd"), ("f32", "f"), ("f64", "fd"), ("s32", "r")):
        F.append(Form(f"selp.{t}", (c,), (c, c, "p"), "selp", "cmp"))
    return F


_RND = ("rn", "rz", "rm", "rp")


def _float_forms() -> list[Form]:
    F: list[Form] = []
    for op in ("add", "sub", "mul"):
        for rnd in ("",) + tuple("." + r for r in _RND):
            for q in _opt("ftz", "sat"):
                F.append(Form(f"{op}{rnd}{q}.f32", ("f",), ("f", "f"), op, "f32"))
            F.append(Form(f"{op}{rnd}.f64", ("fd",), ("fd", "fd"), op, "f64"))
    for rnd in _RND:
        for q in _opt("ftz", "sat"):
            F.append(Form(f"fma.{rnd}{q}.f32", ("f",), ("f", "f", "f"), "fma", "f32"))
            F.append(Form(f"mad.{rnd}{q}.f32", ("f",), ("f", "f", "f"), "mad", "f32"))
        F.append(Form(f"fma.{rnd}.f64", ("fd",), ("fd", "fd", "fd"), "fma", "f64"))
    for op in ("min", "max"):
        for q in _opt("ftz", "NaN"):
            F.append(Form(f"{op}{q}.f32", ("f",), ("f", "f"), op, "f32"))
        F.append(Form(f"{op}.xorsign.abs.f32", ("f",), ("f", "f"), op, "f32"))
        F.append(Form(f"{op}.f64", ("fd",), ("fd", "fd"), op, "f64"))
    for op in ("neg", "abs"):
        F.append(Form(f"{op}.f32", ("f",), ("f",), op, "f32", nan_unspecified=True))
        F.append(Form(f"{op}.ftz.f32", ("f",), ("f",), op, "f32", nan_unspecified=True))
        F.append(Form(f"{op}.f64", ("fd",), ("fd",), op, "f64", nan_unspecified=True))
    # half precision, scalar and packed
    for t in ("f16", "f16x2"):
        c = _FCLS[t]
        for op in ("add", "sub", "mul"):
            for q in ("", ".rn") :
                for ftz in _opt("ftz", "sat"):
                    F.append(Form(f"{op}{q}{ftz}.{t}", (c,), (c, c), op, "f16"))
        for ftz in _opt("ftz", "sat"):
            F.append(Form(f"fma.rn{ftz}.{t}", (c,), (c, c, c), "fma", "f16"))
        F.append(Form(f"fma.rn.relu.{t}", (c,), (c, c, c), "fma", "f16"))
        for op in ("min", "max"):
            for q in _opt("ftz", "NaN"):
                F.append(Form(f"{op}{q}.{t}", (c,), (c, c), op, "f16"))
        for op in ("neg", "abs"):
            F.append(Form(f"{op}.{t}", (c,), (c,), op, "f16", nan_unspecified=True))
            F.append(Form(f"{op}.ftz.{t}", (c,), (c,), op, "f16", nan_unspecified=True))
    for t in ("bf16", "bf16x2"):
        c = _FCLS[t]
        for op in ("add", "sub", "mul"):
            F.append(Form(f"{op}.rn.{t}", (c,), (c, c), op, "bf16"))
        F.append(Form(f"fma.rn.{t}", (c,), (c, c, c), "fma", "bf16"))
        F.append(Form(f"fma.rn.relu.{t}", (c,), (c, c, c), "fma", "bf16"))
        for op in ("min", "max"):
            for q in ("", ".NaN"):
                F.append(Form(f"{op}{q}.{t}", (c,), (c, c), op, "bf16"))
        F.append(Form(f"neg.{t}", (c,), (c,), "neg", "bf16", nan_unspecified=True))
        F.append(Form(f"abs.{t}", (c,), (c,), "abs", "bf16", nan_unspecified=True))
    return F


def _cvt_forms() -> list[Form]:
    F: list[Form] = []
    ints = ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64")
    for d, s in itertools.product(ints, ints):
        if d == s:
            continue
        F.append(Form(f"cvt.{d}.{s}", (_icls(d),), (_icls(s),), "cvt", "cvt"))
        if not (int(d[1:]) > int(s[1:]) and (d[0] == "s" or s[0] == "u")):  # ptxas: .sat only where it can clamp
            F.append(Form(f"cvt.sat.{d}.{s}", (_icls(d),), (_icls(s),), "cvt", "cvt"))
    floats = ("f16", "bf16", "f32", "f64")
    width = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
    for d, s in itertools.product(floats, floats):
        if d == s:
            if d in ("f32", "f64", "f16"):
                for r in ("rni", "rzi", "rmi", "rpi"):
                    ftz = (".ftz",) if d == "f32" else ()
                    for q in ("",) + ftz:
                        F.append(Form(f"cvt.{r}{q}.{d}.{s}", (_FCLS[d],), (_FCLS[s],), "cvt", "cvt"))
            continue
        narrowing = width[d] < width[s] or (d, s) in (("bf16", "f16"), ("f16", "bf16"))
        rnds = _RND if narrowing else ("",)
        for r in rnds:
            rr = f".{r}" if r else ""
            quals = [""]
            if "f32" in (d, s):
                quals.append(".ftz")
            if (narrowing or d == "f32") and "bf16" not in (d, s):  # ptxas: no .sat with .bf16
                quals += [q + ".sat" for q in quals]
            for q in quals:
                F.append(Form(f"cvt{rr}{q}.{d}.{s}", (_FCLS[d],), (_FCLS[s],), "cvt", "cvt"))
    for f in ("f16", "f32", "f64"):
        for i in ints:
            for r in ("rni", "rzi", "rmi", "rpi"):
                quals = ("", ".sat") + ((".ftz", ".ftz.sat") if f == "f32" else ())
                for q in quals:
                    F.append(Form(f"cvt.{r}{q}.{i}.{f}", (_icls(i),), (_FCLS[f],), "cvt", "cvt"))
            for r in _RND:
                F.append(Form(f"cvt.{r}.{f}.{i}", (_FCLS[f],), (_icls(i),), "cvt", "cvt"))
    for i in ("u32", "s32", "u64", "s64", "u16"):
        F.append(Form(f"cvt.rn.bf16.{i}", ("h",), (_icls(i),), "cvt", "cvt"))
    for r in ("rni", "rzi"):
        F.append(Form(f"cvt.{r}.s32.bf16", ("r",), ("h",), "cvt", "cvt"))
    F.append(Form("cvt.rn.f16x2.f32", ("r",), ("f", "f"), "cvt", "cvt"))
    F.append(Form("cvt.rn.relu.f16x2.f32", ("r",), ("f", "f"), "cvt", "cvt"))
    F.append(Form("cvt.rz.f16x2.f32", ("r",), ("f", "f"), "cvt", "cvt"))
    F.append(Form("cvt.rn.bf16x2.f32", ("r",), ("f", "f"), "cvt", "cvt"))
    F.append(Form("cvt.rn.relu.bf16x2.f32", ("r",), ("f", "f"), "cvt", "cvt"))
    F.append(Form("cvt.rz.bf16x2.f32", ("r",), ("f", "f"), "cvt", "cvt"))
    for fmt in ("e4m3x2", "e5m2x2"):
        for relu in ("", ".relu"):
            F.append(Form(f"cvt.rn.satfinite{relu}.{fmt}.f32", ("h",), ("f", "f"), "cvt", "cvt"))
            F.append(Form(f"cvt.rn.satfinite{relu}.{fmt}.f16x2", ("h",), ("r",), "cvt", "cvt"))
            F.append(Form(f"cvt.rn{relu}.f16x2.{fmt}", ("r",), ("h",), "cvt", "cvt"))
    return F


def _move_forms() -> list[Form]:
    F = [Form("mov.b32", ("r",), ("h", "h"), "mov", "move", src_vec=True),
         Form("mov.b64", ("rd",), ("r", "r"), "mov", "move", src_vec=True),
         Form("mov.b64", ("rd",), ("h", "h", "h", "h"), "mov", "move", src_vec=True),
         Form("mov.b32", ("h", "h"), ("r",), "mov", "move", dst_vec=True),
         Form("mov.b64", ("r", "r"), ("rd",), "mov", "move", dst_vec=True),
         Form("mov.b64", ("h", "h", "h", "h"), ("rd",), "mov", "move", dst_vec=True),
         Form("mov.b32", ("f",), ("r",), "mov", "move"),
         Form("mov.b32", ("r",), ("f",), "mov", "move"),
         Form("mov.b64", ("fd",), ("rd",), "mov", "move"),
         Form("mov.b64", ("rd",), ("fd",), "mov", "move"),
         Form("mov.u32", ("r",), ("i:0:4294967295",), "mov", "move"),
         Form("mov.f32", ("f",), ("f",), "mov", "move")]
    return F


def _warp_forms() -> list[Form]:
    F: list[Form] = []
    for mode in ("up", "down", "bfly", "idx"):
        F.append(Form(f"shfl.sync.{mode}.b32", ("r", "p"), ("r", "r|i:0:31", "i:0:31"), "shfl", "warp",
                      warp=True, pair=True))
        F.append(Form(f"shfl.sync.{mode}.b32", ("r",), ("r", "r|i:0:31", "r|i:0:7967"), "shfl", "warp", warp=True))
    for mode in ("all", "any", "uni"):
        F.append(Form(f"vote.sync.{mode}.pred", ("p",), ("p",), "vote", "warp", warp=True))
    F.append(Form("vote.sync.ballot.b32", ("r",), ("p",), "vote", "warp", warp=True))
    F.append(Form("activemask.b32", ("r",), (), "activemask", "warp"))
    return F


@cache
def all_forms() -> tuple[Form, ...]:
    """Every form, in a fixed order (the generator draws by index: the order is part of a seed's kernel)."""
    return tuple(_integer_forms() + _bit_forms() + _compare_forms() + _float_forms() + _cvt_forms()
                 + _move_forms() + _warp_forms())


FAMILIES = ("int", "bits", "cmp", "f32", "f64", "f16", "bf16", "cvt", "move", "warp")

STRUCTURAL = {
    "bra": "every kernel: divergent if/else blocks and data-dependent loops that reconverge",
    "ld": "every kernel: inputs from global memory; shared-memory round trips",
    "st": "every kernel: each result to its own global slot; shared-memory round trips",
    "bar": "shared-memory round trips: bar.sync 0 between the store and the load",
    "ret": "every kernel ends with ret",
    "cvta": "every kernel: cvta.to.global of its parameters",
}
"""Handlers every generated kernel exercises through its frame rather than a drawn form."""

NOT_FUZZED = {
    "exit": "same handler as ret; a drawn exit would end threads before their stores",
    "barrier": "bar.sync's handler (barrier.sync spelling); exercised through bar.sync",
    "bar.warp": "bar.warp.sync: no result value to compare (a later session can fuzz its ordering)",
    "membar": "fences order memory; a single-block fuzz kernel has no observable reordering",
    "fence": "fences order memory; a single-block fuzz kernel has no observable reordering",
    "atom": "atomic return values depend on the order threads reach memory (not deterministic)",
    "red": "no result value; memory effects covered by the hand-written corpus",
    "isspacep": "depends on the VM's address windows, not on silicon's (hand-written corpus)",
    "mapa": "needs a cluster launch (the fuzz kernels are one CTA); silicon-checked by the cluster corpus "
            "(validation/silicon/h100-2026-11-25-cluster)",
    "st.async": "remote asynchronous store: needs a cluster launch (mmacts/ptxvm/test_cluster_spaces.py)",
    "red.async": "not implemented (refused by name)",
    "mbarrier": "asynchronous barriers: the hand-written corpus and the tcgen05 suites",
    "nanosleep": "no result value",
    "elect": "elect.sync: covered by the hand-written corpus",
    "ldmatrix": "tensor-core fragment moves: the tensor-core fuzzer (mmacts.validation.fuzz_tc) and corpus",
    "stmatrix": "tensor-core fragment moves: the tensor-core fuzzer (mmacts.validation.fuzz_tc) and corpus",
    "mma": "tensor-core MMA: the tensor-core fuzzer (mmacts.validation.fuzz_tc)",
    "wgmma": "tensor-core MMA: the tensor-core fuzzer (mmacts.validation.fuzz_tc)",
    "cp.async": "bulk/async copies: the hand-written corpus and hopper_validation",
    "tensormap": "tensor maps: hopper_validation and the suites",
    "bar.arrive": "named-barrier arrive: no result value (ordering only); mmacts/ptxvm/test_machine_gaps.py",
    "bar.cta.arrive": "named-barrier arrive: no result value (ordering only)",
    "barrier.arrive": "named-barrier arrive: no result value (ordering only)",
    "barrier.cta.arrive": "named-barrier arrive: no result value (ordering only)",
    "prefetch": "no architectural effect to compare",
    "prefetchu": "no architectural effect to compare",
    "setmaxnreg": "no architectural effect to compare (register budget)",
    "griddepcontrol": "no effect within one launch",
    "clusterlaunchcontrol": "answers depend on the scheduler (the VM answers 'not canceled', legal for any request)",
    "clusterlaunchcontrol.query_cancel": "answers depend on the scheduler",
    "clusterlaunchcontrol.try_cancel": "answers depend on the scheduler",
    "mov.b128": "128-bit registers: a later session can add b128 forms (no b128 register class in the fuzz frame)",
    "ld.b128": "128-bit registers: no b128 register class in the fuzz frame yet",
    "st.b128": "128-bit registers: no b128 register class in the fuzz frame yet",
    "atom.b128": "atomic return values depend on thread order",
    "red.b128": "no result value",
    **{name: "barrier reduction: the fuzz kernels' barriers are bar.sync only (a later session can draw it; "
              "mmacts/ptxvm/test_bar_red.py)" for name in ("bar.red", "barrier.red", "bar.cta.red", "barrier.cta.red")},
    "rcp": "rcp.approx's bits are the multi-function unit's: the VM reads them from a table recorded on silicon "
           "(validation/silicon/mufu/record_rcp.py checks all 2^32 inputs there), not from the fuzz record",
}
"""VM handlers no drawn form exercises, with the reason. Names starting ``tcgen05`` are Blackwell-only
(no Hopper silicon can answer them) and are left out wholesale."""


NOT_FUZZED_FORMS = {
    **{f"cvt.rn.satfinite{{.relu}}.{t}.{{f32,f16x2,bf16x2}}": "sm_100a-only (PTX ISA 8.6/9.1): no H100 can record it"
       for t in ("e2m1x2", "e2m3x2", "e3m2x2")},
    **{f"cvt.rn{{.relu}}.f16x2.{t}": "sm_100a-only (PTX ISA 8.6): no H100 can record it"
       for t in ("e2m1x2", "e2m3x2", "e3m2x2")},
    "cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.bf16x2": "sm_100f-only (PTX ISA 9.1): no H100 can record it",
    "cvt.{rz,rp}{.satfinite}.ue8m0x2.{f32,bf16x2}": "sm_100a-only (PTX ISA 8.6): no H100 can record it",
    "cvt.rn.bf16x2.ue8m0x2": "sm_100a-only (PTX ISA 8.6): no H100 can record it",
}
"""Spellings of a drawn handler (``cvt``) that no form draws, with the reason: the VM runs them
(``mmacts/ptxvm/test_cvt_narrow.py`` checks them against values worked out from the ISA), but the fuzz
record is made on Hopper silicon, which rejects them."""


def blackwell_only(handler: str) -> bool:
    """Handlers for instructions Hopper silicon cannot run: fuzzing against an H100 cannot check them."""
    return handler.startswith("tcgen05")
