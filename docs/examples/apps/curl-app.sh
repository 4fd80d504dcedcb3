#!/bin/sh
# A shell app that asks an OpenAI-compatible API one question with curl, as many scripts do:
# the endpoint and key come from OPENAI_BASE_URL and OPENAI_API_KEY, no retry, a 5 s connect
# and 20 s overall limit. It trusts a stream only when the stream says it is done (`data: [DONE]`).
#
#   faultline run --exec 'sh docs/examples/apps/curl-app.sh' --policy docs/examples/apps/curl-app.policy.json \
#     --filter 'tag:openai-chat'
set -u
base=${OPENAI_BASE_URL:-https://api.openai.com/v1}
out=$(curl -sS -N --fail --connect-timeout 5 --max-time 20 "$base/chat/completions" \
  -H "authorization: Bearer ${OPENAI_API_KEY:?set OPENAI_API_KEY}" \
  -H 'content-type: application/json' \
  -d '{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Say hello"}]}') || exit 1
case "$out" in
  *'data: [DONE]'*) ;;
  *) echo "curl-app: the stream ended without data: [DONE]" >&2; exit 1 ;;
esac
# The answer's text: every "content" delta, joined.
printf '%s\n' "$out" | sed -n 's/.*"content":"\([^"]*\)".*/\1/p' | tr -d '\n'
echo
