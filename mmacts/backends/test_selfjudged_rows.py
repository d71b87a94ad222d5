"""A suite that judges its cases itself (peers) still gets the columns every row has (issue 24:
peers rows on the compile backend carried no ptxas_version)."""

from __future__ import annotations

from typing import Any

from mmacts.backends import assembler
from mmacts.backends.execute import Executor
from mmacts.cases.model import Case


class SelfJudged:
    suite = "selfjudged"

    def run_case(self, case: Case, backend: str) -> dict[str, Any]:
        if case.runtime["name"] == "assembled":
            return {"status": "pass", "compare_mode": "assemble", "message": "PTX assembled"}
        return {"status": "pass", "compare_mode": "peer", "executor": "host"}

    def device_supported(self, cc: tuple[int, int]) -> str | None:
        return "host only"


def _case(name: str) -> Case:
    return Case(case_id=f"selfjudged.{name}", suite="selfjudged", instruction="x", arch="sm_100a",
                spec_rows=("T36.1",), level="smoke", runtime={"name": name})


def test_an_assembled_row_names_its_ptxas() -> None:
    ex = Executor(backend="compile")
    rec = ex.execute(SelfJudged(), _case("assembled"))
    assert rec["status"] == "pass" and rec["ptxas_version"] == assembler.ptxas_version()
    other = Executor(backend="model").execute(SelfJudged(), _case("host"))
    assert other["ptxas_version"] is None  # nothing was assembled: no toolchain to name
