// Decoding throughput of the reference client on realistic streamed bodies (stream_fixtures.h),
// fed in kFeedBytes pieces as a socket would deliver them:
//   BM_SseOnly     - SseDecoder alone: bytes to events;
//   BM_NdjsonOnly, BM_EventStreamOnly - the same for the framings of Ollama (NdjsonDecoder) and
//                    Bedrock (EventStreamDecoder, both CRCs checked);
//   BM_FullDecode  - BodyDecoder: SSE + dialect decoding + lifecycle assembler, to a Completed
//                    answer whose text is checked against the expected one before timing.
// MB/s is reported through SetBytesProcessed. compare.sh runs the eventsource-parser peer
// (eventsource_parser/bench.mjs) on the same bytes.
#include <benchmark/benchmark.h>

#include <string>
#include <string_view>
#include <variant>

#include "reference_impl/bench/stream_fixtures.h"
#include "reference_impl/body_decoder.h"
#include "reference_impl/dialect.h"
#include "reference_impl/event_stream_decoder.h"
#include "reference_impl/ndjson_decoder.h"
#include "reference_impl/sse_decoder.h"

namespace faultline::ref::bench {
namespace {

const std::string& Body(Dialect dialect) {
  static const std::vector<std::string> kBodies = [] {
    std::vector<std::string> bodies;
    for (Dialect each : AllDialects()) bodies.push_back(BenchBody(each));
    return bodies;
  }();
  return kBodies[static_cast<std::size_t>(dialect)];
}

// Decodes one whole body with a framing decoder (SseDecoder, NdjsonDecoder or
// EventStreamDecoder); returns the number of events (0 on error).
template <typename Framing>
std::size_t FramingDecodeOnce(std::string_view body) {
  Framing decoder;
  std::size_t events = 0;
  for (std::size_t at = 0; at < body.size(); at += kFeedBytes) {
    auto fed = decoder.Feed(body.substr(at, kFeedBytes));
    if (fed.error) return 0;
    events += fed.events.size();
    benchmark::DoNotOptimize(fed.events.data());
  }
  decoder.Finish();
  return events;
}

// Decodes one whole body to its outcome; returns the answer's text length (0 when it failed).
std::size_t FullDecodeOnce(Dialect dialect, std::string_view body) {
  BodyDecoder decoder(dialect, /*stream=*/true);
  for (std::size_t at = 0; at < body.size(); at += kFeedBytes) {
    auto progress = decoder.Feed(body.substr(at, kFeedBytes));
    benchmark::DoNotOptimize(progress.deltas.data());
  }
  const auto* completed = std::get_if<Completed>(&decoder.End());
  return completed ? completed->text.size() : 0;
}

template <typename Framing>
void BM_FramingOnly(benchmark::State& state, Dialect dialect) {
  const std::string& body = Body(dialect);
  if (FramingDecodeOnce<Framing>(body) < static_cast<std::size_t>(kBenchDeltas)) {
    state.SkipWithError("framing decoding failed");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(FramingDecodeOnce<Framing>(body));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
  state.counters["body_bytes"] = static_cast<double>(body.size());
}

void BM_SseOnly(benchmark::State& state, Dialect dialect) {
  BM_FramingOnly<SseDecoder>(state, dialect);
}
void BM_NdjsonOnly(benchmark::State& state, Dialect dialect) {
  BM_FramingOnly<NdjsonDecoder>(state, dialect);
}
void BM_EventStreamOnly(benchmark::State& state, Dialect dialect) {
  BM_FramingOnly<EventStreamDecoder>(state, dialect);
}

void BM_FullDecode(benchmark::State& state, Dialect dialect) {
  const std::string& body = Body(dialect);
  if (FullDecodeOnce(dialect, body) != BenchText(/*json=*/false).size()) {
    state.SkipWithError("full decoding did not produce the expected answer");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(FullDecodeOnce(dialect, body));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
  state.counters["body_bytes"] = static_cast<double>(body.size());
}

BENCHMARK_CAPTURE(BM_SseOnly, openai_chat, Dialect::kOpenAiChat);
BENCHMARK_CAPTURE(BM_SseOnly, anthropic_messages, Dialect::kAnthropicMessages);
BENCHMARK_CAPTURE(BM_SseOnly, openai_responses, Dialect::kOpenAiResponses);
BENCHMARK_CAPTURE(BM_SseOnly, gemini, Dialect::kGemini);
BENCHMARK_CAPTURE(BM_NdjsonOnly, ollama, Dialect::kOllama);
BENCHMARK_CAPTURE(BM_EventStreamOnly, bedrock_converse, Dialect::kBedrockConverse);
BENCHMARK_CAPTURE(BM_FullDecode, openai_chat, Dialect::kOpenAiChat);
BENCHMARK_CAPTURE(BM_FullDecode, anthropic_messages, Dialect::kAnthropicMessages);
BENCHMARK_CAPTURE(BM_FullDecode, openai_responses, Dialect::kOpenAiResponses);
BENCHMARK_CAPTURE(BM_FullDecode, gemini, Dialect::kGemini);
BENCHMARK_CAPTURE(BM_FullDecode, ollama, Dialect::kOllama);
BENCHMARK_CAPTURE(BM_FullDecode, bedrock_converse, Dialect::kBedrockConverse);

}  // namespace
}  // namespace faultline::ref::bench
