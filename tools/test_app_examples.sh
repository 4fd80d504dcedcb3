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
