#!/usr/bin/env bash
# Per-case wall on a GPU host, session 4 (issue 12, point 3): hopper_validation and the Hopper probes at
# the full level with one test process (-n gpus on one GPU) and with several processes sharing the GPU
# (-n 2, --backend cuda shares GPUs round robin), answers cached and not, a per-case timeline, and the
# GPU-side unit tests.
#   usage: bash validation/h100-percase/run.sh OUT_DIR  (carry .tc, .mmacts-sha); one tarball comes back
set -uo pipefail
out=${1:?output folder}
w=/tmp/h100-percase; rm -rf "$w"; mkdir -p "$w" "$out"
source validation/device-prelude.sh
record_env "$w/env.txt"
gpu_unit_tests "$w/gpu-unit-tests.txt"
bench --suite hopper_validation -n gpus --repeat 5 > "$w/bench-hv-ngpus.txt"
bench --suite hopper_validation -n gpus --repeat 3 --answers off > "$w/bench-hv-ngpus-answers-off.txt"
bench --suite probes -k sm_90a -n gpus --repeat 4 > "$w/bench-probes-sm90-ngpus.txt"
T=150 bench --suite hopper_validation -n 2 --repeat 3 > "$w/bench-hv-n2.txt"
T=120 bench --suite probes -n gpus --repeat 2 > "$w/bench-probes-all-ngpus.txt"
timeout 120 bash validation/h100-startup/timeline.sh "$w/timeline" > /dev/null 2>&1
tar -C "$w" -czf "$out/h100-percase.tar.gz" . && tail -n 9 "$w"/bench-*.txt "$w/gpu-unit-tests.txt" && tail -n 30 "$w/timeline/timeline.txt"; cat "$w/env.txt"
