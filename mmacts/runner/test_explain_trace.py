"""``mmacts explain CASE --trace``: the case runs on the PTX VM and the chosen threads' instructions
are printed with their register values, capped, followed by the VM's verdict."""

from __future__ import annotations

from mmacts.runner.cli import main

CASE = "mxf4.2X.cg1.dense.M128N64.e2m1xe2m1.ue8m0.sfa0sfb0.st"


def test_trace_prints_threads_values_and_verdict(capsys) -> None:
    assert main(["explain", CASE, "--trace", "--threads", "0:0,0:33", "--max-lines", "60"]) == 0
    out = capsys.readouterr().out
    assert "===== PTX VM trace (CTA:thread 0:0, 0:33)" in out
    assert "[CTA 0 t  0] L" in out and "[CTA 0 t 33] L" in out
    assert "%r0=0x00000021" in out  # thread 33 read its %tid.x
    assert "trace cut at 60 lines" in out
    assert "status: pass" in out


def test_trace_refuses_bad_thread_spec(capsys) -> None:
    assert main(["explain", CASE, "--trace", "--threads", "x:y"]) == 2
    assert "--threads" in capsys.readouterr().err
