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


def test_a_hung_batch_is_recorded_from_one_launch(hopper: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """All cases of a form share one launch; a hang is recorded for each without relaunching."""
    import numpy as np

    from mmacts.backends import cuda_runtime
    from mmacts.core.driver import Expectation, LaunchResult

    launches: list[int] = []

    class HangingDriver(MixedDriver):
        def module_ptx(self, case: Case) -> str:
            return "// never assembled here"

        def make_inputs(self, case: Case) -> None:
            return None

        def expected(self, case: Case, inputs: None) -> Expectation:
            return Expectation(np.zeros(1, np.float32))

        def launch(self, cases: list, inputs: list, module: object) -> list:
            launches.append(len(cases))
            return [LaunchResult(None, "timeout", extra={"status_word": 2}) for _ in cases]

    ex = Executor(backend="cuda")
    cases = [_case("sm_90a"), Case(case_id="x.other", suite="x", instruction="op", arch="sm_90a",
                                   spec_rows=("T36.1",))]
    ex.all_cases = {repr(cases[0].form_key): cases}
    monkeypatch.setattr(ex, "assemble", lambda d, c: execute.Assembled(True, b"cubin", "", 0.0, "", "v", ""))
    monkeypatch.setattr(cuda_runtime, "load_module", lambda image: object())
    first = ex.execute(HangingDriver(), cases[0])
    assert first["status"] == "timeout" and ex.holds_results()
    second = ex.execute(HangingDriver(), cases[1])
    assert second["status"] == "timeout" and not ex.holds_results()
    assert launches == [2]


@pytest.mark.parametrize("got", [None, "want"])
def test_a_failed_launch_is_an_error_with_its_reason_never_compared(hopper: None, monkeypatch: pytest.MonkeyPatch,
                                                                   got: str | None) -> None:
    """A launch that reports ``error`` is an error even if ``got`` holds the right numbers (stale or
    zero-filled output must not pass), and the record names the launch's reason, not the case note."""
    import numpy as np

    from mmacts.backends import cuda_runtime
    from mmacts.core.driver import Expectation, LaunchResult

    want = np.arange(4, dtype=np.float32)

    class FailingDriver(MixedDriver):
        def module_ptx(self, case: Case) -> str:
            return "// never assembled here"

        def make_inputs(self, case: Case) -> None:
            return None

        def expected(self, case: Case, inputs: None) -> Expectation:
            return Expectation(want, note="exact data")

        def launch(self, cases: list, inputs: list, module: object) -> list:
            out = want.copy() if got == "want" else None
            return [LaunchResult(out, "error", extra={"message": "CUDA_ERROR_ILLEGAL_ADDRESS"}) for _ in cases]

    ex = Executor(backend="cuda")
    monkeypatch.setattr(ex, "assemble", lambda d, c: execute.Assembled(True, b"cubin", "", 0.0, "", "v", ""))
    monkeypatch.setattr(cuda_runtime, "load_module", lambda image: object())
    rec = ex.execute(FailingDriver(), _case("sm_90a"))
    assert rec["status"] == "error"
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in rec["message"] and "exact data" not in rec["message"]


def test_an_observation_that_matches_its_hypothesis_is_still_not_a_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from mmacts.core.driver import Expectation, LaunchResult

    class Observing(MixedDriver):
        def make_inputs(self, case: Case) -> None:
            return None

        def expected(self, case: Case, inputs: None) -> Expectation:
            return Expectation(np.ones(2, np.float32), mode="observe:model:some_hypothesis", note="PROBE x")

        def run_record_model(self, case: Case, inputs: None) -> LaunchResult:
            return LaunchResult(np.ones(2, np.float32))

    ex = Executor(backend="model")
    monkeypatch.setattr(ex, "assemble", lambda d, c: execute.Assembled(True, b"", "", 0.0, "", "v", ""))
    rec = ex.execute(Observing(), _case("sm_100a"))
    assert rec["status"] == "observed" and rec["compare_mode"] == "observe:model:some_hypothesis"
    assert rec["message"] == "PROBE x; agrees with the hypothesis"


class _LaunchingDriver(MixedDriver):
    """A driver whose launcher answers with a given LaunchResult (what a GPU or the VM would say)."""

    def __init__(self, result: object) -> None:
        self.result = result

    def module_ptx(self, case: Case) -> str:
        from mmacts.runner.fake_suite import TRIVIAL_PTX

        return TRIVIAL_PTX

    def make_inputs(self, case: Case) -> object:
        return None

    def vm_reason(self, case: Case) -> str | None:
        return None

    def launch(self, cases: list[Case], inputs: list[object], module: object) -> list[object]:
        return [self.result for _ in cases]


@pytest.mark.parametrize(("result", "why"), [
    (execute.LaunchResult(None, "skip", extra={"reason": "needs sm_100a; this GPU is sm_90"}), "needs sm_100a"),
    (execute.LaunchResult(None, "error", extra={"message": "PTX VM unsupported: tcgen05.mma.ws at line 9"}),
     "PTX VM unsupported: tcgen05.mma.ws"),
])
def test_a_form_the_backend_cannot_run_is_not_supported(result: object, why: str) -> None:
    """A launcher's skip (this GPU lacks the form) and the VM's refusal by name end ``not-supported`` with
    the reason: not ``skip`` (the user's choice), not ``error``, never a pass."""
    rec = Executor(backend="model").execute(_LaunchingDriver(result), _case("sm_90a"))
    assert rec["status"] == "not-supported" and why in rec["message"], rec


def test_a_vm_error_that_is_not_a_refusal_stays_an_error() -> None:
    bad = execute.LaunchResult(None, "error", extra={"message": "PTX VM memory: out of bounds at 0x10"})
    rec = Executor(backend="model").execute(_LaunchingDriver(bad), _case("sm_90a"))
    assert rec["status"] == "error"


def test_a_gpu_that_cannot_run_the_case_is_not_supported(hopper: None) -> None:
    rec = Executor(backend="cuda").execute(MixedDriver(), _case("sm_100a"))
    assert rec["status"] == "not-supported" and rec["message"] == "needs sm_100a; this GPU is sm_90"
