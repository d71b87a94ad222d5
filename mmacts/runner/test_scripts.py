"""``scripts/suite.sh``: every core by default (a first run took 14 minutes in one process on two
cores), the user's ``-n`` kept, the exit status of ``mmacts run`` passed on, and how to get
``mmacts`` on PATH said at the end. Run against a stand-in ``mmacts`` (no install, no suite)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mmacts.core.suites import REPO_ROOT


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO_ROOT / "scripts" / "suite.sh", tmp_path / "scripts" / "suite.sh")
    (tmp_path / "scripts" / "install.sh").write_text("#!/usr/bin/env bash\n")  # installed already
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "activate").write_text(f'export PATH="{bin_dir}:$PATH"\n')
    fake = bin_dir / "mmacts"
    fake.write_text('#!/usr/bin/env bash\necho "ARGS: $*"\nexit "${FAKE_RC:-0}"\n')
    fake.chmod(0o755)
    return tmp_path


def _suite(checkout: Path, *argv: str, rc: int = 0) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(checkout / "scripts" / "suite.sh"), *argv], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "FAKE_RC": str(rc)}, timeout=60)


@pytest.mark.parametrize("argv,want", [
    ((), "ARGS: run -n auto"),
    (("--suite", "compile"), "ARGS: run -n auto --suite compile"),
    (("-n", "4", "--suite", "compile"), "ARGS: run -n 4 --suite compile"),
    (("-n2",), "ARGS: run -n2"),
    (("--resume", "reports/runs/x"), "ARGS: run --resume reports/runs/x"),
])
def test_suite_sh_uses_every_core_unless_told(checkout: Path, argv: tuple[str, ...], want: str) -> None:
    p = _suite(checkout, *argv)
    assert p.returncode == 0 and p.stdout.strip() == want, (p.stdout, p.stderr)
    assert f". {checkout}/.venv/bin/activate" in p.stderr


def test_suite_sh_passes_the_exit_status_on(checkout: Path) -> None:
    p = _suite(checkout, rc=7)
    assert p.returncode == 7 and "activate" in p.stderr
