#!/usr/bin/env bash
# Install, then run the conformance suite: by default every suite at the standard level on the
# best backend this machine has (a Blackwell GPU where the suite fits it, the CPU model elsewhere).
# Extra arguments go to `mmacts run` (e.g. --suite mma_sync_blockscale --backend cuda).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
. .venv/bin/activate
exec mmacts run "$@"
