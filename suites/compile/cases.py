"""Enumeration of the compile-conformance cases: qualifier spaces x targets -> accept/reject.

Why enumerated and not listed: a hand-written list of negatives tests what its author thought
of. Here every qualifier space of ``spaces.py`` (derived from the spec catalog wherever a table
or note holds it) is walked, each point is judged by the spec rule that governs it (valid ->
``accept`` on every target all its Target ISA notes name, at the largest PTX ISA minimum of those
notes; ``reject`` on the others; outside the valid set -> ``reject``), and the spec rows the
judgement rests on go into ``spec_rows``. Levels: ``full`` is every point on every target;
``standard`` is every point on its primary target, every Target-ISA-note group on every target,
and then promotion until each spec row has a positive and (where it has a complement) a negative
case; ``smoke`` a few dozen.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mmacts.cases.model import Case
from mmacts.ptx.compile_forms import instruction_text
from mmacts.ptx.module import max_version, min_ptx_for_target, version_key
from suites.compile import spaces as S
from suites.compile.fields import compile_form

SUITE = "compile"

XFAIL_IDESC = "AMB-IDESC-IMMEDIATE-UNCHECKED"
"""Register entry: idesc is run-time data; ptxas does not validate an immediate descriptor."""
XFAIL_SEL_UB = "AMB-MMASYNC-SELECTOR-UB"
"""Register entry: Table 37 values outside the valid set are 'undefined behaviour', not an error."""
XFAIL_SV_NX = "AMB-SCALEVEC-TARGETS"
"""Register entry: ".scale_vec::NX requires sm_100a" -- literally sm_100a only; ptxas reads it as
every arch-specific (``a``) target of the tcgen05 notes."""
XFAIL_4X_UE8M0_PTX = "AMB-MMASYNC-4X-UE8M0-PTX-VERSION"
"""Register entry: ptxas wants PTX ISA 9.1 for mma.sync scale_vec::4X with .ue8m0; the spec names no version."""
XFAIL_SID_I8 = "AMB-SCALE-INPUT-D-I8"
"""Register entry: scale-input-d is "only valid for .kind::tf32 and .kind::f16", yet ptxas accepts it for i8."""


@dataclass
class Draft:
    """A case before levels are settled."""

    form: dict[str, Any]
    arch: str
    expect: str
    rows: tuple[str, ...]
    level: str = "full"
    xfail: str = ""
    why: str = ""
    smoke: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Naming

_KEY_ORDER = (
    "ws", "sparse", "cta_group", "kind", "block_scale", "scale_vec", "a_tmem", "ashift",
    "collector_a", "collector_b", "dol", "sid", "zcm", "idesc_tag",
    "shape", "num", "pack", "unpack", "split", "red", "multicast", "src_fmt", "order",
    "which", "shared_cta", "shared_cluster", "first",
    "atype", "btype", "stype", "sel", "sel_regs", "nregs", "ptx_version",
)


def _fmt(v: Any) -> str:
    if isinstance(v, dict):
        return "_".join(_fmt(v[k]) for k in sorted(v) if v[k] not in (None, False))
    if isinstance(v, tuple | list):
        return "".join(str(x) for x in v)
    return str(v).replace("::", "_").replace(".", "p")


def case_name(form: dict[str, Any]) -> str:
    """Readable, stable name of a form: op, then every non-default qualifier in a fixed order."""
    op = form["op"]
    parts = [op]
    for k in _KEY_ORDER:
        if k not in form:
            continue
        v = form[k]
        if v is None or v is False or (k == "dol" and not v):
            continue
        if k == "ptx_version" and not form.get("version_probe"):
            continue  # implied by the target; named only for the PTX-ISA-version probes
        if k == "block_scale" and v is True:
            parts.append("block_scale")
        elif k == "cta_group":
            parts.append(f"cta_group{v}")
        elif k == "kind":
            parts.append(f"kind_{v}")
        elif k == "scale_vec":
            parts.append(str(v))
        elif k == "shape":
            parts.append(str(v))
        elif k == "num":
            parts.append(f"x{v}")
        elif v is True:
            parts.append(k)
        else:
            parts.append(f"{k}_{_fmt(v)}")
    return ".".join(parts)


def case_id(form: dict[str, Any], arch: str, expect: str) -> str:
    return f"{SUITE}.{case_name(form)}/{arch}/{expect}"


# ---------------------------------------------------------------------------------------------
# Helpers


def _version(arch: str, notes: Iterable[S.TargetNote]) -> str:
    """The smallest PTX ISA version naming ``arch`` and meeting every note's PTX ISA minimum."""
    return max_version(min_ptx_for_target(arch), *(n.ptx_isa for n in notes if n.ptx_isa))


def _over_archs(
    form: dict[str, Any], notes: Iterable[S.TargetNote], rows: tuple[str, ...], *,
    primary: str, valid: bool = True, why: str = "",
    all_archs_standard: bool = False, smoke: bool = False, xfail: str = "", xfail_accept: str = "",
) -> Iterator[Draft]:
    """The form on every target: accept where every note supports it (if the form is valid),
    at the PTX ISA version the notes require."""
    notes = tuple(notes)
    for arch in S.ARCHS:
        failing = [n for n in notes if not n.supports(arch)]
        ok = valid and not failing
        # ``xfail`` explains ptxas accepting a refused form; ``xfail_accept`` ptxas refusing a valid one.
        xf = xfail if not ok or not valid else xfail_accept
        if valid and len(failing) == 1 and S.is_scale_vec_nx_note(failing[0]) and arch.endswith("a"):
            xf = XFAIL_SV_NX
        f = dict(form, ptx_version=_version(arch, notes))
        arch_rows = tuple(dict.fromkeys(rows + tuple(n.ref for n in notes if n.ref)))
        level = "standard" if (arch == primary or all_archs_standard) else "full"
        yield Draft(f, arch, "accept" if ok else "reject", arch_rows, level,
                    xfail=xf, why=why, smoke=smoke and arch == primary)


def _mma_form(kind: str, **kw: Any) -> dict[str, Any]:
    """A tcgen05.mma form with defaults; a block-scaled kind spells its default .scale_vectorsize
    by omitting it, except mxf4nvf4, which must name one (``S.TCGEN05_SCALE_VEC_MUST_NAME``):
    4X is the representative chosen for it (a fixed choice, so the case IDs stay stable)."""
    bs = kind in S.BLOCK_SCALED_KINDS
    f: dict[str, Any] = {"op": "tcgen05.mma", "kind": kind, "cta_group": 1, "ws": False, "sparse": False,
                         "block_scale": bs, "scale_vec": {"mxf4nvf4": "4X"}.get(kind) if bs else None}
    f.update(kw)
    return f


def _mma_notes(f: dict[str, Any]) -> list[S.TargetNote]:
    return S.mma_notes(f["kind"], ws=bool(f.get("ws")), sparse=bool(f.get("sparse")),
                       block_scale=bool(f.get("block_scale")), scale_vec=f.get("scale_vec"),
                       sid=f.get("sid") is not None)


def _mma_section(f: dict[str, Any]) -> str:
    return S.note(S.MMA_VARIANTS[(bool(f.get("ws")), bool(f.get("sparse")))]).ref


def _mma_drafts(f: dict[str, Any], rows: tuple[str, ...], valid: bool, why: str, **kw: Any) -> Iterator[Draft]:
    rows = rows + (_mma_section(f),)
    yield from _over_archs(f, _mma_notes(f), rows, primary=S.PRIMARY_TCGEN05, valid=valid, why=why, **kw)


# ---------------------------------------------------------------------------------------------
# Generators, one per qualifier space


def gen_t39() -> Iterator[Draft]:
    """Table 39: kind x .ws x .cta_group x sparsity, A from shared memory, canonical scale_vec."""
    for kind, ws, cta, sp in itertools.product(S.KINDS, (False, True), S.CTA_GROUPS, (False, True)):
        f = _mma_form(kind, ws=ws, cta_group=cta, sparse=sp)
        rows = tuple(f"T39.{r}" for r in S.t39_rows(kind, ws, cta, sp))
        valid = S.t39_valid(kind, ws, cta, sp)
        smoke = (not ws and cta == 1 and not sp) or (ws and cta == 2 and kind == "f16" and not sp)
        yield from _mma_drafts(f, rows, valid, "Table 39", smoke=smoke,
                               all_archs_standard=(not ws and cta == 1 and not sp))


def gen_scale_vec() -> Iterator[Draft]:
    """Tables 54/55: every .scale_vectorsize spelling (and the omitted default) for every kind."""
    for kind, sv, sp, cta in itertools.product(S.KINDS, S.SCALE_VECS, (False, True), S.CTA_GROUPS):
        bs_kind = kind in S.BLOCK_SCALED_KINDS
        if not bs_kind and sv is None:
            continue  # the plain form: covered by gen_t39
        f = _mma_form(kind, cta_group=cta, sparse=sp, block_scale=True, scale_vec=sv)
        if bs_kind:
            valid = sv in S.TCGEN05_SCALE_VEC_VALID[kind]
            rows = (tuple(f"T54.{r}" for r in S.t54_rows(kind, sv))
                    + tuple(f"T55.{r}" for r in S.t55_rows(kind, sv)))
        else:
            valid = False  # .block_scale only exists for the mx kinds (syntax forms 2 and 4)
            rows = tuple(f"T54.{r}" for r in S.T54_ROWS.get(sv or "", ()))
        lvl_std = cta == 1 and not sp
        for d in _mma_drafts(f, rows, valid, "Table 54/55", smoke=(kind == "mxf4nvf4" and sv == "block16"),
                             all_archs_standard=lvl_std and bs_kind):
            if not lvl_std and d.level == "standard":
                d.level = "full"
            yield d
    # .block_scale missing on an mx kind (syntax forms 1/3 exclude the mx kinds).
    for kind in S.BLOCK_SCALED_KINDS:
        f = _mma_form(kind, block_scale=False, scale_vec=None)
        yield from _mma_drafts(f, (f"T55.{S.T55_ROW[kind]}",), False, "mx kind needs .block_scale")


def gen_operands() -> Iterator[Draft]:
    """A in tensor memory, .ashift, .collector::a::*, .collector::bN::*, disable-output-lane,
    scale-input-d, zero-column-mask: each against the syntax forms and the prose rules."""
    for kind in ("f16", "i8", "mxf8f6f4", "mxf4nvf4"):
        bs = kind in S.BLOCK_SCALED_KINDS
        for a_tmem, ashift, coll in itertools.product((False, True), (False, True), S.COLLECTOR_A_OPS):
            if not ashift and coll is None:
                if not a_tmem:
                    continue  # plain form, in gen_t39
            f = _mma_form(kind, a_tmem=a_tmem, ashift=ashift, collector_a=coll)
            valid = True
            why = "syntax forms 3/4/6"
            if ashift and not a_tmem:
                valid, why = False, ".ashift only with [a-tmem]"
            if ashift and coll in S.ASHIFT_FORBIDDEN_COLLECTORS:
                valid, why = False, ".ashift with collector::a::fill/use is illegal"
            if ashift and bs:
                valid, why = False, "no .ashift in the block-scaled syntax forms"
            yield from _mma_drafts(f, (), valid, why, smoke=(kind == "f16" and ashift and coll == "fill"))
        # collector::bN on the non-.ws form, collector::a on .ws: not in the syntax.
        yield from _mma_drafts(_mma_form(kind, collector_b="b0::fill"), (), False, "collector::bN needs .ws")
        if not bs:
            yield from _mma_drafts(_mma_form(kind, ws=True, collector_a="fill"), (), False,
                                   "collector::a not in the .ws syntax")
    for kind, sp, buf, op in itertools.product(("f16", "tf32", "f8f6f4", "i8"), (False, True),
                                               S.COLLECTOR_B_BUFS, S.COLLECTOR_B_OPS):
        f = _mma_form(kind, ws=True, sparse=sp, collector_b=f"{buf}::{op}")
        yield from _mma_drafts(f, tuple(f"T39.{r}" for r in S.t39_rows(kind, True, 1, sp)), True,
                               ".ws collector_usage", smoke=(kind == "tf32" and buf == "b1" and op == "fill"))
    for kind in ("f16", "i8"):
        f = _mma_form(kind, ws=True, a_tmem=True, zcm=True)
        yield from _mma_drafts(f, (), True, "zero-column-mask-desc with .ws")
        yield from _mma_drafts(_mma_form(kind, zcm=True), (), False, "zero-column-mask only in .ws")
    # disable-output-lane: vector of 4 (cta_group::1) / 8 (cta_group::2).
    for kind, cta, n in itertools.product(("f16", "f8f6f4", "i8", "mxf8f6f4"), S.CTA_GROUPS,
                                          sorted(set(S.DOL_SIZE.values()))):
        f = _mma_form(kind, cta_group=cta, dol=n)
        valid = n == S.DOL_SIZE[cta] and kind not in S.BLOCK_SCALED_KINDS
        why = ("no disable-output-lane with block scaling" if kind in S.BLOCK_SCALED_KINDS
               else "disable-output-lane size")
        yield from _mma_drafts(f, (), valid, why)
    # scale-input-d: f16/tf32 only, [0, 15]: both ends of the range and one past it.
    lo, hi = S.SID_RANGE
    for kind, v in itertools.product(("f16", "tf32", "f8f6f4", "i8", "mxf8f6f4"), (lo, hi, hi + 1)):
        f = _mma_form(kind, sid=v)
        valid = kind in S.SID_KINDS and lo <= v <= hi
        xf = XFAIL_SID_I8 if kind == "i8" else ""
        yield from _mma_drafts(f, (), valid, "scale-input-d rule", smoke=(kind == "f16" and v == 15), xfail=xf)


def gen_idesc() -> Iterator[Draft]:
    """Tables 49/50 (transpose/negate per kind, N for 8-bit transpose B) live in the run-time
    idesc. Spelled with an immediate idesc: positives must assemble; negatives are expected
    to be refused only if ptxas validated immediates -- the spec does not say it must (register
    AMB-IDESC-IMMEDIATE-UNCHECKED). The toggled bits and the N / M fields are placed where
    Tables 42-44 put them; the rest of each base descriptor (D / A / B type codes, scale type
    bit 23) is a fixed representative valid descriptor."""
    for row, kind, tr_ok, neg_ok in S.T49:
        dims = S.idesc_put(kind, "N,", 64) | S.idesc_put(kind, "M,", 128)
        if kind in ("mxf4", "mxf4nvf4"):
            base = (1 << 7) | (1 << 10) | dims | ((1 << 23) if kind == "mxf4" else 0)
        elif kind == "mxf8f6f4":
            base = dims | (1 << 23)
        else:
            dtype = (2 << 4) if kind == "i8" else (1 << 4)
            ab = (2 << 7 | 2 << 10) if kind == "tf32" else 0
            base = dims | dtype | ab
        for tag, fname, ok in (("transpose_a", "Transpose A", tr_ok), ("transpose_b", "Transpose B", tr_ok),
                               ("negate_a", "Negate A", neg_ok), ("negate_b", "Negate B", neg_ok)):
            f = _mma_form(kind, idesc=hex(base | S.idesc_put(kind, fname, 1)), idesc_tag=tag)
            yield from _mma_drafts(f, (f"T49.{row}",), ok, "Table 49 via immediate idesc",
                                   xfail="" if ok else XFAIL_IDESC)
    # Table 50: 8-bit transpose B, N per cta_group (M = 128 per CTA).
    for cta, n_ok, n_bad, row in S.T50:
        for n, ok in ((n_ok, True), (n_bad, False)):
            idesc = (S.idesc_put("f8f6f4", "Transpose B", 1) | S.idesc_put("f8f6f4", "N,", n) | (1 << 4)
                     | S.idesc_put("f8f6f4", "M,", 128 * cta))
            f = _mma_form("f8f6f4", cta_group=cta, idesc=hex(idesc), idesc_tag=f"transpose_b_n{n}")
            yield from _mma_drafts(f, (f"T50.{row}",), ok, "Table 50 via immediate idesc",
                                   xfail="" if ok else XFAIL_IDESC)


def gen_ld_st() -> Iterator[Draft]:
    """Tables 47/48: shape x num (NA cells are the complement), pack/unpack, immHalfSplitoff."""
    for op, table in (("tcgen05.ld", 47), ("tcgen05.st", 48)):
        o = op.removeprefix("tcgen05.")
        nt = S.note(op)
        sect = nt.ref
        pk = "pack" if o == "ld" else "unpack"
        for shape, num, packed in itertools.product(S.LD_ST_SHAPES, S.NUMS, (False, True)):
            split = 16 if shape == "16x32bx2" else None
            f = {"op": op, "shape": shape, "num": num, pk: packed, "split": split}
            valid = S.ld_st_valid(o, shape, num)
            if not valid:
                f["nregs"] = S.T47_COLUMN[shape] * num
            rows = (f"T{table}.{S.ld_st_row(o, num)}",)
            smoke = num in (1, 128) and shape in ("32x32b", "16x256b") and not packed
            yield from _over_archs(f, (nt,), rows + (sect,),
                                   primary=S.PRIMARY_TCGEN05, valid=valid, why=f"Table {table}",
                                   smoke=smoke, all_archs_standard=(shape == "32x32b" and num == 2 and not packed))
        # immHalfSplitoff: required for .16x32bx2, absent for the others.
        for shape in ("16x32bx2", "32x32b"):
            f = {"op": op, "shape": shape, "num": 2, "split": None if shape == "16x32bx2" else 16,
                 "nregs": 2}
            yield from _over_archs(f, (nt,), (sect,), primary=S.PRIMARY_TCGEN05, valid=False,
                                   why="immHalfSplitoff")
        # Wrong register count for a valid cell.
        f = {"op": op, "shape": "16x128b", "num": 2, "nregs": 2}
        yield from _over_archs(f, (nt,), (f"T{table}.{S.ld_st_row(o, 2)}", sect),
                               primary=S.PRIMARY_TCGEN05, valid=False, why="vector size of Table 47/48")
    # .red forms
    for shape, num, rop, dt, ab, nan in itertools.product(
        S.LD_ST_SHAPES, (1, 2, 32), S.LD_RED_OPS, S.LD_RED_TYPES, (False, True), (False, True)
    ):
        is_float = dt in S.LD_RED_FLOAT_TYPES
        if (ab or nan) and not is_float and not (ab and not nan and shape == "32x32b" and num == 2):
            continue  # keep one integer-with-.abs negative, skip the rest of the product
        split = 16 if shape == "16x32bx2" else None
        red = {"op": rop, "dtype": dt, "abs": ab, "nan": nan}
        f = {"op": "tcgen05.ld", "shape": shape, "num": num, "split": split, "red": red}
        valid = shape in S.LD_RED_SHAPES and num >= S.LD_RED_MIN_NUM and (is_float or not (ab or nan))
        if not S.ld_st_valid("ld", shape, num):
            continue
        yield from _over_archs(f, (S.NOTE_LD_RED,), (f"T47.{S.ld_st_row('ld', num)}", S.S_LD),
                               primary="sm_110a", valid=valid,
                               why="tcgen05.ld.red rules",
                               all_archs_standard=(shape == "32x32b" and num == 2 and rop == "max"
                                                   and dt == "f32" and not ab and not nan),
                               smoke=(shape == "16x32bx2" and num == 2 and dt == "u32" and rop == "max"))


def gen_cp() -> Iterator[Draft]:
    """tcgen05.cp: shape x multicast x decompression format x cta_group."""
    for cta, shape, mc, fmt in itertools.product(S.CTA_GROUPS, S.CP_SHAPES, S.CP_MULTICASTS, S.CP_SRC_FMTS):
        f = {"op": "tcgen05.cp", "cta_group": cta, "shape": shape, "multicast": mc, "src_fmt": fmt}
        valid = S.cp_valid(shape, mc)
        yield from _over_archs(f, (S.note("tcgen05.cp"),), (S.S_CP,),
                               primary=S.PRIMARY_TCGEN05, valid=valid, why="cp shape/multicast",
                               smoke=(cta == 1 and fmt is None and shape in ("32x128b", "64x128b")
                                      and mc in ("warpx4", "warpx2::01_23", None)),
                               all_archs_standard=(cta == 1 and shape == "128x256b" and mc is None
                                                   and fmt is None))


def gen_misc() -> Iterator[Draft]:
    """alloc/dealloc/relinquish, wait, fence, shift, commit, mixed .cta_group: each under the
    Target ISA note of its own section."""

    def over(f: dict[str, Any], valid: bool = True, note: str | None = None, **kw: Any) -> Iterator[Draft]:
        nt = S.note(note or f["op"])
        yield from _over_archs(f, (nt,), (nt.ref,), valid=valid, primary=S.PRIMARY_TCGEN05, **kw)

    for cta in S.CTA_GROUPS:
        for sc in (True, False):
            yield from over({"op": "tcgen05.alloc", "cta_group": cta, "shared_cta": sc},
                            smoke=(cta == 1 and sc), all_archs_standard=(cta == 1 and sc))
        yield from over({"op": "tcgen05.dealloc", "cta_group": cta})
        yield from over({"op": "tcgen05.relinquish_alloc_permit", "cta_group": cta})
        for order in ("syntax", "example"):
            # The syntax block spells shift.cta_group.down, the examples shift.down.cta_group:
            # both are spec text, both must assemble (register AMB-SHIFT-QUALIFIER-ORDER).
            yield from over({"op": "tcgen05.shift", "cta_group": cta, "order": order}, valid=True,
                            why="shift qualifier order", all_archs_standard=(cta == 1),
                            smoke=(cta == 1 and order == "syntax"))
        for mc, scl in itertools.product((False, True), (False, True)):
            yield from over({"op": "tcgen05.commit", "cta_group": cta, "multicast": mc, "shared_cluster": scl},
                            smoke=(cta == 1 and not mc and not scl),
                            all_archs_standard=(cta == 1 and not mc and not scl))
    for w in (*S.WAITS, "mma"):
        yield from over({"op": "tcgen05.wait", "which": w}, valid=w in S.WAITS,
                        all_archs_standard=(w == "ld"), smoke=(w == "st"))
    for w in (*S.FENCES, "before", "sync"):
        yield from over({"op": "tcgen05.fence", "which": w}, valid=w in S.FENCES,
                        all_archs_standard=(w == "before_thread_sync"), smoke=(w == "after_thread_sync"))
    for first in ("shift", "cp"):
        yield from over({"op": "tcgen05.mixed_cta_group", "first": first}, valid=False, note="tcgen05.mma",
                        why="all tcgen05 instructions of a kernel share .cta_group",
                        smoke=(first == "cp"))


def _previous_version(v: str) -> str:
    """The PTX ISA version just below ``v`` within its major (8.7 -> 8.6)."""
    major, minor = version_key(v)
    if minor == 0:
        raise ValueError(f"no previous PTX ISA version of {v} within major {major}")
    return f"{major}.{minor - 1}"


def gen_versions() -> Iterator[Draft]:
    """PTX ISA Notes: each feature one version below its minimum (the largest minimum of the
    notes the form falls under) must be refused."""
    red = {"op": "tcgen05.ld", "shape": "32x32b", "num": 2, "split": None,
           "red": {"op": "max", "dtype": "u32", "abs": False, "nan": False}}
    cases = [(f, _mma_notes(f)) for f in (
        _mma_form("f16"), _mma_form("mxf4nvf4", scale_vec="4X"), _mma_form("mxf4", scale_vec="block32"),
        _mma_form("mxf4nvf4", scale_vec="block16"))]
    cases.append((red, [S.NOTE_LD_RED]))
    for f, notes in cases:
        v = max_version(*(n.ptx_isa for n in notes if n.ptx_isa))
        sect = notes[0].ref
        arch = "sm_100a" if f.get("op") == "tcgen05.mma" else "sm_110a"
        lo = _previous_version(v)
        if version_key(lo) < version_key(min_ptx_for_target(arch)):
            continue
        g = dict(f, ptx_version=lo, version_probe=True)
        yield Draft(g, arch, "reject", (sect,), "standard", why=f"PTX ISA {v} needed", smoke=True)
    # mma.sync block scale needs 8.7, which is also the first version naming sm_120a: no probe.


def _sync_form(kind: str, shape: str, at: str, bt: str, st: str, sv: str | None,
               sel: tuple[int, int, int, int] = (0, 0, 0, 0), sel_regs: bool = False) -> dict[str, Any]:
    return {"op": "mma.sync.block_scale", "kind": kind, "shape": shape, "atype": at, "btype": bt,
            "stype": st, "scale_vec": sv, "sel": sel, "sel_regs": sel_regs}


def gen_mma_sync() -> Iterator[Draft]:
    """Tables 35-37: kind x type pair x stype x scale_vec x shape, plus selector values."""
    def over(f: dict[str, Any], rows: tuple[str, ...], valid: bool, **kw: Any) -> Iterator[Draft]:
        if valid and (f["kind"], f["stype"], f["scale_vec"]) == ("mxf4nvf4", "ue8m0", "4X"):
            kw["xfail_accept"] = XFAIL_4X_UE8M0_PTX
        yield from _over_archs(f, (S.NOTE_MMA_SYNC_BS,), rows + (S.S_MMA_SYNC_BS,),
                               primary=S.PRIMARY_MMA_SYNC, valid=valid, **kw)

    valid_set = set()
    for kind, shape, types, st, svs, _row in S.MMA_SYNC_VALID:
        for at, bt, sv in itertools.product(types, types, svs):
            valid_set.add((kind, shape, at, bt, st, sv))
    # every point of kind x stype x scale_vec (incl. default) x shape with canonical types,
    # and every type pair of each kind's shape.
    # Representative element type of a kind: the first its first Table 36 row lists.
    canon_t = {}
    for kind, _shape, types, _st, _svs, _row in S.MMA_SYNC_VALID:
        canon_t.setdefault(kind, types[0])
    for kind, st, sv, shape in itertools.product(S.BLOCK_SCALED_KINDS, S.STYPES, S.MMA_SYNC_SCALE_VECS,
                                                 S.MMA_SYNC_SHAPES):
        t = canon_t[kind]
        eff = sv if sv is not None else S.MMA_SYNC_SCALE_VEC_DEFAULT.get(kind)
        valid = (kind, shape, t, t, st, eff) in valid_set
        rows = tuple(f"T36.{r[5]}" for r in S.MMA_SYNC_VALID if r[0] == kind and (r[3] == st or not valid))
        if eff in S.T35_ROW and valid:
            rows += (f"T35.{S.T35_ROW[eff]}",)
        yield from over(_sync_form(kind, shape, t, t, st, sv), rows, valid,
                        why="Table 36", all_archs_standard=(valid and sv is not None),
                        smoke=(valid and sv is not None and st == "ue4m3"))
    for kind, shape, types, st, svs, row in S.MMA_SYNC_VALID:
        for at, bt in itertools.product(S.FP8F6F4_TYPES, S.FP8F6F4_TYPES):
            valid = at in types and bt in types
            f = _sync_form(kind, shape, at, bt, st, svs[-1])
            yield from over(f, (f"T36.{row}",), valid, why="Table 36 element types",
                            smoke=(kind == "mxf8f6f4" and at == "e2m1" and bt == "e5m2"))
    # Table 37 selectors (immediates): every encodable value, and the register form. The form
    # carrying a scale_vec is the last Table 36 row allowing it (its first element type).
    carrier = {}
    for kind, shape, types, st, svs, _row in S.MMA_SYNC_VALID:
        for sv in svs:
            carrier[sv] = (kind, shape, types[0], st)
    for sv, (ba, ta, bb, tb, row) in S.T37_SELECTORS.items():
        kind, shape, t, st = carrier[sv]
        enc_a, enc_ta, enc_b, enc_tb = S.SELECTOR_ENCODABLE
        for pos, (valid_vals, enc) in enumerate(zip((ba, ta, bb, tb), (enc_a, enc_ta, enc_b, enc_tb), strict=True)):
            for v in (*enc, enc[-1] + 1):
                sel = [0, 0, 0, 0]
                sel[pos] = v
                ok = v in valid_vals
                xf = "" if ok or v not in enc else XFAIL_SEL_UB
                f = _sync_form(kind, shape, t, t, st, sv, tuple(sel))
                for d in over(f, (f"T37.{row}", f"T35.{S.T35_ROW[sv]}"), ok, why="Table 37", xfail=xf):
                    if d.arch != S.PRIMARY_MMA_SYNC:
                        continue
                    yield d
        f = _sync_form(kind, shape, t, t, st, sv, (ba[-1], ta[-1], bb[-1], tb[-1]), sel_regs=True)
        yield from over(f, (f"T37.{row}",), True, why="selectors in .b16 registers")


GENERATORS = (gen_t39, gen_scale_vec, gen_operands, gen_idesc, gen_ld_st, gen_cp, gen_misc,
              gen_versions, gen_mma_sync)


# ---------------------------------------------------------------------------------------------
# Assembly into cases


def _instruction_label(form: dict[str, Any], arch: str) -> str:
    """The instruction(s) under test exactly as the module spells them."""
    return instruction_text(form, arch)


def all_drafts() -> list[Draft]:
    """Every draft, deduplicated by (form, arch): rows merged, the smaller level kept."""
    merged: dict[tuple, Draft] = {}
    order = {"smoke": 0, "standard": 1, "full": 2}
    for gen in GENERATORS:
        for d in gen():
            key = (case_name(d.form), d.arch)
            if key in merged:
                m = merged[key]
                if m.expect != d.expect:
                    # Two rules disagree about the same form: the stricter (reject) wins, both noted.
                    if d.expect == "reject":
                        m.expect, m.xfail = "reject", d.xfail
                    m.why = f"{m.why}; {d.why}"
                m.rows = tuple(dict.fromkeys(m.rows + d.rows))
                if order[d.level] < order[m.level]:
                    m.level = d.level
                m.smoke = m.smoke or d.smoke
            else:
                merged[key] = d
    drafts = list(merged.values())
    _promote(drafts)
    return drafts


def _promote(drafts: list[Draft]) -> None:
    """Make ``standard`` cover every spec row with a positive and (if any exists) a negative."""
    for d in drafts:
        if d.smoke:
            d.level = "smoke"
    need: dict[tuple[str, str], Draft] = {}
    have: set[tuple[str, str]] = set()
    for d in drafts:
        for r in d.rows:
            k = (r, d.expect)
            if d.level in ("smoke", "standard"):
                have.add(k)
            elif k not in need:
                need[k] = d
    for k, d in need.items():
        if k not in have:
            d.level = "standard"
            have.update((r, d.expect) for r in d.rows)


SASS_MMA_FAMILY: dict[tuple[str, str], str] = {
    ("tcgen05.mma", "f16"): "UTCHMMA",
    ("tcgen05.mma", "tf32"): "UTCHMMA",
    ("tcgen05.mma", "f8f6f4"): "UTCQMMA",
    ("tcgen05.mma", "mxf8f6f4"): "UTCQMMA",
    ("tcgen05.mma", "i8"): "UTCIMMA",
    ("tcgen05.mma", "mxf4"): "UTCOMMA",
    ("tcgen05.mma", "mxf4nvf4"): "UTCOMMA",
    ("mma.sync.block_scale", "mxf8f6f4"): "QMMA",
    ("mma.sync.block_scale", "mxf4"): "OMMA",
    ("mma.sync.block_scale", "mxf4nvf4"): "OMMA",
}
"""Expected SASS MMA family per (instruction, kind): the tensor-core unit that natively executes
the kind (H: 16-bit/tf32, Q: 8/6-bit, O: 4-bit, I: integer). A different family for an accepted
form means ptxas emulated or re-routed it (pinned by ``test_sass_families.py``)."""


def build_cases() -> list[Case]:
    """All compile cases (level ``full``), each tagged with its own smallest level."""
    out = []
    for d in all_drafts():
        form = dict(d.form)
        if d.why:
            form["why"] = d.why
        fam = SASS_MMA_FAMILY.get((form["op"], str(form.get("kind"))))
        if fam and d.expect == "accept":
            form["sass_mma_family"] = fam
        out.append(Case(
            case_id=case_id(d.form, d.arch, d.expect), suite=SUITE,
            instruction=_instruction_label(d.form, d.arch), arch=d.arch, spec_rows=d.rows, level=d.level,
            form=compile_form(form), expect=d.expect, xfail=d.xfail,
        ))
    return out
