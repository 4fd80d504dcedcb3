// A retry budget that one client's calls share (RETRY-007), over sockets, with the reference
// client as an adapter in session mode: it keeps the budget across calls, so in
// server-error/openai-chat-budget-shared-across-calls only the first call retries, once. A client
// that declares that budget but keeps none retries every call, and is caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "harness/runner.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

constexpr std::string_view kScenario = "server-error/openai-chat-budget-shared-across-calls";

report::ScenarioResult RunWith(const std::string& adapter) {
  auto catalogue = scenario::LoadBuiltinCatalog();
  EXPECT_TRUE(catalogue.has_value());
  std::vector<scenario::Scenario> chosen;
  for (scenario::Scenario& each : *catalogue) {
    if (each.name == kScenario) chosen.push_back(std::move(each));
  }
  EXPECT_EQ(chosen.size(), 1u);
  RunnerOptions options;
  options.world = WorldChoice::kReal;
  options.adapter = adapter;
  options.timeout = std::chrono::seconds(60);
  auto result = RunAll(chosen, options, {});
  EXPECT_TRUE(result.has_value());
  return result && !result->scenarios.empty() ? result->scenarios.front()
                                              : report::ScenarioResult{};
}

report::CheckResult CheckOf(const report::ScenarioResult& result, std::string_view id) {
  for (const report::CheckResult& check : result.checks) {
    if (check.id == id) return check;
  }
  ADD_FAILURE() << "no " << id << " in " << result.name << ": " << result.error;
  return {};
}

// The requests of each call, in the order the journal has them.
std::vector<int> RequestsPerCall(const report::ScenarioResult& result) {
  std::vector<int> counts(3, 0);
  for (const auto& entry : result.trace["journal"]) {
    const int call = entry.value("call", 0);
    if (call >= 0 && call < 3) ++counts[static_cast<std::size_t>(call)];
  }
  return counts;
}

TEST(SharedBudgetTest, ASessionModeClientSpendsOneBudgetOverItsCalls) {
  const auto shared = RunWith(std::string(FAULTLINE_BINARY) + " call --adapter --session");
  EXPECT_EQ(shared.verdict, report::Verdict::kPass) << shared.error;
  EXPECT_EQ(CheckOf(shared, "RETRY-007").status, report::CheckStatus::kPass);
  EXPECT_EQ(RequestsPerCall(shared), (std::vector<int>{2, 1, 1}));
  EXPECT_EQ(CheckOf(shared, "EXPECT-OUTCOME").status, report::CheckStatus::kPass);

  // The same client with no budget at all, declaring the scenario's: every call retries.
  const std::string without = ::testing::TempDir() + "/no-budget.json";
  std::ofstream(without) << R"({"max_attempts": 3,
    "backoff": {"strategy": "full-jitter", "base_ms": 100, "cap_ms": 200}})";
  const auto overdrawn = RunWith(
      "python3 " FAULTLINE_SOURCE_DIR
      "/harness/tests/adapters/declare_as.py "
      R"('{"extends": "reference", "max_attempts": 3, "backoff": {"strategy": "full-jitter",)"
      R"( "base_ms": 100, "cap_ms": 200}, "budget": {"capacity": 1, "retry_cost": 1,)"
      R"( "success_refund": 0}}' -- )" +
      std::string(FAULTLINE_BINARY) + " call --adapter --session --policy " + without);
  EXPECT_EQ(RequestsPerCall(overdrawn), (std::vector<int>{3, 3, 3}));
  const report::CheckResult check = CheckOf(overdrawn, "RETRY-007");
  EXPECT_EQ(check.status, report::CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("call 0 retried at"), std::string::npos) << check.evidence;
}

}  // namespace
}  // namespace faultline::harness
