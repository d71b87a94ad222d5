"""``--shard auto`` from the scheduler's environment, and the Slurm / Kubernetes examples: each rendered,
then run with the scheduler's variables faked (a tiny compile selection), every shard ingesting into one
store whose shards together are the unsharded run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mmacts.core.suites import REPO_ROOT
from mmacts.runner.scheduler import ShardError, from_environment, resolve

SBATCH = REPO_ROOT / "examples" / "slurm" / "mmacts-array.sbatch"
K8S = REPO_ROOT / "examples" / "k8s" / "mmacts-indexed-job.yaml"
SELECT = "T39"  # a -k selection of the compile suite at smoke level: a few cases, seconds


@pytest.mark.parametrize("env, want", [
    ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "8", "SLURM_ARRAY_JOB_ID": "99"}, (3, 8, "slurm", "99")),
    ({"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "4"}, (0, 4, "slurm", None)),
    ({"SLURM_ARRAY_TASK_ID": "8", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "12",
      "SLURM_ARRAY_TASK_STEP": "4"}, (2, 4, "slurm", None)),
    ({"JOB_COMPLETION_INDEX": "5", "MMACTS_SHARD_COUNT": "6", "MMACTS_BATCH": "nightly-x"}, (5, 6, "kubernetes",
                                                                                         "nightly-x")),
    ({"MMACTS_SHARD_INDEX": "0", "MMACTS_SHARD_COUNT": "2", "SLURM_ARRAY_TASK_ID": "7"}, (0, 2, "explicit", None)),
])
def test_shard_from_the_scheduler(env, want):
    s = from_environment(env)
    assert (s.index, s.count, s.kind, s.batch) == want


@pytest.mark.parametrize("env, says", [
    ({}, "no scheduler environment"),
    ({"JOB_COMPLETION_INDEX": "1"}, "MMACTS_SHARD_COUNT"),
    ({"JOB_COMPLETION_INDEX": "4", "MMACTS_SHARD_COUNT": "4"}, "outside 0..3"),
    ({"SLURM_ARRAY_TASK_ID": "2"}, "SLURM_ARRAY_TASK_COUNT"),
    ({"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "7",
      "SLURM_ARRAY_TASK_COUNT": "3"}, "not contiguous"),
    ({"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "2"}, "not an integer"),
])
def test_impossible_shards_are_refused(env, says):
    with pytest.raises(ShardError, match=says):
        from_environment(env)


def test_manual_shards_are_checked():
    assert resolve("1/3", {})[0] == "1/3"
    for bad in ("3/3", "a/b", "1"):
        with pytest.raises(ShardError):
            resolve(bad, {})


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "MMACTS_SHARD", "JOB_COMPLETION", "MMACTS_BATCH", "MMACTS_DB"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def _store_runs(db: str):
    from mmacts.db.connect import open_store

    with open_store(db, read_only=True) as s:
        runs = s.frame("SELECT run_key, shard, batch, scheduler FROM runs ORDER BY shard")
        cases = s.frame("SELECT ru.shard, c.case_id FROM results r JOIN runs ru ON ru.run_key = r.run_key "
                        "JOIN cases c ON c.case_key = r.case_key")
    return runs, cases


@pytest.fixture(scope="module")
def unsharded(tmp_path_factory) -> set[str]:
    """The selection's case IDs, from one unsharded run."""
    out = tmp_path_factory.mktemp("whole")
    db = str(out / "whole.duckdb")
    res = subprocess.run([sys.executable, "-m", "mmacts.runner.cli", "run", "--suite", "compile", "--level", "smoke",
                          "--backend", "compile", "-k", SELECT, "--out", str(out), "--db", db],
                         capture_output=True, text=True, timeout=300, env=_env())
    assert res.returncode == 0, res.stderr[-2000:]
    assert "ingested" in res.stderr
    return set(_store_runs(db)[1]["case_id"])


def test_slurm_array_script(tmp_path, unsharded):
    text = SBATCH.read_text()
    directives = dict(re.findall(r"^#SBATCH --([\w-]+)=(\S+)", text, re.M))
    assert re.fullmatch(r"0-\d+", directives["array"]) and "gres" in directives
    assert "--shard auto" in text and '--db "$MMACTS_DB"' in text
    assert subprocess.run(["bash", "-n", str(SBATCH)]).returncode == 0
    db = str(tmp_path / "fleet.duckdb")
    for task in (0, 1):  # --array=0-1: two tasks of array job 4242
        env = _env(SLURM_ARRAY_JOB_ID="4242", SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_MIN="0",
                   SLURM_ARRAY_TASK_MAX="1", SLURM_ARRAY_TASK_COUNT="2", MMACTS_DB=db, MMACTS_DIR=str(REPO_ROOT),
                   MMACTS_VENV="", MMACTS_LEVEL="smoke", MMACTS_BACKEND="compile", MMACTS_WORKERS="0",
                   MMACTS_OUT=str(tmp_path / "runs"), MMACTS_ARGS=f"--suite compile -k {SELECT}")
        res = subprocess.run(["bash", str(SBATCH)], capture_output=True, text=True, timeout=300, env=env)
        assert res.returncode in (0, 1), res.stderr[-2000:]  # 1: some case failed; the run still ingests
        assert "ingested" in res.stderr, res.stderr[-2000:]
    runs, cases = _store_runs(db)
    assert runs["shard"].tolist() == ["0/2", "1/2"]
    assert set(runs["batch"]) == {"4242"} and set(runs["scheduler"]) == {"slurm"}
    a, b = (set(cases.loc[cases["shard"] == s, "case_id"]) for s in ("0/2", "1/2"))
    assert not a & b and a | b == unsharded


def _k8s_render(manifest: dict, overrides: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The container's argv and environment as the kubelet makes them: env values (fieldRef and
    secretKeyRef faked by ``overrides``), then ``$(VAR)`` in command/args replaced from that env."""
    c = manifest["spec"]["template"]["spec"]["containers"][0]
    env = {}
    for e in c["env"]:
        env[e["name"]] = overrides.get(e["name"], e.get("value", ""))
    env.update({k: v for k, v in overrides.items() if k not in env})

    def expand(s: str) -> str:
        return re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), s)

    return [expand(x) for x in [*c["command"], *c["args"]]], env


def test_kubernetes_indexed_job(tmp_path, unsharded):
    manifest = yaml.safe_load(K8S.read_text())
    spec = manifest["spec"]
    assert manifest["kind"] == "Job" and spec["completionMode"] == "Indexed"
    env_values = {e["name"]: e for e in spec["template"]["spec"]["containers"][0]["env"]}
    assert env_values["MMACTS_SHARD_COUNT"]["value"] == str(spec["completions"])
    assert "job-name" in env_values["MMACTS_BATCH"]["valueFrom"]["fieldRef"]["fieldPath"]
    argv, _ = _k8s_render(manifest, {})
    assert argv[argv.index("--shard") + 1] == "auto" and "--db" in argv and "$(" not in " ".join(argv)
    db = str(tmp_path / "fleet.duckdb")
    for index in (0, 1):
        argv, env = _k8s_render(manifest, {
            "JOB_COMPLETION_INDEX": str(index), "MMACTS_SHARD_COUNT": "2", "MMACTS_BATCH": "mmacts-nightly-abcde",
            "MMACTS_DB": db, "MMACTS_LEVEL": "smoke", "MMACTS_BACKEND": "compile", "MMACTS_WORKERS": "0",
            "MMACTS_K": SELECT})
        argv = [sys.executable, "-m", "mmacts.runner.cli", *argv[1:]]  # the image's mmacts -> this checkout's
        argv[argv.index("--out") + 1] = str(tmp_path / "runs")
        argv += ["--suite", "compile"]
        res = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=_env(**env), cwd=REPO_ROOT)
        assert res.returncode in (0, 1), res.stderr[-2000:]
        assert "ingested" in res.stderr, res.stderr[-2000:]
    runs, cases = _store_runs(db)
    assert runs["shard"].tolist() == ["0/2", "1/2"]
    assert set(runs["batch"]) == {"mmacts-nightly-abcde"} and set(runs["scheduler"]) == {"kubernetes"}
    a, b = (set(cases.loc[cases["shard"] == s, "case_id"]) for s in ("0/2", "1/2"))
    assert not a & b and a | b == unsharded


def test_run_whose_ingest_fails_exits_6_with_the_run_complete(tmp_path):
    bad = f"postgresql://nobody@/x?host={tmp_path}/nosock&connect_timeout=3"
    res = subprocess.run([sys.executable, "-m", "mmacts.runner.cli", "run", "--suite", "compile", "--level", "smoke",
                          "--backend", "compile", "-k", SELECT, "--out", str(tmp_path), "--db", bad],
                         capture_output=True, text=True, timeout=300, env=_env())
    assert res.returncode == 6, res.stderr[-2000:]
    run_dir = Path(res.stdout.strip().splitlines()[-1])
    assert '"complete": true' in (run_dir / "run.json").read_text()
    assert "mmacts db ingest" in res.stderr


def test_shard_auto_without_a_scheduler_is_a_usage_error(tmp_path):
    res = subprocess.run([sys.executable, "-m", "mmacts.runner.cli", "run", "--suite", "compile", "--level", "smoke",
                          "--backend", "compile", "--shard", "auto", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, env=_env())
    assert res.returncode == 2 and "no scheduler environment" in res.stderr and "Traceback" not in res.stderr
