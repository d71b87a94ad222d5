#!/usr/bin/env bash
# Where a warm case's wall goes on the GPU host (issue 12): the executor alone, in one process, on the real
# GPU and with the launch faked (executor_profile.py), and the per-case timeline of full runs (timeline.sh).
#   usage: bash validation/h100-percase/where.sh OUT_DIR  (carry .tc, .mmacts-sha); one tarball comes back
set -uo pipefail
out=${1:?output folder}
w=/tmp/h100-where; rm -rf "$w"; mkdir -p "$w" "$out"
source validation/device-prelude.sh
export MMACTS_CACHE_DIR=/tmp/mmacts-cache
record_env "$w/env.txt"
python3 -m mmacts.runner.cli run --suite hopper_validation --level full --backend compile --out /tmp/w > /dev/null 2>&1
timeout 120 python3 validation/h100-percase/executor_profile.py > "$w/executor-gpu.txt" 2>&1
timeout 120 python3 validation/h100-percase/executor_profile.py --fake-gpu > "$w/executor-fake-gpu.txt" 2>&1
timeout 150 bash validation/h100-startup/timeline.sh "$w/timeline" > /dev/null 2>&1
tar -C "$w" -czf "$out/h100-where.tar.gz" . && head -8 "$w"/executor-*.txt && tail -n 24 "$w/timeline/timeline.txt"
