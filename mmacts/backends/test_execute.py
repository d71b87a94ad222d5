"""Backend choice: never a pass for what was not obtained, and per-case GPU support."""

from __future__ import annotations

import pytest

from mmacts.backends import execute, gpu
from mmacts.backends.execute import Executor
from mmacts.cases.model import Case


def _case(arch: str) -> Case:
    return Case(case_id=f"x.{arch}", suite="x", instruction="op", arch=arch, spec_rows=("T36.1",))


class MixedDriver:
    """Suite-wide OK on Hopper, but one case needs Blackwell (like the probes suite)."""

    suite = "x"

    def device_supported(self, cc: tuple[int, int]) -> str | None:
        return None if cc >= (9, 0) else "needs sm_90+"

    def case_supported(self, case: Case, cc: tuple[int, int]) -> str | None:
        return None if case.arch == "sm_90a" else f"needs {case.arch}; this GPU is sm_{cc[0]}{cc[1]}"


@pytest.fixture
def hopper(monkeypatch: pytest.MonkeyPatch) -> None:
    status = gpu.GpuStatus(usable=True, name="NVIDIA H200", compute_capability=(9, 0), driver_version="13.0",
                           runtime_version="13.2", kernel_driver="580.1", count=1)
    monkeypatch.setattr(execute.gpu, "probe", lambda: status)


def test_cuda_skips_a_case_the_gpu_cannot_run(hopper: None) -> None:
    ex = Executor(backend="cuda")
    assert ex.choose(MixedDriver(), _case("sm_90a")) == ("cuda", None)
    backend, reason = ex.choose(MixedDriver(), _case("sm_100a"))
    assert backend == "cuda" and reason == "needs sm_100a; this GPU is sm_90"


def test_auto_falls_back_to_model_per_case(hopper: None) -> None:
    ex = Executor(backend="auto")
    assert ex.choose(MixedDriver(), _case("sm_90a"))[0] == "cuda"
    assert ex.choose(MixedDriver(), _case("sm_120a")) == ("model", None)


def test_no_gpu_means_skip_with_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execute.gpu, "probe", lambda: gpu.GpuStatus(False, "cudaErrorInsufficientDriver"))
    backend, reason = Executor(backend="cuda").choose(MixedDriver(), _case("sm_90a"))
    assert backend == "cuda" and reason == "no usable GPU: cudaErrorInsufficientDriver"


def test_unknown_backend_rejected() -> None:
    with pytest.raises(ValueError, match="unknown backend"):
        Executor(backend="fpga")
