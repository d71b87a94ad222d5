#!/usr/bin/env bash
# Install, then run the project's own tests and the smoke level on the model backend (the PTX VM).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
. .venv/bin/activate
ruff check .
pytest -q -n 2 -m "not mmacts_case" mmacts reference suites
mmacts run --level smoke --backend model -n 2
