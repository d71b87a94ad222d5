"""Bad input gets one clear line and exit code 2, never a traceback or a half report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mmacts.runner import cli
from mmacts.runner.fake_suite import EndedProcess


def _run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str]:
    rc = cli.main(list(argv))
    err = capsys.readouterr().err
    return rc, err


def test_unknown_suite(capsys: pytest.CaptureFixture) -> None:
    rc, err = _run(capsys, "run", "--suite", "no_such_suite")
    assert rc == 2
    assert "unknown suite 'no_such_suite'" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("flag,value", [("--level", "huge"), ("--backend", "fpga")])
def test_unknown_level_or_backend(capsys: pytest.CaptureFixture, flag: str, value: str) -> None:
    rc, err = _run(capsys, "run", flag, value)
    assert rc == 2
    assert value in err and "Traceback" not in err


def test_unwritable_out(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    rc, err = _run(capsys, "run", "--out", str(blocker / "sub"))
    assert rc == 2
    assert "cannot write to output directory" in err


def test_missing_ptxas(capsys: pytest.CaptureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mmacts.backends import assembler
    from mmacts.toolchain.locate import ToolchainMissing

    def missing() -> str:
        raise ToolchainMissing("ptxas", [])

    monkeypatch.setattr(assembler, "ptxas_version", missing)
    rc, err = _run(capsys, "run", "--out", str(tmp_path))
    assert rc == 2
    assert "ptxas not available" in err and "pip install nvidia-cuda-nvcc" in err
    assert not any(tmp_path.iterdir()), "no run directory may be left behind"


def test_resume_of_a_foreign_directory(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    rc, err = _run(capsys, "run", "--resume", str(tmp_path))
    assert rc == 2 and "not an mmacts run directory" in err


def test_explain_unknown_case(capsys: pytest.CaptureFixture) -> None:
    rc, err = _run(capsys, "explain", "no.such/case")
    assert rc == 2 and "no case with id" in err


def test_k_that_selects_nothing(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    rc, err = _run(capsys, "run", "--suite", "mma_sync_blockscale", "--level", "smoke", "--backend", "model",
                   "-k", "no_case_has_this_name", "--out", str(tmp_path))
    assert rc == 2
    assert "selects no case" in err
    assert not any(tmp_path.iterdir()), "no half report may be left looking complete"


def test_explain_a_real_case(capsys: pytest.CaptureFixture) -> None:
    case_id = "mma_sync.m16n8k32.mxf8f6f4.1X.ue8m0/e4m3xe2m1/bida0-tida0-bidb0-tidb0/exact"
    assert cli.main(["explain", case_id]) == 0
    out = capsys.readouterr().out
    assert "mma.sync.aligned" in out and "kind::mxf8f6f4" in out      # the PTX
    assert "QMMA.SF.16832" in out                                      # the SASS it became
    assert "SF_A supplied by lanes [0, 1, 4, 5" in out                 # decoded selectors
    assert "reference output (mode exact)" in out


def test_resume_keeps_the_shard_of_the_run(capsys: pytest.CaptureFixture, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``--resume`` completes the run it is given: a shard's run stays that shard (it must not pull
    in the other shards' cases) even when ``--shard`` is not typed again."""
    calls: list[list[str]] = []
    monkeypatch.setattr(cli, "_start", lambda argv, env: calls.append(list(argv)) or EndedProcess())
    rc, _ = _run(capsys, "run", "--suite", "descriptors", "--level", "smoke", "--backend", "model",
                 "--shard", "1/3", "--out", str(tmp_path))
    assert rc == 0
    (run_dir,) = tmp_path.iterdir()
    rc, _ = _run(capsys, "run", "--resume", str(run_dir))
    assert rc == 0 and len(calls) == 2
    assert [a for a in calls[1] if a.startswith("--mmacts-shard")] == ["--mmacts-shard=1/3"]
    assert any(a.startswith("--mmacts-resume=") for a in calls[1])


def test_runs_keep_the_oracles_answers_unless_told_not_to(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``mmacts run`` hands the test process an answer cache under the cache directory and says so in
    run.json; ``--no-answer-cache`` computes every answer."""
    calls: list[list[str]] = []
    monkeypatch.setattr(cli, "_start", lambda argv, env: calls.append(list(argv)) or EndedProcess())
    monkeypatch.setenv("MMACTS_CACHE_DIR", str(tmp_path / "cache"))
    for extra in ([], ["--no-answer-cache"]):
        rc, _ = _run(capsys, "run", "--suite", "descriptors", "--level", "smoke", "--backend", "model",
                     "--out", str(tmp_path / "runs" / str(len(extra))), *extra)
        assert rc == 0
    want = f"--mmacts-answer-cache={(tmp_path / 'cache' / 'answers').resolve()}"
    assert want in calls[0] and not any(a.startswith("--mmacts-answer-cache") for a in calls[1])
    infos = [json.loads(next((tmp_path / "runs" / d).iterdir()).joinpath("run.json").read_text()) for d in "01"]
    assert infos[0]["options"]["answer_cache"] == want.split("=", 1)[1] and infos[1]["options"]["answer_cache"] is None


def test_delegated_subcommand_reaches_its_module(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    rc, err = _run(capsys, "report", "compare", str(tmp_path), str(tmp_path))
    assert rc == 2 and err.startswith("mmacts report: error:") and "no run.json" in err


@pytest.mark.parametrize("argv,words", [
    (["--shard", "abc"], "--shard must be I/N"),
    (["--shard", "3/2"], "shard index 3 is outside 0..1"),
    (["-k", "T37.2 and ("], "is not a valid expression"),
    (["--case-timeout", "-5"], "--case-timeout must be >= 0"),
    (["--retries", "-1"], "--retries must be >= 0"),
])
def test_bad_run_option_is_one_line(capsys: pytest.CaptureFixture, tmp_path: Path, argv: list[str],
                                    words: str) -> None:
    rc, err = _run(capsys, "run", "--suite", "descriptors", "--level", "smoke", "--backend", "model",
                   "--out", str(tmp_path), *argv)
    assert rc == 2 and words in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and "INTERNALERROR" not in err
    assert not any(tmp_path.iterdir()), "nothing may be left behind"


@pytest.mark.parametrize("line", ['{"hello": "world"}\n', "not json at all\n"])
def test_resume_refuses_foreign_results(capsys: pytest.CaptureFixture, tmp_path: Path, line: str) -> None:
    (tmp_path / "run.json").write_text(json.dumps(
        {"schema": "mmacts-run/1", "options": {"suites": ["descriptors"], "level": "smoke", "backend": "model"}}))
    (tmp_path / "results.jsonl").write_text(line + '{"case_id": "x", "status": "pass"}\n')
    before = sorted(p.name for p in tmp_path.iterdir())
    rc, err = _run(capsys, "run", "--resume", str(tmp_path))
    assert rc == 2 and "cannot resume" in err and "line 1" in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_resume_accepts_a_torn_last_line(tmp_path: Path) -> None:
    """A killed run leaves its last line cut: that is what --resume is for."""
    from mmacts.runner.cli import _check_resumable

    (tmp_path / "results.jsonl").write_text('{"case_id": "x", "status": "pass"}\n{"case_id": "y", "sta')
    _check_resumable(tmp_path)  # no UsageError


def test_list_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    """``mmacts list | head -1``: no BrokenPipeError traceback; exit 141 as a shell reports SIGPIPE."""
    err = tmp_path / "err"
    # the compile suite's standard list (~140 KB) overflows the pipe buffer, so the writer meets the closed pipe
    cmd = (f"{sys.executable} -m mmacts.runner.cli list --suite compile --level standard 2>{err} | head -1; "
           "echo rc=${PIPESTATUS[0]}")
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=Path(cli.__file__).parents[2],
                         timeout=120).stdout
    assert out.count("\n") == 2 and "rc=141" in out, out
    assert err.read_text() == ""


def test_test_processes_keep_compiled_bytecode_where_the_host_forbids_it(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A host with PYTHONDONTWRITEBYTECODE=1 (the GPU hosts' image) compiled every module in every
    test process; their bytecode goes to mmacts' cache instead. Other hosts are left alone."""
    monkeypatch.setenv("MMACTS_CACHE_DIR", str(tmp_path))
    env = cli.child_env({"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/bin"})
    assert "PYTHONDONTWRITEBYTECODE" not in env and env["PYTHONPYCACHEPREFIX"] == str(tmp_path.resolve() / "pycache")
    assert env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1" and env["OMP_NUM_THREADS"] == "1"
    assert "PYTHONPYCACHEPREFIX" not in cli.child_env({"PATH": "/bin"})
    mine = cli.child_env({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/mine"})
    assert mine["PYTHONPYCACHEPREFIX"] == "/mine"


def test_resume_refuses_options_that_would_change_the_run(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``--resume RUN --suite X`` used to ignore ``--suite`` silently: now an option that would change
    the run's cases is one line, exit 2, nothing started; repeating the run's own value is fine."""
    calls: list[list[str]] = []
    monkeypatch.setattr(cli, "_start", lambda argv, env: calls.append(list(argv)) or EndedProcess())
    rc, _ = _run(capsys, "run", "--suite", "descriptors", "--level", "smoke", "--backend", "model",
                 "--out", str(tmp_path))
    assert rc == 0
    (run_dir,) = tmp_path.iterdir()
    for argv, flag in ((["--suite", "compile"], "--suite"), (["--level", "full"], "--level"),
                       (["-k", "T40"], "-k"), (["--backend", "cuda"], "--backend"), (["--shard", "0/2"], "--shard"),
                       (["--out", str(tmp_path)], "--out")):
        rc, err = _run(capsys, "run", "--resume", str(run_dir), *argv)
        assert rc == 2 and f"{flag} " in err and "would change it" in err, (argv, err)
        assert len(err.strip().splitlines()) == 1
    assert len(calls) == 1, "a refused resume started a test process"
    rc, _ = _run(capsys, "run", "--resume", str(run_dir), "--suite", "descriptors", "--level", "smoke")
    assert rc == 0 and len(calls) == 2
