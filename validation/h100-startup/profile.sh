#!/usr/bin/env bash
# Where the start-up of a GPU run goes on a GPU host (issue 12, point 3): each piece timed alone,
# then cProfile / -X importtime of a one-case run, then the benchmark figures.
#   usage: bash validation/h100-startup/profile.sh OUT_DIR   (carry .tc and .mmacts-sha)
set -uo pipefail
out=${1:?output folder}
mkdir -p /tmp/tc "$out"
gunzip -c .tc/ptxas.gz > /tmp/tc/ptxas && cp .tc/nvdisasm /tmp/tc/ && chmod +x /tmp/tc/ptxas /tmp/tc/nvdisasm
export MMACTS_TOOLCHAIN_DIR=/tmp/tc PYTHONPATH=$PWD PYTHONUNBUFFERED=1 MMACTS_GIT_SHA=$(cat .mmacts-sha 2>/dev/null || echo unknown)
export MMACTS_CACHE_DIR=/tmp/mmacts-cache
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv; python3 --version; nproc; } > "$out/env.txt" 2>&1
# 1. the pieces, each in a fresh interpreter, 3 times
for i in 1 2 3; do python3 - >> "$out/pieces.txt" 2>&1 <<'PY'
import time, ctypes
t0 = time.perf_counter(); import numpy; t1 = time.perf_counter()
import cupy; t2 = time.perf_counter()
from cupy.cuda import runtime
n = runtime.getDeviceCount(); t3 = time.perf_counter()
p = runtime.getDeviceProperties(0); t4 = time.perf_counter()
runtime.driverGetVersion(); runtime.runtimeGetVersion(); t5 = time.perf_counter()
a = cupy.empty(16, dtype=cupy.uint8); t6 = time.perf_counter()
a.fill(0); cupy.cuda.Device(0).synchronize(); t7 = time.perf_counter()
src = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p){ret;}\n"
m = cupy.RawModule(code=src, backend="nvcc" if False else "nvrtc", options=()) if False else None
t8 = time.perf_counter()
try:
    nv = ctypes.CDLL("libnvidia-ml.so.1"); nv.nvmlInit_v2(); c = ctypes.c_uint(); nv.nvmlDeviceGetCount_v2(ctypes.byref(c))
    nvml = f"nvml init+count {time.perf_counter() - t8:.3f}s ({c.value})"
except OSError as e:
    nvml = f"nvml: {e}"
t9 = time.perf_counter()
try:
    cu = ctypes.CDLL("libcuda.so.1"); rc = cu.cuInit(0); cnt = ctypes.c_int(); cu.cuDeviceGetCount(ctypes.byref(cnt))
    drv = f"cuInit+count (after cupy) {time.perf_counter() - t9:.3f}s"
except OSError as e:
    drv = f"libcuda: {e}"
print(f"numpy {t1-t0:.3f} cupy-import {t2-t1:.3f} count {t3-t2:.3f} props {t4-t3:.3f} versions {t5-t4:.3f} "
      f"first-alloc {t6-t5:.3f} fill+sync {t7-t6:.3f} | {nvml} | {drv}")
PY
done
for i in 1 2 3; do python3 - >> "$out/pieces.txt" 2>&1 <<'PY'
import time, ctypes
t0 = time.perf_counter()
cu = ctypes.CDLL("libcuda.so.1"); cu.cuInit(0); cnt = ctypes.c_int(); cu.cuDeviceGetCount(ctypes.byref(cnt)); t1 = time.perf_counter()
nv = ctypes.CDLL("libnvidia-ml.so.1"); nv.nvmlInit_v2(); t2 = time.perf_counter()
print(f"fresh: cuInit+count {t1-t0:.3f}s, nvmlInit {t2-t1:.3f}s")
PY
done
tm() { local label=$1; shift; local t0=$EPOCHREALTIME; "$@" > /dev/null 2>&1; echo "$label $(awk "BEGIN{print $EPOCHREALTIME - $t0}") s" >> "$out/pieces.txt"; }
for i in 1 2; do tm "ptxas --version" /tmp/tc/ptxas --version; tm "nvdisasm --version" /tmp/tc/nvdisasm --version
  tm "python3 -c pass" python3 -c pass; tm "pytest --version" python3 -m pytest --version
  tm "mmacts list probes" python3 -m mmacts.runner.cli list --suite probes --level full; done
# 2. one-case runs profiled (warm caches from a first full run)
python3 -m mmacts.runner.cli run --suite probes --suite hopper_validation --level full --backend cuda -n gpus --out /tmp/warm > /dev/null 2>&1
MMACTS_TIMING=$out/marks-probes-one.txt python3 -X importtime -m cProfile -o "$out/cli-probes-one.prof" -m mmacts.runner.cli run --suite probes --level full --backend cuda -n gpus -k "neab and mma_sync and sm_90a" --out /tmp/one > /dev/null 2> "$out/importtime-cli.txt"
PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -X importtime -m cProfile -o "$out/pytest-probes-one.prof" -m pytest suites/test_cases.py --mmacts-suite=probes -p no:cacheprovider \
  -qq -rN --rootdir=. -c tox.ini --mmacts-level=full --mmacts-backend=cuda --mmacts-out=/tmp/one-py -m mmacts_case --assert=plain \
  -p mmacts.runner.select_plugin -k "neab and mma_sync and sm_90a" > /dev/null 2> "$out/importtime-pytest.txt"
PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m cProfile -o "$out/pytest-probes-all.prof" -m pytest suites/test_cases.py --mmacts-suite=probes -p no:cacheprovider \
  -qq -rN --rootdir=. -c tox.ini --mmacts-level=full --mmacts-backend=cuda --mmacts-out=/tmp/all-py -m mmacts_case --assert=plain \
  -p mmacts.runner.select_plugin -k "sm_90a" > /dev/null 2>&1
for f in cli-probes-one pytest-probes-one pytest-probes-all; do
  python3 -c "import pstats,sys; s=pstats.Stats('$out/$f.prof'); s.sort_stats('cumulative').print_stats(70); s.sort_stats('tottime').print_stats(25)" > "$out/$f.txt" 2>&1
done
# 3. benchmark figures
bench() { timeout 280 python3 benchmarks/bench_end_to_end.py --only-gpu --skip-whole --level full "$@" 2>&1; }
bench --suite probes -k sm_90a -n gpus --repeat 2 > "$out/bench-probes-sm90-ngpus.txt"
bench --suite hopper_validation -n gpus --repeat 2 > "$out/bench-hv-ngpus.txt"
tail -n 4 "$out"/bench-*.txt; cat "$out/pieces.txt"
