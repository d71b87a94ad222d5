"""Pins: how a ptxas outcome becomes pass / fail / xfail, with both readings on a disagreement."""

from __future__ import annotations

from mmacts.cases.model import Case
from mmacts.ptx.compile_forms import build_module
from mmacts.toolchain.conformance import check_compile_case, error_lines, under_test_lines

GOOD = {"op": "tcgen05.cp", "cta_group": 1, "shape": "128x256b", "multicast": None, "src_fmt": None}
BAD = dict(GOOD, shape="64x128b")  # needs a .warpx2 multicast


def _case(form, expect, xfail="", arch="sm_100a"):
    return Case(case_id=f"t/{expect}", suite="compile", instruction="x", arch=arch,
                spec_rows=("S9.7.16.9.2",), form=form, expect=expect, xfail=xfail)


def test_accept_and_reject_agreeing_with_ptxas_pass():
    ok = check_compile_case(_case(GOOD, "accept"), build_module(GOOD, "sm_100a"))
    assert ok["status"] == "pass" and "UTCCP" in ok["sass_opcodes"] and ok["ptxas_version"]
    bad = check_compile_case(_case(BAD, "reject"), build_module(BAD, "sm_100a"))
    assert bad["status"] == "pass" and "error" in bad["message"]


def test_disagreement_fails_with_both_readings_or_xfails_with_the_register_entry():
    r = check_compile_case(_case(GOOD, "reject"), build_module(GOOD, "sm_100a"))
    assert r["status"] == "fail" and "spec: reject" in r["message"] and "accepted" in r["message"]
    r = check_compile_case(_case(BAD, "accept"), build_module(BAD, "sm_100a"))
    assert r["status"] == "fail" and "spec: accept" in r["message"] and "refused" in r["message"]
    r = check_compile_case(_case(BAD, "accept", xfail="C99"), build_module(BAD, "sm_100a"))
    assert r["status"] == "xfail" and r["message"].startswith("[C99]")


def test_refusal_elsewhere_than_the_instruction_under_test_is_a_fail():
    ptx = build_module(BAD, "sm_100a").replace("ld.global.b32 %r1,", "ld.global.bogus %r1,")
    r = check_compile_case(_case(BAD, "reject"), ptx)
    assert r["status"] == "fail" and "not at the instruction under test" in r["message"]


def test_wrong_sass_family_is_caught():
    form = dict(GOOD, sass_mma_family="UTCQMMA")  # a copy emits no MMA at all
    r = check_compile_case(_case(form, "accept"), build_module(GOOD, "sm_100a"))
    assert r["status"] == "fail" and "UTCQMMA" in r["message"]


def test_line_helpers():
    ptx = "a\n// mmacts:under-test\nb\n"
    assert under_test_lines(ptx) == {3}
    assert error_lines("ptxas <ptx>, line 3; error : x\nptxas fatal : y") == {3}
