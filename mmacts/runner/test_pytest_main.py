"""The test process of ``mmacts run`` ends without interpreter teardown but with pytest's exit code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_test_process_keeps_pytests_exit_code_and_output(tmp_path: Path) -> None:
    (tmp_path / "test_one.py").write_text(
        "import atexit\n"
        "atexit.register(lambda: print('TEARDOWN RAN'))\n"
        "def test_ok():\n    print('hello')\n"
        "def test_bad():\n    assert False\n")
    run = subprocess.run([sys.executable, "-m", "mmacts.runner.pytest_main", "-q", "-s", "-p", "no:cacheprovider",
                          str(tmp_path / "test_one.py")], capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "PATH": "/usr/bin:/bin",
                              "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr  # pytest's "tests failed"
    assert "1 failed, 1 passed" in run.stdout and "hello" in run.stdout  # flushed before the exit
    assert "TEARDOWN RAN" not in run.stdout  # no interpreter teardown: the point of the module
