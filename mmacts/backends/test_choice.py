"""One decision of the backend: the CLI's banner (per suite) and the executor (per case) ask the same function."""

from __future__ import annotations

import pytest

from mmacts.backends import gpu
from mmacts.backends.choice import Choice, choose
from mmacts.backends.execute import Executor
from mmacts.cases.model import Case
from mmacts.core.driver import Driver, Expectation, LaunchResult

HOPPER = gpu.GpuStatus(usable=True, name="H100", compute_capability=(9, 0), count=1)
NONE = gpu.GpuStatus(usable=False, reason="no driver")


class _Blackwell(Driver):
    """Runs on sm_100 only; case ``c-any`` runs anywhere the suite does."""

    suite = "bw"

    def cases(self, level: str) -> list[Case]:
        return []

    def module_ptx(self, case: Case) -> str:
        return ""

    def device_supported(self, cc: tuple[int, int]) -> str | None:
        return None if cc >= (10, 0) else "needs sm_100"

    def make_inputs(self, case: Case) -> None:
        return None

    def expected(self, case: Case, inputs: object) -> Expectation:
        raise NotImplementedError

    def run_record_model(self, case: Case, inputs: object) -> LaunchResult:
        raise NotImplementedError

    def case_supported(self, case: Case, cc: tuple[int, int]) -> str | None:
        return None if case.case_id == "c-any" else "this case wants sm_103"


CASE = Case("c1", "bw", "op", "sm_100a", ())


@pytest.mark.parametrize("requested, status, want", [
    ("model", HOPPER, Choice("model", on_model="--backend model")),
    ("compile", HOPPER, Choice("compile")),
    ("auto", NONE, Choice("model", on_model="no usable GPU: no driver")),
    ("cuda", NONE, Choice("cuda", skip="no usable GPU: no driver")),
    ("auto", HOPPER, Choice("model", on_model="H100 (sm_90) does not fit them")),
    ("cuda", HOPPER, Choice("cuda", skip="needs sm_100")),
])
def test_the_choice_for_each_request_and_gpu(requested: str, status: gpu.GpuStatus, want: Choice) -> None:
    assert choose(requested, _Blackwell(), CASE, status) == want


def test_a_case_the_gpu_cannot_run_falls_to_the_model_under_auto_and_is_skipped_under_cuda() -> None:
    blackwell = gpu.GpuStatus(usable=True, name="B200", compute_capability=(10, 0), count=1)
    assert choose("auto", _Blackwell(), None, blackwell) == Choice("cuda")  # the suite fits
    assert choose("auto", _Blackwell(), CASE, blackwell).backend == "model"  # this case does not
    assert choose("cuda", _Blackwell(), CASE, blackwell).skip == "this case wants sm_103"
    assert choose("auto", _Blackwell(), Case("c-any", "bw", "op", "sm_100a", ()), blackwell) == Choice("cuda")


def test_the_executor_carries_the_same_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu, "probe", lambda: HOPPER)
    for requested in ("auto", "cuda", "model", "compile"):
        c = choose(requested, _Blackwell(), CASE, HOPPER)
        assert Executor(backend=requested).choose(_Blackwell(), CASE) == (c.backend, c.skip)
