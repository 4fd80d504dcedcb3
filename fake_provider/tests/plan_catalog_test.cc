// Every scenario of the built-in catalogue compiles, and every plan it yields is well-formed:
// ordered steps, a parsable head, no placeholder left in the bytes, and a complete HTTP message
// whenever the plan promises to keep the connection.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "fake_provider/plan/plan_compiler.h"
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

// The entry of `cold` at the place `spec` has in `warm` (both compiled from one scenario).
const scenario::ResponseSpec* ColdSpec(const CompiledScenario& cold, const CompiledScenario& warm,
                                       const scenario::ResponseSpec& spec) {
  const auto& warm_responses = warm.scenario().responses;
  for (std::size_t i = 0; i < warm_responses.size(); ++i) {
    if (&warm_responses[i] == &spec) return &cold.scenario().responses[i];
  }
  const auto& warm_faults = warm.scenario().chaos->faults;
  for (std::size_t i = 0; i < warm_faults.size(); ++i) {
    if (&warm_faults[i].response == &spec) return &cold.scenario().chaos->faults[i].response;
  }
  return &cold.scenario().chaos->otherwise;
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

// Every response entry of the catalogue (chaos choices included), answered after other requests
// have filled the compiled scenario's body cache, gives exactly the plan a fresh compilation
// gives the same request: the values written over a kept body are all of them and only them.
// Token counts of other lengths (9 vs 20 vs 1234) take other kept bodies.
TEST(PlanCatalogTest, PlansFromKeptBodiesEqualFreshOnes) {
  const auto catalogue = scenario::LoadBuiltinCatalog();
  ASSERT_TRUE(catalogue.has_value());
  for (const scenario::Scenario& scenario : *catalogue) {
    const CompiledScenario warm(scenario);
    std::vector<const scenario::ResponseSpec*> specs;
    for (const scenario::ResponseSpec& spec : warm.scenario().responses) specs.push_back(&spec);
    if (warm.scenario().chaos) {
      for (const auto& choice : warm.scenario().chaos->faults) specs.push_back(&choice.response);
      specs.push_back(&warm.scenario().chaos->otherwise);
    }
    int attempt = 0;
    for (const int input_tokens : {20, 9, 21, 1234, 20}) {
      for (const bool stream : {true, false}) {
        ++attempt;
        for (std::size_t i = 0; i < specs.size(); ++i) {
          PlanRequest request;
          request.attempt = attempt;
          request.stream = stream;
          request.seed = 5;
          request.now = testing::TestNow() + attempt * 1s;
          request.input_tokens = input_tokens;
          const CompiledScenario cold(scenario);
          const ResponsePlan fresh = cold.Plan(*ColdSpec(cold, warm, *specs[i]), request);
          EXPECT_EQ(warm.Plan(*specs[i], request), fresh)
              << scenario.name << " entry " << i << " attempt " << attempt;
        }
      }
    }
  }
}

}  // namespace
}  // namespace faultline::provider
