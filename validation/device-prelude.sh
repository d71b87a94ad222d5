# Sourced by the device recipes: the carried toolchain (.tc) unpacked to /tmp/tc and the environment a
# recipe's mmacts runs need. Sets: MMACTS_TOOLCHAIN_DIR, PYTHONPATH, PYTHONUNBUFFERED, MMACTS_GIT_SHA.
# .tcp/ (ptxas.xz, nvdisasm.xz: 17 MB, git-excluded) is the smaller carry when the tree nears the device tool's
# 64 MiB; .tc/ (ptxas.gz, nvdisasm: 22 MB) otherwise.
mkdir -p /tmp/tc
if [ -f .tcp/ptxas.xz ]; then
  xz -dc .tcp/ptxas.xz > /tmp/tc/ptxas && xz -dc .tcp/nvdisasm.xz > /tmp/tc/nvdisasm
else
  gunzip -c .tc/ptxas.gz > /tmp/tc/ptxas && cp .tc/nvdisasm /tmp/tc/
fi
chmod +x /tmp/tc/ptxas /tmp/tc/nvdisasm
export MMACTS_TOOLCHAIN_DIR=/tmp/tc PYTHONPATH=$PWD PYTHONUNBUFFERED=1
MMACTS_GIT_SHA=$(cat .mmacts-sha 2>/dev/null || echo unknown)
export MMACTS_GIT_SHA

# record_env FILE: the GPU, driver, Python and the packages that shape a run's timing, and the commit.
record_env() {
  { date -u; nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv; python3 --version
    python3 -m pip list 2>/dev/null | grep -iE "^(pytest|pytest-xdist|execnet|cupy|numpy|pandas|pyarrow) "; nproc
    env | grep -E "^PYTHON" | sort; echo "sha $MMACTS_GIT_SHA"; } > "$1" 2>&1
}

# gpu_unit_tests FILE: the CuPy runtime and GPU-fault unit tests, their exit code last.
gpu_unit_tests() {
  timeout 120 python3 -m pytest -q -p no:cacheprovider mmacts/backends/test_cuda_runtime.py \
    mmacts/backends/test_gpu_faults.py > "$1" 2>&1
  echo "rc=$?" >> "$1"
}

# bench ARGS...: the end-to-end benchmark's GPU layer at the full level (T seconds at most, default 200).
bench() { timeout "${T:-200}" python3 benchmarks/bench_end_to_end.py --only-gpu --skip-whole --level full "$@" 2>&1; }
