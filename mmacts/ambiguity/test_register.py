"""The register file: strict loading, the seed questions, and a lossless round trip."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from mmacts.ambiguity.register import (
    NO_DECIDER,
    REGISTER_PATH,
    RegisterError,
    dump_register,
    load_register,
    parse_register,
)

SPEC_TEXT = Path(__file__).resolve().parents[1] / "spec" / "data" / "spec_text"

# Every question issue 7 lists, by the id this register gives it.
SEED_IDS = {
    "AMB-ZCM-NZM", "AMB-ZCM-SPAN", "AMB-SDESC-53-60", "AMB-SF-FIGURES-K96", "AMB-SF-FIGURE-CAPTIONS",
    "AMB-UE8M0-FF", "AMB-UE4M3-SIGN", "AMB-E4M3-7F", "AMB-FP4FP6-NO-NAN", "AMB-SCALE-APPLICATION",
    "AMB-ACC-PRECISION", "AMB-BLOCK32-ALIAS", "AMB-SCALEVEC-DEFAULT-MXF8F6F4", "AMB-SCALEVEC-DEFAULT-MXF4",
    "AMB-MMASYNC-SCALEVEC-DEFAULT", "AMB-IDESC-RESERVED", "AMB-IDESC-M-FIELD", "AMB-T37-BLANK-THREADID",
    "AMB-T54-MERGED-CELLS", "AMB-FP6-HOLDER-BITS", "AMB-SF-QUADRANT", "AMB-SF-ADDR-BITS3031",
    "AMB-C-PLACEMENT", "AMB-SIGNED-ZERO", "AMB-RZ-OVERFLOW", "AMB-ACC-BLOCKSIZE",
}


def _raw() -> dict:
    return yaml.load(Loader=yaml.CSafeLoader, stream=REGISTER_PATH.read_text())


def test_packaged_register_loads_and_holds_the_seed_questions():
    reg = load_register()
    assert len(reg) >= 50
    assert SEED_IDS <= set(reg.ids())
    assert len(set(reg.ids())) == len(reg)


def test_observations_are_run_records_of_the_entry_deciders():
    # answers come only from record_observations: each names its run and a case the entry's
    # decided_by selects, and none comes from the model backend
    from mmacts.ambiguity.observe import pattern_matches

    for e in load_register().entries:
        for o in e.observations:
            assert o.run and o.case_id and o.backend != "model", e.id
            assert any(pattern_matches(p, o.case_id) for p in e.decided_by), (e.id, o.case_id)


def test_every_entry_has_readings_sources_and_a_decider():
    for e in load_register().entries:
        assert len(e.readings) >= 2, e.id
        assert e.decided_by or NO_DECIDER in e.notes, e.id  # nothing decides it yet, and the entry says so
        assert e.spec and all(p.text for p in e.spec), e.id


@pytest.mark.skipif(not SPEC_TEXT.is_dir(), reason="spec text copy not present")
def test_quoted_table_wording_occurs_in_the_cited_file():
    # independent check of the quotes: short distinctive fragments must be in the project's spec copy
    fragments = {
        "AMB-SDESC-53-60": "0xb00000000",
        "AMB-ZCM-SPAN": "Count of consecutive columns where 0s ar used",
        "AMB-SCALEVEC-DEFAULT-MXF8F6F4": "must be explicitly specified",
        "AMB-SF-QUADRANT": "duplicated to all 32 lane partitions",
        "AMB-T37-BLANK-THREADID": "Any other value results in an undefined behavior",
    }
    reg = load_register()
    for eid, frag in fragments.items():
        entry = reg.get(eid)
        assert frag in " ".join(p.text for p in entry.spec)
        files = {p.file for p in entry.spec}
        assert any(frag in (SPEC_TEXT / f).read_text() for f in files), (eid, frag)


def test_round_trip_is_lossless():
    reg = load_register()
    assert parse_register(yaml.load(Loader=yaml.CSafeLoader, stream=dump_register(reg))) == reg


@pytest.mark.parametrize(
    "mutate, words",
    [
        (lambda d: d["entries"].append(copy.deepcopy(d["entries"][0])), "duplicate register id"),
        (lambda d: d["entries"][0].update(colour="red"), "unknown field"),
        (lambda d: d["entries"][0].pop("readings"), "missing field"),
        (lambda d: d["entries"][0].update(status="maybe"), "status"),
        (lambda d: d["entries"][0]["spec"][0].update(refs=["Table45"]), "bad spec reference"),
        (lambda d: d["entries"][0].update(id="amb-lower"), "upper case"),
        (lambda d: d["entries"][0].update(readings=[{"id": "x", "means": "only one"}]), "two readings"),
        (lambda d: d["entries"][0]["observations"].append({"device": "H100"}), "missing field"),
        (lambda d: d.update(schema=9), "schema"),
        (lambda d: d["entries"][0]["spec"][0].update(file="nowhere.txt"), "spec.file"),
    ],
)
def test_malformed_register_is_refused_with_a_named_problem(tmp_path, mutate, words):
    data = _raw()
    mutate(data)
    p = tmp_path / "reg.yaml"
    p.write_text(yaml.dump(Dumper=yaml.CSafeDumper, data=data))
    with pytest.raises(RegisterError, match=words):
        load_register(p)


def test_unreadable_and_non_yaml_files(tmp_path):
    with pytest.raises(RegisterError, match="cannot read"):
        load_register(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema: 1\nentries:\n - id: [unclosed\n")
    with pytest.raises(RegisterError, match="not valid YAML at line"):
        load_register(bad)


# The spec catalog's A01-A18 and the other side lists are checked against the register in
# test_pointers.py (each names its register entries; the register's citations point back).


def test_a_loaded_register_is_reused_only_while_its_text_is_unchanged(tmp_path):
    """``load_register`` parses a file once per process (reports and every case's ``assumes`` ask
    for it), but an edited file, even one edited within the same clock tick, is read afresh."""
    path = tmp_path / "register.yaml"
    path.write_text(REGISTER_PATH.read_text())
    first = load_register(path)
    assert load_register(path) is first
    data = _raw()
    data["entries"][0]["title"] = "edited " + data["entries"][0]["title"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    edited = load_register(path)
    assert edited is not first and edited.entries[0].title.startswith("edited ")
