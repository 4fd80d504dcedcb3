#!/usr/bin/env bash
# Installs what the load benchmarks compare against: wrk (load generator), nginx (the static-file
# ceiling) from Debian, and @copilotkit/aimock (a popular LLM mock server) from npm into
# fake_provider/bench/node_modules (git-ignored). Safe to run again.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || need+=(nginx-light)
command -v node >/dev/null || need+=(nodejs npm)
if ((${#need[@]})); then
  sudo_cmd=(); [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
if [[ ! -x $here/node_modules/.bin/llmock ]]; then
  (cd "$here" && npm install --no-audit --no-fund --no-save --loglevel=error @copilotkit/aimock@1.43.0)
fi
echo "bench setup: wrk, nginx and aimock ready"
