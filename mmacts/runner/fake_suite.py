"""A tiny suite with known answers, used only by the runner's own tests.

It exercises every status the executor can produce without any instruction
knowledge: pass, fail (with a first mismatch), error (an exception in the
model) and not-supported (cuda backend on a machine without a GPU).
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from mmacts.cases.model import Case
from mmacts.core.driver import Expectation, LaunchResult
from mmacts.core.fields import Fields

TRIVIAL_PTX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry fake_kernel()
{
    ret;
}
"""


@dataclass(frozen=True)
class FakeRuntime(Fields):
    """The one run-time field of a fake or faulty case: its behaviour (``good``, ``bad``, ``boom``,
    ``sleep=0.2``, ...; see :class:`FakeDriver` and :class:`FaultyDriver`)."""

    name: str = "good"


def _behaviour(case: Case) -> str:
    return cast(FakeRuntime, case.runtime).name


class FakeDriver:
    """Known-answer driver: case ``bad`` returns one wrong element, ``boom`` raises."""

    suite = "fake"

    def cases(self, level: str) -> list[Case]:
        mk = lambda name, lvl="smoke": Case(  # noqa: E731
            case_id=f"fake.{name}", suite="fake", instruction="fake.op", arch="sm_90",
            spec_rows=("T36.1",), level=lvl, runtime=FakeRuntime(name))
        return [mk("good"), mk("bad"), mk("boom"), mk("big", "standard")]

    def module_ptx(self, case: Case) -> str:
        return TRIVIAL_PTX

    def make_inputs(self, case: Case) -> Any:
        return np.arange(6, dtype=np.float32).reshape(2, 3)

    def expected(self, case: Case, inputs: Any) -> Expectation:
        return Expectation(inputs * 2)

    def run_record_model(self, case: Case, inputs: Any) -> LaunchResult:
        name = _behaviour(case)
        if name == "boom":
            raise ValueError("model exploded on purpose")
        got = inputs * 2
        if name == "bad":
            got[1, 2] += 1
        return LaunchResult(got)

    def launch(self, cases: list[Case], inputs: list[Any], module: Any) -> list[LaunchResult]:
        raise AssertionError("never launched in tests")

    def device_supported(self, cc: tuple[int, int]) -> str | None:
        return "needs a fake GPU"


DRIVER = FakeDriver()


FAULTY_CASES_ENV = "MMACTS_FAULTY_CASES"
"""Comma-separated behaviours of the ``faulty`` suite's cases, in order (read when cases are listed)."""


class FaultyDriver(FakeDriver):
    """Cases that misbehave on purpose, for the fault-containment tests (``mmacts.runner.faults``).

    Behaviours (one per case, from ``MMACTS_FAULTY_CASES``): ``good``; ``sleep=S``
    (then pass); ``slow`` (sleep ``MMACTS_FAKE_SLOW_S`` seconds, read at run time, so a
    resumed run can make it quick); ``hang`` (sleeps an hour: the per-case limit ends it);
    ``stuck`` (blocks SIGALRM then sleeps: a call that never returns to Python, only the
    watchdog ends it); ``crash`` (``os._exit``); ``segv`` (SIGSEGV); ``sticky`` (raises the
    message of a sticky CUDA error, as the cuda backend would see it); ``bad`` (a wrong answer);
    ``flaky`` (a wrong answer the first time only: state in ``MMACTS_FAKE_STATE_DIR``).
    """

    suite = "faulty"

    def cases(self, level: str) -> list[Case]:
        names = os.environ.get(FAULTY_CASES_ENV, "good,sleep=0.2,good").split(",")
        return [Case(case_id=f"faulty.{i:02d}.{n.replace('=', '_')}", suite="faulty", instruction="fake.op",
                     arch="sm_90", spec_rows=("T36.1",), level="smoke", runtime=FakeRuntime(n))
                for i, n in enumerate(x.strip() for x in names if x.strip())]

    def run_record_model(self, case: Case, inputs: Any) -> LaunchResult:
        kind, _, arg = _behaviour(case).partition("=")
        if kind == "sleep":
            time.sleep(float(arg))
        elif kind == "slow":
            time.sleep(float(os.environ.get("MMACTS_FAKE_SLOW_S", "0")))
        elif kind == "hang":
            time.sleep(3600)
        elif kind == "stuck":
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            time.sleep(3600)
        elif kind == "crash":
            os._exit(13)
        elif kind == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif kind == "sticky":
            raise RuntimeError("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered (simulated)")
        elif kind == "bad":
            return LaunchResult(inputs * 2 + 1)
        elif kind == "flaky":  # wrong on the first run of the case only (state in MMACTS_FAKE_STATE_DIR)
            marker = Path(os.environ["MMACTS_FAKE_STATE_DIR"]) / case.case_id.replace("/", "_")
            if not marker.exists():
                marker.write_text("ran")
                return LaunchResult(inputs * 2 + 1)
        elif kind != "good":
            raise ValueError(f"unknown faulty behaviour {kind!r}")
        return LaunchResult(inputs * 2)


FAULTY_DRIVER = FaultyDriver()


class EndedProcess:
    """A test process that has already ended with exit 0: what ``cli._start`` returns in the
    runner's tests that check the arguments a run starts pytest with, without running it."""

    def __enter__(self) -> EndedProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def wait(self) -> int:
        return 0

    def kill(self) -> None:
        return None
