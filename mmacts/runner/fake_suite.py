"""A tiny suite with known answers, used only by the runner's own tests.

It exercises every status the executor can produce without any instruction
knowledge: pass, fail (with a first mismatch), error (an exception in the
model) and skip (cuda backend on a machine without a GPU).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mmacts.backends.driver import Expectation, LaunchResult
from mmacts.cases.model import Case

TRIVIAL_PTX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry fake_kernel()
{
    ret;
}
"""


class FakeDriver:
    """Known-answer driver: case ``bad`` returns one wrong element, ``boom`` raises."""

    suite = "fake"

    def cases(self, level: str) -> list[Case]:
        mk = lambda name, lvl="smoke": Case(  # noqa: E731
            case_id=f"fake.{name}", suite="fake", instruction="fake.op", arch="sm_90",
            spec_rows=("T36.1",), level=lvl, runtime={"name": name})
        return [mk("good"), mk("bad"), mk("boom"), mk("big", "standard")]

    def module_ptx(self, case: Case) -> str:
        return TRIVIAL_PTX

    def make_inputs(self, case: Case) -> Any:
        return np.arange(6, dtype=np.float32).reshape(2, 3)

    def expected(self, case: Case, inputs: Any) -> Expectation:
        return Expectation(inputs * 2)

    def run_model(self, case: Case, inputs: Any) -> LaunchResult:
        name = case.runtime["name"]
        if name == "boom":
            raise ValueError("model exploded on purpose")
        got = inputs * 2
        if name == "bad":
            got[1, 2] += 1
        return LaunchResult(got)

    def run_cuda(self, cases: list[Case], inputs: list[Any], module: Any) -> list[LaunchResult]:
        raise AssertionError("never launched in tests")

    def device_supported(self, cc: tuple[int, int]) -> str | None:
        return "needs a fake GPU"


DRIVER = FakeDriver()
