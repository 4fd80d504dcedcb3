#!/usr/bin/env bash
# Decoding throughput of the reference client against the eventsource-parser npm package, on the
# same bytes, in the same run (issue 3's benchmark). Builds nothing.
#
#   reference_impl/bench/compare.sh BUILD_DIR [SECONDS]
#
# BUILD_DIR is a Release build with FAULTLINE_BUILD_BENCHMARKS=ON in which the targets
# reference_impl_bench and reference_impl_fixtures were built; run eventsource_parser/setup.sh
# once first. SECONDS (default 2) is the measuring time per case on each side.
#
# Prints, per dialect, faultline MB/s, eventsource-parser MB/s and their ratio, for SSE only and
# for the full decode (faultline: SSE + dialect decoder + assembler; JS: SSE + JSON.parse + text
# accumulation). JS is shown two ways: "str" pre-decodes each 4 KiB piece to a string outside the
# timing (its best case); "bytes" includes the TextDecoder step, taking bytes like the C++ side.
# 1 MB = 1e6 bytes of the fixture.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
build="${1:?usage: compare.sh BUILD_DIR [SECONDS]}"
seconds="${2:-2}"
bench="$build/reference_impl/reference_impl_bench"
fixtures="$build/reference_impl/reference_impl_fixtures"
for exe in "$bench" "$fixtures"; do
  [[ -x "$exe" ]] || { echo "compare.sh: $exe not built" >&2; exit 1; }
done
[[ -d "$here/eventsource_parser/node_modules/eventsource-parser" ]] ||
  { echo "compare.sh: run $here/eventsource_parser/setup.sh first" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$fixtures" "$work"

"$bench" --benchmark_min_time="$seconds" --benchmark_format=console \
  --benchmark_out="$work/cpp.json" --benchmark_out_format=json >&2

dialects=(openai-chat anthropic-messages openai-responses)
for d in "${dialects[@]}"; do
  node "$here/eventsource_parser/bench.mjs" --fixture "$work/$d.sse" --dialect "$d" \
    --seconds "$seconds" --json >> "$work/js.jsonl"
done

ESP_PKG="$here/eventsource_parser/node_modules/eventsource-parser/package.json" \
  node - "$work/cpp.json" "$work/js.jsonl" <<'JS'
const fs = require('fs');
const [cppFile, jsFile] = process.argv.slice(2);
const cpp = JSON.parse(fs.readFileSync(cppFile, 'utf8'));
const js = fs.readFileSync(jsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const mbps = (name) => {
  const b = cpp.benchmarks.find((x) => x.name === name);
  if (!b || b.error_occurred) throw new Error(`benchmark ${name} missing or failed`);
  return b.bytes_per_second / 1e6;
};
const f = (x) => x.toFixed(1).padStart(9);
const r = (x) => (x.toFixed(2) + 'x').padStart(7);
console.log(`node ${js[0].node}, eventsource-parser ${require(process.env.ESP_PKG).version}, ` +
  `${js[0].chunk}-byte feeds, MB/s (1e6 B/s)`);
console.log('mode  dialect              bytes  faultline  esp(str)  ratio  esp(bytes)  ratio');
for (const [mode, bench] of [['sse', 'BM_SseOnly'], ['full', 'BM_FullDecode']]) {
  for (const j of js) {
    const ours = mbps(`${bench}/${j.dialect.replace('-', '_')}`);
    const str = j[`${mode}_mbps`];
    const bytes = j[`${mode}_textdecoder_mbps`];
    console.log(`${mode.padEnd(5)} ${j.dialect.padEnd(19)} ${String(j.body_bytes).padStart(7)} ` +
      `${f(ours)} ${f(str)} ${r(ours / str)}   ${f(bytes)} ${r(ours / bytes)}`);
  }
}
JS
