#!/usr/bin/env bash
# Per-case timeline of hopper_validation full on the GPU, one process (-n gpus on one GPU), 3 runs.
#   usage: bash validation/h100-startup/timeline.sh OUT_DIR  (carry .tc, .mmacts-sha)
set -uo pipefail
out=${1:?output folder}; mkdir -p /tmp/tc "$out"
gunzip -c .tc/ptxas.gz > /tmp/tc/ptxas && cp .tc/nvdisasm /tmp/tc/ && chmod +x /tmp/tc/ptxas /tmp/tc/nvdisasm
export MMACTS_TOOLCHAIN_DIR=/tmp/tc PYTHONPATH=$PWD PYTHONUNBUFFERED=1 MMACTS_CACHE_DIR=/tmp/mmacts-cache
python3 -m mmacts.runner.cli run --suite hopper_validation --level full --backend compile --out /tmp/tl > /dev/null 2>&1
for i in 1 2 3; do
  rm -f /tmp/marks.txt
  { time MMACTS_TIMING=/tmp/marks.txt MMACTS_TIMING_CASES=1 python3 -m mmacts.runner.cli run --suite hopper_validation \
      --level full --backend cuda -n gpus --out /tmp/tl > /dev/null 2>&1; } 2>> "$out/timeline.txt"
  python3 validation/h100-startup/case-timeline.py /tmp/marks.txt >> "$out/timeline.txt" 2>&1
  python3 - >> "$out/timeline.txt" 2>&1 <<'PY'
from mmacts.runner import timing
m = timing.read('/tmp/marks.txt'); t0 = m[0][0]
print(' '.join(f"{n}={t - t0:.2f}" for t, w, n in m if not n.startswith(('case_', 'exec_'))))
PY
done
cat "$out/timeline.txt"
