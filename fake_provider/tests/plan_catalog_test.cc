// Every scenario of the built-in catalogue compiles, and every plan it yields is well-formed:
// ordered steps, a parsable head, no placeholder left in the bytes, and a complete HTTP message
// whenever the plan promises to keep the connection.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "fake_provider/plan_compiler.h"
#include "fake_provider/tests/plan_test_util.h"
#include "fake_provider/virtual_driver.h"
#include "scenarios/loader.h"

namespace faultline::provider {
namespace {

using namespace std::chrono_literals;

void CheckPlan(const ResponsePlan& plan, const std::string& context) {
  SCOPED_TRACE(context + ": " + plan.summary);
  EXPECT_FALSE(plan.summary.empty());
  for (std::size_t i = 1; i < plan.steps.size(); ++i) {
    EXPECT_LE(plan.steps[i - 1].at, plan.steps[i].at);
  }
  const std::string bytes = testing::SentBytes(plan);
  EXPECT_EQ(bytes.find("~FL"), std::string::npos);
  if (plan.status == 0) {
    EXPECT_TRUE(bytes.empty());
    return;
  }
  ASSERT_TRUE(bytes.starts_with("HTTP/1.1 " + std::to_string(plan.status) + " "));
  const auto response = testing::Decode(bytes);
  ASSERT_TRUE(response.Header("date"));
  if (!plan.keep_alive) return;
  if (response.Header("transfer-encoding") == "chunked") {
    EXPECT_TRUE(response.final_chunk);
    EXPECT_TRUE(response.complete_chunks);
  } else {
    EXPECT_EQ(response.Header("content-length"), std::to_string(response.body.size()));
  }
}

TEST(PlanCatalogTest, EveryCatalogueScenarioYieldsWellFormedPlans) {
  const auto catalogue = scenario::LoadBuiltinCatalog();
  ASSERT_TRUE(catalogue.has_value());
  ASSERT_FALSE(catalogue->empty());
  for (const scenario::Scenario& scenario : *catalogue) {
    const CompiledScenario compiled(scenario);
    const int attempts = static_cast<int>(scenario.responses.size()) + 2;
    for (int attempt = 1; attempt <= attempts; ++attempt) {
      for (const bool stream : {true, false}) {
        PlanRequest request;
        request.attempt = attempt;
        request.stream = stream;
        request.seed = 3;
        request.now = testing::TestNow() + attempt * 1s;
        request.input_tokens = 20;
        const scenario::ResponseSpec& spec =
            scenario.chaos ? compiled.scenario().chaos->otherwise
                           : scenario::ResponseForAttempt(compiled.scenario(), attempt);
        const ResponsePlan plan = compiled.Plan(spec, request);
        CheckPlan(plan,
                  scenario.name + " #" + std::to_string(attempt) + (stream ? " stream" : " json"));
        // Runs to its end (or to a client giving up after an hour) in virtual time.
        const auto events = RunVirtually(plan, Duration{1h}, 2h);
        EXPECT_LE(events.size(), plan.steps.size() + 3600);
      }
    }
  }
}

}  // namespace
}  // namespace faultline::provider
