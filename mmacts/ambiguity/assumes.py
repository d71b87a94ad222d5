"""What a verdict assumes: the OPEN ambiguity-register entries a case's expected value depends on.

Derived by code, never written per case, from three sources:

1. the spec rows the case cites: a catalog row (``mmacts/spec/data/tables/*.yaml``) or section rule with an
   ``ambiguity:`` link names a catalog id (``A08``), which ``mmacts/spec/data/ambiguities.yaml`` maps to
   register entries (``register: [AMB-...]``);
2. the register itself: an entry whose ``decided_by`` names the case (a probe, or a case that decides the
   question) -- the case's expectation is one reading of that question;
3. the case's form and recipe (:data:`FORM_RULES`): readings the host encoders and the VM take for granted
   for that form (K = 96 scale layouts, FP6 holder bits, Layout B scale-factor quadrants, the FP4 nibble
   order, an omitted ``.scale_vectorsize``, ...), each stated with the register id that holds it.

Only entries whose status is ``open`` are kept: a decided question is spec text plus evidence. A case with
nothing assumed rests on the spec text alone.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from mmacts.cases.model import Case

SPEC_AMBIGUITIES = Path(__file__).resolve().parents[1] / "spec" / "data" / "ambiguities.yaml"


def _rt(c: Case, key: str, default: Any = None) -> Any:
    return c.runtime.get(key, default)


def _tc(c: Case) -> bool:
    return c.suite == "tcgen05_blockscale"


def _exactish(c: Case) -> bool:
    return c.recipe in ("exact",) or c.recipe.startswith("control:")


def _layout_b(c: Case) -> bool:
    return _tc(c) and c.form.get("cta_group") == 2 and _rt(c, "m") == 128


def _sub8(c: Case, *types: str) -> bool:
    return bool({_rt(c, "atype") or c.form.get("atype"), _rt(c, "btype") or c.form.get("btype")} & set(types))


def _multi_sf_groups(c: Case) -> bool:
    return bool(_rt(c, "k96")) or len(c.form.get("collectors", (None,))) > 1


FORM_RULES: tuple[tuple[str, str, Callable[[Case], bool]], ...] = (
    # (register id, why, applies-to)
    ("AMB-SF-FIGURES-K96", "K = 96 scale-factor layouts (figures missing)", lambda c: _tc(c) and bool(_rt(c, "k96"))),
    ("AMB-SF-LAYOUT-B-QUADRANT", "Layout B SFB in quadrant pairs", _layout_b),
    ("AMB-SFB-GROUP-STRIDE-LAYOUT-B", "Layout B SFB group stride", lambda c: _layout_b(c) and _multi_sf_groups(c)),
    ("AMB-SF-LAYOUT-B-N", "Layout B SF split for N other than 128/256",
     lambda c: _layout_b(c) and _rt(c, "n") not in (128, 256)),
    ("AMB-A-TMEM-LAYOUT", "A in TMEM for Layout B", lambda c: _layout_b(c) and bool(c.form.get("a_tmem"))),
    ("AMB-SPARSE-META-TMEM", "sparsity metadata in TMEM: lane = row of A, one nibble per 4 K",
     lambda c: _tc(c) and bool(c.form.get("sparse"))),
    ("AMB-FP4-NIBBLE-ORDER", "two E2M1 per smem byte, lower k in the low nibble",
     lambda c: _tc(c) and c.form.get("kind") in ("mxf4", "mxf4nvf4")),
    ("AMB-SCALEVEC-DEFAULT-MXF8F6F4", "omitted .scale_vectorsize = 1X",
     lambda c: _tc(c) and c.form.get("kind") == "mxf8f6f4" and c.form.get("scale_vec") is None),
    ("AMB-SCALEVEC-DEFAULT-MXF4", "omitted .scale_vectorsize = block32",
     lambda c: _tc(c) and c.form.get("kind") == "mxf4" and c.form.get("scale_vec") is None),
    ("AMB-BLOCK32-ALIAS", ".block16/.block32 as the NX spellings",
     lambda c: _tc(c) and c.form.get("scale_vec") in ("block16", "block32")),
    ("AMB-T53-32B-ATOM-SIZE", "128B swizzle with 32B atoms",
     lambda c: _tc(c) and "128B_base32B" in (_rt(c, "swizzle_a"), _rt(c, "swizzle_b"))),
    ("AMB-SF-CP-2CTA", "tcgen05.cp.cta_group::2 fills each CTA from its own smem",
     lambda c: _tc(c) and _rt(c, "sf_stage") == "cp" and c.form.get("cta_group") == 2),
    ("AMB-CP-SOURCE-WALK", "tcgen05.cp source walk", lambda c: _tc(c) and _rt(c, "sf_stage") == "cp"),
    ("AMB-COLLECTOR-REUSE", "collector::a::use/lastuse reuse the filled A",
     lambda c: _tc(c) and bool(set(c.form.get("collectors", (None,))) & {"use", "lastuse"})),
    ("AMB-PADDED-SMEM-PADDING", "padding of the 16-byte FP4/FP6 chunks ignored",
     lambda c: _tc(c) and c.form.get("kind") == "mxf8f6f4" and _sub8(c, "e2m1", "e2m3", "e3m2")),
    ("AMB-MMASYNC-FP6-CONTAINER", "FP6 in its mma.sync 8-bit slot at bits [5:0]",
     lambda c: c.suite == "mma_sync_blockscale" and c.form.get("kind") == "mxf8f6f4" and _sub8(c, "e2m3", "e3m2")),
    ("AMB-FP4-HOLDER-BITS", "E2M1 in its 8-bit mma.sync slot at bits [5:2]",
     lambda c: c.suite == "mma_sync_blockscale" and c.form.get("kind") == "mxf8f6f4" and _sub8(c, "e2m1")),
    ("AMB-MMASYNC-SFA-ROW-MAP", "which lane of the selected pair carries which SF_A row",
     lambda c: c.suite == "mma_sync_blockscale"),
    ("AMB-MMASYNC-SF-UNSELECTED", "unselected SF lanes/bytes contribute nothing",
     lambda c: c.suite == "mma_sync_blockscale"),
)
"""Readings a form takes for granted, beyond what its cited rows link (see the module docstring)."""

PROBE_RULES: dict[str, tuple[str, ...]] = {
    "sf_quadrant": ("AMB-SF-QUADRANT",), "sf_addr_bits30_31": ("AMB-SF-ADDR-BITS3031",),
    "a_tmem_holder": ("AMB-FP4-HOLDER-BITS", "AMB-FP6-HOLDER-BITS"), "mn_major_sub8": ("AMB-PADDED-SMEM-TRANSPOSE",),
    "sparse_meta": ("AMB-SPARSE-META-TMEM", "AMB-SPARSE-SF-COUNT"), "layoutB_sfb": ("AMB-SF-LAYOUT-B-N",),
    "cp_decompress": ("AMB-CP-DECOMP", "AMB-FP4-HOLDER-BITS", "AMB-FP6-HOLDER-BITS"),
    "smem_base_offset": ("AMB-SDESC-BASEOFFSET",),
}
"""tcgen05 probe recipes -> the questions they observe."""
RANDOM_RULE = ("AMB-ACC-PRECISION", "AMB-ACC-BLOCKSIZE", "AMB-ACC-ROUNDING", "AMB-C-PLACEMENT")
"""Random-data cases compared with a numeric model assume its accumulation reading."""


NOT_FOR: dict[str, Callable[[Case], bool]] = {
    # linked through S9.7.16.10.5, but about Layouts C/E/G only: the block-scaled suite uses A, B and D
    "AMB-DATAPATH-LAYOUT-E": lambda c: c.suite == "tcgen05_blockscale",
}
"""Catalog links that are coarser than the question: the entry is not assumed by these cases."""


@cache
def _register() -> tuple[dict[str, str], tuple[tuple[str, re.Pattern[str]], ...]]:
    """(status per id, one compiled matcher per entry's ``decided_by``: the ``observe.pattern_matches`` rule)."""
    from mmacts.ambiguity.register import load_register

    reg = load_register()
    status = {e.id: e.status for e in reg.entries}
    decided = []
    for e in reg.entries:
        if e.decided_by:
            alts = [f"(?:{re.escape(p)}(?:\\..*)?)\\Z" for p in e.decided_by]
            alts += [fnmatch.translate(p) for p in e.decided_by]
            decided.append((e.id, re.compile("|".join(alts), re.S)))
    return status, tuple(decided)


@cache
def _catalog_links() -> dict[str, tuple[str, ...]]:
    """spec ref -> register ids, through the catalog's ``ambiguity:`` links."""
    from mmacts.spec.catalog import load

    amap: dict[str, tuple[str, ...]] = {}
    data = yaml.safe_load(SPEC_AMBIGUITIES.read_text(encoding="utf-8"))
    for a in data.get("ambiguities", []):
        amap[a["id"]] = tuple(a.get("register") or ())
    cat = load()
    out: dict[str, set[str]] = {}
    for row in cat.rows(include_variants=True):
        if row.ambiguity:
            out.setdefault(row.ref, set()).update(amap.get(row.ambiguity, ()))
    for rule in cat.section_rules():
        if rule.ambiguity:
            out.setdefault(rule.ref, set()).update(amap.get(rule.ambiguity, ()))
    return {k: tuple(sorted(v)) for k, v in out.items()}


def is_open(amb_id: str) -> bool:
    return _register()[0].get(amb_id) == "open"


def assumes(case: Case) -> tuple[str, ...]:
    """Sorted open register ids ``case``'s expected value depends on (empty: the spec text alone)."""
    ids: set[str] = set()
    links = _catalog_links()
    for ref in case.spec_rows:
        ids.update(links.get(ref, ()))
    for amb, matcher in _register()[1]:
        if matcher.match(case.case_id):
            ids.add(amb)
    for amb, _why, applies in FORM_RULES:
        if applies(case):
            ids.add(amb)
    kind, _, name = case.recipe.partition(":")
    if kind == "probe":
        ids.update(PROBE_RULES.get(name, ()))
    elif kind == "random":
        ids.update(RANDOM_RULE)
    if case.xfail:
        ids.add(case.xfail)
    return tuple(sorted(i for i in ids if is_open(i) and not (i in NOT_FOR and NOT_FOR[i](case))))


def hardware_fail_note(ids: tuple[str, ...] | list[str]) -> str:
    """The message prefix of a hardware ``fail`` of a case that assumes open readings."""
    return (f"assumes open reading(s) {', '.join(ids)}: recorded as evidence for the register "
            "(python -m mmacts.ambiguity.observe), not as a hardware defect")
