#!/usr/bin/env bash
# Where a GPU run's per-case wall time goes (issue 12, point 3): run_s per case by recipe, and
# cProfile of the single test process (hopper_validation full; probes on the sm_90a paths).
#   usage: bash validation/h100-startup/profile-cases.sh OUT_DIR  (carry .tc, .mmacts-sha)
set -uo pipefail
out=${1:?output folder}
w=/tmp/h100-cases; rm -rf "$w"; mkdir -p /tmp/tc "$w" "$out"
gunzip -c .tc/ptxas.gz > /tmp/tc/ptxas && cp .tc/nvdisasm /tmp/tc/ && chmod +x /tmp/tc/ptxas /tmp/tc/nvdisasm
export MMACTS_TOOLCHAIN_DIR=/tmp/tc PYTHONPATH=$PWD PYTHONUNBUFFERED=1 MMACTS_GIT_SHA=$(cat .mmacts-sha 2>/dev/null || echo unknown)
export MMACTS_CACHE_DIR=/tmp/mmacts-cache PYTHONPYCACHEPREFIX=/tmp/mmacts-cache/pycache
python3 -m mmacts.runner.cli run --suite hopper_validation --suite probes --level full --backend cuda -n gpus --out /tmp/runs > "$w/run.txt" 2>&1
python3 -m mmacts.runner.cli run --suite hopper_validation --suite probes --level full --backend cuda -n gpus --out /tmp/runs >> "$w/run.txt" 2>&1
python3 - > "$w/run_s.txt" 2>&1 <<'PY'
import glob, pandas as pd
d = sorted(glob.glob('/tmp/runs/*'))[-1]
r = pd.read_parquet(d + '/results.parquet')
r['recipe'] = r.case_id.str.split('.').str[1:3].str.join('.')
print(r.groupby(['suite', 'status']).run_s.agg(['count', 'sum', 'mean', 'max']).to_string())
print(r.sort_values('run_s', ascending=False)[['case_id', 'status', 'run_s', 'kernel_us']].head(25).to_string())
PY
prof() { local name=$1; shift; mkdir -p /tmp/p-$name
  PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m cProfile -o "$w/$name.prof" -m pytest suites/test_cases.py -p no:cacheprovider -qq -rN \
    --tb=no --mmacts-quiet --assert=plain --rootdir=. -c tox.ini --mmacts-level=full --mmacts-backend=cuda --mmacts-out=/tmp/p-$name \
    -m mmacts_case -p mmacts.runner.select_plugin "$@" > /dev/null 2>&1
  python3 -c "import pstats; s=pstats.Stats('$w/$name.prof'); s.sort_stats('cumulative').print_stats(90); s.sort_stats('tottime').print_stats(40); \
s.print_callees('plugin.py.*(pytest_runtest|run_case|_record|makereport|logreport)')" > "$w/$name.txt" 2>&1; rm -f "$w/$name.prof"; }
prof hv --mmacts-suite=hopper_validation
prof probes --mmacts-suite=probes -k sm_90a
bench() { timeout 280 python3 benchmarks/bench_end_to_end.py --only-gpu --skip-whole --level full "$@" 2>&1; }
bench --suite hopper_validation -n gpus --repeat 3 > "$w/bench-hv-ngpus.txt"
bench --suite probes -k sm_90a -n gpus --repeat 3 > "$w/bench-probes-sm90-ngpus.txt"
tar -C "$w" -czf "$out/h100-cases.tar.gz" . && tail -n 6 "$w"/bench-*.txt && cat "$w/run_s.txt" | head -30
