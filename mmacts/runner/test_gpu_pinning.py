"""Worker gwK gets GPU K; workers beyond the GPU count get none (or share, for --backend cuda)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmacts.runner import gpu_pinning as gp


@pytest.mark.parametrize("env,want", [
    ({"MMACTS_GPUS": "3"}, ["0", "1", "2"]),
    ({"MMACTS_GPUS": "0"}, []),
    ({"CUDA_VISIBLE_DEVICES": "4,5,6"}, ["4", "5", "6"]),
    ({"CUDA_VISIBLE_DEVICES": "4,5,6", "MMACTS_GPUS": "2"}, ["4", "5"]),  # a subset of what is visible
    ({"CUDA_VISIBLE_DEVICES": ""}, []),
    ({"CUDA_VISIBLE_DEVICES": "GPU-ab12, GPU-cd34"}, ["GPU-ab12", "GPU-cd34"]),
])
def test_visible_gpus(env: dict[str, str], want: list[str]) -> None:
    assert gp.visible_gpus(env) == want


def test_worker_to_gpu_mapping() -> None:
    gpus = ["0", "1"]
    got = {w: gp.gpu_for_worker(w, gpus) for w in ("gw0", "gw1", "gw2", "gw3")}
    assert got == {"gw0": "0", "gw1": "1", "gw2": "", "gw3": ""}
    shared = [gp.gpu_for_worker(f"gw{i}", gpus, spare="share") for i in range(5)]
    assert shared == ["0", "1", "0", "1", "0"]
    assert gp.gpu_for_worker("master", gpus) is None and gp.gpu_for_worker(None, gpus) is None
    assert gp.gpu_for_worker("gw0", []) == ""  # a CPU machine: every worker is a CPU worker
    with pytest.raises(ValueError):
        gp.gpu_for_worker("gw5", gpus, spare="steal")


def test_pin_worker_sets_the_environment() -> None:
    env = {"CUDA_VISIBLE_DEVICES": "2,3"}
    assert gp.pin_worker("gw1", env) == "3"
    assert env == {"CUDA_VISIBLE_DEVICES": "3", gp.PINNED_ENV: "3"}
    env = {"MMACTS_GPUS": "1"}
    assert gp.pin_worker("gw1", env) == ""
    assert env["CUDA_VISIBLE_DEVICES"] == "" and env[gp.PINNED_ENV] == ""
    assert gp.pin_worker("master", env) is None


def test_device_label() -> None:
    assert gp.device_label("NVIDIA H200", {gp.PINNED_ENV: "1"}) == "NVIDIA H200 #1"
    assert gp.device_label("NVIDIA H200", {"CUDA_VISIBLE_DEVICES": "5,6"}) == "NVIDIA H200 #5"
    assert gp.device_label("NVIDIA H200", {}) == "NVIDIA H200 #0"


PROBE_MODULE = """
import os, pytest

@pytest.mark.parametrize("i", range(12))
def test_where(i, worker_id, tmp_path_factory):
    out = os.environ["PIN_PROBE_OUT"]
    with open(os.path.join(out, worker_id), "w") as fh:
        fh.write(os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>"))
"""


def test_xdist_workers_are_pinned_before_tests_run(tmp_path: Path) -> None:
    """Three workers, two (pretended) GPUs: gw0 -> 0, gw1 -> 1, gw2 -> none."""
    (tmp_path / "test_probe.py").write_text(PROBE_MODULE)
    seen = tmp_path / "seen"
    seen.mkdir()
    env = dict(os.environ, MMACTS_GPUS="2", PIN_PROBE_OUT=str(seen))
    env.pop("CUDA_VISIBLE_DEVICES", None)
    rc = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "mmacts.runner.plugin", "-p",
                          "no:cacheprovider", "-n", "3", "--mmacts-pin-gpus", f"--rootdir={tmp_path}",
                          str(tmp_path / "test_probe.py")], cwd=tmp_path, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert rc == 0
    got = {p.name: p.read_text() for p in seen.iterdir()}
    want = {"gw0": "0", "gw1": "1", "gw2": ""}
    assert {k: v for k, v in got.items()} == {k: want[k] for k in got}
    assert len(got) >= 2
