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


def test_a_ptxas_crash_is_said_and_never_cached(tmp_path, monkeypatch) -> None:
    """ptxas 13.5.37 segfaults on some runs of a valid fuzz kernel (validation/fuzz/ptxas-crash): the
    result must say 'crashed', not pass as a refusal, and must not be cached (plant: a fake ptxas that
    kills itself with SIGSEGV)."""
    import sys

    import mmacts.toolchain.assemble  # noqa: F401 -- the module (the package exports a function of that name)
    from mmacts.toolchain.cache import DiskCache

    A = sys.modules["mmacts.toolchain.assemble"]
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\nkill -SEGV $$\n")
    fake.chmod(0o755)
    monkeypatch.setattr(A, "find_tool", lambda name: fake)
    monkeypatch.setattr(A, "ptxas_version", lambda: "fake")
    cache = DiskCache("compile-test-crash", root=tmp_path / "cache")
    r = A.assemble(".version 8.4\n", "sm_90a", cache=cache)
    assert not r.ok and "crashed (signal 11)" in r.first_error_line
    assert not A.assemble(".version 8.4\n", "sm_90a", cache=cache).cached
