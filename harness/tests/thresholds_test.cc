// Thresholds over runs: samples per call or per run, the aggregations, n/a without a sample,
// one result per scenario and world.
#include "harness/judge/thresholds.h"

#include <gtest/gtest.h>

#include <vector>

namespace faultline::harness {
namespace {

using report::CheckStatus;
using report::ScenarioResult;

scenario::Threshold Parse(std::string_view text) {
  auto threshold = scenario::ParseThreshold(text);
  EXPECT_TRUE(threshold.has_value()) << threshold.error();
  return threshold.value_or(scenario::Threshold{});
}

ScenarioResult MakeRun(std::string name, std::string world, std::optional<double> ttft,
                       int attempts = 1) {
  ScenarioResult run;
  run.name = std::move(name);
  run.world = std::move(world);
  run.metrics.first_token_ms = ttft;
  run.metrics.terminal_ms = ttft ? std::optional(*ttft + 5) : std::nullopt;
  run.metrics.attempts = attempts;
  run.metrics.recovery_overhead_ms = 7;
  return run;
}

std::vector<const ScenarioResult*> Pointers(const std::vector<ScenarioResult>& runs) {
  std::vector<const ScenarioResult*> out;
  for (const ScenarioResult& run : runs) out.push_back(&run);
  return out;
}

TEST(ThresholdsTest, AggregatesOverEveryRun) {
  std::vector<ScenarioResult> runs;
  for (int i = 1; i <= 100; ++i) runs.push_back(MakeRun("a/b", "virtual", i * 10.0, i % 3 + 1));
  const auto all = Pointers(runs);
  const auto p99 = JudgeThreshold(Parse("ttft.p99<1s"), all);
  EXPECT_EQ(p99.status, CheckStatus::kPass);
  EXPECT_EQ(p99.value, 990);
  EXPECT_EQ(p99.samples, 100);
  EXPECT_EQ(p99.unit, "ms");
  EXPECT_EQ(p99.evidence, "990 ms over 100 call(s) of 100 run(s); within < 1000 ms");
  const auto p50 = JudgeThreshold(Parse("total.p50<=500"), all);
  EXPECT_EQ(p50.value, 505);
  EXPECT_EQ(p50.status, CheckStatus::kFail);
  EXPECT_EQ(JudgeThreshold(Parse("ttft.avg==505"), all).status, CheckStatus::kPass);
  EXPECT_EQ(JudgeThreshold(Parse("ttft.min>=10"), all).status, CheckStatus::kPass);
  const auto attempts = JudgeThreshold(Parse("attempts.max<=2"), all);
  EXPECT_EQ(attempts.status, CheckStatus::kFail);
  EXPECT_EQ(attempts.value, 3);
  EXPECT_EQ(attempts.unit, "");
  EXPECT_EQ(attempts.evidence, "3 over 100 call(s) of 100 run(s); crossed <= 2");
  const auto overhead = JudgeThreshold(Parse("overhead.max<7"), all);
  EXPECT_EQ(overhead.status, CheckStatus::kFail);
  EXPECT_EQ(overhead.evidence, "7 ms over 100 of 100 run(s); crossed < 7 ms");
}

TEST(ThresholdsTest, EveryCallOfAMultiCallScenarioIsASample) {
  ScenarioResult run = MakeRun("a/calls", "virtual", 1.0);
  run.metrics.calls = {{.call = 0, .first_token_ms = 1.0, .terminal_ms = 2.0, .attempts = 1},
                       {.call = 1, .first_token_ms = 3000.0, .terminal_ms = 3001.0, .attempts = 4},
                       {.call = 2, .first_token_ms = std::nullopt, .attempts = 2}};
  const std::vector<ScenarioResult> runs{run};
  const auto all = Pointers(runs);
  const auto ttft = JudgeThreshold(Parse("ttft.max<2s"), all);
  EXPECT_EQ(ttft.status, CheckStatus::kFail);
  EXPECT_EQ(ttft.samples, 2);  // call 2 never committed: no first token
  EXPECT_EQ(JudgeThreshold(Parse("attempts.max<=4"), all).status, CheckStatus::kPass);
  EXPECT_EQ(JudgeThreshold(Parse("attempts.count==3"), all).status, CheckStatus::kPass);
}

TEST(ThresholdsTest, NoSampleIsNotApplicableButCountIsZero) {
  const std::vector<ScenarioResult> runs{MakeRun("a/b", "virtual", std::nullopt)};
  const auto all = Pointers(runs);
  const auto ttft = JudgeThreshold(Parse("ttft.p99<2s"), all);
  EXPECT_EQ(ttft.status, CheckStatus::kNotApplicable);
  EXPECT_FALSE(ttft.value.has_value());
  EXPECT_EQ(ttft.evidence, "no sample in 1 run(s): nothing to aggregate");
  const auto count = JudgeThreshold(Parse("ttft.count>=1"), all);
  EXPECT_EQ(count.status, CheckStatus::kFail);
  EXPECT_EQ(count.value, 0);
}

TEST(ThresholdsTest, OneResultPerScenarioWorldAndThresholdExpectFirst) {
  scenario::Scenario a;
  a.name = "a/one";
  a.expect.thresholds = {Parse("attempts.max<=1")};
  scenario::Scenario b;
  b.name = "b/two";
  const std::vector<scenario::Scenario> scenarios{a, b};
  const std::vector<ScenarioResult> runs{MakeRun("a/one", "real", 2000.0),
                                         MakeRun("a/one", "virtual", 1),
                                         MakeRun("b/two", "virtual", 3)};
  const std::vector<scenario::Threshold> cli{Parse("ttft.p99<1s")};
  const auto results = JudgeThresholds(scenarios, cli, runs);
  ASSERT_EQ(results.size(), 5u);
  const auto key = [](const report::ThresholdResult& r) {
    return r.name + " " + r.world + " " + r.expression + " " + r.origin;
  };
  EXPECT_EQ(key(results[0]), "a/one virtual attempts.max<=1 expect");
  EXPECT_EQ(key(results[1]), "a/one virtual ttft.p99<1s cli");
  EXPECT_EQ(key(results[2]), "a/one real attempts.max<=1 expect");
  EXPECT_EQ(key(results[3]), "a/one real ttft.p99<1s cli");
  EXPECT_EQ(key(results[4]), "b/two virtual ttft.p99<1s cli");
  EXPECT_EQ(results[3].status, CheckStatus::kFail);  // real and virtual times never mix
  EXPECT_EQ(results[1].status, CheckStatus::kPass);
}

}  // namespace
}  // namespace faultline::harness
