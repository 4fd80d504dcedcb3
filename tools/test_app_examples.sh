#!/bin/sh
# Runs the worked examples of docs/testing-your-app.md as a user does, with `faultline run --exec`
# from a copy of docs/examples/apps/, and checks each verdict the page states: the curl and the
# Python app hold their declared policies on a success, a 429 and a stream without [DONE]; the
# unmodified openai SDK app takes that stream as whole and fails COMMIT-002. Used by ctest
# (docs.app_examples). The Node app needs the openai package that harness/adapters/setup.sh
# installs; without it that part is skipped, saying so.
#   tools/test_app_examples.sh FAULTLINE_BINARY
set -eu
binary=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/faultline-apps.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -R "$root/docs/examples/apps" "$work/apps"
cd "$work"

# expect RESULT_DIR SCENARIO VERDICT [CHECK STATUS]: the scenario's verdict, and a check's status.
expect() {
  python3 - "$@" <<'PY'
import json, sys
out, name, verdict = sys.argv[1:4]
result = json.load(open(f"{out}/result.json"))
runs = [s for s in result["scenarios"] if s["name"] == name]
assert runs, f"{name} did not run"
for run in runs:
    failed = [f"{c['id']}: {c['evidence']}" for c in run["checks"] if c["status"] == "fail"]
    assert run["verdict"] == verdict, f"{name}: {run['verdict']}, wanted {verdict}; {failed} {run.get('error', '')}"
    if len(sys.argv) > 4:
        check, status = sys.argv[4:6]
        got = [c["status"] for c in run["checks"] if c["id"] == check]
        assert got == [status], f"{name}: {check} is {got}, wanted {status}"
print(f"ok   {out}: {name} {verdict}" + (f", {sys.argv[4]} {sys.argv[5]}" if len(sys.argv) > 4 else ""))
PY
}

# run OUT EXEC POLICY: the three scenarios against one app (exit 1 when a check fails is expected).
run() {
  status=0
  "$binary" run --exec "$2" --policy "$3" --out "$1" --format json --jobs 3 --timeout 60 \
    --filter 'demo/hello-openai-chat,rate-limit/openai-chat-429-then-success,demo/truncated-no-done' \
    >"$1.log" 2>&1 || status=$?
  if [ "$status" -gt 1 ]; then
    cat "$1.log" >&2
    echo "FAIL $1: faultline run exited $status" >&2
    exit 1
  fi
}

run curl 'sh apps/curl-app.sh' apps/curl-app.policy.json
expect curl demo/hello-openai-chat pass
expect curl rate-limit/openai-chat-429-then-success pass EXPECT-OUTCOME pass
expect curl demo/truncated-no-done pass COMMIT-002 n/a

run python 'python3 apps/python_app.py' apps/python_app.policy.json
expect python demo/hello-openai-chat pass
expect python rate-limit/openai-chat-429-then-success pass RETRY-004 pass
expect python demo/truncated-no-done pass COMMIT-002 n/a

modules="$root/harness/adapters/node/node_modules"
if [ ! -d "$modules/openai" ]; then
  echo "skip node-app: no $modules/openai (harness/adapters/setup.sh installs it)"
  exit 0
fi
ln -s "$modules" apps/node-app/node_modules
run node 'node apps/node-app/app.mjs' openai-node
expect node demo/hello-openai-chat pass
expect node rate-limit/openai-chat-429-then-success pass RETRY-004 pass
expect node demo/truncated-no-done fail COMMIT-002 fail

# The same app run by hand against `faultline serve --report`, its outcome stated: the verdicts
# and failed checks judged from the journals are --exec's. The log exists before the server does:
# the loop below reads it at once (a missing file would end the script under set -e).
: >serve.log
"$binary" serve --listen 127.0.0.1:0 --quiet --report serve --format json --policy openai-node \
  --outcome committed >serve.log 2>&1 &
server=$!
base=
for _ in $(seq 1 100); do
  base=$(sed -n 's/^faultline serve: listening on \(http[^ ]*\).*/\1/p' serve.log)
  [ -n "$base" ] && break
  sleep 0.1
done
[ -n "$base" ] || { cat serve.log >&2; echo "FAIL serve: no listening line" >&2; kill "$server"; exit 1; }
for scenario in demo/hello-openai-chat rate-limit/openai-chat-429-then-success demo/truncated-no-done; do
  OPENAI_BASE_URL="$base/s/$scenario/v1" OPENAI_API_KEY=sk-test node apps/node-app/app.mjs >/dev/null
done
kill -INT "$server"
status=0
wait "$server" || status=$?
[ "$status" = 1 ] || { cat serve.log >&2; echo "FAIL serve: exit $status, wanted 1 (a check failed)" >&2; exit 1; }
python3 - <<'PY'
import json
def verdicts(path):
    result = json.load(open(f"{path}/result.json"))
    return {s["name"]: (s["verdict"], sorted(c["id"] for c in s["checks"] if c["status"] == "fail"))
            for s in result["scenarios"]}
exec_run, served = verdicts("node"), verdicts("serve")
assert served == exec_run, f"serve --report {served} != --exec {exec_run}"
print(f"ok   serve --report judged {len(served)} sessions as --exec did: {served}")
PY
