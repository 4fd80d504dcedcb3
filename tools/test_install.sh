#!/bin/sh
# Installs a build into a temporary prefix and runs the installed binary from another directory,
# as a user of `cmake --install` would: the catalogue (virtual time), a schema, the shipped
# Python adapter found beside the binary, the docs in place, the README's commands as printed,
# the adapter kit copied alone, and the broken example client. Used by ctest (install.catalogue).
#   tools/test_install.sh BUILD_DIR
set -eu
build=$1
prefix=$(mktemp -d /tmp/faultline-install.XXXXXX)
elsewhere=$(mktemp -d /tmp/faultline-elsewhere.XXXXXX)
trap 'rm -rf "$prefix" "$elsewhere"' EXIT
cmake --install "$build" --prefix "$prefix" > /dev/null
cd "$elsewhere"
unset FAULTLINE_ADAPTERS_DIR
"$prefix/bin/faultline" run --time virtual --out reports
test -s reports/result.json && test -s reports/junit.xml && test -s reports/summary.md
"$prefix/bin/faultline" schema scenario | grep -q '"\$schema"'
"$prefix/bin/faultline" schema protocol | grep -q '"urn:faultline:schema:adapter-protocol:1"'
for schema in scenario policy run-result adapter-protocol; do
  test -s "$prefix/share/faultline/schema/$schema.schema.json"
done
test -s "$prefix/share/doc/faultline/README.md"
test -s "$prefix/share/doc/faultline/docs/adapter-protocol.md"
# A shipped adapter is found beside the installed binary, not in the source tree: it runs, and
# once removed from the prefix it is reported missing there.
"$prefix/bin/faultline" run --adapter python-baseline --filter demo/hello-openai-chat \
  --no-reports --timeout 30 > adapter.out 2>&1 || { cat adapter.out; exit 1; }
rm "$prefix/share/faultline/adapters/python_baseline.py"
if "$prefix/bin/faultline" run --adapter python-baseline --filter demo/hello-openai-chat \
  --no-reports > missing.out 2>&1; then
  echo "the removed adapter still ran: not looked up beside the binary"; exit 1
fi
grep -q "$prefix/share/faultline/adapters/python_baseline.py not found" missing.out || {
  cat missing.out; exit 1; }
# The README's commands as printed, from here, with nothing of the source tree: help and version,
# the filter/shard/merge/render line, validate and --last-failed on a file of the user's, the
# fleet experiments by the README's paths, and the reference client against `faultline serve`.
fl="$prefix/bin/faultline"
"$fl" help run | grep -q -- '--filter'
"$fl" version | grep -q 'faultline'
"$fl" run --filter 'rate-limit/*,tag:stall,!*slow*' --repeat 2 --seed 7 --jobs 2 --no-reports \
  > filter.out || { cat filter.out; exit 1; }
"$fl" run --shard 2/4 --out shard2 > /dev/null
"$fl" run --shard 1/4 --out shard1 > /dev/null
"$fl" report merge shard*/result.json -o all.json && "$fl" report render all.json -o all.html
test -s all.html
mkdir -p my/scenarios
"$fl" schema scenario > /dev/null
cat > my/scenarios/hello.yaml <<'YAML'
faultline: 1
name: my/hello
description: A healthy stream, the smallest scenario of a user's own.
dialect: openai-chat
request: {stream: true}
responses:
  - content: {text: "Hello, world", end: done}
expect: {outcome: committed, attempts: 1}
YAML
"$fl" validate my/scenarios
"$fl" run my/scenarios --out mine > /dev/null
"$fl" run my/scenarios --last-failed --out mine > /dev/null
for fleet in scenarios/fleet/rate-limit-storm.yaml scenarios/fleet/metastable-spike.yaml; do
  "$fl" simulate "$fleet" --compare openai-node,aws-standard --out sim > sim.out 2>&1 || {
    cat sim.out; exit 1; }
  test -s sim/report.html
done
: > serve.out  # before the server, which may not have opened it when the loop reads it
"$fl" serve > serve.out 2>&1 &
serve_pid=$!
for _ in $(seq 100); do grep -q 'listening on' serve.out && break; sleep 0.1; done
base=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' serve.out | head -n 1)
"$fl" call --base-url "$base/s/demo/rate-limit-retry-after" --dialect openai-chat > call.out 2>&1 ||
  { cat serve.out call.out; kill "$serve_pid"; exit 1; }
kill "$serve_pid"
grep -q 'committed attempt 2' call.out || { cat call.out; exit 1; }
# A faultline.yaml in the working directory drives the installed binary; a flag overrides it.
mkdir -p configured && cat > configured/faultline.yaml <<'YAML'
# yaml-language-server: $schema=../share/faultline/schema/config.schema.json
run:
  filter: demo/*
  out: from-config
YAML
test -s "$prefix/share/faultline/schema/config.schema.json"
(cd configured && "$fl" run > run.out 2>&1) || { cat configured/run.out; exit 1; }
test -s configured/from-config/result.json
(cd configured && "$fl" run --filter 'demo/hello-*' --out from-flag > run.out 2>&1) || {
  cat configured/run.out; exit 1; }
test -s configured/from-flag/result.json
# The adapter kit copied alone into another project runs its examples: no import of the shipped
# adapters' policies, and the schema from the faultline that runs it.
cp -r "$prefix/share/faultline/adapters/kit" kit-copy
"$fl" run --adapter "python3 kit-copy/python/example.py" --filter 'success/openai-chat-*' \
  --no-reports --timeout 30 > kit-python.out 2>&1 || { cat kit-python.out; exit 1; }
if command -v node > /dev/null; then
  "$fl" run --adapter "node kit-copy/node/example.mjs" --filter 'success/openai-chat-*' \
    --no-reports --timeout 30 > kit-node.out 2>&1 || { cat kit-node.out; exit 1; }
fi
# The client with switchable bugs is installed with its scenarios, and its bug is caught.
broken="$prefix/share/faultline/adapters/examples/broken"
if "$fl" run "$broken/scenarios/retries-400.yaml" --no-reports --timeout 30 \
  --adapter "python3 $broken/broken_adapter.py --bug retries-400" > broken.out 2>&1; then
  cat broken.out; echo "the installed broken example's bug was not caught"; exit 1
fi
grep -q 'RETRY-' broken.out || { cat broken.out; exit 1; }
echo "install.catalogue: the installed faultline ran the catalogue from $elsewhere"
