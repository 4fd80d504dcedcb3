#!/usr/bin/env bash
# Runs the storm benchmark of the fleet simulator and the SimPy model of the same storm in turn
# on one core, RUNS times (A B A B ...: pairing keeps each ratio meaningful while a shared
# machine's speed drifts), and prints both rates, both models' amplification, and the ratio of
# every pair with its median, min and max. Rates are per CPU second of each process.
#   fleet/bench/compare_simpy.sh [BUILD_DIR] [RUNS]     (defaults: build/release, 5)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build/release}
runs=${2:-5}
bench="$build/fleet/fleet_bench"
[[ -x "$bench" ]] || { echo "compare_simpy: build fleet_bench first ($bench)" >&2; exit 2; }
# Debian's interpreter has python3-simpy3 (tools/setup.sh); a pyenv python3 on PATH may not.
python=/usr/bin/python3
"$python" -c "import simpy" 2>/dev/null || { echo "compare_simpy: $python lacks simpy (apt install python3-simpy3)" >&2; exit 2; }

pairs=()
for ((run = 1; run <= runs; ++run)); do
  ours=$(taskset -c 0 "$bench" --benchmark_filter='BM_Storm' --benchmark_format=json \
           --benchmark_min_time=1 2>/dev/null |
         "$python" -c 'import json,sys; b=json.load(sys.stdin)["benchmarks"][0]; print(json.dumps(b))')
  simpy=$(taskset -c 0 "$python" "$here/simpy_storm.py" "$run")
  pairs+=("$ours" "$simpy")
  echo "compare_simpy: run $run/$runs done" >&2
done
"$python" - "${pairs[@]}" <<'PY'
import json, statistics, sys
values = [json.loads(v) for v in sys.argv[1:]]
ours, simpy = values[0::2], values[1::2]
ratios = [o["attempts_per_s"] / s["attempts_per_s"] for o, s in zip(ours, simpy)]
def spread(xs, fmt):
    return f"median {fmt(statistics.median(xs))} (min {fmt(min(xs))}, max {fmt(max(xs))})"
rate = lambda x: f"{x:,.0f}"
print(f"fleet simulator: {spread([o['attempts_per_s'] for o in ours], rate)} attempts/s; "
      f"{statistics.mean(o['attempts_per_run'] for o in ours):,.0f} attempts and "
      f"amplification {statistics.mean(o['amplification'] for o in ours):.3f} per storm")
print(f"SimPy model:     {spread([s['attempts_per_s'] for s in simpy], rate)} attempts/s; "
      f"{statistics.mean(s['attempts'] for s in simpy):,.0f} attempts and "
      f"amplification {statistics.mean(s['amplification'] for s in simpy):.3f} per storm")
print(f"ratio ({len(ratios)} pairs): {spread(ratios, lambda x: f'{x:.1f}x')}; "
      f"each: {', '.join(f'{r:.1f}' for r in ratios)}")
PY
