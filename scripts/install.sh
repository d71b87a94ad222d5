#!/usr/bin/env bash
# Create .venv (if missing) and install mmacts with its pinned-minimum dependencies,
# including ptxas/nvdisasm from the NVIDIA wheels (no system CUDA needed).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test,peers,db]'
