#!/usr/bin/env bash
# Configures and builds one CMake preset (default: release). Usage: tools/build.sh [PRESET]
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
jobs=${FAULTLINE_JOBS:-$(nproc)}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
