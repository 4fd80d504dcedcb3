#!/usr/bin/env bash
# Load benchmarks of the fake provider, on loopback only, each bounded in time.
#
#   fake_provider/bench/load.sh [FAULTLINE_BINARY] [SECONDS]
#
# 1. Throughput: streamed completions per second for a 25-event OpenAI chat stream over
#    keep-alive with 50 connections (wrk), against, in the same run:
#      - @copilotkit/aimock serving the same text (same chunking: 4 characters an event),
#      - nginx serving the same response bytes as a static file (the ceiling).
#    Each server gets one worker/thread; wrk gets one thread.
# 2. Memory: 10,000 concurrently stalled streams; the server's RSS while it holds them.
# 3. Timer accuracy: 1,000 concurrent streams with 50 ms between events (20,000 timed writes a
#    second); the server's own measure of how late each scheduled write went out
#    (p50/p99/max, from /_faultline/stats).
# Phases 2 and 3 each get a fresh server, so neither sees the other's journal or histogram.
#
# Needs fake_provider/bench/setup.sh to have run. Prints a summary table at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
faultline=$(realpath "${1:-$here/../../build/release/harness/faultline}")
seconds=${2:-10}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"  # 10,000 stalled streams need ~10,100 descriptors a side

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 200); do (echo >/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.05; done; echo "port $1 never opened" >&2; return 1; }
rps() { sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$1"; }

text="The quick brown fox jumps over a lazy dog; five boxing wizards jump quickly all day."
body='{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"bench"}]}'
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
LUA

run_wrk() {  # run_wrk NAME URL [lua] -> file
  local name=$1 url=$2 script=${3:-$work/post.lua}
  wrk -t1 -c50 -d"${seconds}s" --timeout 10s -s "$script" "$url" >"$work/$name.wrk" 2>&1
  echo "$name: $(rps "$work/$name.wrk") streams/s" >&2
}

start_faultline() {  # start_faultline SCENARIO_FILE -> sets fport, fpid
  fport=$(free_port)
  "$faultline" serve --quiet --threads 1 --listen "127.0.0.1:$fport" --scenario "$1" \
    --max-connections 20000 >>"$work/faultline.log" 2>&1 &
  fpid=$!; pids+=("$fpid")
  wait_port "$fport"
}
stop_faultline() { kill -INT "$fpid"; wait "$fpid" 2>/dev/null || true; }

# --- faultline ---------------------------------------------------------------------------------
start_faultline "$here/stream-25.yaml"
furl="http://127.0.0.1:$fport/s/bench/stream-25/v1/chat/completions"
curl -sS -d "$body" -H 'content-type: application/json' "$furl" >"$work/stream.txt"
events=$(grep -c '^data: ' "$work/stream.txt")
echo "faultline stream: $events events, $(wc -c <"$work/stream.txt") body bytes" >&2

# --- aimock (same text, 4 characters an event) --------------------------------------------------
aport=$(free_port)
cat >"$work/aimock.json" <<JSON
{"fixtures":[{"match":{"userMessage":"bench"},"response":{"content":"$text"}}]}
JSON
"$here/node_modules/.bin/llmock" -p "$aport" -h 127.0.0.1 -f "$work/aimock.json" -c 4 \
  --log-level silent --journal-max 1 >"$work/aimock.log" 2>&1 &
pids+=($!)
wait_port "$aport"
aurl="http://127.0.0.1:$aport/v1/chat/completions"
curl -sS -d "$body" -H 'content-type: application/json' "$aurl" >"$work/aimock.txt"
echo "aimock stream: $(grep -c '^data: ' "$work/aimock.txt") events, $(wc -c <"$work/aimock.txt") body bytes" >&2

# --- nginx: the same bytes as a static file ----------------------------------------------------
nport=$(free_port)
mkdir -p "$work/www" "$work/nginx"
cp "$work/stream.txt" "$work/www/stream"
cat >"$work/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 20000; }
http {
  access_log off;
  keepalive_requests 100000000;
  server {
    listen 127.0.0.1:$nport;
    location / { root $work/www; default_type text/event-stream; }
  }
}
CONF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
pids+=($!)
wait_port "$nport"

run_wrk faultline "$furl"
run_wrk aimock "$aurl"
printf 'wrk.method = "GET"\n' >"$work/get.lua"
run_wrk nginx "http://127.0.0.1:$nport/stream" "$work/get.lua"
f=$(rps "$work/faultline.wrk"); a=$(rps "$work/aimock.wrk"); n=$(rps "$work/nginx.wrk")

# --- 10,000 stalled streams ------------------------------------------------------------------
stop_faultline
start_faultline "$here/stalled.yaml"
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
rss_before=$(rss_kb "$fpid")
surl="http://127.0.0.1:$fport/s/bench/stalled/v1/chat/completions"
wrk -t2 -c10000 -d20s --timeout 30s -s "$work/post.lua" "$surl" >"$work/stalled.wrk" 2>&1 &
wrkpid=$!
open=0
for _ in $(seq 1 150); do
  sleep 0.1
  open=$(curl -sS "http://127.0.0.1:$fport/_faultline/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("connections_open",0))')
  ((open >= 10000)) && break
done
sleep 1
rss_stalled=$(rss_kb "$fpid")
kill "$wrkpid" 2>/dev/null || true; wait "$wrkpid" 2>/dev/null || true
echo "stalled: $open connections open, RSS ${rss_stalled} kB (idle ${rss_before} kB)" >&2

# --- timer accuracy at 1,000 concurrent paced streams ----------------------------------------------
stop_faultline
start_faultline "$here/paced-25.yaml"
durl="http://127.0.0.1:$fport/s/bench/paced-25/v1/chat/completions"
# Each request waits a random 0-50 ms before it is sent, so the 1,000 streams tick at spread-out
# instants as real traffic does, instead of all at once (wrk opens every connection together).
cp "$work/post.lua" "$work/staggered.lua"
echo 'function delay() return math.random(0, 50) end' >>"$work/staggered.lua"
wrk -t1 -c1000 -d"${seconds}s" --timeout 10s -s "$work/staggered.lua" "$durl" >"$work/paced.wrk" 2>&1
curl -sS "http://127.0.0.1:$fport/_faultline/stats" >"$work/stats.json"
lateness=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["timer_lateness_us"]; print(s["count"], s["p50"], s["p99"], s["max"])' "$work/stats.json")
read -r late_n late_p50 late_p99 late_max <<<"$lateness"

python3 - "$f" "$a" "$n" "$events" "$open" "$rss_stalled" "$rss_before" "$late_n" "$late_p50" "$late_p99" "$late_max" "$(rps "$work/paced.wrk")" <<'PY'
import sys
f, a, n = map(float, sys.argv[1:4])
events, open_, rss, rss0, ln, p50, p99, pmax = map(int, map(float, sys.argv[4:12]))
paced_rps = float(sys.argv[12])
print()
print("| measure | value | target |")
print("|---|---|---|")
print(f"| faultline, {events}-event stream, 50 conns | {f:,.0f} streams/s | |")
print(f"| aimock, same text | {a:,.0f} streams/s | |")
print(f"| nginx, same bytes, static file | {n:,.0f} streams/s | |")
print(f"| faultline / aimock | {f/a:.1f}x | >= 5x |")
print(f"| faultline / nginx | {f/n:.2f} | >= 0.5 |")
print(f"| stalled streams held | {open_:,} | 10,000 |")
print(f"| RSS with them | {rss/1024:.0f} MB (idle {rss0/1024:.0f} MB) | < 200 MB |")
print(f"| timed writes, 1,000 streams at 50 ms | {ln:,} ({paced_rps:,.0f} streams/s) | |")
print(f"| write lateness p50 / p99 / max | {p50} / {p99} / {pmax} us | p99 <= 1000 us |")
PY
