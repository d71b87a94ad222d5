"""Faults provoked on a real GPU (skipped, with the reason, where no GPU answers).

Each scenario runs in its own process: see gpu_faults.py for what is promised and why.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mmacts.backends import gpu

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not gpu.probe().usable, reason=f"needs a CUDA GPU ({gpu.probe().reason})")


def _scenario(name: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "mmacts.backends.gpu_faults", name], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_in_kernel_bounded_wait_ends_with_its_status_word() -> None:
    rec = _scenario("bounded_wait")
    assert rec["status"] == "ok" and rec["status_word"] == 2, rec


def test_spinning_kernel_is_a_timeout_and_poisons_the_runtime() -> None:
    rec = _scenario("spin")
    assert rec["status"] == "timeout" and rec["poisoned"], rec
    assert rec["second_status"] == "refused" and "poisoned" in rec["second_message"], rec
    assert rec["wall_s"] < 30 and rec["second_wall_s"] < 1, rec


def test_illegal_address_is_an_error_and_poisons_the_runtime() -> None:
    rec = _scenario("illegal")
    assert rec["status"] == "error" and rec["poisoned"], rec
    assert rec["second_status"] == "refused", rec
