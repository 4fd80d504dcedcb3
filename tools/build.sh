#!/usr/bin/env bash
# Configures and builds one CMake preset (default: release), all of it or only the named targets.
# Usage: tools/build.sh [PRESET [TARGET...]]   e.g. tools/build.sh release faultline
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
shift || true
jobs=${FAULTLINE_JOBS:-$(nproc)}
cmake --preset "$preset" >/dev/null
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build --preset "$preset" -j "$jobs" "${targets[@]}"
