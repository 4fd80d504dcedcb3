#!/usr/bin/env bash
# Runs the storm benchmark of the fleet simulator and the SimPy model of the same storm, one
# after the other on this machine, and prints both rates and their ratio.
#   fleet/bench/compare_simpy.sh [BUILD_DIR]     (default: build/release)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build/release}
bench="$build/fleet/fleet_bench"
[[ -x "$bench" ]] || { echo "compare_simpy: build fleet_bench first ($bench)" >&2; exit 2; }
# Debian's interpreter has python3-simpy3 (tools/setup.sh); a pyenv python3 on PATH may not.
python=/usr/bin/python3
"$python" -c "import simpy" 2>/dev/null || { echo "compare_simpy: $python lacks simpy (apt install python3-simpy3)" >&2; exit 2; }

ours=$(taskset -c 0 "$bench" --benchmark_filter='BM_Storm' --benchmark_format=json \
         --benchmark_min_time=2 2>/dev/null |
       "$python" -c 'import json,sys; b=json.load(sys.stdin)["benchmarks"][0]; print(b["attempts_per_s"], b["attempts_per_run"])')
read -r ours_rate ours_attempts <<<"$ours"
simpy=$(taskset -c 0 "$python" "$here/simpy_storm.py" 1)
simpy_rate=$("$python" -c 'import json,sys; print(json.loads(sys.argv[1])["attempts_per_s"])' "$simpy")
simpy_attempts=$("$python" -c 'import json,sys; print(json.loads(sys.argv[1])["attempts"])' "$simpy")
"$python" - "$ours_rate" "$ours_attempts" "$simpy_rate" "$simpy_attempts" <<'PY'
import sys
ours, ours_n, simpy, simpy_n = map(float, sys.argv[1:])
print(f"fleet simulator: {ours:,.0f} attempts/s ({ours_n:,.0f} attempts per storm)")
print(f"SimPy model:     {simpy:,.0f} attempts/s ({simpy_n:,.0f} attempts per storm)")
print(f"ratio:           {ours / simpy:,.1f}x")
PY
