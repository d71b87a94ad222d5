"""The calibrated ptxas: one constant, a warning under any other, and dependency floors kept in step."""

from __future__ import annotations

import re
from pathlib import Path

from mmacts.toolchain.calibration import CALIBRATED_PTXAS, ptxas_warning

REPO = Path(__file__).resolve().parents[2]


def test_the_calibrated_ptxas_gives_no_warning() -> None:
    assert ptxas_warning(CALIBRATED_PTXAS) is None
    assert ptxas_warning(f"{CALIBRATED_PTXAS} (MMACTS_TOOLCHAIN_DIR=/tmp/tc)") is None
    assert ptxas_warning(None) is None and ptxas_warning("unavailable: no ptxas") is None


def test_another_ptxas_is_named_with_the_calibrated_one() -> None:
    w = ptxas_warning("13.1.80 (MMACTS_TOOLCHAIN_DIR=/opt/tc)")
    assert w is not None and "13.1.80" in w and CALIBRATED_PTXAS in w


def test_run_json_carries_the_warning(monkeypatch) -> None:
    from mmacts.report import runinfo

    monkeypatch.setattr(runinfo, "_toolchain", lambda: {"ptxas": "13.1.80", "nvdisasm": "13.2.51"})
    run = runinfo.collect(REPO, ["mmacts", "run"], {})
    assert len(run["warnings"]) == 1 and "13.1.80" in run["warnings"][0]
    monkeypatch.setattr(runinfo, "_toolchain", lambda: {"ptxas": CALIBRATED_PTXAS, "nvdisasm": CALIBRATED_PTXAS})
    assert runinfo.collect(REPO, ["mmacts", "run"], {})["warnings"] == []


def test_the_register_cites_the_calibrated_ptxas() -> None:
    from mmacts.ambiguity.register import load_register

    named = {m.group(1) for e in load_register().entries for s in e.sources
             for m in [re.fullmatch(r"ptxas (\d+\.\d+\.\d+)", s.name)] if m}
    assert named == {CALIBRATED_PTXAS}


UNPINNED_EXTRAS = ("peers",)
"""Extras the minimum-versions environment does not install: the peers' floors are the versions the peers
suite was checked with (triton, nvidia-cutlass: a large install the floor run does not need)."""


def _floors() -> dict[str, str]:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    skip = tuple(f"{e} =" for e in UNPINNED_EXTRAS)
    text = "\n".join(ln for ln in text.splitlines() if not ln.strip().startswith(skip))
    return {m[0].lower().replace("_", "-"): m[1]
            for m in re.findall(r'"([A-Za-z0-9_.-]+)(?:\[[A-Za-z0-9_,-]+\])?>=([0-9.]+)(?:,<[0-9.]+)?"', text)}


def _pins() -> dict[str, str]:
    text = (REPO / "constraints" / "minimum.txt").read_text(encoding="utf-8")
    pins = {m[0].lower().replace("_", "-"): m[1] for m in re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", text, re.M)}
    pins.pop("psycopg-binary", None)  # the [binary] companion of psycopg, pinned to the same version
    return pins


def _norm(v: str) -> tuple[int, ...]:
    parts = [int(x) for x in v.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def test_every_floor_is_pinned_in_the_minimum_constraints() -> None:
    floors, pins = _floors(), _pins()
    assert set(floors) - {"setuptools"} == set(pins), "pyproject and constraints/minimum.txt name other packages"
    assert {p: (floors[p], pins[p]) for p in pins if _norm(floors[p]) != _norm(pins[p])} == {}
