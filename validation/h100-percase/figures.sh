#!/usr/bin/env bash
# The issue-12 figures only (no unit tests, no timeline): per suite that runs on Hopper, full level, one test
# process (-n gpus on one GPU), warm caches, answers cached and not.
#   usage: bash validation/h100-percase/figures.sh OUT_DIR  (carry .tc, .mmacts-sha); one tarball comes back
set -uo pipefail
out=${1:?output folder}
w=/tmp/h100-figures; rm -rf "$w"; mkdir -p "$w" "$out"
source validation/device-prelude.sh
record_env "$w/env.txt"
bench --suite hopper_validation -n gpus --repeat 6 > "$w/bench-hv-ngpus.txt"
bench --suite probes -k sm_90a -n gpus --repeat 6 > "$w/bench-probes-sm90-ngpus.txt"
bench --suite probes -n gpus --repeat 3 > "$w/bench-probes-all-ngpus.txt"
T=120 bench --suite hopper_validation -n gpus --repeat 3 --answers off > "$w/bench-hv-ngpus-answers-off.txt"
tar -C "$w" -czf "$out/h100-figures.tar.gz" . && tail -n 9 "$w"/bench-*.txt; cat "$w/env.txt"
