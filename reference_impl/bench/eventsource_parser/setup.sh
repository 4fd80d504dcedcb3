#!/usr/bin/env bash
# Installs the pinned eventsource-parser (package.json) into node_modules/ next to this script.
# node_modules/ and package-lock.json are git-ignored. eventsource-parser 4.x needs Node >= 22.12;
# 3.1.1 is the newest release that runs on Node 20.
set -euo pipefail
cd "$(dirname "$0")"
command -v node >/dev/null || { echo "setup.sh: node is not installed" >&2; exit 1; }
npm install --no-audit --no-fund --loglevel=error
node -e 'import("eventsource-parser").then(() => console.log("eventsource-parser ready"))'
