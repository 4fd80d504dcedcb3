#!/usr/bin/env bash
# Sets up the machine, builds, and runs the main job (the README's main command): the built-in
# scenario catalogue against the reference recovery client, in virtual time and over real
# sockets, with the reports written to faultline-reports/ (result.json, junit.xml, summary.md,
# report.html). Extra arguments go to `faultline run` (e.g. --filter 'rate-limit/*').
# Exit code: that of `faultline run` (0 all passed, 1 a check failed, 2 bad usage or input).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh --main
# The main job needs the faultline binary alone: the tests, benchmarks and tools are left to
# tools/test.sh, which builds everything.
tools/build.sh release faultline
status=0
build/release/harness/faultline run --time both --out faultline-reports "$@" || status=$?
if [[ -f faultline-reports/summary.md ]]; then
  echo
  echo "Summary (faultline-reports/summary.md); open faultline-reports/report.html for timelines:"
  head -n 30 faultline-reports/summary.md
fi
exit "$status"
