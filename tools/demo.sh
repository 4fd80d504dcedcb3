#!/usr/bin/env bash
# Starts `faultline serve` on the built-in catalogue and shows it answering real HTTP requests:
# a normal OpenAI stream, a 429 with Retry-After followed by success, an Anthropic stream, and a
# stream cut without its terminator. Usage: tools/demo.sh [PATH_TO_FAULTLINE]
set -euo pipefail
faultline=${1:-build/release/harness/faultline}
log=$(mktemp)
"$faultline" serve --listen 127.0.0.1:0 >"$log" 2>&1 &
server=$!
trap 'kill -INT $server 2>/dev/null; wait $server 2>/dev/null || true; rm -f "$log"' EXIT

base=""
for _ in $(seq 1 100); do
  base=$(sed -n 's/^faultline serve: listening on \(http[^ ]*\).*/\1/p' "$log")
  [[ -n $base ]] && break
  sleep 0.05
done
[[ -n $base ]] || { echo "demo: the server did not start:"; cat "$log"; exit 1; }
cat "$log"

chat='{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Say hello."}]}'
post() {  # post URL BODY [extra curl args]
  local url=$1 body=$2; shift 2
  curl -sS -N --max-time 10 -D - -H 'content-type: application/json' -d "$body" "$@" "$url" || true
  echo
}
section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

section "OpenAI chat stream (demo/hello-openai-chat)"
post "$base/s/demo/hello-openai-chat/v1/chat/completions" "$chat"

section "429 with Retry-After, then the retry succeeds (demo/rate-limit-retry-after)"
post "$base/s/demo/rate-limit-retry-after/v1/chat/completions" "$chat"
sleep 1
post "$base/s/demo/rate-limit-retry-after/v1/chat/completions" "$chat"

section "Anthropic Messages stream (demo/hello-anthropic)"
post "$base/s/demo/hello-anthropic/v1/messages" \
  '{"model":"claude-sonnet-4-5","max_tokens":256,"stream":true,"messages":[{"role":"user","content":"Say hello."}]}'

section "A stream that ends without data: [DONE] (demo/truncated-no-done)"
post "$base/s/demo/truncated-no-done/v1/chat/completions" "$chat"

section "The server's journal of the rate-limit session (control API)"
summarize_journal=$(cat <<'PY'
import json, sys
for e in json.load(sys.stdin)["entries"]:
    writes = ", ".join(f"{w['size']} B at +{w['at_us'] - e['arrived_us']} us" for w in e["writes"])
    print(f"attempt {e['attempt']}: arrived at {e['arrived_us'] / 1e6:.3f} s, {e['method']} "
          f"{e['target']} -> {e['status']}, {e['bytes_sent']} bytes ({writes}), ended {e['end']}")
PY
)
curl -sS --max-time 5 "$base/_faultline/sessions/demo/rate-limit-retry-after/journal" |
  python3 -c "$summarize_journal"

section "The reference client through a stall: idle timeout, retry, commit (faultline call)"
policy=$(mktemp)
echo '{"timeouts": {"idle_ms": 2000}}' >"$policy"
"$faultline" call --base-url "$base/s/demo/stall-forever" --dialect anthropic-messages \
  --policy "$policy" || true
rm -f "$policy"

section "The reference client on the OpenAI Responses demo, as adapter-protocol JSON lines"
"$faultline" call --base-url "$base/s/demo/hello-openai-responses" --dialect openai-responses \
  --json | cut -c1-160 || true

section "Server log"
sed -n '2,$p' "$log"
