"""There is ONE ambiguity register: every other list of open questions only points into it.

Why: the project grew side lists (the spec catalog's A01-A18, reference/tcgen05/AMBIGUITIES.md,
reference.formats.OPEN_QUESTIONS, ids in comments). A pointer to an entry that does not exist, or
a side-list item with no entry, loses the question's evidence; these tests make both fail.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from mmacts.ambiguity.register import REGISTER_PATH, load_register

REPO = Path(__file__).resolve().parents[2]
AMB_ID = re.compile(r"\bAMB-[A-Z0-9]+(?:-[A-Z0-9]+)*\b")
SKIP_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
CATALOG_LIST = REPO / "mmacts" / "spec" / "data" / "ambiguities.yaml"
TCGEN05_LIST = REPO / "reference" / "tcgen05" / "AMBIGUITIES.md"

# reference.formats keeps its own OPEN_QUESTIONS (what its decoder chooses); each must be a
# register question too. A new FMT-* question fails until it is mapped here and entered there.
FORMATS_QUESTIONS = {
    "FMT-UE4M3-SIGN": "AMB-UE4M3-SIGN", "FMT-UE4M3-7F": "AMB-UE4M3-SIGN", "FMT-UE4M3-ZERO": "AMB-UE4M3-ZERO",
    "FMT-UE8M0-FF": "AMB-UE8M0-FF", "FMT-UE8M0-00": "AMB-UE8M0-FF", "FMT-E4M3-NAN": "AMB-E4M3-7F",
    "FMT-FP6-FP4-SPECIALS": "AMB-FP4FP6-NO-NAN", "FMT-NEG-ZERO": "AMB-SIGNED-ZERO",
}


def _ids() -> set[str]:
    return set(load_register().ids())


def _text_files() -> list[Path]:
    out = []
    for suffix in ("*.py", "*.md", "*.yaml", "*.yml"):
        for p in REPO.rglob(suffix):
            rel = p.relative_to(REPO).parts
            if not any(part in SKIP_DIRS or part.startswith(".") for part in rel[:-1]):
                out.append(p)
    return out


def test_the_id_pattern_finds_ids_and_skips_the_bare_prefix():
    # guard for the scan below: a real id is found whole, the loader's prefix constant is not an id
    sample = 'see AMB-SF-ADDR-BITS3031, and _ID_PREFIX = "AMB-" here'
    assert AMB_ID.findall(sample) == ["AMB-SF-ADDR-BITS3031"]


def test_every_register_id_mentioned_in_the_repo_exists():
    ids = _ids()
    missing: dict[str, list[str]] = {}
    files = _text_files()
    assert any(p == REGISTER_PATH for p in files)  # the scan covers the package itself
    for p in files:
        for found in set(AMB_ID.findall(p.read_text(encoding="utf-8", errors="replace"))):
            if found not in ids:
                missing.setdefault(found, []).append(str(p.relative_to(REPO)))
    assert not missing, f"ids cited but not in the register: {missing}"


def _md_rows() -> list[tuple[str, list[str]]]:
    rows = []
    for line in TCGEN05_LIST.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 2 and re.fullmatch(r"[A-Z]+-\d+", cells[0]):
            rows.append((cells[0], AMB_ID.findall(cells[1])))
    return rows


def test_tcgen05_ambiguities_md_is_a_pointer_list_into_the_register():
    rows = _md_rows()
    assert len(rows) >= 26  # the 26 inferences of the encoder author
    local = [r[0] for r in rows]
    assert len(local) == len(set(local)), "a local id is listed twice"
    ids = _ids()
    for lid, targets in rows:
        assert targets, f"{lid} names no register entry"
        assert set(targets) <= ids, (lid, sorted(set(targets) - ids))


def test_register_sources_citing_ambiguities_md_name_listed_local_ids():
    # the reverse direction: a register source "AMBIGUITIES.md SF-3" must find SF-3 in the file,
    # and SF-3 must point back at that entry
    rows = dict(_md_rows())
    cited = 0
    for e in load_register().entries:
        for s in e.sources:
            for lid in re.findall(r"AMBIGUITIES\.md ((?:[A-Z]+-\d+)(?:, [A-Z]+-\d+)*)", s.where):
                for one in lid.split(", "):
                    cited += 1
                    assert one in rows, (e.id, one)
                    assert e.id in rows[one], f"{one} in AMBIGUITIES.md does not point back at {e.id}"
    assert cited >= 10


def _catalog_items() -> list[dict]:
    return yaml.load(CATALOG_LIST.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)["ambiguities"]


def test_spec_catalog_items_name_existing_register_entries():
    ids = _ids()
    items = _catalog_items()
    assert [a["id"] for a in items] == [f"A{i:02d}" for i in range(1, len(items) + 1)]
    for a in items:
        reg = a.get("register")
        assert isinstance(reg, list) and reg, f"{a['id']} has no register: list"
        assert set(reg) <= ids, (a["id"], sorted(set(reg) - ids))


def test_register_entries_citing_a_catalog_item_are_named_by_it():
    # an entry whose source is "mmacts/spec/data/ambiguities.yaml A03" must be in A03's register list
    named = {a["id"]: set(a["register"]) for a in _catalog_items()}
    cited = 0
    for e in load_register().entries:
        for s in e.sources:
            for aid in re.findall(r"ambiguities\.yaml (A\d\d)", s.where):
                cited += 1
                assert e.id in named[aid], f"{aid} does not name {e.id}"
    assert cited >= 8


def test_spec_catalog_loader_still_reads_the_list_with_the_register_field():
    from mmacts.spec import catalog

    cat = catalog.load()
    assert len(cat.ambiguities()) == len(_catalog_items())


def test_reference_formats_open_questions_are_register_questions():
    formats = pytest.importorskip("reference.formats")
    ids = _ids()
    asked = {q.id for q in formats.OPEN_QUESTIONS}
    assert asked <= set(FORMATS_QUESTIONS), f"map these to register entries: {sorted(asked - set(FORMATS_QUESTIONS))}"
    assert set(FORMATS_QUESTIONS.values()) <= ids


# ------------------------------------------------------------------------------------- decided_by
def _full_case_ids() -> tuple[str, ...]:
    from mmacts.core.suites import load_driver, suite_names

    return tuple(c.case_id for s in suite_names() for c in load_driver(s).cases("full"))


def _probe_names() -> set[str]:
    from suites.probes.blockscale_probes import BS_PROBES
    from suites.probes.catalog import PROBES

    return {p.name for p in PROBES} | {p.name for p in BS_PROBES}


def test_every_decided_by_name_resolves_at_level_full():
    """A decider names cases that exist: a ``probes.<name>`` a probe of suites/probes (catalog.py,
    blockscale_probes.py) with cases, anything else a glob over the case ids of every suite at level
    full. A planned probe is not a decider: an entry nothing decides yet says so in its notes."""
    from mmacts.ambiguity.observe import pattern_matches
    from mmacts.ambiguity.register import NO_DECIDER

    ids = _full_case_ids()
    probes = _probe_names()
    dead = []
    for e in load_register().entries:
        if not e.decided_by:
            assert NO_DECIDER in e.notes, f"{e.id}: empty decided_by, notes must say {NO_DECIDER!r}"
        for name in e.decided_by:
            m = re.fullmatch(r"probes\.([a-z0-9_]+)", name)
            if m and m.group(1) not in probes:
                dead.append((e.id, name, "no such probe"))
            elif not any(pattern_matches(name, i) for i in ids):
                dead.append((e.id, name, "matches no case at level full"))
    assert not dead, dead


def test_the_resolution_rule_catches_a_planned_probe_name():
    from mmacts.ambiguity.observe import pattern_matches

    ids = _full_case_ids()
    assert "neab" in _probe_names() and any(pattern_matches("probes.neab", i) for i in ids)
    assert not any(pattern_matches("probes.tc05_sf_quadrant", i) for i in ids)  # once named, never built
