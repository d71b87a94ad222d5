#!/usr/bin/env bash
# Start-up and per-case figures on a GPU host after the start-up cuts (issue 12, point 3), and the
# fault tests with the host's pytest / pytest-xdist (point 4). Outputs go to one tarball (the device
# tool brings back few files).   usage: bash validation/h100-startup/run.sh OUT_DIR  (carry .tc, .mmacts-sha)
set -uo pipefail
out=${1:?output folder}
w=/tmp/h100-startup; rm -rf "$w"; mkdir -p /tmp/tc "$w" "$out"
gunzip -c .tc/ptxas.gz > /tmp/tc/ptxas && cp .tc/nvdisasm /tmp/tc/ && chmod +x /tmp/tc/ptxas /tmp/tc/nvdisasm
export MMACTS_TOOLCHAIN_DIR=/tmp/tc PYTHONPATH=$PWD PYTHONUNBUFFERED=1 MMACTS_GIT_SHA=$(cat .mmacts-sha 2>/dev/null || echo unknown)
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv; python3 --version
  python3 -m pip list 2>/dev/null | grep -iE "^(pytest|pytest-xdist|execnet|cupy|numpy|pandas|pyarrow) "; nproc
  env | grep -E "^PYTHON" | sort; echo "sha $MMACTS_GIT_SHA"; } > "$w/env.txt" 2>&1
timeout 240 python3 -m pytest -q -p no:cacheprovider mmacts/runner/test_faults.py > "$w/test_faults-on-device.txt" 2>&1
echo "rc=$?" >> "$w/test_faults-on-device.txt"
bench() { timeout 290 python3 benchmarks/bench_end_to_end.py --only-gpu --skip-whole --level full "$@" 2>&1; }
bench --suite hopper_validation -n gpus --repeat 4 > "$w/bench-hv-ngpus.txt"
bench --suite probes -k sm_90a -n gpus --repeat 4 > "$w/bench-probes-sm90-ngpus.txt"
bench --suite probes -k sm_90a -n 2 --repeat 3 > "$w/bench-probes-sm90-n2.txt"
bench --suite probes -n gpus --repeat 2 > "$w/bench-probes-all-ngpus.txt"
bench --suite hopper_validation -n 2 --repeat 3 > "$w/bench-hv-n2.txt"
ls -d suites/__pycache__ mmacts/__pycache__ >> "$w/env.txt" 2>&1
tar -C "$w" -czf "$out/h100-startup.tar.gz" . && tail -n 5 "$w"/bench-*.txt "$w/test_faults-on-device.txt" && cat "$w/env.txt"
