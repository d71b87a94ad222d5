"""The console tells the truth: model runs of hardware suites are named loudly, observed is never a
pass, --require-gpu refuses a run without a GPU, and progress is counted per suite with an ETA."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from mmacts.core.records import empty_record
from mmacts.report.frame import to_frame
from mmacts.runner import cli, console


def _df(rows: list[tuple[str, str, str]]):  # noqa: ANN202
    return to_frame([empty_record(case_id=f"c{i}", suite=s, backend=b, status=st) for i, (s, b, st) in enumerate(rows)])


def test_summary_never_counts_observed_as_pass() -> None:
    df = _df([("probes", "model", "observed"), ("probes", "model", "observed"),
              ("tcgen05_blockscale", "model", "pass"), ("compile", "compile", "pass")])
    lines = console.summary_lines(df)
    assert lines[-1] == ("total 4 cases: 2 pass, 2 observed (observed cases are recorded answers, not passes)")
    assert "probes on model (MODEL: not a hardware verdict): 2 observed" in lines
    assert "compile on compile: 1 pass" in lines
    assert not any("passed" in x for x in lines)


def test_model_is_said_loudly_without_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    from mmacts.backends import gpu

    monkeypatch.setenv("MMACTS_NO_GPU", "1")
    gpu.probe.cache_clear()
    try:
        on_model, why = console.gpu_plan(["compile", "tcgen05_blockscale", "probes"], "auto")
    finally:
        gpu.probe.cache_clear()
    assert on_model == ["tcgen05_blockscale", "probes"] and "no usable GPU" in why
    assert "MODEL BACKEND: not a hardware verdict" in console.model_banner(on_model, why)
    assert console.gpu_plan(["compile"], "auto") == ([], None)
    assert console.gpu_plan(["probes"], "cuda") == ([], None)


def test_require_gpu_refuses_to_start(capsys: pytest.CaptureFixture, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from mmacts.backends import gpu

    monkeypatch.setenv("MMACTS_NO_GPU", "1")
    gpu.probe.cache_clear()
    try:
        rc = cli.main(["run", "--suite", "probes", "--level", "smoke", "--require-gpu", "--out", str(tmp_path)])
    finally:
        gpu.probe.cache_clear()
    err = capsys.readouterr().err
    assert rc == 2 and "--require-gpu: probes cannot run on a GPU here" in err and len(err.splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_require_gpu_counts_cases_not_on_a_gpu() -> None:
    df = _df([("probes", "cuda", "observed"), ("probes", "model", "observed"), ("tcgen05_blockscale", "cuda", "skip"),
              ("tcgen05_blockscale", "cuda", "not-supported"), ("compile", "compile", "pass")])
    n, where = console.not_on_gpu(df, ["probes", "tcgen05_blockscale"])
    assert n == 3 and where == {"probes": 1, "tcgen05_blockscale": 2}


def test_progress_per_suite_with_eta(tmp_path: Path) -> None:
    jsonl = tmp_path / "results.jsonl"
    stream = io.StringIO()
    prog = console.Progress(jsonl, {"a": 4, "b": 2}, stream=stream)
    with open(jsonl, "w") as fh:
        for i, (s, st) in enumerate([("a", "pass"), ("a", "observed"), ("b", "fail"), ("b", "pass")]):
            fh.write(json.dumps({"case_id": f"c{i}", "suite": s, "status": st}) + "\n")
        fh.write('{"case_id": "torn", "sta')  # being written: not counted yet
    prog.start -= 10  # 10 s for 4 of 6 cases
    prog.tick()  # suite b finished: a block of progress lines
    text = stream.getvalue()
    assert "mmacts: progress a 2/4 (1 pass, 1 observed)" in text
    assert "mmacts: progress b 2/2 (1 pass, 1 fail)" in text
    assert "all 4/6" in text and "a 2/4 (1 pass, 1 observed), ETA 10s" in text and "all 4/6, 10s, ETA 10s" in text


def test_the_eta_follows_each_suites_own_pace(tmp_path: Path) -> None:
    """A fast suite done, a slow one started, one not started: the ETA is the slow suite's pace times
    what it has left, and says which suite has no pace yet (issue 24: '~2m' stood for five minutes
    while peers ran, from the average of the fast suites)."""
    jsonl = tmp_path / "results.jsonl"
    now = [100.0]
    prog = console.Progress(jsonl, {"fast": 100, "slow": 10, "later": 5}, stream=io.StringIO())
    prog.clock = lambda: now[0]
    prog.start = 100.0
    with open(jsonl, "w") as fh:
        for i in range(100):
            fh.write(json.dumps({"case_id": f"f{i}", "suite": "fast", "status": "pass"}) + "\n")
    now[0] = 110.0  # 100 fast cases in 10 s
    prog.tick()
    with open(jsonl, "a") as fh:
        fh.write(json.dumps({"case_id": "s0", "suite": "slow", "status": "pass"}) + "\n")
    now[0] = 140.0  # the first slow case took 30 s
    prog.tick()
    last = prog.lines()[-1]
    assert last == "all 101/115, 40s, ETA 4m30s + later not started", last  # 9 x 30 s, not 14 x 0.4 s
