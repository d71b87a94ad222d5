#!/usr/bin/env bash
# Run a tensor-core fuzz build on the GPU (repo root, python3 with numpy + CuPy; no ptxas needed):
#   bash mmacts/validation/fuzz_tc/device.sh BUILD OUT
# device_run.py exits 3 when a kernel poisoned the CUDA context; a fresh process resumes after the
# launches already recorded (at most 8 processes). The log goes to OUT/device-run.log (store keeps it).
set -u
build=${1:?usage: device.sh BUILD OUT}
out=${2:?usage: device.sh BUILD OUT}
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
for attempt in 1 2 3 4 5 6 7 8; do
  python3 mmacts/validation/fuzz_tc/device_run.py "$build" "$out" 2>&1 | tee -a "$out/device-run.log"
  rc=${PIPESTATUS[0]}
  [ "$rc" -ne 3 ] && exit "$rc"
  echo "device.sh: attempt $attempt ended on a poisoned context; resuming" | tee -a "$out/device-run.log"
done
exit 3
