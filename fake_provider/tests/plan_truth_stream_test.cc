// The truth a policy's stream and Retry-After keys are judged by (plan.h): whether a stream's
// failure is the provider's error event or a broken stream, whether an event went out before it
// and when the first was due (stream_retry_on, stream_retries: first-event), and every
// `retry-after` field as sent (retry_after.parse).
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/tests/plan_test_util.h"
#include "scenarios/loader.h"

namespace faultline::provider {
namespace {

using namespace std::chrono_literals;

ResponsePlan FirstPlan(const std::string& responses) {
  auto scenario = scenario::ParseScenario(
      "faultline: 1\nname: t/truth\ndescription: truth\ndialect: openai-chat\n"
      "request: {stream: true}\nresponses:\n" +
          responses,
      "truth.yaml");
  EXPECT_TRUE(scenario.has_value()) << scenario.error().ToString();
  const CompiledScenario compiled(scenario.value_or(scenario::Scenario{}));
  PlanRequest request;
  request.stream = true;
  request.now = testing::TestNow();
  request.input_tokens = 10;
  return compiled.Plan(compiled.scenario().responses[0], request);
}

TEST(PlanTruthStreamTest, AnErrorEventIsNotABrokenStream) {
  const ResponsePlan first = FirstPlan(
      "  - content: {text: Hello, faults: [{after_event: 0, inject: error_envelope, error: "
      "overloaded}], end: {kind: no_terminator, after_event: 0}}\n");
  EXPECT_TRUE(first.truth.error_event);
  EXPECT_FALSE(first.truth.events_before_failure) << "the error is the first event";
  const ResponsePlan later = FirstPlan(
      "  - content: {text: Hello, chunk_size: 2, faults: [{after_event: 2, inject: "
      "error_envelope, error: overloaded}], end: {kind: no_terminator, after_event: 2}}\n");
  EXPECT_TRUE(later.truth.error_event);
  EXPECT_TRUE(later.truth.events_before_failure);
  const ResponsePlan reset =
      FirstPlan("  - content: {text: Hello, chunk_size: 2, end: {kind: reset, after_event: 2}}\n");
  EXPECT_EQ(reset.truth.failure_class, "transport");
  EXPECT_FALSE(reset.truth.error_event);
  EXPECT_TRUE(reset.truth.events_before_failure);
  ASSERT_TRUE(reset.truth.events_from.has_value());
  EXPECT_LE(*reset.truth.events_from, reset.truth.output_from.value_or(Duration::max()));
}

TEST(PlanTruthStreamTest, EveryRetryAfterFieldAsSentForAClientThatReadsItOtherwise) {
  // Date.parse reads "-5" and "2030" as dates: the truth keeps both texts, as sent, in order.
  const ResponsePlan seconds = FirstPlan(
      "  - {status: 429, error: rate_limit, retry_after: {seconds: \"-5\"}, headers: "
      "[{name: Retry-After, value: \"2030\"}]}\n");
  std::vector<std::string> values;
  for (const HintField& field : seconds.truth.hint_fields) {
    if (field.name == "retry-after") values.push_back(field.value);
  }
  EXPECT_EQ(values, (std::vector<std::string>{"-5", "2030"}));
}

}  // namespace
}  // namespace faultline::provider
