#!/usr/bin/env bash
# Sets up the machine, builds, and runs every test. This is the README's test command and what CI
# runs (.ci/run). Usage: tools/test.sh [PRESET]   (default: release; also dev, asan, tsan)
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
tools/setup.sh
# The SDK smoke test and the SDK adapters drive the official npm packages (pinned, from npm).
if command -v npm >/dev/null; then
  fake_provider/tests/sdk/setup.sh
  harness/adapters/setup.sh
  harness/adapters/setup.sh --in harness/gateways/packages  # Portkey (faultline run --gateway portkey)
fi
tools/build.sh "$preset"
ctest --preset "$preset" -j "${FAULTLINE_JOBS:-$(nproc)}" --timeout 300
# Every fuzz target for a few seconds on its generated corpus (clang-19 + libFuzzer, installed by
# tools/setup.sh --fuzz): a crash or a violated property fails the run. FAULTLINE_FUZZ_SMOKE=0
# skips it on a machine without the toolchain.
if [[ "${FAULTLINE_FUZZ_SMOKE:-1}" != 0 ]]; then
  tools/fuzz.sh --smoke
fi
