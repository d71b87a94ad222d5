#!/usr/bin/env bash
# Session 5's closing measurement (issue 12): the GPU-side unit tests and the crash-recovery test on the
# host's own pytest/xdist, then the figures with more repeats than figures.sh (the per-pair spread on a
# shared 16-core host is +-1 ms per case), hopper_validation also at -n 2.
#   usage: bash validation/h100-percase/final.sh OUT_DIR  (carry .tc, .mmacts-sha); one tarball comes back
set -uo pipefail
out=${1:?output folder}
w=/tmp/h100-final; rm -rf "$w"; mkdir -p "$w" "$out"
source validation/device-prelude.sh
record_env "$w/env.txt"
timeout 150 python3 -m pytest -q -p no:cacheprovider mmacts/runner/test_faults.py > "$w/test_faults.txt" 2>&1
echo "rc=$?" >> "$w/test_faults.txt"
gpu_unit_tests "$w/gpu-unit-tests.txt"
bench --suite hopper_validation -n gpus --repeat 8 > "$w/bench-hv-ngpus.txt"
T=120 bench --suite hopper_validation -n gpus --repeat 4 --answers off > "$w/bench-hv-ngpus-answers-off.txt"
bench --suite probes -k sm_90a -n gpus --repeat 6 > "$w/bench-probes-sm90-ngpus.txt"
T=120 bench --suite probes -n gpus --repeat 3 > "$w/bench-probes-all-ngpus.txt"
T=120 bench --suite hopper_validation -n 2 --repeat 3 > "$w/bench-hv-n2.txt"
timeout 120 python3 validation/h100-percase/executor_profile.py > "$w/executor-gpu.txt" 2>&1
timeout 150 bash validation/h100-startup/timeline.sh "$w/timeline" > /dev/null 2>&1
tar -C "$w" -czf "$out/h100-final.tar.gz" . && tail -n 9 "$w"/bench-*.txt; tail -n 3 "$w"/test_faults.txt "$w"/gpu-unit-tests.txt
head -5 "$w/executor-gpu.txt"; tail -n 12 "$w/timeline/timeline.txt"; cat "$w/env.txt"
