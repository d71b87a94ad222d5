"""Pins: ptxas verdicts and first-error extraction with stable (path-free) messages."""

from __future__ import annotations

from mmacts.toolchain.assemble import assemble, first_error, normalise_log
from mmacts.toolchain.test_cache import PTX


def test_refusal_message_is_path_free_and_names_the_line():
    r = assemble(PTX.replace("add.u32", "add.bogus"), "sm_90a")
    assert not r.ok and r.cubin == b""
    assert "/tmp" not in r.first_error_line and "<ptx>" in r.first_error_line
    assert "line 11" in r.first_error_line  # the add is on line 11 of PTX


def test_target_mismatch_is_refused():
    r = assemble(PTX, "sm_100a")  # .target sm_90a cannot be compiled for sm_100a
    assert not r.ok and "sm_90a" in r.first_error_line


def test_first_error_prefers_error_lines_over_fatal():
    log = "ptxas <ptx>, line 3; warning : w\nptxas <ptx>, line 5; error : E\nptxas fatal : aborted"
    assert first_error(log) == "ptxas <ptx>, line 5; error : E"
    assert first_error("ptxas fatal : only") == "ptxas fatal : only"
    assert normalise_log("ptxas /tmp/x/a.ptx, line 2; error   : boom") == "ptxas <ptx>, line 2; error : boom"
