#!/usr/bin/env bash
# Builds the `fuzz` preset (clang-19, libFuzzer + ASan + UBSan) and runs each fuzz target on its
# generated seed corpus, one after the other, printing execs/s and total execs per target. Fails
# on any crash, leak, sanitizer report or violated property (the input is kept in
# build/fuzz/artifacts/TARGET/ to reproduce with `build/fuzz/.../TARGET FILE`).
#
#   tools/fuzz.sh [SECONDS] [TARGET...]   each target for SECONDS (default 60); all targets
#   tools/fuzz.sh --smoke [TARGET...]     each target for 5 s (what CI runs)
#
# Environment: FAULTLINE_JOBS (build parallelism, default: all cores), FUZZ_ARGS (more libFuzzer
# flags, e.g. "-max_len=4096"). Runs `tools/setup.sh --fuzz` first, like tools/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
if [[ ${1:-} == --smoke ]]; then
  seconds=5
  shift
elif [[ ${1:-} =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi

tools/setup.sh --fuzz  # clang-19 and its compiler-rt; a no-op once they are installed

build=build/fuzz
jobs=${FAULTLINE_JOBS:-$(nproc)}
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$jobs" --target faultline_fuzzers faultline_fuzz_corpus

corpus=$build/corpus
"$build/fuzz/faultline_fuzz_corpus" "$corpus"

mapfile -t all < <(find "$build" -path '*/fuzz/*' -type f -executable -name '*_fuzz' | sort)
if (($# > 0)); then
  selected=()
  for name in "$@"; do
    match=$(printf '%s\n' "${all[@]}" | grep "/$name\$" || true)
    [[ -n $match ]] || { echo "fuzz: no target named $name" >&2; exit 2; }
    selected+=("$match")
  done
else
  selected=("${all[@]}")
fi

failed=()
printf '%-22s %10s %14s %s\n' target execs/s execs result
for target in "${selected[@]}"; do
  name=$(basename "$target")
  mkdir -p "$corpus/$name" "$build/artifacts/$name"
  log="$build/artifacts/$name/last-run.log"
  # shellcheck disable=SC2086  # FUZZ_ARGS is a list of flags
  if "$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$build/artifacts/$name/" ${FUZZ_ARGS:-} "$corpus/$name" >"$log" 2>&1; then
    result=ok
  else
    result="FAILED (see $log)"
    failed+=("$name")
  fi
  execs=$(grep -oP 'stat::number_of_executed_units:\s*\K[0-9]+' "$log" || echo "?")
  rate=$(grep -oP 'stat::average_exec_per_sec:\s*\K[0-9]+' "$log" || echo "?")
  printf '%-22s %10s %14s %s\n' "$name" "$rate" "$execs" "$result"
done

if ((${#failed[@]} > 0)); then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
  for name in "${failed[@]}"; do tail -n 40 "$build/artifacts/$name/last-run.log" >&2; done
  exit 1
fi
echo "fuzz: ${#selected[@]} target(s) passed, ${seconds}s each"
