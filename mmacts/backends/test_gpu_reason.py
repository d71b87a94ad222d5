"""A machine without a GPU is told it has no GPU, not that its driver is too old (issue 24)."""

from __future__ import annotations

import sys

import pytest

from mmacts.backends import gpu

INSUFFICIENT = ("CUDARuntimeError: cudaErrorInsufficientDriver: "
                "CUDA driver version is insufficient for CUDA runtime version")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the driver's presence is read from /proc and /dev")
def test_no_driver_at_all_reads_no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu, "nvidia_present", lambda: False)
    said = gpu.plain_reason(INSUFFICIENT)
    assert said.startswith("no GPU") and "insufficient" not in said


def test_a_machine_with_a_driver_keeps_the_cuda_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu, "nvidia_present", lambda: True)
    assert gpu.plain_reason(INSUFFICIENT) == INSUFFICIENT  # there a driver upgrade may be the answer


def test_the_probe_says_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MMACTS_NO_GPU", raising=False)
    monkeypatch.setattr(gpu, "nvidia_present", lambda: False)
    monkeypatch.setattr("mmacts.backends.cuda_runtime.probe", lambda index=0: f"no usable GPU: {INSUFFICIENT}")
    gpu.probe.cache_clear()
    try:
        if sys.platform.startswith("linux"):
            assert gpu.probe().reason.startswith("no GPU")
    finally:
        gpu.probe.cache_clear()
