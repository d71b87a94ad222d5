"""The readings a tcgen05 case takes for granted: open ambiguity-register entries its form, run-time fields or
probe recipe rest on beyond what its cited spec rows link (the driver's ``form_readings``).

They were rules in ``mmacts/ambiguity/assumes.py`` keyed on the suite's name and read by string keys; the
register floor sits below the suites and cannot see these records, so the suite that owns the form states
what its host encoders and the VM assume for it (K = 96 scale layouts, Layout B scale-factor quadrants, the
FP4 nibble order, an omitted ``.scale_vectorsize``, ...), each with the register id that holds the question.
``assumes`` keeps only the entries that are still open.
"""

from __future__ import annotations

from collections.abc import Callable

from mmacts.cases.model import Case
from mmacts.core.recipe import PROBE
from suites.tcgen05_blockscale.fields import OperandRuntime, Tcgen05Form, Tcgen05Runtime

Rule = tuple[str, str, Callable[[Tcgen05Form, OperandRuntime], bool]]
"""(register id, why, applies to (form, run-time record))."""


def _layout_b(fm: Tcgen05Form, rt: OperandRuntime) -> bool:
    return fm.cta_group == 2 and rt.m == 128


def _multi_sf_groups(fm: Tcgen05Form, rt: OperandRuntime) -> bool:
    return rt.k96 or len(fm.collectors) > 1


def _sub8(rt: OperandRuntime, *types: str) -> bool:
    return bool({rt.atype, rt.btype} & set(types))


def _swizzles(rt: OperandRuntime) -> tuple[str, ...]:
    """The operand swizzles of an MMA case (the plain and feature cases have none)."""
    return (rt.swizzle_a, rt.swizzle_b) if isinstance(rt, Tcgen05Runtime) else ()


FORM_RULES: tuple[Rule, ...] = (
    ("AMB-SF-FIGURES-K96", "K = 96 scale-factor layouts (figures missing)", lambda fm, rt: rt.k96),
    ("AMB-SF-LAYOUT-B-QUADRANT", "Layout B SFB in quadrant pairs", _layout_b),
    ("AMB-SFB-GROUP-STRIDE-LAYOUT-B", "Layout B SFB group stride",
     lambda fm, rt: _layout_b(fm, rt) and _multi_sf_groups(fm, rt)),
    ("AMB-SF-LAYOUT-B-N", "Layout B SF split for N other than 128/256",
     lambda fm, rt: _layout_b(fm, rt) and rt.n not in (128, 256)),
    ("AMB-A-TMEM-LAYOUT", "A in TMEM for Layout B", lambda fm, rt: _layout_b(fm, rt) and fm.a_tmem),
    ("AMB-SPARSE-META-TMEM", "sparsity metadata in TMEM: lane = row of A, one nibble per 4 K",
     lambda fm, rt: fm.sparse),
    ("AMB-FP4-NIBBLE-ORDER", "two E2M1 per smem byte, lower k in the low nibble",
     lambda fm, rt: fm.kind in ("mxf4", "mxf4nvf4")),
    ("AMB-SCALEVEC-DEFAULT-MXF8F6F4", "omitted .scale_vectorsize = 1X",
     lambda fm, rt: fm.kind == "mxf8f6f4" and fm.scale_vec is None),
    ("AMB-SCALEVEC-DEFAULT-MXF4", "omitted .scale_vectorsize = block32",
     lambda fm, rt: fm.kind == "mxf4" and fm.scale_vec is None),
    ("AMB-BLOCK32-ALIAS", ".block16/.block32 as the NX spellings",
     lambda fm, rt: fm.scale_vec in ("block16", "block32")),
    ("AMB-T53-32B-ATOM-SIZE", "128B swizzle with 32B atoms", lambda fm, rt: "128B_base32B" in _swizzles(rt)),
    ("AMB-SF-CP-2CTA", "tcgen05.cp.cta_group::2 fills each CTA from its own smem",
     lambda fm, rt: rt.sf_stage == "cp" and fm.cta_group == 2),
    ("AMB-CP-SOURCE-WALK", "tcgen05.cp source walk", lambda fm, rt: rt.sf_stage == "cp"),
    ("AMB-COLLECTOR-REUSE", "collector::a::use/lastuse reuse the filled A",
     lambda fm, rt: bool(set(fm.collectors) & {"use", "lastuse"})),
    ("AMB-PADDED-SMEM-PADDING", "padding of the 16-byte FP4/FP6 chunks ignored",
     lambda fm, rt: fm.kind == "mxf8f6f4" and _sub8(rt, "e2m1", "e2m3", "e3m2")),
)
"""Readings a form takes for granted (the host encoders and the VM read it this way)."""

PROBE_RULES: dict[str, tuple[str, ...]] = {
    "sf_quadrant": ("AMB-SF-QUADRANT",), "sf_addr_bits30_31": ("AMB-SF-ADDR-BITS3031",),
    "a_tmem_holder": ("AMB-FP4-HOLDER-BITS", "AMB-FP6-HOLDER-BITS"), "mn_major_sub8": ("AMB-PADDED-SMEM-TRANSPOSE",),
    "sparse_meta": ("AMB-SPARSE-META-TMEM", "AMB-SPARSE-SF-COUNT"), "layoutB_sfb": ("AMB-SF-LAYOUT-B-N",),
    "cp_decompress": ("AMB-CP-DECOMP", "AMB-FP4-HOLDER-BITS", "AMB-FP6-HOLDER-BITS"),
    "smem_base_offset": ("AMB-SDESC-BASEOFFSET",),
}
"""tcgen05 probe recipes -> the questions they observe."""

NOT_ASSUMED: tuple[str, ...] = (
    # linked through S9.7.16.10.5, but about Layouts C/E/G only: the block-scaled suite uses A, B and D
    "AMB-DATAPATH-LAYOUT-E",
)
"""Catalog links coarser than the question: no case of the suite assumes these entries."""


def form_readings(case: Case) -> tuple[tuple[str, str], ...]:
    """(register id, why) of every reading ``case`` takes for granted: its form's rules, then its probe's."""
    fm, rt = case.form, case.runtime
    out = [(amb, why) for amb, why, applies in FORM_RULES if applies(fm, rt)]
    recipe = case.parsed_recipe
    if recipe.kind == PROBE:
        out += [(amb, f"probe {recipe.name} observes it") for amb in PROBE_RULES.get(recipe.name, ())]
    return tuple(out)
