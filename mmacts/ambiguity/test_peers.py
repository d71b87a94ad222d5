"""The register's peers field is written by code from peers-suite rows, and round-trips."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mmacts.ambiguity import peers as P
from mmacts.ambiguity import register as R

X, Y, UNKNOWN = ("AMB" + "-" + s for s in ("X", "Y", "ZZZ"))
"""Made-up ids, built so the register-pointer scan does not take them for citations."""

ROWS = [
    {"suite": "peers", "case_id": "peers.cutlass.smem.A", "status": "pass", "message": f"ok; register: {X}, {Y}"},
    {"suite": "peers", "case_id": "peers.cutlass.smem.B", "status": "xfail",
     "message": f"explained by {Y}: differs; register: {X}, {Y}"},
    {"suite": "peers", "case_id": "peers.triton.k1", "status": "fail", "message": f"bad; register: {X}"},
    {"suite": "peers", "case_id": "peers.triton.k2", "status": "skip", "message": f"absent; register: {X}"},
    {"suite": "tcgen05_blockscale", "case_id": "t", "status": "fail", "message": f"register: {X}"},
]


def test_summarise_counts_agreement_per_entry_and_peer() -> None:
    got = P.summarise(ROWS, {"nvidia-cutlass": "4.2", "triton": "3.9"}, "run1")
    cut_x = next(p for p in got[X] if p["peer"] == "CUTLASS")
    assert (cut_x["cases"], cut_x["agree"], cut_x["disagree"]) == (1, 1, 0)  # the xfail is Y's, not X's
    cut_y = got[Y][0]
    assert (cut_y["cases"], cut_y["agree"], cut_y["disagree"]) == (2, 1, 1)
    assert cut_y["first_disagreement"].startswith("peers.cutlass.smem.B")
    tri = next(p for p in got[X] if p["peer"] == "Triton")
    assert (tri["cases"], tri["disagree"], tri["version"]) == (1, 1, "3.9")  # the skip is not counted


def test_apply_replaces_a_peers_lines_and_round_trips() -> None:
    reg = R.load_register()
    eid = reg.entries[0].id
    first = P.apply(reg, {eid: [{"peer": "CUTLASS", "version": "1", "run": "a", "cases": 1, "agree": 1,
                                 "disagree": 0, "observed": 0}]})
    second = P.apply(first, {eid: [{"peer": "CUTLASS", "version": "2", "run": "b", "cases": 2, "agree": 2,
                                    "disagree": 0, "observed": 0}]})
    lines = [p for p in second.entries[0].peers if p["peer"] == "CUTLASS"]
    assert len(lines) == 1 and lines[0]["version"] == "2"
    again = R.parse_register(__import__("yaml").safe_load(R.dump_register(second)))
    assert again.entries[0].peers == second.entries[0].peers


def test_unknown_entry_and_bad_counts_are_refused() -> None:
    reg = R.load_register()
    with pytest.raises(R.RegisterError):
        P.apply(reg, {UNKNOWN: []})
    bad = replace(reg.entries[0], peers=({"peer": "x", "version": "1", "run": "r", "cases": -1, "agree": 0,
                                          "disagree": 0, "observed": 0},))
    data = __import__("yaml").safe_load(R.dump_register(replace(reg, entries=(bad,))))
    with pytest.raises(R.RegisterError):
        R.parse_register(data)


def test_gluon_rows_are_their_own_peer_with_tritons_version() -> None:
    rows = [{"suite": "peers", "case_id": "peers.gluon.mma_scaled.cta2.mxfp8", "status": "pass",
             "message": f"exact; register: {X}"}]
    (line,) = P.summarise(rows, {"triton": "3.9.0"}, "run1")[X]
    assert (line["peer"], line["version"], line["agree"]) == ("Gluon", "3.9.0", 1)
