#!/usr/bin/env bash
# Install, then run the conformance suite: by default every suite at the standard level on the
# best backend this machine has (a Blackwell GPU where the suite fits it, the CPU model elsewhere),
# on every core (-n auto) unless the arguments say otherwise (-n N, -n gpus).
# Extra arguments go to `mmacts run` (e.g. --suite mma_sync_blockscale --backend cuda).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
. .venv/bin/activate
workers=(-n auto)
for arg in "$@"; do
  case "$arg" in
    -n|-n*|--resume|--resume=*) workers=() ;;  # the user's -n; a resume keeps its run's options
  esac
done
rc=0
mmacts run "${workers[@]}" "$@" || rc=$?
echo "mmacts: to use mmacts in this shell: . $(pwd)/.venv/bin/activate" >&2
exit "$rc"
