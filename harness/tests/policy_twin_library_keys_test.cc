// The policy twin runs the keys real libraries need, because the reference engine implements
// them (policy.h, retry_after.h): a stream retried only on its first event, error events apart
// from broken streams, and Retry-After read by Date.parse.
#include <gtest/gtest.h>

#include <string>

#include "harness/judge/policy_twin.h"
#include "reference_impl/policy_json.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

scenario::Scenario Parse(const std::string& yaml) {
  auto scenario = scenario::ParseScenario(yaml, "twin.yaml");
  EXPECT_TRUE(scenario.has_value()) << scenario.error().ToString();
  return scenario.value_or(scenario::Scenario{});
}

// An error envelope after `events` events of the first stream (the role chunk is event 0 and
// carries no text), then a good stream.
scenario::Scenario ErrorAfter(int events) {
  return Parse(R"(faultline: 1
name: test/error-after
description: test
dialect: openai-chat
request: {stream: true}
responses:
  - content:
      text: "Hello"
      faults: [{after_event: )" +
               std::to_string(events) + R"(, inject: error_envelope, error: server}]
      end: {kind: no_terminator, after_event: )" +
               std::to_string(events) + R"(}
  - content: {text: "Hello"}
)");
}

PolicyTwin Twin(const scenario::Scenario& scenario, const std::string& policy_json) {
  auto policy = ref::LoadPolicy(policy_json);
  EXPECT_TRUE(policy.has_value()) << policy.error().ToString();
  return ComputeTwin(scenario, policy.value_or(ref::RetryPolicy{}), 1, 1, {.seeds = 2});
}

// The one ending every seed reached (the times may differ with jitter).
TwinOutcome OnlyOutcome(const PolicyTwin& twin) {
  EXPECT_TRUE(twin.usable()) << twin.error;
  if (twin.outcomes.empty()) return {};
  for (const TwinOutcome& outcome : twin.outcomes) {
    const TwinOutcome& first = twin.outcomes.front();
    EXPECT_TRUE(outcome.type == first.type && outcome.attempts == first.attempts &&
                outcome.give_up == first.give_up)
        << DescribeOutcomes(twin);
  }
  return twin.outcomes.front();
}

TEST(PolicyTwinLibraryKeysTest, FirstEventAndStreamRetryOn) {
  const scenario::Scenario after_role = ErrorAfter(1);
  const TwinOutcome before_output =
      OnlyOutcome(Twin(after_role, R"({"stream_retries": "before-output"})"));
  EXPECT_EQ(before_output.type, EventKind::kCommitted) << "no text had gone out";
  const TwinOutcome first_event =
      OnlyOutcome(Twin(after_role, R"({"stream_retries": "first-event"})"));
  EXPECT_EQ(first_event.type, EventKind::kFailed);
  EXPECT_EQ(first_event.give_up, "stream-not-retried");
  EXPECT_EQ(first_event.attempts, 1);
  const scenario::Scenario at_once = ErrorAfter(0);
  EXPECT_EQ(OnlyOutcome(Twin(at_once, R"({"stream_retries": "first-event"})")).type,
            EventKind::kCommitted);
  const TwinOutcome sockets_only =
      OnlyOutcome(Twin(at_once, R"({"stream_retry_on": ["transport"]})"));
  EXPECT_EQ(sockets_only.type, EventKind::kFailed) << "an error event is not retried";
  EXPECT_EQ(sockets_only.give_up, "stream-not-retried");
}

TEST(PolicyTwinLibraryKeysTest, DateParseRetriesAtOnceAfterANegativeRetryAfter) {
  const scenario::Scenario negative = Parse(R"(faultline: 1
name: test/negative
description: test
dialect: openai-chat
request: {stream: true}
responses:
  - {status: 429, error: rate_limit, retry_after: {seconds: "-5"}}
  - content: {text: "Hello"}
)");
  const std::string policy = R"({"backoff": {"strategy": "exponential", "base_ms": 2000,
      "jitter": 0}, "retry_after": {"mode": "replace", "zero": "immediate", "jitter": 0,
      "sources": ["retry-after", "retry-after-date"], "parse": "PARSE"}})";
  const auto ended = [&](const std::string& parse) {
    std::string text = policy;
    text.replace(text.find("PARSE"), 5, parse);
    const TwinOutcome outcome = OnlyOutcome(Twin(negative, text));
    EXPECT_EQ(outcome.type, EventKind::kCommitted);
    return outcome.ended_ms;
  };
  EXPECT_LT(ended("date-parse"), 100) << "a date in 2001: a hint of 0, waited as at once";
  // No hint by RFC 9110 (the default body's "try again in 1s" is not a source it reads): the
  // 2 s backoff.
  EXPECT_GE(ended("rfc9110"), 2000);
}

}  // namespace
}  // namespace faultline::harness
