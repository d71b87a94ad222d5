"""What the register cites must exist: case globs match cases, spec refs name real rows/sections,
quotes occur in the cited text.

Why: ``decided_by`` is how run results become observations (``observe.record_observations``); a
glob that matches no case id silently collects nothing, and a stale spec reference sends a reader
to the wrong table. That probe names (``probes.<name>``) exist is checked by test_pointers.py.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from mmacts.ambiguity.observe import pattern_matches
from mmacts.ambiguity.register import SPEC_FILES, load_register

SPEC_TEXT = Path(__file__).resolve().parents[1] / "spec" / "data" / "spec_text"
PTX_FILES = SPEC_FILES[:5]
MAX_GLOB_MATCHES = 600
"""A decider of a new entry should name a handful of deciding cases, not a suite: every match becomes
one observation per run. Entries older than this rule are listed in ``_BROAD_LEGACY``."""
_BROAD_LEGACY = {"AMB-SCALEVEC-TARGETS", "AMB-FP4-HOLDER-BITS", "AMB-MMASYNC-SF-UNSELECTED",
                 "AMB-TYPE-LIST-COMMAS"}


@functools.cache
def _case_ids() -> tuple[str, ...]:
    from mmacts.core.suites import load_driver, suite_names

    return tuple(c.case_id for s in suite_names() for c in load_driver(s).cases("full"))


def test_every_case_glob_matches_a_case_and_probe_names_are_well_formed():
    ids = _case_ids()
    assert len(ids) > 1000
    dead, broad = [], []
    for e in load_register().entries:
        for p in e.decided_by:
            if p.startswith("probes.") and not any(ch in p for ch in "*?["):
                assert re.fullmatch(r"probes\.[a-z0-9_]+(\.[A-Za-z0-9_.]+)?", p), (e.id, p)
                continue
            n = sum(pattern_matches(p, i) for i in ids)
            if n == 0:
                dead.append((e.id, p))
            elif n > MAX_GLOB_MATCHES and e.id not in _BROAD_LEGACY:
                broad.append((e.id, p, n))
    assert not dead, f"decided_by globs that match no case at level full: {dead}"
    assert not broad, f"decided_by globs that match a whole suite: {broad}"


def test_existing_probe_names_are_recognised():
    # a probe the suite has is named by its prefix: pattern_matches must select its cases
    ids = _case_ids()
    assert any(pattern_matches("probes.signed_zero", i) for i in ids)
    assert not any(pattern_matches("probes.signed_zer", i) for i in ids)


def test_table_refs_name_catalog_rows():
    from mmacts.spec import catalog

    cat = catalog.load()
    bad = [(e.id, r) for e in load_register().entries for r in e.spec_refs
           if r.startswith("T") and not cat.has_ref(r)]
    assert not bad, bad


@pytest.mark.skipif(not SPEC_TEXT.is_dir(), reason="spec text copy not present")
def test_section_refs_are_sections_of_the_cited_ptx_file():
    bad = []
    for e in load_register().entries:
        for place in e.spec:
            if place.file not in PTX_FILES:
                continue
            text = (SPEC_TEXT / place.file).read_text(encoding="utf-8")
            for r in place.refs:
                if r.startswith("S") and not re.search(re.escape(r[1:]) + r"[. ]", text):
                    bad.append((e.id, place.file, r))
    assert not bad, bad


# Distinctive fragments of the quotes of entries added with the helper reports; each must be in
# the entry's quote AND in the cited spec file (independent of how the entry was written).
QUOTES = {
    "AMB-BLOCKSCALE-ASHIFT": "Qualifier `.ashift` is only allowed",
    "AMB-CP-DECOMP": "followed by 4 bytes of padding",
    "AMB-SPARSE-META-TMEM": "is assumed to be 0",
    "AMB-K96-SHAPES": "K = 96 is only supported for target architecture `sm_103a`",
    "AMB-COLLECTOR-REUSE": "This requires a previous fill to the collector buffer to be still valid",
    "AMB-CP-MMA-ORDERING": "`tcgen05.copy.cta_group::N` -> `tcgen05.mma.cta_group::N` (same N)",
    "AMB-FIG189-NOT-INJECTIVE": "Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))",
    "AMB-ABSOLUTE-LBO-CHUNKS": "The leading dimension absolute address can point to the second data chunk",
    "AMB-FP4-NIBBLE-ORDER": "pack two 4-bit elements in a 8-bit container, with no padding",
    "AMB-DATAPATH-LAYOUT-E": "| 64 | ::1 | Either | Yes | 2x3 |",
    "AMB-MMASYNC-SFA-ROW-MAP": "One thread-pair within the quad determined by thread-id-a, contributes the SF_A",
    "AMB-COLLECTOR-TYPO": "collector::b2:use",
    "AMB-EXAMPLE-NO-BLOCKSCALE": "tcgen05.mma.sp.cta_group::1.kind::mxf8f6f4.collector::a:fill",
}


@pytest.mark.skipif(not SPEC_TEXT.is_dir(), reason="spec text copy not present")
@pytest.mark.parametrize("eid", sorted(QUOTES))
def test_new_entry_quotes_occur_in_the_cited_file(eid):
    entry = load_register().get(eid)
    frag = QUOTES[eid]
    assert frag in " ".join(p.text for p in entry.spec), eid
    files = {p.file for p in entry.spec if p.file in PTX_FILES}
    assert any(frag in " ".join((SPEC_TEXT / f).read_text(encoding="utf-8").split()) for f in files), eid
