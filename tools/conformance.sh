#!/usr/bin/env bash
# The conformance matrix (issue 6): the built-in catalogue against the reference client and every
# shipped adapter (the official openai and @anthropic-ai/sdk npm packages, raw and with their
# streaming helpers, the Vercel AI SDK and LangChain JS, and the no-recovery Python baseline), over
# real sockets; then the routes/ category against the two routers (LangChain's withFallbacks and
# Vercel's ai-fallback) beside the reference client.
#
#   tools/conformance.sh [BUILD_DIR] [OUT_DIR]     (defaults: build/release, faultline-reports/conformance)
#
# Writes OUT_DIR/<subject>/{result.json,report.html,...}, OUT_DIR/matrix.html (the matrix page)
# and docs/conformance-matrix.md (the matrix as a document, committed). Extra environment:
# FAULTLINE_FILTER narrows the scenarios (e.g. 'termination/*'); FAULTLINE_TIMEOUT (seconds,
# default 330) is the runner's --timeout: long enough for the SDKs' own 300 s stall timeouts to
# fire, so a stall is judged against what each client declares. The subjects run side by side
# two at a time (their runs mostly wait), so the whole matrix takes about three times that.
# FAULTLINE_ONLY=routers re-runs only the routers over routes/* and rewrites the document's
# routers section, keeping its catalogue section as it was (when only a router or the routes
# category changed; the section says which revision it ran).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
out="${2:-faultline-reports/conformance}"
faultline="$build/harness/faultline"
[[ -x "$faultline" ]] || { echo "conformance.sh: $faultline not built (tools/build.sh release)" >&2; exit 2; }
harness/adapters/setup.sh
harness/adapters/setup.sh --frameworks
mkdir -p "$out" docs
timeout="${FAULTLINE_TIMEOUT:-330}"
only="${FAULTLINE_ONLY:-}"
case "$only" in
  "" | routers) ;;
  *) echo "conformance.sh: FAULTLINE_ONLY is 'routers' or unset, not '$only'" >&2; exit 2 ;;
esac
if [[ "$only" == routers ]] && ! grep -q '^## Routers: the routes/ category' docs/conformance-matrix.md; then
  echo "conformance.sh: FAULTLINE_ONLY=routers needs docs/conformance-matrix.md with its routers section" >&2
  exit 2
fi
revision=$(git rev-parse --short HEAD)  # the tree the runs start from (it may move meanwhile)
# Two subjects at a time: more would start so many Node processes at once on a 2-core machine
# that start-up alone takes seconds and timing checks measure the machine, not the client.
subjects=(reference python-baseline openai-node anthropic-node openai-node-helper anthropic-node-helper
          vercel-ai langchain)
routers=(routers-reference langchain-fallbacks vercel-ai-fallback)
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
if [[ -z "$only" ]]; then
  for ((i = 0; i < ${#subjects[@]}; i += 2)); do
    run_subject "${subjects[i]}" & first=$!
    run_subject "${subjects[i + 1]}" & second=$!
    wait "$first"
    wait "$second"
  done
fi
for router in "${routers[@]}"; do run_subject "$router" 'routes/*'; done
results=()
for subject in "${subjects[@]}"; do results+=("$out/$subject/result.json"); done
router_results=()
for router in "${routers[@]}"; do router_results+=("$out/$router/result.json"); done
[[ -n "$only" ]] || "$faultline" report render --matrix "${results[@]}" -o "$out/matrix.html"
"$faultline" report render --matrix "${router_results[@]}" -o "$out/routers.html"
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
if [[ "$only" == routers ]]; then
  kept=$(sed '/^## Routers: the routes\/ category/,$d' docs/conformance-matrix.md)
  { printf '%s\n' "$kept"; echo; routers_section; } > docs/conformance-matrix.md
  echo "conformance.sh: the routers section of docs/conformance-matrix.md and $out/routers.html written" >&2
  exit 0
fi
{
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
  echo
  routers_section
} > docs/conformance-matrix.md
echo "conformance.sh: docs/conformance-matrix.md, $out/matrix.html and $out/routers.html written" >&2
