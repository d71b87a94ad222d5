"""The answer cache returns an answer only for the same code, case and inputs, and never a damaged one."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mmacts.backends.execute import Executor
from mmacts.cases.model import Case
from mmacts.compare import answer_cache as ac
from mmacts.core.driver import Expectation


def _case(seed: int = 0) -> Case:
    return Case(case_id="t.form/x", suite="tsuite", instruction="mma.x", arch="sm_90a", spec_rows=("T1.1",),
                level="smoke", form={"f": 1}, runtime={"r": "a"}, recipe="random", seed=seed)


class CountingDriver:
    """An oracle that says how often it was asked."""

    suite = "tsuite"

    def __init__(self, tolerance: Any = None) -> None:
        self.calls = 0
        self.tolerance = tolerance

    def worth_caching(self, case: Case) -> bool:
        return case.seed != 7

    def expected(self, case: Case, inputs: Any) -> Expectation:
        self.calls += 1
        want = np.asarray(inputs["x"], dtype=np.float32) * 2
        return Expectation(want, "model:m", self.tolerance, note=f"seed {case.seed}", control="")


def _inputs(v: float = 1.5) -> dict[str, Any]:
    return {"x": np.array([v, -0.0, np.nan], dtype=np.float32), "n": 3, "meta": ("a", None)}


def test_the_second_identical_question_is_answered_from_disk(tmp_path: Path) -> None:
    drv = CountingDriver()
    cache = ac.AnswerCache(tmp_path, code="c1")
    first = cache.expected(drv, _case(), _inputs())
    again = ac.AnswerCache(tmp_path, code="c1").expected(drv, _case(), _inputs())  # a later process
    assert drv.calls == 1
    assert again.want.tobytes() == first.want.tobytes() and again.want.dtype == first.want.dtype
    assert (again.mode, again.note, again.control, again.tolerance) == ("model:m", "seed 0", "", None)


@pytest.mark.parametrize("change", ["one input bit", "seed", "code", "input dtype", "input shape", "same bytes as int",
                                    "input container"])
def test_any_change_of_code_case_or_inputs_is_a_new_question(tmp_path: Path, change: str) -> None:
    drv = CountingDriver()
    ac.AnswerCache(tmp_path, code="c1").expected(drv, _case(), _inputs())
    code, case, inputs = "c1", _case(), _inputs()
    if change == "one input bit":
        inputs["x"] = inputs["x"].copy()
        inputs["x"].view(np.uint32)[1] ^= 1  # -0.0 -> the smallest negative subnormal
    elif change == "seed":
        case = dataclasses.replace(case, seed=1)
    elif change == "code":
        code = "c2"
    elif change == "input dtype":
        inputs["x"] = inputs["x"].astype(np.float64)
    elif change == "input shape":  # the same bytes
        inputs["x"] = inputs["x"].reshape(1, 3)
    elif change == "same bytes as int":
        inputs["x"] = inputs["x"].view(np.int32)
    else:
        inputs["meta"] = ["a", None]
    ac.AnswerCache(tmp_path, code=code).expected(drv, case, inputs)
    assert drv.calls == 2


def test_array_and_scalar_tolerances_come_back(tmp_path: Path) -> None:
    for tol in (0.25, np.array([1.0, 2.0, 3.0])):
        drv = CountingDriver(tol)
        ac.AnswerCache(tmp_path / str(type(tol).__name__), code="c").expected(drv, _case(), _inputs())
        got = ac.AnswerCache(tmp_path / str(type(tol).__name__), code="c").expected(drv, _case(), _inputs())
        assert drv.calls == 1 and np.array_equal(np.asarray(got.tolerance), np.asarray(tol))


def test_a_damaged_file_is_recomputed_not_believed(tmp_path: Path) -> None:
    drv = CountingDriver()
    cache = ac.AnswerCache(tmp_path, code="c1")
    cache.expected(drv, _case(), _inputs())
    (path,) = list(tmp_path.rglob("*.answer"))
    good = path.read_bytes()
    # one payload bit changed under a valid layout: the stored digest no longer matches
    path.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    got = cache.expected(drv, _case(), _inputs())
    assert drv.calls == 2 and np.array_equal(got.want[:2], [3.0, -0.0])
    path.write_bytes(good[: len(good) // 2])  # half a file
    assert cache.expected(drv, _case(), _inputs()).want[0] == 3.0 and drv.calls == 3
    assert path.read_bytes() == good  # and the recomputed answer replaced it
    cache.expected(drv, _case(), _inputs())
    assert drv.calls == 3


def test_inputs_the_key_cannot_describe_are_computed_every_time(tmp_path: Path) -> None:
    drv = CountingDriver()
    cache = ac.AnswerCache(tmp_path, code="c1")
    inputs = dict(_inputs(), handle=object())
    cache.expected(drv, _case(), inputs)
    cache.expected(drv, _case(), inputs)
    assert drv.calls == 2 and cache.unstored == 2 and not list(tmp_path.rglob("*.answer"))


def test_the_code_digest_follows_every_source_and_data_file_but_not_tests(tmp_path: Path) -> None:
    for d in ac.CODE_DIRS:
        (tmp_path / d / "pkg").mkdir(parents=True)
        (tmp_path / d / "pkg" / "mod.py").write_text("x = 1\n")
    base = ac.code_digest(tmp_path)
    (tmp_path / "reference" / "pkg" / "test_mod.py").write_text("assert True\n")
    assert ac.code_digest(tmp_path) == base
    (tmp_path / "reference" / "pkg" / "table.yaml").write_text("a: 1\n")
    with_data = ac.code_digest(tmp_path)
    assert with_data != base
    (tmp_path / "suites" / "pkg" / "mod.py").write_text("x = 2\n")
    assert ac.code_digest(tmp_path) != with_data


def test_a_driver_may_say_an_answer_is_not_worth_keeping(tmp_path: Path) -> None:
    drv = CountingDriver()
    cache = ac.AnswerCache(tmp_path, code="c1")
    for _ in range(2):
        cache.expected(drv, _case(7), _inputs())
    assert drv.calls == 2 and not list(tmp_path.rglob("*.answer"))
    for _ in range(2):
        cache.expected(drv, _case(1), _inputs())
    assert drv.calls == 3


def test_a_driver_that_does_not_ask_is_never_cached(tmp_path: Path) -> None:
    class Plain:
        suite = "tsuite"

        def __init__(self) -> None:
            self.inner = CountingDriver()

        def expected(self, case: Case, inputs: Any) -> Expectation:
            return self.inner.expected(case, inputs)

    drv = Plain()
    cache = ac.AnswerCache(tmp_path, code="c1")
    for _ in range(2):
        cache.expected(drv, _case(), _inputs())
    assert drv.inner.calls == 2 and not list(tmp_path.rglob("*.answer"))


def test_an_executor_made_in_code_computes_every_answer() -> None:
    """Self-tests and the mutants engine build executors directly: a reference fault planted in memory
    (which no code digest can see) must always meet a freshly computed answer."""
    assert Executor("model").answers is None
