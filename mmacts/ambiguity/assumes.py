"""What a verdict assumes: the OPEN ambiguity-register entries a case's expected value depends on.

Derived by code, never written per case, from three sources:

1. the spec rows the case cites: a catalog row (``mmacts/spec/data/tables/*.yaml``) or section rule with an
   ``ambiguity:`` link names a catalog id (``A08``), which ``mmacts/spec/data/ambiguities.yaml`` maps to
   register entries (``register: [AMB-...]``);
2. the register itself: an entry whose ``decided_by`` names the case (a probe, or a case that decides the
   question) -- the case's expectation is one reading of that question;
3. the case's form and recipe, as the suite that owns the form reads them (its driver's ``form_readings``,
   e.g. ``suites/tcgen05_blockscale/readings.py``): readings the host encoders and the VM take for granted
   for that form (K = 96 scale layouts, FP6 holder bits, Layout B scale-factor quadrants, the FP4 nibble
   order, an omitted ``.scale_vectorsize``, a probe's question, ...), each stated with the register id that
   holds it; a random-data case also assumes its numeric model's accumulation reading (:data:`RANDOM_RULE`).

A suite may also name catalog links coarser than the question (its driver's ``readings_not_assumed``): those
entries are dropped whatever their source.

Only entries whose status is ``open`` are kept: a decided question is spec text plus evidence. A case with
nothing assumed rests on the spec text alone.
"""

from __future__ import annotations

import fnmatch
import re
from functools import cache
from pathlib import Path

import yaml

from mmacts.ambiguity.register import load_register
from mmacts.cases.model import Case
from mmacts.core.driver import Driver, as_driver
from mmacts.core.recipe import RANDOM
from mmacts.core.suites import load_driver
from mmacts.spec.catalog import load

SPEC_AMBIGUITIES = Path(__file__).resolve().parents[1] / "spec" / "data" / "ambiguities.yaml"


RANDOM_RULE = ("AMB-ACC-PRECISION", "AMB-ACC-BLOCKSIZE", "AMB-ACC-ROUNDING", "AMB-C-PLACEMENT")
"""Random-data cases compared with a numeric model assume its accumulation reading."""


def _suite_driver(suite: str) -> Driver | None:
    """The driver of a discovered suite, by name (the register floor imports no suite); ``None`` for a name
    that is not one (a test's stand-in case): such a case assumes nothing beyond its rows and recipe."""
    try:
        return as_driver(load_driver(suite))
    except KeyError:
        return None


@cache
def _register() -> tuple[dict[str, str], tuple[tuple[str, re.Pattern[str]], ...]]:
    """(status per id, one compiled matcher per entry's ``decided_by``: the ``observe.pattern_matches`` rule)."""
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
    driver = _suite_driver(case.suite)
    not_assumed: set[str] = set()
    if driver is not None:
        ids.update(amb for amb, _why in driver.form_readings(case))
        not_assumed.update(driver.readings_not_assumed(case))
    if case.parsed_recipe.kind == RANDOM:
        ids.update(RANDOM_RULE)
    if case.xfail:
        ids.add(case.xfail)
    return tuple(sorted(i for i in ids if is_open(i) and i not in not_assumed))


def hardware_fail_note(ids: tuple[str, ...] | list[str]) -> str:
    """The message prefix of a hardware ``fail`` of a case that assumes open readings."""
    return (f"assumes open reading(s) {', '.join(ids)}: recorded as evidence for the register "
            "(python -m mmacts.ambiguity.observe), not as a hardware defect")
