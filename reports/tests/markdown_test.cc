// Markdown step summary: golden text for a small result, escaping in cells, latency table, and
// the conformance matrix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "fmt/format.h"
#include "reports/report.h"
#include "reports/tests/test_results.h"

namespace faultline::report {
namespace {

using testing::Check;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Scenario;

std::string Markdown(const RunResult& result) {
  std::ostringstream out;
  RenderMarkdown(result, out);
  return out.str();
}

RunResult SmallResult() {
  RunResult result;
  result.subject = "faultline-ref 0.1.0 (in-process)";
  result.world = "virtual";
  result.seed = 42;
  result.fingerprint = "5c1d0e9f3a7b2468";
  result.wall_ms = 1234;
  ScenarioResult pass = Scenario("rate-limit/retry-after", Verdict::kPass, {});
  pass.metrics = Metrics{.first_token_ms = 2012.9,
                         .terminal_ms = 2126,
                         .forced_minimum_ms = 2000,
                         .recovery_overhead_ms = 126,
                         .attempts = 2,
                         .wasted_bytes = 312,
                         .wasted_tokens = 4};
  ScenarioResult fail = Scenario(
      "truncation/closed-mid-line", Verdict::kFail,
      {Check("COMMIT-004", CheckStatus::kFail, "committed \"Hello | wor\"\nafter 590 bytes"),
       Check("LIFE-001", CheckStatus::kPass)});
  fail.metrics.terminal_ms = 101.5;
  ScenarioResult error = Scenario("malformed/invalid-json", Verdict::kError, {});
  error.error = "adapter exited with status 1";
  error.metrics.attempts = 0;
  result.scenarios = {pass, fail, error};
  return result;
}

TEST(Markdown, GoldenSummary) {
  const std::string expected =
      "## ⚠️ faultline: 1 error, 1 failed, 1 passed\n"
      "\n"
      "**Subject** `faultline-ref 0.1.0 (in-process)` · **world** virtual · **seed** 42 · "
      "**fingerprint** `5c1d0e9f3a7b2468` · 3 scenario runs in 1.23 s\n"
      "\n"
      "### Failures\n"
      "\n"
      "| Scenario | World | Check | Runs | First message | Reproduce |\n"
      "| --- | --- | --- | --- | --- | --- |\n"
      "| truncation/closed-mid-line | virtual | COMMIT-004 | run 1 | committed \"Hello \\| "
      "wor\"<br>after "
      "590 bytes | `faultline run --filter truncation/closed-mid-line --seed 42 --time virtual` |\n"
      "| malformed/invalid-json | virtual | error | run 1 | adapter exited with status 1 | "
      "`faultline run --filter malformed/invalid-json --seed 42 --time virtual` |\n"
      "\n"
      "### Scenarios\n"
      "\n"
      "| Scenario | World | Runs | Verdict | First token | Terminal | Overhead | Attempts | Wasted "
      "|\n"
      "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n"
      "| rate-limit/retry-after | virtual | 1 | ✅ pass | 2.01 s | 2.13 s | 126 ms | 2 | 312 B (4 "
      "tok) |\n"
      "| truncation/closed-mid-line | virtual | 1 | ❌ fail | – | 102 ms | – | 1 | – |\n"
      "| malformed/invalid-json | virtual | 1 | ⚠️ error | – | – | – | 0 | – |\n"
      "\n";
  EXPECT_EQ(Markdown(SmallResult()), expected);
}

TEST(Markdown, ThresholdsCrossedFirstWithTheCommandThatReJudgesThem) {
  RunResult result = SmallResult();
  result.thresholds = {
      ThresholdResult{.name = "rate-limit/retry-after",
                      .world = "virtual",
                      .expression = "attempts.max<=2",
                      .origin = "expect",
                      .status = CheckStatus::kPass,
                      .evidence = "2 over 1 call(s)"},
      ThresholdResult{.name = "rate-limit/retry-after",
                      .world = "virtual",
                      .expression = "ttft.p99<2s",
                      .origin = "cli",
                      .status = CheckStatus::kFail,
                      .evidence = "2012.9 ms over 1 call(s) of 1 run(s); crossed < 2000 ms"}};
  const std::string text = Markdown(result);
  EXPECT_THAT(text, HasSubstr("1 passed · 1 of 2 thresholds crossed\n"));
  EXPECT_THAT(
      text, HasSubstr("### Thresholds\n\n| Scenario | World | Threshold | Status | Evidence | "
                      "Reproduce |\n| --- | --- | --- | --- | --- | --- |\n"
                      "| rate-limit/retry-after | virtual | `ttft.p99<2s` | ❌ crossed | 2012.9 ms "
                      "over 1 call(s) of 1 run(s); crossed &lt; 2000 ms | `faultline run --filter "
                      "rate-limit/retry-after --seed 42 --time virtual --threshold "
                      "'ttft.p99<2s'` |\n"
                      "| rate-limit/retry-after | virtual | `attempts.max<=2` | ✅ pass | 2 over "
                      "1 call(s) | – |\n"));
}

TEST(Markdown, AllPassedHasNoFailureTable) {
  RunResult result = SmallResult();
  result.scenarios.resize(1);
  result.shard = "2/4";
  const std::string md = Markdown(result);
  EXPECT_TRUE(md.starts_with("## ✅ faultline: 1 passed\n")) << md;
  EXPECT_THAT(md, Not(HasSubstr("### Failures")));
  EXPECT_THAT(md, HasSubstr("**shard** 2/4"));
}

TEST(Markdown, EvidenceIsShortenedAndCellsEscaped) {
  RunResult result = SmallResult();
  result.scenarios[1].checks[0].evidence = std::string(1000, 'x') + "|tail";
  result.scenarios[1].name = "odd|name\nwith <b>markup</b>";
  const std::string md = Markdown(result);
  EXPECT_THAT(md, HasSubstr(std::string(240, 'x') + "…"));
  EXPECT_THAT(md, Not(HasSubstr("tail")));
  EXPECT_THAT(md, HasSubstr("| odd\\|name<br>with &lt;b&gt;markup&lt;/b&gt; |"));
  // Every table row still has its column count: escaped pipes do not split cells.
  std::istringstream lines(md);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("| odd")) continue;
    int pipes = 0;
    for (std::size_t i = 0; i < line.size(); ++i)
      pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    EXPECT_TRUE(pipes == 7 || pipes == 10) << line;
  }
}

TEST(Markdown, LatencyTableAndRepetitionLabels) {
  RunResult result = SmallResult();
  result.scenarios.push_back(result.scenarios[0]);
  result.scenarios.back().repetition = 1;
  result.scenarios.back().metrics.terminal_ms = 3000;
  Summarize(result);
  const std::string md = Markdown(result);
  EXPECT_THAT(md, HasSubstr("### Latency over repetitions and calls (p50 / p95 / p99)"));
  EXPECT_THAT(md, HasSubstr("| rate-limit/retry-after | virtual | 2 | 2 | 2.01 s / 2.01 s / 2.01 s "
                            "| 2.13 s / 3.00 s / 3.00 s |"));
  // Repeated passing runs fold into one row: a count and the medians.
  EXPECT_THAT(md, HasSubstr("| rate-limit/retry-after | virtual | 2 | ✅ 2 | 2.01 s | 2.13 s |"));
}

TEST(Markdown, EveryRowNamesItsWorld) {
  RunResult result = SmallResult();
  result.world = "both";
  for (std::size_t i = 0, n = result.scenarios.size(); i < n; ++i) {
    result.scenarios.push_back(result.scenarios[i]);
    result.scenarios.back().world = "real";
  }
  const std::string md = Markdown(result);
  EXPECT_THAT(md, HasSubstr("| truncation/closed-mid-line | virtual | COMMIT-004 | run 1 |"));
  EXPECT_THAT(md, HasSubstr("| truncation/closed-mid-line | real | COMMIT-004 | run 1 |"));
  EXPECT_THAT(md, HasSubstr("--time real` |"));
  EXPECT_THAT(md, HasSubstr("| rate-limit/retry-after | real | 1 | ✅ pass |"));
  EXPECT_THAT(md, HasSubstr("| rate-limit/retry-after | virtual | 1 | ✅ pass |"));
}

TEST(Markdown, StaysUnderOneMebibyteWithFailuresFirst) {
  RunResult result = SmallResult();
  result.scenarios.clear();
  for (int i = 0; i < 20000; ++i) {  // 20,000 failing runs of 400 scenarios, long evidence
    // A check of its own per repetition: 20,000 rows even folded.
    ScenarioResult run = Scenario(
        fmt::format("category-{}/scenario-{}", (i % 400) % 19, i % 400), Verdict::kFail,
        {Check(fmt::format("CHECK-{}", i / 400), CheckStatus::kFail, std::string(600, 'e'))});
    run.repetition = i / 400;
    result.scenarios.push_back(run);
  }
  for (int i = 0; i < 4000; ++i) {
    result.scenarios.push_back(Scenario(fmt::format("pass/p-{}", i), Verdict::kPass, {}));
  }
  Summarize(result);
  const std::string md = Markdown(result);
  EXPECT_LT(md.size(), 1024u * 1024u);
  EXPECT_THAT(md, HasSubstr("more failed checks not shown (summary.md stays under 1 MiB)"));
  EXPECT_LT(md.find("### Failures"), md.find("### Scenarios"));
  EXPECT_THAT(md, HasSubstr("| category-0/scenario-0 | virtual | 50 | ❌ 50 |"));
}

TEST(Markdown, FailuresFoldOneRowPerCheckAndTheReproduceCommandOnce) {
  const std::string md = Markdown(testing::FailuresAndAdvisories());
  const std::string failures =
      md.substr(md.find("### Failures"), md.find("### Advisories") - md.find("### Failures"));
  EXPECT_THAT(
      failures,
      HasSubstr("| rate-limit/x | virtual | RETRY-004 | 3 of 3: runs 1, 2, 3 | early by 10 ms | "
                "`faultline run --filter rate-limit/x --seed 42 --time virtual` |\n"
                "| rate-limit/x | virtual | EXPECT-OUTCOME | 1 of 3: run 2 | gave up | ↑ |\n"));
  EXPECT_EQ(testing::CountOccurrences(failures, "| rate-limit/x |"), 2);
  EXPECT_THAT(failures, Not(HasSubstr("ADV-"))) << "advisories are listed apart";
}

TEST(Markdown, AdvisoriesAreListedFoldedPerCheckEvenWhenEveryRunPassed) {
  RunResult result = testing::FailuresAndAdvisories();
  const std::string md = Markdown(result);
  EXPECT_THAT(md, HasSubstr("· 5 advisories\n"));
  EXPECT_LT(md.find("### Failures"), md.find("### Advisories"));
  EXPECT_THAT(md, HasSubstr("5 in 5 runs: legal under the subject's declared policy"));
  EXPECT_THAT(md, HasSubstr("- **ADV-001** (3 runs in 1 scenario): statement of ADV-001\n"
                            "- **ADV-004** (2 runs in 1 scenario): statement of ADV-004\n"));
  EXPECT_THAT(md, HasSubstr("| ADV-001 | rate-limit/x | virtual | 3 of 3: runs 1, 2, 3 | waited "
                            "less than the Retry-After |\n"
                            "| ADV-004 | server-error/y | virtual | 2 of 2: runs 1, 2 | gave up "
                            "after one 503 |\n"));
  // Nothing failed: no failure table, the advisories still listed.
  result.scenarios.erase(result.scenarios.begin(), result.scenarios.begin() + 3);
  const std::string passed = Markdown(result);
  EXPECT_TRUE(passed.starts_with("## ✅ faultline: 4 passed · 2 advisories\n")) << passed;
  EXPECT_THAT(passed, Not(HasSubstr("### Failures")));
  EXPECT_THAT(passed, HasSubstr("| ADV-004 | server-error/y | virtual | 2 of 2: runs 1, 2 |"));
  result.scenarios.resize(1);
  EXPECT_TRUE(Markdown(result).starts_with("## ✅ faultline: 1 passed · 1 advisory\n"));
}

TEST(Markdown, ConformanceMatrix) {
  RunResult ref = SmallResult();
  RunResult sdk = SmallResult();
  sdk.subject = "node openai-sdk.mjs";
  sdk.scenarios[0].verdict = Verdict::kFail;
  sdk.scenarios[0].checks = {Check("RETRY-004", CheckStatus::kFail),
                             Check("TIME-001", CheckStatus::kFail)};
  sdk.scenarios.pop_back();
  std::ostringstream out;
  RenderMatrixMarkdown({ref, sdk}, out);
  EXPECT_EQ(out.str(),
            "| Scenario | faultline-ref 0.1.0 (in-process) | node openai-sdk.mjs |\n"
            "| --- | --- | --- |\n"
            "| rate-limit/retry-after | ✅ | ❌ RETRY-004 TIME-001 |\n"
            "| truncation/closed-mid-line | ❌ COMMIT-004 | ❌ COMMIT-004 |\n"
            "| malformed/invalid-json | ⚠️ error | – |\n"
            "| **Passed** | 1 / 3 | 0 / 2 |\n");
}

}  // namespace
}  // namespace faultline::report
