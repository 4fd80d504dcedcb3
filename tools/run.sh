#!/usr/bin/env bash
# Sets up the machine, builds, and runs the main job. This is the README's main command.
# Until the conformance runner exists, the main job starts the fake provider on the built-in
# catalogue, shows it answering real HTTP requests with scripted faults, and the reference client
# recovering through them (tools/demo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh release
exec tools/demo.sh build/release/harness/faultline
