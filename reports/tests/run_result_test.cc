// The run-result model: enum names, counts, nearest-rank percentiles, Summarize, the run
// fingerprint and Merge.
#include "reports/run_result.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fmt/format.h"
#include "reports/tests/test_results.h"

namespace faultline::report {
namespace {

using testing::Check;
using ::testing::HasSubstr;
using testing::Scenario;

TEST(RunResultNames, CheckStatusRoundTrips) {
  for (CheckStatus status : {CheckStatus::kPass, CheckStatus::kFail, CheckStatus::kNotApplicable}) {
    EXPECT_EQ(ParseCheckStatus(ToString(status)), status);
  }
  EXPECT_EQ(ToString(CheckStatus::kNotApplicable), "n/a");
  EXPECT_EQ(ParseCheckStatus("PASS"), std::nullopt);
  EXPECT_EQ(ParseCheckStatus(""), std::nullopt);
}

TEST(RunResultNames, VerdictRoundTrips) {
  for (Verdict verdict : {Verdict::kPass, Verdict::kFail, Verdict::kError}) {
    EXPECT_EQ(ParseVerdict(ToString(verdict)), verdict);
  }
  EXPECT_EQ(ParseVerdict("failed"), std::nullopt);
}

TEST(RunResultCounts, CountsVerdicts) {
  RunResult result;
  result.scenarios = {Scenario("a/1", Verdict::kPass, {}), Scenario("a/2", Verdict::kFail, {}),
                      Scenario("a/3", Verdict::kFail, {}), Scenario("a/4", Verdict::kError, {})};
  EXPECT_EQ(result.passed(), 1);
  EXPECT_EQ(result.failed(), 2);
  EXPECT_EQ(result.errors(), 1);
}

TEST(NearestRankPercentile, KnownVectors) {
  // The textbook example: 15, 20, 35, 40, 50.
  const std::vector<double> five{40, 15, 50, 35, 20};
  EXPECT_EQ(NearestRankPercentile(five, 5), 15);
  EXPECT_EQ(NearestRankPercentile(five, 30), 20);
  EXPECT_EQ(NearestRankPercentile(five, 40), 20);
  EXPECT_EQ(NearestRankPercentile(five, 50), 35);
  EXPECT_EQ(NearestRankPercentile(five, 100), 50);
  // 1..100: p50 is the 50th value, p95 the 95th, p99 the 99th.
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  EXPECT_EQ(NearestRankPercentile(hundred, 50), 50);
  EXPECT_EQ(NearestRankPercentile(hundred, 95), 95);
  EXPECT_EQ(NearestRankPercentile(hundred, 99), 99);
  // Ten values: p95 and p99 both round up to the 10th.
  const std::vector<double> ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(NearestRankPercentile(ten, 50), 5);
  EXPECT_EQ(NearestRankPercentile(ten, 95), 10);
  EXPECT_EQ(NearestRankPercentile(ten, 99), 10);
  EXPECT_EQ(NearestRankPercentile({7}, 99), 7);
  EXPECT_EQ(NearestRankPercentile({}, 50), 0);
}

ScenarioResult Timed(std::string name, std::string world, int repetition,
                     std::optional<double> terminal, std::optional<double> first_token = {}) {
  ScenarioResult s = Scenario(std::move(name), Verdict::kPass, {});
  s.world = std::move(world);
  s.repetition = repetition;
  s.metrics.terminal_ms = terminal;
  s.metrics.first_token_ms = first_token;
  return s;
}

TEST(Summarize, OnlyNamesThatRanMoreThanOncePerWorld) {
  RunResult result;
  result.scenarios = {Timed("a", "virtual", 0, 10), Timed("b", "virtual", 0, 5),
                      Timed("a", "virtual", 1, 30), Timed("a", "real", 0, 99),
                      Timed("a", "virtual", 2, 20)};
  Summarize(result);
  ASSERT_EQ(result.latency.size(), 1u);
  const LatencySummary& a = result.latency[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.world, "virtual");
  EXPECT_EQ(a.runs, 3);
  ASSERT_TRUE(a.terminal_ms.has_value());
  EXPECT_EQ(a.terminal_ms->p50, 20);
  EXPECT_EQ(a.terminal_ms->p95, 30);
  EXPECT_EQ(a.terminal_ms->p99, 30);
  EXPECT_FALSE(a.first_token_ms.has_value()) << "no run had a first token";
  EXPECT_FALSE(a.recovery_overhead_ms.has_value());
}

TEST(Summarize, EveryCallOfAMultiCallRunIsASample) {
  RunResult result;
  ScenarioResult storm = Timed("storm", "virtual", 0, 10);
  for (int call = 0; call < 4; ++call) {
    storm.metrics.calls.push_back(
        CallMetrics{.call = call, .terminal_ms = 10.0 * (call + 1), .attempts = 1});
  }
  ScenarioResult again = storm;
  again.repetition = 1;
  for (CallMetrics& call : again.metrics.calls) *call.terminal_ms += 100;
  result.scenarios = {storm, again, Timed("single", "virtual", 0, 7)};
  Summarize(result);
  ASSERT_EQ(result.latency.size(), 1u) << "a single run of a single call is not summarised";
  const LatencySummary& summary = result.latency[0];
  EXPECT_EQ(summary.runs, 2);
  EXPECT_EQ(summary.samples, 8);
  ASSERT_TRUE(summary.terminal_ms.has_value());
  EXPECT_EQ(summary.terminal_ms->p50, 40);   // 10 20 30 40 | 110 120 130 140
  EXPECT_EQ(summary.terminal_ms->p99, 140);  // never call 0 alone
}

TEST(Summarize, UsesOnlyRunsThatHaveTheMetricAndReplacesOldSummaries) {
  RunResult result;
  result.scenarios = {Timed("a", "virtual", 0, 10, 1), Timed("a", "virtual", 1, 20),
                      Timed("a", "virtual", 2, 30, 3), Timed("b", "real", 0, 1),
                      Timed("b", "real", 1, 2)};
  LatencySummary stale;
  stale.name = "stale";
  result.latency = {stale};
  Summarize(result);
  ASSERT_EQ(result.latency.size(), 2u);
  EXPECT_EQ(result.latency[0].name, "a");
  EXPECT_EQ(result.latency[1].name, "b");
  ASSERT_TRUE(result.latency[0].first_token_ms.has_value());
  EXPECT_EQ(result.latency[0].first_token_ms->p50, 1);
  EXPECT_EQ(result.latency[0].first_token_ms->p99, 3);
  EXPECT_EQ(result.latency[1].terminal_ms->p50, 1);
}

TEST(RunFingerprint, DependsOnEveryFingerprintInTheCanonicalOrder) {
  // Runs named x0, x1, ... in the order given.
  auto with = [](std::vector<std::string> prints) {
    std::vector<ScenarioResult> scenarios;
    for (auto& print : prints) {
      scenarios.push_back(Scenario(fmt::format("x{}", scenarios.size()), Verdict::kPass, {}));
      scenarios.back().fingerprint = print;
    }
    return RunFingerprint(scenarios);
  };
  EXPECT_EQ(with({"ab", "c"}), with({"ab", "c"}));
  EXPECT_NE(with({"ab", "c"}), with({"a", "bc"}));
  EXPECT_NE(with({"ab", "c"}), with({"c", "ab"}));  // x0 and x1 swap prints
  EXPECT_EQ(with({}).size(), 16u);
  EXPECT_EQ(with({}), "cbf29ce484222325");    // FNV-1a offset basis: nothing mixed in
  EXPECT_EQ(with({""}), "af63f14c8602103b");  // FNV-1a 64 of "|"
}

TEST(RunFingerprint, IgnoresTheListOrder) {
  std::vector<ScenarioResult> runs = {Timed("b", "virtual", 0, 1), Timed("a", "real", 0, 1),
                                      Timed("a", "virtual", 1, 1), Timed("a", "virtual", 0, 1)};
  for (std::size_t i = 0; i < runs.size(); ++i) runs[i].fingerprint = fmt::format("p{}", i);
  std::vector<ScenarioResult> canonical = runs;
  std::ranges::sort(canonical, RunOrderLess);
  EXPECT_EQ(canonical[0].fingerprint, "p3");  // a, rep 0, virtual
  EXPECT_EQ(canonical[1].fingerprint, "p1");  // a, rep 0, real
  EXPECT_EQ(canonical[2].fingerprint, "p2");  // a, rep 1
  EXPECT_EQ(canonical[3].fingerprint, "p0");  // b
  EXPECT_EQ(RunFingerprint(runs), RunFingerprint(canonical));
}

RunResult Shard(std::string shard, std::vector<ScenarioResult> scenarios) {
  RunResult part;
  part.tool_version = "faultline 0.1.0";
  part.subject = "ref";
  part.world = "virtual";
  part.seed = 42;
  part.shard = std::move(shard);
  part.scenarios = std::move(scenarios);
  return part;
}

TEST(Merge, RestoresTheCanonicalOrderAndCombinesRunFields) {
  RunResult one = Shard("1/2", {Timed("a", "virtual", 0, 10), Timed("a", "virtual", 1, 20)});
  one.started_at = "2025-01-15T10:24:09Z";
  one.wall_ms = 300;
  RunResult two = Shard("2/2", {Timed("b", "virtual", 0, 1), Timed("a", "virtual", 2, 30)});
  two.started_at = "2025-01-15T10:24:07Z";
  two.wall_ms = 500;
  auto merged = Merge({one, two});
  ASSERT_TRUE(merged.has_value()) << merged.error();
  ASSERT_EQ(merged->scenarios.size(), 4u);
  EXPECT_EQ(merged->scenarios[0].name, "a");
  EXPECT_EQ(merged->scenarios[1].repetition, 1);
  EXPECT_EQ(merged->scenarios[2].repetition, 2);
  EXPECT_EQ(merged->scenarios[3].name, "b");
  EXPECT_EQ(merged->shard, "1/2+2/2");
  EXPECT_EQ(merged->world, "virtual");
  EXPECT_EQ(merged->started_at, "2025-01-15T10:24:07Z");
  EXPECT_EQ(merged->wall_ms, 500);
  EXPECT_EQ(merged->seed, 42u);
  EXPECT_EQ(merged->fingerprint, RunFingerprint(merged->scenarios));
  // Summarize re-ran over the union: "a" ran three times across the shards.
  ASSERT_EQ(merged->latency.size(), 1u);
  EXPECT_EQ(merged->latency[0].runs, 3);
  EXPECT_EQ(merged->latency[0].terminal_ms->p50, 20);
}

TEST(Merge, GathersEveryPartsThresholdsInTheOrderOfTheirScenarios) {
  RunResult one = Shard("1/2", {Timed("b", "virtual", 0, 10)});
  one.thresholds = {ThresholdResult{.name = "b", .world = "virtual", .expression = "x"}};
  RunResult two = Shard("2/2", {Timed("a", "real", 0, 1), Timed("a", "virtual", 0, 1)});
  two.thresholds = {ThresholdResult{.name = "a", .world = "real", .expression = "y"},
                    ThresholdResult{.name = "a", .world = "virtual", .expression = "z"}};
  auto merged = Merge({one, two});
  ASSERT_TRUE(merged.has_value()) << merged.error();
  ASSERT_EQ(merged->thresholds.size(), 3u);
  EXPECT_EQ(merged->thresholds[0].expression, "z");  // a, virtual before real
  EXPECT_EQ(merged->thresholds[1].expression, "y");
  EXPECT_EQ(merged->thresholds[2].expression, "x");
}

TEST(Merge, MixedWorldsAndASinglePart) {
  RunResult real = Shard("", {Timed("a", "real", 0, 10)});
  real.world = "real";
  auto merged = Merge({Shard("", {Timed("a", "virtual", 0, 10)}), real});
  ASSERT_TRUE(merged.has_value()) << merged.error();
  EXPECT_EQ(merged->world, "mixed");
  EXPECT_EQ(merged->shard, "");
  EXPECT_TRUE(merged->latency.empty()) << "one run per name + world";

  auto alone = Merge({real});
  ASSERT_TRUE(alone.has_value());
  EXPECT_EQ(alone->scenarios, real.scenarios);
  EXPECT_EQ(alone->world, "real");
}

TEST(Merge, Errors) {
  EXPECT_THAT(Merge({}).error(), HasSubstr("no results"));

  auto duplicate =
      Merge({Shard("1/2", {Timed("a", "virtual", 0, 1)}),
             Shard("2/2", {Timed("b", "virtual", 0, 1), Timed("a", "virtual", 0, 2)})});
  ASSERT_FALSE(duplicate.has_value());
  EXPECT_THAT(duplicate.error(), HasSubstr("\"a\" (world virtual, repetition 0)"));
  EXPECT_THAT(duplicate.error(), HasSubstr("part 1 and part 2"));

  auto within_one = Merge({Shard("", {Timed("a", "virtual", 1, 1), Timed("a", "virtual", 1, 1)})});
  EXPECT_FALSE(within_one.has_value());

  RunResult other_subject = Shard("2/2", {});
  other_subject.subject = "node sdk.js";
  EXPECT_THAT(Merge({Shard("1/2", {}), other_subject}).error(),
              HasSubstr("part 2: subject \"node sdk.js\" differs"));
  RunResult other_tool = Shard("2/2", {});
  other_tool.tool_version = "faultline 0.2.0";
  EXPECT_THAT(Merge({Shard("1/2", {}), other_tool}).error(), HasSubstr("tool version"));
}

TEST(Merge, AnInterruptedPartInterruptsTheWhole) {
  RunResult one = Shard("1/2", {Timed("a", "virtual", 0, 1)});
  one.interrupted = Interruption{.reason = "SIGTERM", .planned_runs = 3};
  RunResult two = Shard("2/2", {Timed("b", "virtual", 0, 1), Timed("c", "virtual", 0, 1)});
  auto merged = Merge({one, two});
  ASSERT_TRUE(merged.has_value()) << merged.error();
  ASSERT_TRUE(merged->interrupted.has_value());
  EXPECT_EQ(merged->interrupted->reason, "SIGTERM");
  EXPECT_EQ(merged->interrupted->planned_runs, 5);
  EXPECT_FALSE(Merge({two})->interrupted.has_value());
}

// Issue 30: two results of different subjects, one of them 50 MB, made a 52 MB error message.
TEST(Merge, QuotesADifferingSubjectByItsStartAndSizeNeverWhole) {
  RunResult huge = Shard("2/2", {});
  huge.subject = std::string(8 * 1024 * 1024, 'x');
  const std::string error = Merge({Shard("1/2", {}), huge}).error();
  const std::string head = error.substr(0, 1024);  // what a failure prints, too
  EXPECT_LT(error.size(), 1024u) << head;
  EXPECT_THAT(head, HasSubstr("part 2: subject \"xxxx"));
  EXPECT_THAT(head, HasSubstr("(8388608 bytes, the first 120 characters shown)"));
  EXPECT_THAT(head, HasSubstr("differs from part 1's \"ref\""));
}

// A run keeps at most kMaxStderrTail bytes of a subject's stderr; a merge keeps to that bound
// whatever its parts hold (a hand-made result), and says what it cut.
TEST(Merge, KeepsEachStderrTailWithinWhatARunKeeps) {
  ScenarioResult broken = Timed("a", "virtual", 0, 1);
  broken.verdict = Verdict::kError;
  broken.subject_error = SubjectError{
      .kind = "exited",
      .exit_status = 1,
      .signal = std::nullopt,
      .stderr_tail = std::string(3 * kMaxStderrTail, 'e') + "\nTraceback: the last line"};
  auto merged = Merge({Shard("1/2", {broken}), Shard("2/2", {Timed("b", "virtual", 0, 1)})});
  ASSERT_TRUE(merged.has_value()) << merged.error();
  const std::string& tail = merged->scenarios[0].subject_error->stderr_tail;
  EXPECT_LE(tail.size(), kMaxStderrTail);
  EXPECT_THAT(tail.substr(0, 100), ::testing::StartsWith("[faultline report merge: the first "));
  EXPECT_THAT(tail.substr(0, 100), HasSubstr(" bytes of this stderr were cut]\n"));
  EXPECT_THAT(tail.substr(tail.size() - 100), ::testing::EndsWith("\nTraceback: the last line"));
  EXPECT_FALSE(merged->scenarios[1].subject_error.has_value());
}

TEST(Merge, SameNameInOtherWorldOrRepetitionIsNotADuplicate) {
  auto merged = Merge({Shard("", {Timed("a", "virtual", 0, 1), Timed("a", "real", 0, 1)}),
                       Shard("", {Timed("a", "virtual", 1, 1)})});
  ASSERT_TRUE(merged.has_value()) << merged.error();
  EXPECT_EQ(merged->scenarios.size(), 3u);
}

// `faultline report merge` adds shards one at a time (ResultMerger) and drops each: the same
// result as Merge of them all, and a refused part leaves nothing of itself behind.
TEST(ResultMerger, AddingOneAtATimeIsMergeAndARefusedPartLeavesNothing) {
  const RunResult one = Shard("1/3", {Timed("b", "virtual", 0, 5), Timed("a", "virtual", 1, 20)});
  const RunResult two = Shard("2/3", {});  // a shard the hash left empty
  const RunResult three = Shard("3/3", {Timed("a", "virtual", 0, 10), Timed("c", "real", 0, 1)});
  ResultMerger merger;
  ASSERT_TRUE(merger.Add(one).has_value());
  ASSERT_TRUE(merger.Add(two).has_value());
  // Its "c" is new but its "b" is a duplicate: refused whole, "c" not kept.
  const auto refused =
      merger.Add(Shard("x", {Timed("c", "virtual", 0, 1), Timed("b", "virtual", 0, 1)}));
  ASSERT_FALSE(refused.has_value());
  EXPECT_THAT(refused.error(), HasSubstr("\"b\" (world virtual, repetition 0)"));
  EXPECT_THAT(refused.error(), HasSubstr("part 1 and part 3"));
  auto so_far = std::move(merger).Finish();
  ASSERT_TRUE(so_far.has_value()) << so_far.error();
  EXPECT_EQ(so_far->scenarios.size(), 2u);
  EXPECT_EQ(so_far->shard, "1/3+2/3");

  ResultMerger clean;
  for (const RunResult& part : {one, two, three}) ASSERT_TRUE(clean.Add(part).has_value());
  auto added = std::move(clean).Finish();
  auto whole = Merge({one, two, three});
  ASSERT_TRUE(added.has_value() && whole.has_value());
  EXPECT_EQ(ToJson(*added), ToJson(*whole));
  EXPECT_EQ(added->shard, "1/3+2/3+3/3");
  EXPECT_EQ(added->world, "virtual");  // every part ran "virtual" (as its run world says)
  ASSERT_EQ(added->scenarios.size(), 4u);
  std::vector<ScenarioResult> runs = three.scenarios;
  runs.insert(runs.end(), one.scenarios.begin(), one.scenarios.end());
  EXPECT_EQ(added->fingerprint, RunFingerprint(runs));
  EXPECT_FALSE(ResultMerger().Finish().has_value()) << "nothing added";
}

}  // namespace
}  // namespace faultline::report
