#!/usr/bin/env bash
# Runs the whole built-in catalogue against the reference client in virtual time once per seed,
# FIRST..LAST (default 1..2000), and prints every run that did not pass with the command that
# reproduces it. Expectations in the catalogue must hold for every seed: a failure here is a
# scenario that over-specifies one draw of the reference's jitter, or a judge or reference bug.
#
#   tools/seed_sweep.sh [FIRST [LAST]] [-- extra `faultline run` arguments]
#
# FAULTLINE names the binary (default build/release/harness/faultline); JOBS the processes run
# at once (default 2; each runs its own seeds with --jobs 1). A seed costs about 0.4 s of CPU.
# Exit code: 0 every seed passed, 1 some run failed or a seed could not run.
set -euo pipefail
cd "$(dirname "$0")/.."

first=${1:-1}
last=${2:-2000}
shift $(( $# < 2 ? $# : 2 ))
[[ "${1:-}" == "--" ]] && shift
faultline=${FAULTLINE:-build/release/harness/faultline}
jobs=${JOBS:-2}
if [[ ! -x "$faultline" ]]; then
  echo "seed_sweep: no faultline binary at $faultline (build it, or set FAULTLINE)" >&2
  exit 1
fi
if ! [[ "$first" =~ ^[0-9]+$ && "$last" =~ ^[0-9]+$ ]] || (( first > last )); then
  echo "usage: tools/seed_sweep.sh [FIRST [LAST]] [-- faultline run arguments]" >&2
  exit 2
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
started=$SECONDS

# One worker: every JOBS-th seed from FIRST + its index. A seed's failures (the closing summary's
# "fail"/"error" lines and their "reproduce:" lines) go to its own file; a seed that could not
# run at all (exit 2 or worse) is reported as such.
sweep() {
  local worker=$1 seed status
  shift
  for (( seed = first + worker; seed <= last; seed += jobs )); do
    status=0
    "$faultline" run --time virtual --seed "$seed" --jobs 1 --no-reports "$@" \
      > "$out/$seed.log" 2>&1 || status=$?
    if (( status == 1 )); then
      awk '/^faultline run: /{summary = 1; next}
           summary && /^  (fail|error) |^      reproduce: /' "$out/$seed.log" > "$out/$seed.failed"
    elif (( status != 0 )); then
      { echo "  seed $seed: faultline run exited $status"; tail -n 5 "$out/$seed.log"; } \
        > "$out/$seed.failed"
    fi
    rm -f "$out/$seed.log"
  done
}

for (( worker = 0; worker < jobs; ++worker )); do
  sweep "$worker" "$@" &
done
wait

seeds=$(( last - first + 1 ))
failed_seeds=0
for (( seed = first; seed <= last; ++seed )); do
  [[ -s "$out/$seed.failed" ]] || continue
  failed_seeds=$(( failed_seeds + 1 ))
  cat "$out/$seed.failed"
done
echo "seed_sweep: seeds $first..$last ($seeds), $failed_seeds with a failure, $(( SECONDS - started )) s"
(( failed_seeds == 0 ))
