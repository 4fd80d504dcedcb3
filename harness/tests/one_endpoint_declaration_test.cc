// A client of one endpoint, declared the easy ways, over real sockets: the reference client on
// one endpoint (`faultline call --adapter --policy ...`) whose hello a wrapper rewrites
// (tests/adapters/declare_as.py) into a partial declaration that states only its attempts, or
// into `{"extends": "one-endpoint"}`. Neither says a word about routes, and neither may fail a
// routes/ scenario: a partial declaration is judged only on what it states, with routing off
// unless stated (docs/policy.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/runner.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

const std::filesystem::path kAdapters =
    std::filesystem::path(FAULTLINE_SOURCE_DIR) / "harness/tests/adapters";

std::vector<scenario::Scenario> RouteScenarios() {
  auto catalog = scenario::LoadBuiltinCatalog();
  EXPECT_TRUE(catalog.has_value());
  std::vector<scenario::Scenario> routes;
  for (scenario::Scenario& scenario : catalog.value_or(std::vector<scenario::Scenario>{})) {
    if (scenario.name.starts_with("routes/")) routes.push_back(std::move(scenario));
  }
  return routes;
}

// Runs every routes/ scenario against the reference client running `policy` (a preset's name)
// and declaring `declared`; returns the checks that failed, one line each.
std::vector<std::string> FailedChecks(const std::string& policy, const std::string& declared,
                                      std::size_t* scenarios, std::size_t* advised) {
  const std::vector<scenario::Scenario> routes = RouteScenarios();
  *scenarios = routes.size();
  RunnerOptions options;
  options.world = WorldChoice::kReal;
  options.jobs = 8;
  options.adapter = "python3 " + (kAdapters / "declare_as.py").string() + " '" + declared +
                    "' -- " + FAULTLINE_BINARY + " call --adapter --policy " + policy;
  auto result = RunAll(routes, options, {});
  EXPECT_TRUE(result.has_value());
  std::vector<std::string> failed;
  *advised = 0;
  for (const report::ScenarioResult& run :
       result ? result->scenarios : std::vector<report::ScenarioResult>{}) {
    if (run.verdict == report::Verdict::kError) failed.push_back(run.name + ": " + run.error);
    for (const report::CheckResult& check : run.checks) {
      if (check.status != report::CheckStatus::kFail) continue;
      if (check.severity == report::Severity::kAdvisory) {
        if (check.id == "ADV-011") ++*advised;
        continue;
      }
      failed.push_back(run.name + " " + check.id + ": " + check.evidence);
    }
  }
  return failed;
}

TEST(OneEndpointDeclarationTest, StatingOnlyItsAttemptsPassesEveryRoutesScenario) {
  std::size_t scenarios = 0, advised = 0;
  const std::vector<std::string> failed =
      FailedChecks("no-retry", R"({"max_attempts": 1})", &scenarios, &advised);
  EXPECT_GE(scenarios, 49u);
  EXPECT_TRUE(failed.empty()) << failed.size() << " failed, first: " << failed.front();
  EXPECT_GT(advised, 0u) << "ADV-011 names the keys to declare";
}

TEST(OneEndpointDeclarationTest, ExtendingThePresetPassesEveryRoutesScenario) {
  std::size_t scenarios = 0, advised = 0;
  const std::vector<std::string> failed =
      FailedChecks("one-endpoint", R"({"extends": "one-endpoint"})", &scenarios, &advised);
  EXPECT_GE(scenarios, 49u);
  EXPECT_TRUE(failed.empty()) << failed.size() << " failed, first: " << failed.front();
  EXPECT_EQ(advised, 0u) << "a declaration that extends a preset is whole";
}

}  // namespace
}  // namespace faultline::harness
