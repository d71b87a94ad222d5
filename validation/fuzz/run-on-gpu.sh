#!/usr/bin/env bash
# Record the PTX fuzz corpus on a GPU host (issue 22). Carry .tc (ptxas.gz, nvdisasm) as for the other
# device recipes; the host needs python3 with numpy and CuPy. Then, here:
#   python -m mmacts.validation.fuzz.record store OUT/fz validation/fuzz/<device>-<date>
#   usage: bash validation/fuzz/run-on-gpu.sh OUT [SEEDS [--unit]]   (SEEDS default 1-2400; --unit: the unit kernels too)
set -euo pipefail
out=${1:?output folder}; seeds=${2:-1-2400}; shift $(( $# < 2 ? $# : 2 ))
source validation/device-prelude.sh
export MMACTS_CACHE_DIR=/tmp/mmacts-cache
mkdir -p "$out/fz"
record_env "$out/fz/device-env.txt"
python3 -m mmacts.validation.fuzz.record device "$out/fz" --seeds "$seeds" --jobs "$(nproc)" "$@" 2>&1 | tee "$out/fz/device-run.log"
