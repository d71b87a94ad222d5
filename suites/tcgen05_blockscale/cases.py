"""Case enumeration for ``tcgen05.mma ... .block_scale`` (Tables 39, 43, 44, 54, 55).

Why the split standard/full: ``standard`` touches every row and every field value at least once
(all 25 mxf8f6f4 type pairs, every ``.scale_vectorsize`` spelling incl. omitted and K=96, every
M/cta_group, representative N -- min, max, an odd multiple, one above 128 -- every SF ID, both SF
staging paths, transpose/negate, enable-input-d, A from TMEM, every swizzle, collector sequences,
sparse); ``full`` adds every N of every shape family and every type pair per shape.

Facts the spec leaves open are PROBES: recipe ``probe:<name>``, expectation mode ``observe``
(recorded, never pass/fail) -- see ``PROBES`` (``probes.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from mmacts.cases.model import Case
from mmacts.core.recipe import CONTROL, EXACT, PROBE, RANDOM, Recipe
from mmacts.ptx.tcgen05_kernels import KernelForm
from mmacts.spec import catalog
from mmacts.spec import queries as Q
from suites.tcgen05_blockscale import features, plain
from suites.tcgen05_blockscale.fields import Tcgen05Form, Tcgen05Runtime

SUITE = "tcgen05_blockscale"
F8 = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")

SPELLINGS: dict[str, tuple[tuple[str | None, str], ...]] = {
    # kind: ((scale_vec qualifier, scale type), ...) allowed by Tables 54/55 (K != 96)
    "mxf8f6f4": ((None, "ue8m0"), ("1X", "ue8m0"), ("block32", "ue8m0")),
    "mxf4": ((None, "ue8m0"), ("2X", "ue8m0"), ("block32", "ue8m0")),
    "mxf4nvf4": (("2X", "ue8m0"), ("block32", "ue8m0"), ("4X", "ue8m0"), ("block16", "ue8m0"),
                 ("4X", "ue4m3"), ("block16", "ue4m3")),
}
K96_SPELLINGS: dict[str, tuple[tuple[str, str], ...]] = {
    "mxf4": (("block32", "ue8m0"),),
    "mxf4nvf4": (("block32", "ue8m0"), ("block16", "ue8m0"), ("block16", "ue4m3")),
}

NUMERIC_MODEL = "b200_tcgen05_hypothesis"
"""The numeric model random-data cases are compared with (``reference.numeric_model``)."""
MODEL_NOTE = ("published B200 tcgen05 hypothesis: 32-product blocks, 2 extra alignment bits, "
              "truncation, C aligned with the first block; unconfirmed for tcgen05 and for block scales")


def numeric_model_of(case: Case) -> str:
    """``random:<model>`` -> model name (``random`` alone: :data:`NUMERIC_MODEL`)."""
    return case.parsed_recipe.name or NUMERIC_MODEL


def _t54(kind: str, sv: str | None, k96: bool) -> str:
    if sv is None:
        return "T54.8" if kind == "mxf8f6f4" else "T54.7"
    return {"1X": "T54.1", "2X": "T54.2", "4X": "T54.3"}.get(sv) or (
        ("T54.4" if k96 else "T54.5") if sv == "block16" else
        ("T54.8" if kind == "mxf8f6f4" else ("T54.6" if k96 else "T54.7")))


def _t55(kind: str, stype: str) -> str:
    return {"mxf8f6f4": "T55.1", "mxf4": "T55.2"}.get(kind) or ("T55.3" if stype == "ue8m0" else "T55.4")


def _idesc_rows(kind: str, rt: Tcgen05Runtime, sparse: bool) -> tuple[str, ...]:
    t = "T43" if kind == "mxf8f6f4" else "T44"
    # every case encodes the reserved fields as 0 (T43.1/3/5/14/17, T44.1/3/5/8/12/15 minus the
    # transpose rows) and, for mxf4/mxf4nvf4, transpose A/B = 0 as Table 44 requires (T44.11/12)
    if t == "T43":
        rows = [1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15, 16, 17]
        if rt.negate_a:
            rows.append(8)
        if rt.negate_b:
            rows.append(9)
        if rt.transpose_a:
            rows.append(10)
        if rt.transpose_b:
            rows.append(11)
    else:
        rows = [1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15, 16, 17, 18]
        if rt.negate_a:
            rows.append(9)
        if rt.negate_b:
            rows.append(10)
    return tuple(f"{t}.{r}" for r in sorted(rows))


def _shape_ref(kind: str, cg: int, sparse: bool, m: int, k96: bool) -> str:
    for s in _shapes():
        if s.kind == kind and s.cta_group == cg and s.sparse == sparse and s.M == m and (s.K == 96) == k96:
            return s.refs[0]
    raise ValueError(f"no Table 39 shape for {kind} cg{cg} sparse={sparse} M={m} K96={k96}")


_SHAPES: tuple | None = None


def _shapes() -> tuple:
    global _SHAPES
    if _SHAPES is None:
        cat = catalog.load()
        _SHAPES = tuple(s for k in ("mxf8f6f4", "mxf4", "mxf4nvf4") for s in Q.tcgen05_shapes(cat, k) if not s.ws)
    return _SHAPES


def make_case(level: str, kind: str, sv: str | None, *, cg: int = 1, m: int = 128, n: int = 64,
              atype: str = "e2m1", btype: str = "e2m1", stype: str = "ue8m0", sparse: bool = False,
              a_tmem: bool = False, collectors: tuple[str | None, ...] = (None,), k96: bool = False,
              recipe: str = "exact", seed: int = 0, xfail: str = "", extra_rows: tuple[str, ...] = (),
              a_overwrite: bool = False, **given: Any) -> Case:
    """One case; ``given`` sets more run-time fields (:class:`Tcgen05Runtime`: sfa_id, sfb_id, sf_stage,
    swizzle_a/b, transpose/negate...); the case ID names the swizzles only where they are given."""
    if kind != "mxf8f6f4":
        atype = btype = "e2m1"
    arch = "sm_103a" if k96 else "sm_100a"
    form = Tcgen05Form(kind=kind, scale_vec=sv, cta_group=cg, sparse=sparse, a_tmem=a_tmem,
                       collectors=tuple(collectors), arch=arch, a_overwrite=a_overwrite)
    runtime = Tcgen05Runtime.of(given, m=m, n=n, atype=atype, btype=btype, stype=stype, k96=k96)
    kf = KernelForm(**form)
    case_id = _case_id(form, runtime, given, recipe, seed)
    rows = (_shape_ref(kind, cg, sparse, m, k96), _t54(kind, sv, k96), _t55(kind, stype),
            *_idesc_rows(kind, runtime, sparse), *extra_rows)
    if runtime.cp_probe:  # no MMA is issued: the case covers the tcgen05.cp rows only
        rows = tuple(extra_rows)
    elif recipe == EXACT:
        rows = tuple(dict.fromkeys(rows + layout_rows(kind, cg=cg, m=m, n=n, sparse=sparse, a_tmem=a_tmem,
                                                      k96=k96, atype=atype, btype=btype, rt=runtime)))
    return Case(case_id=case_id, suite=SUITE, instruction=kf.instruction(collectors[0]), arch=arch,
                spec_rows=rows, level=level, form=form, runtime=runtime, recipe=recipe, seed=seed, xfail=xfail)


_ID_FLAGS = ("transpose_a", "transpose_b", "negate_a", "negate_b", "enable_d", "a_reuse", "sf_addr_dirty",
             "sfb_peer_x2", "a_decoy", "sf_nan_7f", "lbo_absolute")
"""Run-time flags the case ID names when set (in this order)."""


def _case_id(form: Tcgen05Form, rt: Tcgen05Runtime, given: dict[str, Any], recipe: str, seed: int) -> str:
    """The readable, stable ID: form, shape, types, SF IDs and staging, then what the case varies."""
    parts = [form.kind, form.scale_vec or "omitted", f"cg{form.cta_group}", "sp" if form.sparse else "dense",
             f"M{rt.m}N{rt.n}", f"{rt.atype}x{rt.btype}", rt.stype, f"sfa{rt.sfa_id}sfb{rt.sfb_id}", rt.sf_stage]
    if rt.k96:
        parts.append("K96")
    if form.a_tmem:
        parts.append("Atmem")
    if form.collectors != (None,):
        parts.append("coll-" + "-".join(c or "none" for c in form.collectors))
    if form.a_overwrite:
        parts.append("smemA-overwritten-after-fill")
    if "swizzle_a" in given:
        parts.append(f"a{rt.swizzle_a}")
    if "swizzle_b" in given:
        parts.append(f"b{rt.swizzle_b}")
    parts += [key for key in _ID_FLAGS if getattr(rt, key)]
    if rt.a_base_shift:
        parts.append(f"abase{rt.a_base_shift}")
    if rt.b_base_shift:
        parts.append(f"bbase{rt.b_base_shift}")
    if rt.cp_probe:
        parts.append(f"cp-{rt.cp_shape}-{rt.cp_probe}")
    if rt.sf_quadrant_only is not None:
        parts.append(f"q{rt.sf_quadrant_only}")
    if recipe != EXACT:
        parts.append(recipe)
    if seed:
        parts.append(f"s{seed}")
    return ".".join(parts)


# ---------------------------------------------------------------------------------------------
# Rows the case's operand layouts and kernel exercise (Tables 40, 46, 51, 52, 53).
#
# Cited only by ``exact`` cases (a pass/fail verdict; probes and random-data cases observe) and only
# where the case depends on the row: a descriptor field the descriptor walk of one MMA actually
# uses (LBO/SBO are unused for some major-ness x swizzle x extent combinations), the swizzle atom
# of each smem operand, the Table 52 combination the operand is (never one Table 52 excludes), and
# the issue shape of the generated kernel (``mmacts.ptx.tcgen05_kernels``: MMA/cp/commit from one
# thread of the CTA or pair, alloc from warp 0 of each CTA, tcgen05.ld/st per warp lane quadrant,
# fences around every thread sync). Table 46 rows bind the kernel on hardware; the model backend
# does not simulate threads. ``suites/descriptors/test_row_citations.py`` re-derives the LBO/SBO
# claims by perturbing the built descriptors.

TYPE_BITS: dict[str, int] = {"e4m3": 8, "e5m2": 8, "e2m3": 6, "e3m2": 6, "e2m1": 4}
_T53_ROW: dict[tuple[str, str], int] = {
    ("MN", "128B_base32B"): 1, ("MN", "128B"): 3, ("K", "128B"): 4, ("MN", "64B"): 5, ("K", "64B"): 6,
    ("MN", "32B"): 7, ("K", "32B"): 8, ("MN", "none"): 9, ("K", "none"): 10,
}
_SWIZZLE_BYTES: dict[str, int] = {"none": 16, "32B": 32, "64B": 64, "128B": 128, "128B_base32B": 128}


def smem_walk_rows(major: str, swizzle: str, rows: int, row_bytes: int) -> tuple[str, ...]:
    """Table 40 rows one MMA's descriptor walk depends on (9.7.16.3 strides, 9.7.16.3.3 layouts).

    ``rows`` x ``row_bytes``: the operand one MMA reads, rows along the strided direction (MN for
    K-major, K for MN-major), bytes along the contiguous one. Start address and swizzle mode always
    matter; SBO / LBO only when the walk crosses the 8-row group (4 K rows for the 128B swizzle with
    32B atoms: Table 53's 8x4 atom, AMB-T53-32B-ATOM-SIZE reading "atom-512") / 16-byte column (no
    swizzle) or swizzle-width slice (MN-major) they stride; relative LBO mode (bit 52 = 0) only with
    LBO. A swizzled K-major walk never uses LBO ("not used, assumed 1").
    """
    out = ["T40.1", "T40.8"]
    w = _SWIZZLE_BYTES[swizzle]
    if major == "K":
        sbo, lbo = rows > 8, swizzle == "none" and row_bytes > 16
    elif swizzle == "none":
        lbo, sbo = rows > 8, row_bytes > 16
    else:
        sbo, lbo = rows > (4 if swizzle == "128B_base32B" else 8), row_bytes > w
    if lbo:
        out += ["T40.2", "T40.6"]
    if sbo:
        out.append("T40.3")
    return tuple(sorted(out, key=lambda r: int(r.split(".")[1])))


def _operand_bytes(kind: str, k_elems: int) -> int:
    """Bytes one row of ``k_elems`` K elements takes in its smem container (fp4x2 packs two per byte;
    the padded mxf8f6f4 containers keep one 16-byte chunk per 16 elements)."""
    return k_elems // 2 if kind in ("mxf4", "mxf4nvf4") else k_elems


def layout_rows(kind: str, *, cg: int, m: int, n: int, sparse: bool, a_tmem: bool, k96: bool,
                atype: str, btype: str, rt: Tcgen05Runtime) -> tuple[str, ...]:
    """Tables 40/46/51/52/53 rows an exact MMA case exercises (see the block comment above)."""
    if kind == "mxf8f6f4":
        k = 64 if sparse else 32
    else:
        k = 96 if k96 else (128 if sparse else 64)
    ka = k // 2 if sparse else k
    rows: list[str] = ["T46.1" if cg == 1 else "T46.2", "T46.3" if cg == 1 else "T46.4", "T46.5", "T46.6",
                       "T51.1", "T51.4"]
    operands = [("B", btype, rt.transpose_b, rt.swizzle_b, n // cg, k)]
    if a_tmem:
        rows.append("T51.2")
    else:
        rows.append("T51.3")
        operands.insert(0, ("A", atype, rt.transpose_a, rt.swizzle_a, m // cg, ka))
    # prose rules every exact MMA case depends on: the D datapath layout (9.7.16.10.5), scale factors in
    # every lane partition (9.7.16.10.7) addressed by SF ID (.7.2 SFA, .7.3 SFB), and the packing of A / B
    rows += ["S9.7.16.10.5", "S9.7.16.10.7", "S9.7.16.10.7.2", "S9.7.16.10.7.3"]
    mx4 = kind in ("mxf4", "mxf4nvf4")
    if a_tmem:
        rows.append("S9.7.16.10.4.5" if mx4 else "S9.7.16.10.4.3")
    if mx4:
        rows.append("S9.7.16.10.4.6")
    elif TYPE_BITS[btype] < 8 or (TYPE_BITS[atype] < 8 and not a_tmem):
        rows.append("S9.7.16.10.4.4")
    for which, fmt, transposed, sw, mn, kk in operands:
        major = "MN" if transposed else "K"
        if major == "K":
            rows += smem_walk_rows("K", sw, mn, _operand_bytes(kind, kk))
            rows.append("T52.1" if which == "A" else "T52.2")
        else:
            rows += smem_walk_rows("MN", sw, kk, mn)  # 8-bit containers: one byte per MN element
            if TYPE_BITS[fmt] in (8, 16) and sw != "128B_base32B":
                rows.append("T52.3" if which == "A" else "T52.4")
        rows.append(f"T53.{_T53_ROW[(major, sw)]}")
    return tuple(dict.fromkeys(rows))


def _rep_n(ns: tuple[int, ...]) -> list[int]:
    """min, an odd multiple of the step, 128, one above 128 that is not a power of two, max."""
    step = ns[1] - ns[0]
    pick = {ns[0], 3 * step, 128, 128 + 3 * step, ns[-1]}
    return sorted(x for x in pick if x in ns)


def enumerate_cases(level: str) -> list[Case]:
    """Every case at ``level`` (smaller levels included)."""
    seen: dict[str, Case] = {}
    for c in _generate():
        if c.in_level(level) and c.case_id not in seen:
            seen[c.case_id] = c
    return list(seen.values())


S, F = "standard", "full"


def _generate() -> Iterator[Case]:
    """Every case of every level, in the order the coverage rules are listed (the first of equal IDs wins)."""
    for rule in COVERAGE_RULES:
        yield from rule()


def _smoke_and_type_pairs() -> Iterator[Case]:
    """smoke: one per kind; all 25 mxf8f6f4 type pairs (SF IDs rotate so every ID meets several pairs)."""
    yield make_case("smoke", "mxf8f6f4", None, atype="e4m3", btype="e4m3")
    yield make_case("smoke", "mxf4", "2X")
    yield make_case("smoke", "mxf4nvf4", "4X", stype="ue4m3")
    for i, (a, b) in enumerate((a, b) for a in F8 for b in F8):
        yield make_case(S, "mxf8f6f4", None, atype=a, btype=b, sfa_id=i % 4, sfb_id=(i // 4) % 4, seed=i)
        yield make_case(F, "mxf8f6f4", "1X", cg=2, m=256, n=128, atype=a, btype=b, seed=i)
        yield make_case(F, "mxf8f6f4", "block32", cg=2, m=128, n=64, atype=a, btype=b, seed=i)


def _shape_families() -> Iterator[Case]:
    """Every shape family x spelling x representative N (full: every N)."""
    for s in _shapes():
        if s.sparse or s.K == 96:
            continue
        spell = SPELLINGS[s.kind]
        for j, (sv, st) in enumerate(spell):
            types = ("e4m3", "e2m1") if s.kind == "mxf8f6f4" else ("e2m1", "e2m1")
            for n in _rep_n(s.N):
                yield make_case(S, s.kind, sv, cg=s.cta_group, m=s.M, n=n, atype=types[0], btype=types[1],
                                stype=st, seed=n + j)
            for n in s.N:
                yield make_case(F, s.kind, sv, cg=s.cta_group, m=s.M, n=n, stype=st, seed=n,
                                atype="e5m2" if s.kind == "mxf8f6f4" else "e2m1",
                                btype="e3m2" if s.kind == "mxf8f6f4" else "e2m1")


def _sf_ids_and_staging() -> Iterator[Case]:
    """Every SF ID pair (cta_group::1, both staging paths for a subset); cp and st for every kind/cta_group/M."""
    for sfa in range(4):
        for sfb in range(4):
            yield make_case(S, "mxf8f6f4", "block32", atype="e4m3", btype="e5m2", sfa_id=sfa, sfb_id=sfb,
                            sf_stage="cp" if (sfa + sfb) % 2 else "st", n=40)
            yield make_case(F, "mxf8f6f4", None, cg=2, m=256, n=256, atype="e2m3", btype="e4m3",
                            sfa_id=sfa, sfb_id=sfb, sf_stage="cp")
    for kind, spells in (("mxf4", (("2X", "ue8m0"),)), ("mxf4nvf4", (("block32", "ue8m0"),))):
        for sv, st in spells:
            for sfa in (0, 2):
                for sfb in (0, 2):
                    yield make_case(S, kind, sv, stype=st, sfa_id=sfa, sfb_id=sfb, n=72)
                    yield make_case(S, kind, sv, cg=2, m=128, n=256, stype=st, sfa_id=sfa, sfb_id=sfb,
                                    sf_stage="cp")
    for kind, sv, st in (("mxf8f6f4", None, "ue8m0"), ("mxf4", "block32", "ue8m0"),
                         ("mxf4nvf4", "block16", "ue4m3")):
        for cg, m in ((1, 128), (2, 128), (2, 256)):
            for stage in ("st", "cp"):
                yield make_case(S, kind, sv, cg=cg, m=m, n=256 if cg == 2 else 128, stype=st,
                                atype="e4m3", btype="e2m3", sf_stage=stage)


def _majors_and_swizzles() -> Iterator[Case]:
    """Transpose (MN-major) for 8-bit types and K-major for every container, every swizzle."""
    for sw in ("none", "32B", "64B", "128B"):
        for ta, tb in ((1, 0), (0, 1), (1, 1)):
            yield make_case(S, "mxf8f6f4", None, n=128, atype="e4m3", btype="e5m2", transpose_a=ta,
                            transpose_b=tb, swizzle_a=sw, swizzle_b=sw)
        yield make_case(S, "mxf8f6f4", None, cg=2, m=256, n=256, atype="e5m2", btype="e4m3",
                        transpose_a=1, transpose_b=1, swizzle_a=sw, swizzle_b=sw)
    # Table 52 row 3 excludes this combination: a probe of what the hardware does, not a pass/fail case.
    yield make_case(S, "mxf8f6f4", None, n=128, atype="e4m3", btype="e4m3", transpose_a=1,
                    swizzle_a="128B_base32B", swizzle_b="128B", recipe="probe:t52_excluded_swizzle")
    for sw in ("none", "32B", "64B", "128B"):
        for a, b in (("e4m3", "e2m1"), ("e3m2", "e2m3")):
            yield make_case(S, "mxf8f6f4", None, atype=a, btype=b, swizzle_a=sw, swizzle_b=sw, n=96)
        yield make_case(S, "mxf4nvf4", "4X", stype="ue4m3", swizzle_a=sw, swizzle_b=sw, n=96)
        yield make_case(S, "mxf4", "2X", swizzle_a=sw, swizzle_b=sw, n=104)


def _negate_enable_d_a_tmem() -> Iterator[Case]:
    """Negate and enable-input-d; A from tensor memory (8-bit: exact; 4/6-bit holders are a probe)."""
    for kind, sv in (("mxf8f6f4", None), ("mxf4", "2X"), ("mxf4nvf4", "4X")):
        for na, nb in ((1, 0), (0, 1), (1, 1)):
            yield make_case(S, kind, sv, atype="e4m3", btype="e2m1", negate_a=na, negate_b=nb)
        for cg, m in ((1, 128), (2, 128), (2, 256)):
            yield make_case(S, kind, sv, cg=cg, m=m, n=128, atype="e2m3", btype="e3m2", enable_d=True)
    for kind, sv in (("mxf8f6f4", None), ("mxf4", "2X"), ("mxf4nvf4", "block16")):
        for cg, m in ((1, 128), (2, 256)):
            yield make_case(S, kind, sv, cg=cg, m=m, n=128, a_tmem=True, atype="e4m3", btype="e5m2")
    for a in ("e2m1", "e2m3", "e3m2"):
        yield make_case(S, "mxf8f6f4", None, a_tmem=True, atype=a, btype="e4m3", recipe="probe:a_tmem_holder")


def _collectors_k96_sparse() -> Iterator[Case]:
    """Collector sequences (A reused from the collector; B advances) and multi-MMA K loops; K = 96
    (sm_103a: M=256 cta_group::2, N<=128 and N>128 SFB layouts, every SF ID); sparse (.sp: metadata is a probe)."""
    for coll in (("fill", "use", "lastuse"), ("fill", "lastuse"), ("discard",), ("fill", "use", "use", "lastuse")):
        yield make_case(S, "mxf8f6f4", None, collectors=coll, atype="e4m3", btype="e4m3", a_reuse=True)
        yield make_case(S, "mxf4nvf4", "4X", collectors=coll, stype="ue4m3", a_reuse=True, a_tmem=False)
    for kind, sv, st in (("mxf8f6f4", None, "ue8m0"), ("mxf4", "2X", "ue8m0"), ("mxf4nvf4", "4X", "ue4m3")):
        yield make_case(S, kind, sv, collectors=(None,) * 4, stype=st, n=256, atype="e4m3", btype="e4m3")
        yield make_case(S, kind, sv, cg=2, m=256, n=256, collectors=(None,) * 4, stype=st, atype="e2m1",
                        btype="e4m3", sf_stage="cp")
    for kind, spells in K96_SPELLINGS.items():
        for sv, st in spells:
            ids = (0, 1, 2, 3) if sv == "block32" else (0, 2)
            for n in (64, 128, 144, 256):
                for sid in ids:
                    yield make_case(S, kind, sv, cg=2, m=256, n=n, stype=st, k96=True, sfa_id=sid,
                                    sfb_id=ids[(ids.index(sid) + 1) % len(ids)],
                                    sf_stage="cp" if n > 128 else "st")
    for kind, sv, st in (("mxf8f6f4", None, "ue8m0"), ("mxf4", "2X", "ue8m0"), ("mxf4nvf4", "4X", "ue4m3")):
        for cg, m in ((1, 128), (2, 256)):
            yield make_case(S, kind, sv, cg=cg, m=m, n=128, sparse=True, stype=st, atype="e4m3",
                            btype="e2m1", recipe="probe:sparse_meta")


def _sf_probes() -> Iterator[Case]:
    """Probes of scale-factor placement, the SF address bits, MN-major sub-byte types and Layout B's SFB;
    tcgen05.cp decompression, raw cells read back (no MMA issued; the form's module is reused)."""
    for q in range(4):
        yield make_case(S, "mxf8f6f4", None, atype="e4m3", btype="e4m3", sf_quadrant_only=q,
                        recipe="probe:sf_quadrant")
        yield make_case(S, "mxf4nvf4", "4X", cg=2, m=128, n=256, stype="ue4m3", sf_quadrant_only=q,
                        recipe="probe:sf_quadrant", sf_decoy=0x38)
    for kind, sv in (("mxf8f6f4", None), ("mxf4", "2X")):
        yield make_case(S, kind, sv, sfa_id=2, sfb_id=2, sf_addr_dirty=True, recipe="probe:sf_addr_bits30_31")
    for a, b in (("e2m1", "e4m3"), ("e3m2", "e2m3"), ("e4m3", "e2m1")):
        yield make_case(S, "mxf8f6f4", None, n=128, atype=a, btype=b, transpose_a=1, transpose_b=1,
                        swizzle_a="128B", swizzle_b="128B", recipe="probe:mn_major_sub8")
    for n in (96, 160):
        yield make_case(S, "mxf4nvf4", "4X", cg=2, m=128, n=n, stype="ue4m3", recipe="probe:layoutB_sfb")
    for src in ("b4x16_p64", "b6x16_p32"):
        for shape in ("128x128b", "32x128b"):
            yield make_case(S, "mxf8f6f4", None, atype="e4m3", btype="e4m3", cp_probe=src, cp_shape=shape,
                            recipe="probe:cp_decompress", extra_rows=("S9.7.16.9.1", "S9.7.16.9.2"))


def _descriptor_probes() -> Iterator[Case]:
    """Shared-memory descriptor readings: base offset, absolute LBO, a start address above 128 KiB."""
    # descriptor base offset != 0: A and/or B start inside their swizzle repeat
    # (an offset x with x != -x modulo the pattern's 2^B rows tells "subtract" from "add": 128B x = 3, 5; 64B and
    # 128B_base32B x = 1, 3; for 32B (B = 1) the two readings are one)
    for sw, sa, sb in (("128B", 384, 0), ("128B", 0, 640), ("64B", 256, 128), ("32B", 128, 128),
                       ("128B_base32B", 256, 0), ("128B_base32B", 384, 128)):
        mn = sw == "128B_base32B"  # 32-byte atoms exist only for MN-major operands (Table 53)
        yield make_case(S, "mxf8f6f4", None, n=64, atype="e4m3", btype="e5m2", swizzle_a=sw, swizzle_b=sw,
                        a_base_shift=sa, b_base_shift=sb, recipe="probe:smem_base_offset",
                        transpose_a=int(mn), transpose_b=int(mn), extra_rows=("T40.5", "T41.1", "T41.2", "T41.3"))
    yield make_case(S, "mxf4nvf4", "4X", cg=2, m=256, n=128, stype="ue4m3", swizzle_a="128B", swizzle_b="128B",
                    a_base_shift=512, b_base_shift=256, recipe="probe:smem_base_offset", extra_rows=("T40.5",))
    # absolute LBO mode (Table 40 bit 52): three K = 96 fp4 MMAs along one 128-byte swizzle row, the third's
    # 48 bytes straddling it (bytes 96-143): its A and B descriptors point LBO at the row's next 128-byte slice
    yield make_case(S, "mxf4", "block32", cg=2, m=256, n=64, k96=True, collectors=(None,) * 3, lbo_absolute=True,
                    recipe="probe:absolute_lbo", extra_rows=("T40.2", "T40.6", "S9.7.16.3.1.2"))
    # B above 128 KiB of shared memory: the descriptor's start address (address >> 4, bits 0-13) needs its top
    # bit; every other case's operands sit below 32 KiB (the generated mutation of the VM's descriptor decoder
    # found a field width one short that no case could see)
    yield make_case(S, "mxf8f6f4", None, n=64, atype="e4m3", btype="e4m3", b_base_shift=128 * 1024,
                    extra_rows=("T40.1",))


def _scale_and_collector_probes() -> Iterator[Case]:
    """The UE4M3 NaN scale, a peer SFB copy unlike the leader's, collector reuse behind a decoy A."""
    # the UE4M3 NaN scale 0x7F by design (one CTA and a pair, st and cp staging)
    yield make_case(S, "mxf4nvf4", "4X", stype="ue4m3", n=64, sf_nan_7f=True, recipe="probe:ue4m3_nan_scale")
    yield make_case(S, "mxf4nvf4", "block16", cg=2, m=256, n=128, stype="ue4m3", sf_nan_7f=True, sf_stage="cp",
                    recipe="probe:ue4m3_nan_scale")
    # cta_group::2 with a peer SFB copy unlike the leader's (Layouts A and B; st and cp staging)
    yield make_case(S, "mxf8f6f4", None, cg=2, m=256, n=128, atype="e4m3", btype="e2m1", sfb_peer_x2=True,
                    recipe="probe:sfb_peer_copy")
    yield make_case(S, "mxf4nvf4", "4X", cg=2, m=128, n=256, stype="ue4m3", sfb_peer_x2=True, sf_stage="cp",
                    recipe="probe:sfb_peer_copy")
    # collector use/lastuse with a decoy A behind the descriptor (one CTA and a pair)
    for coll in (("fill", "use", "lastuse"), ("fill", "lastuse")):
        yield make_case(S, "mxf8f6f4", None, collectors=coll, atype="e4m3", btype="e4m3", a_reuse=True,
                        a_decoy=True, recipe="probe:collector_reuse")
    yield make_case(S, "mxf4", "2X", cg=2, m=256, n=128, collectors=("fill", "use"), a_reuse=True, a_decoy=True,
                    recipe="probe:collector_reuse")
    # ... and with A's shared memory overwritten (by the decoy) between the completed fill and the use
    for kind, sv, st in (("mxf8f6f4", None, "ue8m0"), ("mxf4nvf4", "4X", "ue4m3")):
        yield make_case(S, kind, sv, collectors=("fill", "use", "lastuse"), atype="e4m3", btype="e4m3", stype=st,
                        a_reuse=True, a_overwrite=True, recipe="probe:collector_reuse")


def _features_and_plain() -> Iterator[Case]:
    """tcgen05.ld/st of every shape x num and tcgen05.shift, position-coded (features.py); .ws collector
    buffers b0-b3 and the disable-output-lane mask (kind::f8f6f4: plain.py)."""
    yield from features.cases(SUITE)
    yield from plain.cases(SUITE)


def _controls() -> Iterator[Case]:
    """Controls of the comparator (never a spec reading: they cite no row)."""
    for name in CONTROLS:
        extra = dict(sf_stage="cp", drop_cps=True) if name == "sf_cp_missing" else {}
        c = make_case(S, "mxf8f6f4", None, atype="e4m3", btype="e4m3", n=64, recipe=str(Recipe(CONTROL, name)),
                      **extra)
        yield replace(c, spec_rows=())


def _random_data() -> Iterator[Case]:
    """Random data vs the numeric model (observe: the model is a published hypothesis)."""
    rnd = str(Recipe(RANDOM, NUMERIC_MODEL))
    for a, b in (("e4m3", "e4m3"), ("e5m2", "e2m1"), ("e3m2", "e2m3")):
        yield make_case(S, "mxf8f6f4", None, n=64, atype=a, btype=b, recipe=rnd, seed=11)
    yield make_case(S, "mxf8f6f4", "block32", n=128, atype="e4m3", btype="e5m2", enable_d=True, recipe=rnd, seed=12)
    yield make_case(S, "mxf8f6f4", None, n=32, atype="e4m3", btype="e2m3", collectors=(None,) * 4,
                    recipe=rnd, seed=13)
    yield make_case(S, "mxf4", "2X", n=64, recipe=rnd, seed=14)
    yield make_case(S, "mxf4nvf4", "4X", n=64, stype="ue4m3", enable_d=True, negate_a=1, recipe=rnd, seed=15)
    yield make_case(S, "mxf4nvf4", "block32", cg=2, m=128, n=128, recipe=rnd, seed=16)
    yield make_case(S, "mxf4nvf4", "block16", cg=2, m=256, n=64, k96=True, stype="ue4m3", recipe=rnd, seed=17)


COVERAGE_RULES: tuple[Callable[[], Iterator[Case]], ...] = (
    _smoke_and_type_pairs, _shape_families, _sf_ids_and_staging, _majors_and_swizzles, _negate_enable_d_a_tmem,
    _collectors_k96_sparse, _sf_probes, _descriptor_probes, _scale_and_collector_probes, _features_and_plain,
    _controls, _random_data,
)
"""The suite's coverage rules, in case-list order (the module docstring says what standard and full cover)."""


CONTROLS: dict[str, tuple[str, str]] = {
    # name: (verdict the comparator must give, what the control does to the real kernel result)
    "sf_cp_missing": ("fail", "SF tcgen05.cp never issued: the SF columns keep their NaN poison, D is NaN"),
    "nan_got": ("fail", "got[0,0] = NaN, want finite"),
    "nan_want": ("fail", "want[0,0] = NaN, got finite"),
    "nan_both": ("pass", "NaN on both sides at [0,0], different payloads"),
    "signed_zero": ("pass", "want[0,0] = +0, got[0,0] = -0 (the sign of zero is open: AMB-SIGNED-ZERO)"),
    "signed_zero_asked": ("fail", "signed zeros asked for (mode exact+signed-zero): want[0,0] = +0, got[0,0] = -0"),
    "signed_zero_asked_same": ("pass", "signed zeros asked for (mode exact+signed-zero): -0 on both sides at [0,0]"),
    "inf_got": ("fail", "got[0,0] = +inf, want finite"),
    "inf_sign": ("fail", "want[0,0] = +inf, got[0,0] = -inf"),
    "inf_both": ("pass", "+inf on both sides at [0,0]"),
    "one_ulp": ("fail", "got[0,0] one fp32 ulp above want"),
    "bound_inside": ("pass", "bound mode, tolerance 1/16: |got - want| = 1/32"),
    "bound_edge": ("pass", "bound mode, tolerance 1/16: |got - want| = 1/16 exactly"),
    "bound_outside": ("fail", "bound mode, tolerance 1/16: |got - want| = 3/32"),
    "bound_inf": ("pass", "bound mode: +inf on both sides"),
    "bound_nan": ("fail", "bound mode: got NaN, want finite"),
}
"""Controls of the comparator (recipe ``control:<name>``): a real kernel result, perturbed in one named
way, must get the named verdict. They are what catches a comparator that accepts everything."""


def is_probe(case: Case) -> bool:
    """Probe cases compare in ``observe`` mode: the spec leaves the answer open."""
    return case.parsed_recipe.is_kind(PROBE)
