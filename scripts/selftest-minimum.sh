#!/usr/bin/env bash
# Install exactly the minimum dependency versions (constraints/minimum.txt) into .venv-min and run the
# project's own tests there: the floors in pyproject.toml must install and work, not only the newest releases.
# CuPy is installed but imported only on GPU paths, so this runs on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${MMACTS_MIN_VENV:-.venv-min}
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
# -c pins every direct dependency to its floor; the editable install checks the floors admit them.
"$VENV/bin/python" -m pip install -q -c constraints/minimum.txt -e '.[test,db]'
# Say what was installed, and refuse to go on if a pin did not take (a stale .venv-min, say).
"$VENV/bin/python" - <<'PY'
import importlib.metadata as md
import re
import sys

bad = []
for line in open("constraints/minimum.txt", encoding="utf-8"):
    m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line.strip())
    if m:
        got = md.version(m[1])
        print(f"  {m[1]}=={got}")
        if got != m[2]:
            bad.append(f"{m[1]} {got} (want {m[2]})")
if bad:
    sys.exit("selftest-minimum: not the minimum versions: " + ", ".join(bad))
PY
"$VENV/bin/ruff" check .
"$VENV/bin/python" -m pytest -q -n 2 -m "not mmacts_case" mmacts reference suites
