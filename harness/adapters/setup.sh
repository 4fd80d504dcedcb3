#!/usr/bin/env bash
# Installs the pinned npm packages the Node adapters drive, exactly as the folder's
# package-lock.json pins them (npm ci). Idempotent: quiet, and offline, when every pinned version
# is already installed. node_modules is git-ignored; package.json and package-lock.json are
# committed.
#   harness/adapters/setup.sh               the official SDKs (openai-node.mjs, anthropic-node.mjs)
#                                           into harness/adapters/node/ (what tools/test.sh runs)
#   harness/adapters/setup.sh --frameworks  opt-in: the LLM frameworks (vercel-ai.mjs,
#                                           langchain.mjs) into harness/adapters/frameworks/
set -euo pipefail
folder=node
if [[ "${1:-}" == "--frameworks" ]]; then folder=frameworks; fi
cd "$(dirname "$0")/$folder"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "harness/adapters/setup.sh: node and npm are required (Node.js 20 or later)" >&2
  exit 1
fi
# Exit 0 when every dependency of package.json is installed at its pinned version.
# shellcheck disable=SC2016  # the script is JavaScript, single-quoted on purpose
if node -e '
  const fs = require("fs");
  const deps = require("./package.json").dependencies;
  for (const [name, version] of Object.entries(deps)) {
    const file = `node_modules/${name}/package.json`;
    const ok = fs.existsSync(file) && JSON.parse(fs.readFileSync(file)).version === version;
    if (!ok) process.exit(1);
  }' 2>/dev/null; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
