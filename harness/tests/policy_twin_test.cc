// The policy twin's view of a real run: scripted time (listener outages, route health) counted
// from the subject's hello, so the twin starts as far into it as the subject's first attempt came.
#include "harness/judge/policy_twin.h"

#include <gtest/gtest.h>

#include "harness/tests/judge_test_support.h"
#include "reference_impl/policy_json.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

using namespace std::chrono_literals;
using testing::TraceBuilder;

// A trace whose subject said hello at 1,000 ms and made its first attempt `lead_ms` later.
Trace FirstAttemptAfter(double lead_ms) {
  TraceBuilder b;
  Trace trace = b.Start(1000 + lead_ms, 1).Build();
  trace.client.front().at = testing::Ms(1000);  // the hello: when scripted time was anchored
  return trace;
}

TEST(PolicyTwinTest, TheLeadIsFromTheHelloToTheFirstAttempt) {
  EXPECT_EQ(LeadOfFirstAttempt(FirstAttemptAfter(50)), 50ms);
  EXPECT_EQ(LeadOfFirstAttempt(FirstAttemptAfter(2500)), 2500ms);
  TraceBuilder b;  // only the hello
  EXPECT_EQ(LeadOfFirstAttempt(b.Build()), 0ms);
}

// On a loaded machine a subject's response/start line may come long before its request: where
// the first attempt met scripted time is where its request arrived, when every attempt did.
TEST(PolicyTwinTest, TheLeadIsToTheFirstRequestWhenEveryAttemptArrived) {
  Trace late = FirstAttemptAfter(100);
  TraceBuilder journal;
  journal.Error(1790, 1800, "provider-unavailable", true);
  late.journal = journal.Build().journal;
  EXPECT_EQ(LeadOfFirstAttempt(late), 790ms);
  // A second attempt whose connection was refused never reached the journal: the subject's own
  // response/start is the better account then.
  late.client.push_back(
      {testing::Ms(2000), 0, EventFromJson({{"type", "response/start"}, {"attempt", 2}})});
  EXPECT_EQ(LeadOfFirstAttempt(late), 100ms);
  // A black-box subject reports no attempt: its first request is all there is.
  TraceBuilder black_box;
  black_box.Error(1500, 1510, "provider-unavailable", true);
  Trace only_journal = black_box.Build();
  only_journal.client.front().at = testing::Ms(1000);
  EXPECT_EQ(LeadOfFirstAttempt(only_journal), 500ms);
}

scenario::Scenario Parse(std::string_view yaml) {
  auto scenario = scenario::ParseScenario(yaml, "test.yaml");
  EXPECT_TRUE(scenario) << scenario.error().ToString();
  return scenario ? *scenario : scenario::Scenario{};
}

ref::RetryPolicy ThreeQuickAttempts() {
  auto policy = ref::LoadPolicy(
      R"({"max_attempts": 3, "backoff": {"strategy": "exponential", "base_ms": 200, "cap_ms": 200,
          "jitter": 0}, "routing": {"failover": false, "breaker": null}})");
  EXPECT_TRUE(policy) << policy.error().ToString();
  return policy ? *policy : ref::RetryPolicy{};
}

// Three quick attempts from the scripted t = 0 never commit; started `lead` into scripted time,
// as a late subject met it, the twin commits after `attempts`.
void ExpectCommitsOnlyWhenStartedLate(const scenario::Scenario& scenario, Duration lead,
                                      int attempts) {
  const PolicyTwin at_once = ComputeTwin(scenario, ThreeQuickAttempts(), 1, 1);
  ASSERT_TRUE(at_once.usable()) << at_once.error;
  EXPECT_EQ(DescribeOutcomes(at_once).find("committed"), std::string::npos)
      << DescribeOutcomes(at_once);
  const PolicyTwin late =
      ComputeTwin(scenario, ThreeQuickAttempts(), 1, 1, {.scripted_lead = lead});
  ASSERT_TRUE(late.usable()) << late.error;
  ASSERT_EQ(late.outcomes.size(), 1u) << DescribeOutcomes(late);
  EXPECT_EQ(late.outcomes[0].type, EventKind::kCommitted);
  EXPECT_EQ(late.outcomes[0].attempts, attempts);
}

// A route that recovers at 3 s: three attempts 200 ms apart all meet it down when they start at
// once, but a subject whose first attempt came 2.8 s after its hello met it recovered by its
// second (routes/openai-chat-primary-recovering-breaker failed openai-node's EXPECT-OUTCOME for
// this, the twin having started at the route's t = 0).
TEST(PolicyTwinTest, RouteHealthCountsFromTheHello) {
  const scenario::Scenario scenario = Parse(R"(faultline: 1
name: test/recovering
description: test
dialect: openai-chat
request: {stream: true}
routes:
  - id: primary
    health: {recover_at: 3s}
    responses:
      - content: {text: "Hello"}
  - id: secondary
    priority: 1
    health: {down: always}
)");
  ExpectCommitsOnlyWhenStartedLate(scenario, 2800ms, 2);
}

// A primary that answers its first attempt with a 503 and then flaps: up 1 s, down 2 s (a 503),
// from t = 0; the secondary is always down.
scenario::Scenario FlappingPrimary() {
  return Parse(R"(faultline: 1
name: test/flapping
description: test
dialect: openai-chat
request: {stream: true}
routes:
  - id: primary
    health: {flapping: {up: 1s, down: 2s}}
    responses:
      - status: 503
      - content: {text: "Hello"}
  - id: secondary
    priority: 1
    health: {down: always}
)");
}

// A primary that flaps (up 1 s, down 2 s) after a scripted 503: retries 500 ms and 1 s apart
// commit at the second attempt in virtual time. A subject on a loaded machine whose second
// request arrived 750 ms late met the primary down and committed at its third (seen in the
// matrix: openai-node-helper on routes/openai-chat-flapping). Over real sockets the twin also runs
// its retries late by up to the tolerance, so both endings are the declared policy's.
TEST(PolicyTwinTest, RetriesLateByTheToleranceCountOverRealSockets) {
  const scenario::Scenario scenario = FlappingPrimary();
  auto policy = ref::LoadPolicy(
      R"({"max_attempts": 3, "backoff": {"strategy": "exponential", "base_ms": 500, "cap_ms": 2000,
          "jitter": 0}, "routing": {"failover": false, "breaker": null}})");
  ASSERT_TRUE(policy) << policy.error().ToString();
  const PolicyTwin exact = ComputeTwin(scenario, *policy, 1, 1);
  ASSERT_TRUE(exact.usable()) << exact.error;
  EXPECT_EQ(DescribeOutcomes(exact), "committed after 2 attempt(s)");
  const PolicyTwin real = ComputeTwin(scenario, *policy, 1, 1, {.timeout_tolerance_ms = 750});
  ASSERT_TRUE(real.usable()) << real.error;
  const std::string outcomes = DescribeOutcomes(real);
  EXPECT_NE(outcomes.find("committed after 2 attempt(s)"), std::string::npos) << outcomes;
  EXPECT_NE(outcomes.find("committed after 3 attempt(s)"), std::string::npos) << outcomes;
}

// Five full-jitter retries over a primary that is up only a third of the time: the call fails when
// every retry lands while it is down, a draw too rare for the twin's first seeds to make but one
// the policy allows (langchain on routes/anthropic-messages-flapping failed EXPECT-OUTCOME for
// it); the runner's second look over kWitnessSeeds finds it.
TEST(PolicyTwinTest, MoreSeedsFindTheRareEndingsOfJitter) {
  const scenario::Scenario scenario = FlappingPrimary();
  auto policy = ref::LoadPolicy(
      R"({"max_attempts": 6, "backoff": {"strategy": "full-jitter", "base_ms": 2000,
          "cap_ms": 8000}, "routing": {"failover": false, "breaker": null}})");
  ASSERT_TRUE(policy) << policy.error().ToString();
  const auto fails = [](const PolicyTwin& twin) {
    return std::ranges::any_of(twin.outcomes, [](const TwinOutcome& outcome) {
      return outcome.type == EventKind::kFailed;
    });
  };
  const PolicyTwin first = ComputeTwin(scenario, *policy, 1, 1, {.seeds = 3});
  const PolicyTwin wide = ComputeTwin(scenario, *policy, 1, 1, {.seeds = kWitnessSeeds});
  ASSERT_TRUE(first.usable() && wide.usable());
  EXPECT_FALSE(fails(first)) << DescribeOutcomes(first);
  EXPECT_TRUE(fails(wide)) << DescribeOutcomes(wide);
  for (const TwinOutcome& outcome : first.outcomes) {
    EXPECT_NE(std::ranges::find(wide.outcomes, outcome), wide.outcomes.end());
  }
}

// Connection refused for 900 ms after the hello: a subject that started 2 s late met no outage.
TEST(PolicyTwinTest, ListenerOutagesCountFromTheHello) {
  const scenario::Scenario scenario = Parse(R"(faultline: 1
name: test/outage
description: test
dialect: openai-chat
request: {stream: true}
listener_outages:
  - {from: 0ms, for: 900ms}
responses:
  - content: {text: "Hello"}
)");
  ExpectCommitsOnlyWhenStartedLate(scenario, 2000ms, 1);
}

// Keep-alive comments reset an idle timer that counts bytes, and nothing bounds the call: the
// twin is still running at its horizon, and says so.
TEST(PolicyTwinTest, APolicyThatNeverEndsTheCallSaysSo) {
  const scenario::Scenario scenario = Parse(R"(faultline: 1
name: test/heartbeats
description: test
dialect: openai-chat
request: {stream: true}
responses:
  - content:
      text: "Hello"
      faults:
        - {after_event: 1, stall: forever, heartbeat: {every: 5s, style: comment}}
)");
  auto policy = ref::LoadPolicy(
      R"({"timeouts": {"idle_ms": 30000, "heartbeats_reset_idle": true, "total_ms": null}})");
  ASSERT_TRUE(policy) << policy.error().ToString();
  const PolicyTwin twin = ComputeTwin(scenario, *policy, 1, 1, {.seeds = 2});
  EXPECT_TRUE(twin.usable()) << twin.error;
  EXPECT_TRUE(twin.never_ends);
  EXPECT_TRUE(twin.outcomes.empty());
  EXPECT_EQ(DescribeOutcomes(twin), "still running after 24 h");
  policy->timeouts.heartbeats_reset_idle = false;  // events, not bytes, reset it: it times out
  const PolicyTwin ends = ComputeTwin(scenario, *policy, 1, 1, {.seeds = 2});
  EXPECT_FALSE(ends.never_ends);
  EXPECT_FALSE(ends.outcomes.empty());
}

// A dead stream and no timeout at all (Python's http.client without one): nothing is ever
// scheduled again while the call waits, which is never ending too (python-baseline's stalls
// failed LIFE-001 because the twin stopped there with no outcome and no verdict).
TEST(PolicyTwinTest, ADeadStreamWithoutAnyTimeoutNeverEnds) {
  const scenario::Scenario scenario = Parse(R"(faultline: 1
name: test/dead
description: test
dialect: openai-chat
request: {stream: true}
responses:
  - content:
      text: "Hello"
      faults:
        - {after_event: 1, stall: forever}
)");
  auto policy = ref::LoadPolicy(
      R"({"max_attempts": 1, "timeouts": {"connect_ms": null, "response_headers_ms": null,
          "idle_ms": null, "total_ms": null}})");
  ASSERT_TRUE(policy) << policy.error().ToString();
  const PolicyTwin twin = ComputeTwin(scenario, *policy, 1, 1, {.seeds = 1});
  EXPECT_TRUE(twin.usable()) << twin.error;
  EXPECT_TRUE(twin.never_ends);
  EXPECT_TRUE(twin.outcomes.empty());
}

}  // namespace
}  // namespace faultline::harness

namespace faultline::harness {
namespace {

// Sharing a scenario's compiled provider plans (TwinOptions::compiled, as the runner does across
// a scenario's runs) changes no outcome: over the whole catalogue, with the one-endpoint
// preset's policy, at two leads and with the real world's tolerance, the twin reaches exactly
// what a twin that compiles for itself reaches, each one computed twice from one compilation.
TEST(PolicyTwinTest, SharedCompiledPlansReachWhatFreshOnesReach) {
  auto catalogue = scenario::LoadBuiltinCatalog();
  ASSERT_TRUE(catalogue.has_value());
  auto policy = ref::PolicyFromJson(nlohmann::json{{"extends", "one-endpoint"}});
  ASSERT_TRUE(policy.has_value());
  for (const scenario::Scenario& scenario : *catalogue) {
    const std::shared_ptr<const CompiledSessions> compiled = CompileSessions(scenario);
    for (const Duration lead : {Duration{0}, Duration{std::chrono::milliseconds(700)}}) {
      TwinOptions fresh{.timeout_tolerance_ms = 40, .scripted_lead = lead, .seeds = 2};
      TwinOptions shared = fresh;
      shared.compiled = compiled;
      const PolicyTwin expected = ComputeTwin(scenario, *policy, 11, 3, fresh);
      for (int again = 0; again < 2; ++again) {
        const PolicyTwin twin = ComputeTwin(scenario, *policy, 11, 3, shared);
        EXPECT_EQ(twin.outcomes, expected.outcomes) << scenario.name;
        EXPECT_EQ(twin.never_ends, expected.never_ends) << scenario.name;
      }
    }
  }
}

}  // namespace
}  // namespace faultline::harness
