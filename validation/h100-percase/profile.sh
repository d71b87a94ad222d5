#!/usr/bin/env bash
# Where a warm GPU run's per-case time goes (issue 12, point 3): cProfile of the single test process,
# hopper_validation full and the sm_90a probes, compile cache and answer cache filled first.
#   usage: bash validation/h100-percase/profile.sh OUT_DIR  (carry .tc, .mmacts-sha); one tarball comes back
set -uo pipefail
out=${1:?output folder}
w=/tmp/h100-prof; rm -rf "$w"; mkdir -p "$w" "$out"
source validation/device-prelude.sh
export MMACTS_CACHE_DIR=/tmp/mmacts-cache PYTHONPYCACHEPREFIX=/tmp/mmacts-cache/pycache
python3 -m mmacts.runner.cli run --suite hopper_validation --suite probes --level full --backend cuda -n gpus --out /tmp/runs > "$w/run.txt" 2>&1
prof() { local name=$1; shift; mkdir -p /tmp/p-$name
  PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m cProfile -o "$w/$name.prof" -m pytest suites/test_cases.py -p no:cacheprovider -qq -rN \
    --tb=no --mmacts-quiet --assert=plain --rootdir=. -c tox.ini --mmacts-level=full --mmacts-backend=cuda --mmacts-out=/tmp/p-$name \
    --mmacts-answer-cache=/tmp/mmacts-cache/answers -p no:logging -m mmacts_case -p mmacts.runner.select_plugin "$@" > /dev/null 2>&1
  python3 -c "import pstats; s=pstats.Stats('$w/$name.prof'); s.sort_stats('cumulative').print_stats(110); s.sort_stats('tottime').print_stats(50)" \
    > "$w/$name.txt" 2>&1; rm -f "$w/$name.prof"; }
prof hv --mmacts-suite=hopper_validation
prof hv-again --mmacts-suite=hopper_validation
prof probes --mmacts-suite=probes -k sm_90a
tar -C "$w" -czf "$out/h100-prof.tar.gz" . && head -c 6000 "$w/hv-again.txt"
