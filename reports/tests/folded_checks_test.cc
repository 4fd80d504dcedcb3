// The folding of failed checks every report lists: per scenario, world and check, violations and
// advisories apart.
#include "reports/folded_checks.h"

#include <gtest/gtest.h>

#include "reports/tests/test_results.h"

namespace faultline::report::internal {
namespace {

TEST(FoldFailures, ViolationsFoldTheirRunsAndKeepTheFirstMessage) {
  const RunResult result = testing::FailuresAndAdvisories();
  const std::vector<FoldedScenario> folded = FoldFailures(result, Severity::kViolation);
  ASSERT_EQ(folded.size(), 1u);
  EXPECT_EQ(folded[0].first->name, "rate-limit/x");
  EXPECT_EQ(folded[0].runs, 3);
  ASSERT_EQ(folded[0].checks.size(), 2u) << "RETRY-004 and EXPECT-OUTCOME, no advisory";
  EXPECT_EQ(folded[0].checks[0].id, "RETRY-004");
  EXPECT_EQ(folded[0].checks[0].runs.size(), 3u);
  EXPECT_EQ(folded[0].checks[0].message, "early by 10 ms");
  EXPECT_EQ(folded[0].checks[1].id, "EXPECT-OUTCOME");
  ASSERT_EQ(folded[0].checks[1].runs.size(), 1u);
  EXPECT_EQ(folded[0].checks[1].runs[0]->repetition, 1);
}

TEST(FoldFailures, AdvisoriesOfPassedRunsCountAndGroupByCheck) {
  const RunResult result = testing::FailuresAndAdvisories();
  const std::vector<FoldedScenario> folded = FoldFailures(result, Severity::kAdvisory);
  ASSERT_EQ(folded.size(), 2u);
  EXPECT_EQ(folded[1].first->name, "server-error/y");
  EXPECT_EQ(folded[1].first->verdict, Verdict::kPass);
  const std::vector<FoldedByCheck> by_check = GroupByCheck(folded);
  ASSERT_EQ(by_check.size(), 2u);
  EXPECT_EQ(by_check[0].id, "ADV-001");
  EXPECT_EQ(by_check[0].runs, 3);
  EXPECT_EQ(by_check[1].id, "ADV-004");
  EXPECT_EQ(by_check[1].runs, 2);
  EXPECT_EQ(RunsWithAdvisories(result), 5);
}

TEST(FoldFailures, ABrokenRunIsAViolationOfItsOwn) {
  RunResult result;
  ScenarioResult broken = testing::Scenario("malformed/c", Verdict::kError, {});
  broken.error = "adapter exited";
  broken.subject_error = SubjectError{"exited", std::nullopt, std::nullopt, ""};
  result.scenarios = {broken};
  const std::vector<FoldedScenario> folded = FoldFailures(result, Severity::kViolation);
  ASSERT_EQ(folded.size(), 1u);
  ASSERT_EQ(folded[0].checks.size(), 1u);
  EXPECT_TRUE(folded[0].checks[0].error);
  EXPECT_EQ(folded[0].checks[0].id, "exited");
  EXPECT_EQ(folded[0].checks[0].message, "adapter exited");
  EXPECT_TRUE(FoldFailures(result, Severity::kAdvisory).empty());
}

TEST(FoldFailures, RunListNamesTheFirstRunsAndCountsTheRest) {
  RunResult result;
  for (int repetition = 0; repetition < 12; ++repetition) {
    ScenarioResult run = testing::Scenario("a/b", Verdict::kFail, {});
    run.repetition = repetition;
    result.scenarios.push_back(run);
  }
  std::vector<const ScenarioResult*> runs;
  for (const ScenarioResult& run : result.scenarios) runs.push_back(&run);
  EXPECT_EQ(RunList({runs[4]}), "run 5");
  EXPECT_EQ(RunList(runs, 3), "runs 1, 2, 3 and 9 more");
}

}  // namespace
}  // namespace faultline::report::internal
