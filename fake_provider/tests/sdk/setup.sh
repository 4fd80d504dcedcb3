#!/usr/bin/env bash
# Installs the pinned official SDK used by the SDK smoke test into this folder's node_modules
# (git-ignored). openai 6.x is the newest line that supports the Node.js 20 of Debian 12.
set -euo pipefail
cd "$(dirname "$0")"
if [[ -f node_modules/openai/package.json ]] &&
   grep -q '"version": "6.30.1"' node_modules/openai/package.json; then
  exit 0
fi
npm install --no-audit --no-fund --no-save --loglevel=error
