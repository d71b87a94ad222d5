#!/usr/bin/env bash
# Run the suites on a GPU host that has no network and no NVIDIA wheels, as the committed
# validation reports were made. Carry ptxas/nvdisasm 13.5.37 (from the nvidia-cuda-nvcc /
# nvidia-cuda-nvdisasm wheels) in .tc/ (ptxas gzipped); the run records MMACTS_TOOLCHAIN_DIR.
#   usage: bash validation/run-on-gpu-host.sh OUT_DIR [GIT_SHA]
# Without GIT_SHA the sha comes from .mmacts-sha (write it before the tree travels:
# `git rev-parse HEAD > .mmacts-sha`; it is git-ignored, so carry it with .tc), so nobody types it.
set -euo pipefail
out=${1:?output folder}; sha=${2:-$(cat .mmacts-sha 2>/dev/null || echo unknown)}
mkdir -p /tmp/tc "$out"
gunzip -c .tc/ptxas.gz > /tmp/tc/ptxas && cp .tc/nvdisasm /tmp/tc/ && chmod +x /tmp/tc/ptxas /tmp/tc/nvdisasm
export MMACTS_TOOLCHAIN_DIR=/tmp/tc PYTHONPATH=$PWD PYTHONUNBUFFERED=1 MMACTS_GIT_SHA=$sha MMACTS_CACHE_DIR=/tmp/mmacts-cache
nvidia-smi -L || true
run() { python3 -m mmacts.runner.cli run --out "$out/runs" "$@" 2>&1 | tail -40; }
# 1. Hopper validation on every GPU of the host, one pinned worker per GPU.
run --suite hopper_validation --level full --backend cuda -n gpus
# 2. The Blackwell suites on a Hopper: every case must skip with its reason, nothing may crash.
run --suite tcgen05_blockscale --suite mma_sync_blockscale --suite probes --level standard --backend cuda -n gpus
# 3. GPU timing: kernel time, launch overhead per case, cases per launch.
python3 benchmarks/bench_end_to_end.py --suite hopper_validation --gpu --skip-whole -n 2 2>&1 | tee "$out/bench.txt" | tail -30
tar -C "$out" -czf "$out/runs.tar.gz" runs && rm -rf "$out/runs"
