#!/usr/bin/env bash
# Load benchmarks of the fake provider, on loopback only, each bounded in time.
#
#   fake_provider/bench/load.sh [FAULTLINE_BINARY] [SECONDS] [ROUNDS]
#
# 1. Throughput, in interleaved rounds: streamed completions per second for a 25-event OpenAI
#    chat stream over keep-alive with 50 connections (wrk), against
#      - @copilotkit/aimock serving the same text (same chunking: 4 characters an event),
#      - nginx serving the same response bytes as a static file (the ceiling).
#    The servers are started once; then ROUNDS rounds (default 7) each give every server SECONDS
#    of load (default 5), one after another, the order rotated from one round to the next. A
#    shared machine's load drifts by more than the servers differ, so only figures taken in the
#    same round are compared: each round gives one faultline/nginx and one faultline/aimock ratio,
#    and the summary prints their median and range (min-max) over the rounds. One unmeasured
#    second per server warms them up first. Each server gets one worker/thread (faultline
#    --threads 1, nginx worker_processes 1, aimock is one Node.js process); wrk gets one thread.
#    Each measurement also reads the server process's CPU time (user + system, /proc/PID/stat) and
#    gives the CPU microseconds one stream cost it: less noisy than the rate when other work
#    shares the machine. The answers' heads, sizes and framing are printed first (curl -i --raw):
#    they differ in framing (faultline's stream is chunked, nginx's file has a Content-Length).
# 2. Memory: 10,000 concurrently stalled streams; the server's RSS while it holds them.
# 3. Timer accuracy: 1,000 concurrent streams with 50 ms between events (20,000 timed writes a
#    second) for 2 x SECONDS; the server's own measure of how late each scheduled write went out
#    (p50/p99/max, from /_faultline/stats).
# Phases 2 and 3 each get a fresh server, so neither sees the other's journal or histogram.
#
# Environment: THROUGHPUT_ONLY=1 runs phase 1 alone. BASELINE=OTHER_FAULTLINE_BINARY adds that
# binary to the rounds as a fourth server ("baseline", e.g. a build of main), for a same-run
# faultline/baseline ratio of a change.
#
# Needs fake_provider/bench/setup.sh to have run. Prints a summary table at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
faultline=$(realpath "${1:-$here/../../build/release/harness/faultline}")
seconds=${2:-5}
rounds=${3:-7}
baseline=${BASELINE:+$(realpath "$BASELINE")}
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
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

text="The quick brown fox jumps over a lazy dog; five boxing wizards jump quickly all day."
body='{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"bench"}]}'
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
LUA
printf 'wrk.method = "GET"\n' >"$work/get.lua"

start_faultline() {  # start_faultline SCENARIO_FILE [BINARY] -> sets fport, fpid
  fport=$(free_port)
  "${2:-$faultline}" serve --quiet --threads 1 --listen "127.0.0.1:$fport" --scenario "$1" \
    --max-connections 20000 >>"$work/faultline.log" 2>&1 &
  fpid=$!; pids+=("$fpid")
  wait_port "$fport"
}
stop_faultline() { kill -INT "$fpid"; wait "$fpid" 2>/dev/null || true; }

# --- faultline (and the baseline binary) ---------------------------------------------------------
stream_path=/s/bench/stream-25/v1/chat/completions
servers=(faultline nginx aimock)
declare -A url=() script=() pid=()
if [[ -n $baseline ]]; then
  start_faultline "$here/stream-25.yaml" "$baseline"
  url[baseline]="http://127.0.0.1:$fport$stream_path" script[baseline]=$work/post.lua
  pid[baseline]=$fpid
  servers+=(baseline)
fi
start_faultline "$here/stream-25.yaml"
url[faultline]="http://127.0.0.1:$fport$stream_path" script[faultline]=$work/post.lua
pid[faultline]=$fpid
curl -sS -d "$body" -H 'content-type: application/json' "${url[faultline]}" >"$work/stream.txt"
events=$(grep -c '^data: ' "$work/stream.txt")

# --- aimock (same text, 4 characters an event) --------------------------------------------------
aport=$(free_port)
cat >"$work/aimock.json" <<JSON
{"fixtures":[{"match":{"userMessage":"bench"},"response":{"content":"$text"}}]}
JSON
"$here/node_modules/.bin/llmock" -p "$aport" -h 127.0.0.1 -f "$work/aimock.json" -c 4 \
  --log-level silent --journal-max 1 >"$work/aimock.log" 2>&1 &
pids+=($!); pid[aimock]=$!
wait_port "$aport"
url[aimock]="http://127.0.0.1:$aport/v1/chat/completions" script[aimock]=$work/post.lua

# --- nginx: the same bytes as a static file ----------------------------------------------------
# With faultline's header fields where nginx can send them (its content type, an x-request-id of
# the same length) and without the static-file fields a streaming API does not send
# (Last-Modified, ETag, Accept-Ranges).
nport=$(free_port)
mkdir -p "$work/www" "$work/nginx"
cp "$work/stream.txt" "$work/www/stream"
# Run as root, nginx reads files as its unprivileged worker user: without these it answers 403.
chmod a+rx "$work" "$work/www" && chmod a+r "$work/www/stream"
request_id=$(curl -sS -D - -o /dev/null -d "$body" -H 'content-type: application/json' \
  "${url[faultline]}" | tr -d '\r' | sed -n 's/^x-request-id: //Ip')
cat >"$work/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 20000; }
http {
  access_log off;
  keepalive_requests 100000000;
  server_tokens off;
  server {
    listen 127.0.0.1:$nport;
    location / {
      root $work/www;
      types { }
      default_type "text/event-stream; charset=utf-8";
      etag off;
      max_ranges 0;
      add_header Last-Modified "";
      add_header x-request-id "$request_id";
    }
  }
}
CONF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
pids+=($!)
wait_port "$nport"
pid[nginx]=$(pgrep -P "$!" | head -1)  # the worker, which serves
url[nginx]="http://127.0.0.1:$nport/stream" script[nginx]=$work/get.lua

# --- the answers, compared ---------------------------------------------------------------------
curl -sS -i --raw -d "$body" -H 'content-type: application/json' "${url[faultline]}" >"$work/faultline.raw"
curl -sS -i --raw "${url[nginx]}" >"$work/nginx.raw"
curl -sS -i --raw -d "$body" -H 'content-type: application/json' "${url[aimock]}" >"$work/aimock.raw"
python3 - "$work" >"$work/answers.txt" <<'PY'
import sys
work = sys.argv[1]
for name in ("faultline", "nginx", "aimock"):
    raw = open(f"{work}/{name}.raw", "rb").read()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = [line.split(":", 1)[0].lower() for line in lines[1:]]
    framing = "chunked" if "transfer-encoding" in fields else "content-length"
    print(f"{name}: {lines[0]}, {len(raw)} bytes = head {len(head) + 4} + body {len(body)} "
          f"({framing}), {body.count(b'data: ')} events; fields: {' '.join(fields)}")
PY
cat "$work/answers.txt" >&2
# The static file must be the stream itself, not an error page.
if ! sed -n '/^\r$/,$p' "$work/nginx.raw" | tail -n +2 | cmp -s - "$work/stream.txt" ||
  ! head -1 "$work/nginx.raw" | grep -q ' 200 '; then
  echo "nginx does not serve the stream's bytes (see above)" >&2
  exit 1
fi

# --- throughput, interleaved ------------------------------------------------------------------
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # user + system, in clock ticks
run_wrk() {  # run_wrk SERVER DURATION OUT; a run with errors or other answers counts nothing
  local before
  before=$(cpu_ticks "${pid[$1]}")
  wrk -t1 -c50 -d"$2" --timeout 10s -s "${script[$1]}" "${url[$1]}" >"$3" 2>&1
  echo "cpu_ticks $(($(cpu_ticks "${pid[$1]}") - before))" >>"$3"
  if grep -qE '^ *(Non-2xx|Socket errors)' "$3"; then
    echo "$1: wrk saw errors or non-2xx answers:" >&2
    cat "$3" >&2
    exit 1
  fi
}
for name in "${servers[@]}"; do run_wrk "$name" 1s "$work/warmup-$name.wrk"; done
load_before=$(loadavg)
: >"$work/rounds.tsv"
for ((r = 0; r < rounds; r++)); do
  declare -A got=() ticks=()
  order=()
  for ((k = 0; k < ${#servers[@]}; k++)); do order+=("${servers[(r + k) % ${#servers[@]}]}"); done
  for name in "${order[@]}"; do
    run_wrk "$name" "${seconds}s" "$work/round$r-$name.wrk"
    got[$name]=$(rps "$work/round$r-$name.wrk")
    ticks[$name]=$(sed -n 's/^cpu_ticks //p' "$work/round$r-$name.wrk")
  done
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${got[faultline]}" "${got[nginx]}" "${got[aimock]}" \
    "${got[baseline]:-0}" "${ticks[faultline]}" "${ticks[nginx]}" "${ticks[aimock]}" \
    "${ticks[baseline]:-0}" >>"$work/rounds.tsv"
  summary=""
  for name in "${order[@]}"; do summary+=" $name ${got[$name]}"; done
  echo "round $((r + 1))/$rounds:$summary streams/s" >&2
done
load_after=$(loadavg)

if [[ ${THROUGHPUT_ONLY:-0} == 1 ]]; then
  open=0 rss_stalled=0 rss_before=0 late_n=0 late_p50=0 late_p99=0 late_max=0
  echo "Requests/sec: 0" >"$work/paced.wrk"
else
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
  wrk -t1 -c1000 -d"$((2 * seconds))s" --timeout 10s -s "$work/staggered.lua" "$durl" >"$work/paced.wrk" 2>&1
  curl -sS "http://127.0.0.1:$fport/_faultline/stats" >"$work/stats.json"
  lateness=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["timer_lateness_us"]; print(s["count"], s["p50"], s["p99"], s["max"])' "$work/stats.json")
  read -r late_n late_p50 late_p99 late_max <<<"$lateness"
fi

python3 - "$work/rounds.tsv" "$work/answers.txt" "$events" "$open" "$rss_stalled" "$rss_before" \
  "$late_n" "$late_p50" "$late_p99" "$late_max" "$(rps "$work/paced.wrk")" "$load_before" \
  "$load_after" "${THROUGHPUT_ONLY:-0}" "$seconds" "$(getconf CLK_TCK)" <<'PY'
import statistics, sys
rounds = [[float(x) for x in line.split("\t")] for line in open(sys.argv[1]).read().splitlines()]
answers = open(sys.argv[2]).read().splitlines()
events, open_, rss, rss0, ln, p50, p99, pmax = map(int, map(float, sys.argv[3:11]))
paced_rps = float(sys.argv[11])
load_before, load_after, throughput_only = sys.argv[12], sys.argv[13], sys.argv[14] == "1"
seconds, tick = float(sys.argv[15]), 1 / float(sys.argv[16])
f, n, a, b = ([r[i] for r in rounds] for i in range(4))
# CPU microseconds per stream of each server in each round.
fc, nc, ac, bc = ([r[4 + i] * tick * 1e6 / max(1.0, r[i] * seconds) for r in rounds]
                  for i in range(4))
med = statistics.median

def ratios(xs, ys, unit=""):
    rs = [x / y for x, y in zip(xs, ys)]
    return f"{med(rs):.2f}{unit} ({min(rs):.2f}-{max(rs):.2f})"

print()
print(*answers, sep="\n")
print(f"{len(rounds)} interleaved rounds; load average {load_before} before them, {load_after} after")
print()
print("| measure | value | target |")
print("|---|---|---|")
print(f"| faultline, {events}-event stream, 50 conns (median of rounds) | {med(f):,.0f} streams/s | |")
print(f"| aimock, same text | {med(a):,.0f} streams/s | |")
print(f"| nginx, same bytes, static file | {med(n):,.0f} streams/s | |")
if any(b):
    print(f"| baseline binary | {med(b):,.0f} streams/s | |")
print(f"| faultline / nginx, per round: median (min-max) | {ratios(f, n)} | >= 1 |")
print(f"| faultline / aimock, per round: median (min-max) | {ratios(f, a, 'x')} | >= 10x |")
if any(b):
    print(f"| faultline / baseline, per round: median (min-max) | {ratios(f, b)} | |")
    print(f"| baseline / nginx, per round: median (min-max) | {ratios(b, n)} | |")
print(f"| CPU per stream, faultline / nginx / aimock (median us) "
      f"| {med(fc):.1f} / {med(nc):.1f} / {med(ac):.1f} | |")
print(f"| streams per CPU-second, faultline / nginx, per round | {ratios(nc, fc)} | |")
print(f"| streams per CPU-second, faultline / aimock, per round | {ratios(ac, fc, 'x')} | |")
if any(b):
    print(f"| CPU per stream, baseline (median us) | {med(bc):.1f} | |")
    print(f"| streams per CPU-second, faultline / baseline, per round | {ratios(bc, fc)} | |")
if not throughput_only:
    print(f"| stalled streams held | {open_:,} | 10,000 |")
    print(f"| RSS with them | {rss/1024:.0f} MB (idle {rss0/1024:.0f} MB) | < 200 MB |")
    print(f"| timed writes, 1,000 streams at 50 ms | {ln:,} ({paced_rps:,.0f} streams/s) | |")
    print(f"| write lateness p50 / p99 / max | {p50} / {p99} / {pmax} us | p99 <= 1000 us |")
PY
