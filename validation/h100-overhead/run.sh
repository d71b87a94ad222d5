#!/usr/bin/env bash
# Harness overhead and crash recovery on a GPU host (issue 12, points 3 and 4), as the figures in
# this folder were made. Needs the toolchain carried in .tc/ (MMACTS_TC; see validation/run-on-gpu-host.sh);
# optionally .before/ (MMACTS_BEFORE) = the tree before the change (git archive of the base commit,
# with this benchmark file copied in) for the "before" figures.
#   usage: bash validation/h100-overhead/run.sh OUT_DIR
set -uo pipefail
out=${1:?output folder}
tc=${MMACTS_TC:-.tc}
before=${MMACTS_BEFORE:-.before}
mkdir -p /tmp/tc "$out"
gunzip -c "$tc/ptxas.gz" > /tmp/tc/ptxas && cp "$tc/nvdisasm" /tmp/tc/ && chmod +x /tmp/tc/ptxas /tmp/tc/nvdisasm
export MMACTS_TOOLCHAIN_DIR=/tmp/tc PYTHONPATH=$PWD PYTHONUNBUFFERED=1 MMACTS_GIT_SHA=$(cat .mmacts-sha 2>/dev/null || echo unknown)
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv; python3 --version
  python3 -m pip list 2>/dev/null | grep -iE "^(pytest|pytest-xdist|execnet|cupy|numpy|pandas|pyarrow) "; nproc; } > "$out/env.txt" 2>&1
# 4. the fault tests, with this host's pytest / pytest-xdist
timeout 240 python3 -m pytest -q -p no:cacheprovider mmacts/runner/test_faults.py > "$out/test_faults-on-device.txt" 2>&1
echo "rc=$?" >> "$out/test_faults-on-device.txt"
# 3. overhead: hopper_validation full and the sm_90 probes; -n 2 (as the earlier figures), -n gpus, -n 4
bench() { timeout 300 python3 benchmarks/bench_end_to_end.py --only-gpu --skip-whole --level full "$@" 2>&1; }
bench --suite hopper_validation -n 2 --repeat 3 > "$out/bench-hopper_validation-full-n2.txt"
bench --suite hopper_validation -n gpus --repeat 3 > "$out/bench-hopper_validation-full-ngpus.txt"
bench --suite hopper_validation -n 4 --repeat 2 > "$out/bench-hopper_validation-full-n4.txt"
bench --suite probes -k sm_90a -n 2 --repeat 2 > "$out/bench-probes-sm_90a-full-n2.txt"
bench --suite probes -n 2 --no-fit > "$out/bench-probes-full-n2.txt"
if [ -d "$before" ]; then
  (cd "$before" && PYTHONPATH=$PWD timeout 300 python3 benchmarks/bench_end_to_end.py --only-gpu --skip-whole --level full \
     --suite hopper_validation -n 2 > "$out/before-bench-hopper_validation-full-n2.txt" 2>&1)
fi
# where the time of one process goes (single process, warm caches from the runs above)
export MMACTS_CACHE_DIR=/tmp/mmacts-prof-cache
python3 -m mmacts.runner.cli run --suite hopper_validation --level full --backend compile --out /tmp/prof-runs > /dev/null 2>&1
mkdir -p /tmp/prof-run
PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m cProfile -o /tmp/prof.out -m pytest suites/test_cases.py --mmacts-suite=hopper_validation -p no:cacheprovider \
  -q -rN --rootdir=. -c tox.ini --mmacts-level=full --mmacts-backend=cuda --mmacts-out=/tmp/prof-run -m mmacts_case \
  --assert=plain > /dev/null 2>&1
python3 -c "import pstats; s = pstats.Stats('/tmp/prof.out'); s.sort_stats('cumulative').print_stats(60); \
s.sort_stats('tottime').print_stats(30); s.print_callees('_cuda_result|execute.py.*_run')" > "$out/profile-hopper-cuda.txt" 2>&1
tail -n 3 "$out"/*.txt
