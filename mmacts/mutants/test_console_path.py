"""The mutation tools import the suites' typed records at module level (``suites.<name>.fields``), yet a console
script (``mmacts selftest --mutants`` without ``PYTHONPATH``) starts with a ``sys.path`` that does not hold the
checkout: the package must put it there before those imports run, or the command dies with
``ModuleNotFoundError: suites``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mmacts.core.suites import REPO_ROOT


def test_mutant_modules_import_without_the_checkout_on_sys_path(tmp_path: Path) -> None:
    # the packages a console script finds (installed ones), not the checkout beside them: no ``suites`` here
    for pkg in ("mmacts", "reference"):
        (tmp_path / pkg).symlink_to(REPO_ROOT / pkg, target_is_directory=True)
    code = ("import sys\n"
            "assert 'suites' not in sys.modules\n"
            "import mmacts.mutants.engine, mmacts.mutants.generated, mmacts.mutants.kernel_faults\n"
            "import mmacts.mutants.registry, mmacts.mutants.run\n"
            "print(sys.modules['suites.tcgen05_blockscale.fields'].__file__)\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    got = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert got.returncode == 0, got.stderr[-2000:]
    assert Path(got.stdout.strip()).resolve().is_relative_to(REPO_ROOT.resolve())
