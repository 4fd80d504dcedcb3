// Per-request cost of the provider core: turning a request into a response plan.
//
// The peer, measured in the same run, is the floor for any server that sends these bytes: copying
// the plan's bytes into a fresh string. BM_Respond / BM_CopyPlanBytes says how far the core is from
// "serving a pre-built file".
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/provider_core.h"
#include "scenarios/loader.h"

namespace faultline::provider {
namespace {

constexpr char kStream25[] = R"(
faultline: 1
name: bench/stream-25
description: 25-event OpenAI chat stream without delays.
dialect: openai-chat
responses:
  - repeat: 0
    content:
      text: "The quick brown fox jumps over the lazy dog; the five boxing wizards jump quickly ok."
      chunk_size: 4
)";

constexpr char kRequestBody[] =
    R"({"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"bench"}]})";

std::shared_ptr<const CompiledScenario> CompileBenchScenario() {
  auto scenario = scenario::ParseScenario(kStream25, "bench.yaml");
  if (!scenario) std::abort();
  return std::make_shared<const CompiledScenario>(*scenario);
}

WallTime BenchNow() { return WallTime(std::chrono::seconds(1'800'000'000)); }

void BM_Respond(benchmark::State& state) {
  ProviderSession session(CompileBenchScenario(), 1, BenchNow());
  const RequestInfo request{"POST", "/v1/chat/completions", kRequestBody};
  std::size_t bytes = 0;
  for (auto _ : state) {
    ResponsePlan plan = session.Respond(request, BenchNow());
    bytes += plan.steps.front().bytes.size();
    benchmark::DoNotOptimize(plan);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_Respond);

void BM_CopyPlanBytes(benchmark::State& state) {
  ProviderSession session(CompileBenchScenario(), 1, BenchNow());
  const RequestInfo request{"POST", "/v1/chat/completions", kRequestBody};
  const ResponsePlan plan = session.Respond(request, BenchNow());
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string copy = plan.steps.front().bytes;
    bytes += copy.size();
    benchmark::DoNotOptimize(copy);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_CopyPlanBytes);

void BM_StreamFlag(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(StreamFlag(kRequestBody));
}
BENCHMARK(BM_StreamFlag);

}  // namespace
}  // namespace faultline::provider
