#!/usr/bin/env bash
# Build probe.cu for sm_90a with nvcc (the nvidia-cuda-nvcc wheel's, or NVCC=...), then run it with CuPy on the
# GPU and print the shared::cluster address layout. Needs an sm_90+ GPU, CuPy and python3.
# Usage: validation/probes/cluster_shared_addresses/run.sh [ARCH]   (ARCH default sm_90a; sm_100a on Blackwell)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
arch=${1:-sm_90a}
if [ -z "${NVCC:-}" ]; then
  NVCC=$(python3 -c 'import nvidia.cu13, os; print(os.path.join(list(nvidia.cu13.__path__)[0], "bin", "nvcc"))' \
         2>/dev/null || command -v nvcc)
fi
out=${OUT:-$here/build}
mkdir -p "$out"
"$NVCC" -arch="$arch" -cubin -o "$out/probe.cubin" "$here/probe.cu"
"$NVCC" -arch="$arch" -ptx -o "$out/probe.ptx" "$here/probe.cu"
python3 "$here/run.py" "$out/probe.cubin" | tee "$out/probe.txt"
