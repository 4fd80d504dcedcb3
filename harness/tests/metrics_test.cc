// Metrics of multi-call scenarios: every call is measured, and the percentiles cover all calls.
#include "harness/judge/metrics.h"

#include <gtest/gtest.h>

#include "harness/runner.h"
#include "harness/worlds/virtual_world.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

scenario::Scenario Named(std::string_view name) {
  auto catalog = scenario::LoadBuiltinCatalog();
  EXPECT_TRUE(catalog.has_value());
  for (const scenario::Scenario& s : *catalog) {
    if (s.name == name) return s;
  }
  ADD_FAILURE() << "no scenario " << name;
  return {};
}

constexpr std::string_view kThreeCalls =
    "stateful-rate-limit/openai-chat-three-calls-one-per-second";

// Found by harness_adapter_lines_fuzz: a subject's chunk whose "attempt" is a string made the
// metrics throw (json type_error 302), which aborted the run and lost every report.
TEST(MetricsTest, AChunkWithANonIntegerAttemptIsNoFirstToken) {
  Trace trace;
  trace.client.push_back(ClientRecord{Duration{1000}, 0,
                                      EventFromJson({{"type", "assistant/chunk"},
                                                     {"attempt", "uncommitted"},
                                                     {"response_id", "r"},
                                                     {"text", "Hi"}})});
  trace.client.push_back(ClientRecord{
      Duration{2000}, 0,
      EventFromJson(
          {{"type", "response/committed"}, {"attempt", 1}, {"response_id", "r"}, {"text", "Hi"}})});
  trace.ended = Duration{3000};
  const report::Metrics metrics = ComputeMetrics(trace);
  EXPECT_FALSE(metrics.first_token_ms.has_value());
  trace.client[0].event.attempt = 1;
  EXPECT_TRUE(ComputeMetrics(trace).first_token_ms.has_value());
}

TEST(MetricsTest, EveryCallOfAMultiCallScenarioIsMeasured) {
  auto trace = RunVirtual(Named(kThreeCalls), {});
  ASSERT_TRUE(trace.has_value());
  const report::Metrics metrics = ComputeMetrics(*trace);
  ASSERT_EQ(metrics.calls.size(), 3u);
  std::vector<double> terminals;
  for (const report::CallMetrics& call : metrics.calls) {
    ASSERT_TRUE(call.terminal_ms.has_value()) << "call " << call.call;
    ASSERT_TRUE(call.first_token_ms.has_value()) << "call " << call.call;
    EXPECT_LE(*call.first_token_ms, *call.terminal_ms);
    EXPECT_GE(call.attempts, 1);
    terminals.push_back(*call.terminal_ms);
  }
  EXPECT_EQ(metrics.calls[0].terminal_ms, metrics.terminal_ms);
  // One request per 1 s window: one call at once, the next after ~1 s, the last after ~2 s.
  std::ranges::sort(terminals);
  EXPECT_LT(terminals[0], 1000);
  EXPECT_GE(terminals[1], 1000);
  EXPECT_GE(terminals[2], 2000);
  int attempts = 0;
  for (const report::CallMetrics& call : metrics.calls) attempts += call.attempts;
  EXPECT_EQ(attempts, metrics.attempts) << "every request is some call's attempt";
}

// Calls 5 s apart: each call's latency counts from its own first request, and only the attempts
// no call committed are wasted (each call's answer is not, whichever call came last).
TEST(MetricsTest, SpacedCallsAreMeasuredFromTheirOwnStart) {
  auto trace = RunVirtual(Named("routes/openai-chat-breaker-shared-across-calls"), {});
  ASSERT_TRUE(trace.has_value());
  const report::Metrics metrics = ComputeMetrics(*trace);
  ASSERT_EQ(metrics.calls.size(), 5u);
  for (const report::CallMetrics& call : metrics.calls) {
    ASSERT_TRUE(call.terminal_ms.has_value()) << "call " << call.call;
    EXPECT_LT(*call.terminal_ms, 100) << "call " << call.call;
  }
  std::uint64_t failed_bytes = 0;
  for (const provider::JournalEntry& entry : trace->journal) {
    if (entry.status != 200) failed_bytes += entry.bytes_sent;
  }
  EXPECT_GT(failed_bytes, 0u);
  EXPECT_EQ(metrics.wasted_bytes, failed_bytes);
}

TEST(MetricsTest, PercentilesCoverEveryCallOfEveryRepetition) {
  RunnerOptions options;
  options.repeat = 4;
  auto result = RunAll({Named(kThreeCalls)}, options, {});
  ASSERT_TRUE(result.has_value());
  ASSERT_EQ(result->latency.size(), 1u);
  const report::LatencySummary& latency = result->latency[0];
  EXPECT_EQ(latency.runs, 4);
  EXPECT_EQ(latency.samples, 12);
  ASSERT_TRUE(latency.terminal_ms.has_value());
  EXPECT_LT(latency.terminal_ms->p50, latency.terminal_ms->p99);
  EXPECT_GE(latency.terminal_ms->p99, 2000);  // the last call of a run waits two windows
  ASSERT_TRUE(latency.first_token_ms.has_value());
  EXPECT_GT(latency.first_token_ms->p95, 0);
}

TEST(MetricsTest, OneRunOfSeveralCallsIsSummarisedToo) {
  auto result = RunAll({Named(kThreeCalls)}, RunnerOptions{}, {});
  ASSERT_TRUE(result.has_value());
  ASSERT_EQ(result->latency.size(), 1u);
  EXPECT_EQ(result->latency[0].runs, 1);
  EXPECT_EQ(result->latency[0].samples, 3);
  EXPECT_FALSE(result->latency[0].recovery_overhead_ms.has_value() &&
               result->latency[0].recovery_overhead_ms->p50 < 0);
}

}  // namespace
}  // namespace faultline::harness
