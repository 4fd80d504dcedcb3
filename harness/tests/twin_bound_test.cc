// A declaration that never ends a lasting failure (issue 30): `mode: always`, unbounded attempts,
// a 1 ms backoff, no deadline, no budget, on a scenario that answers 500 forever. Its twin used
// to send millions of requests per run within the 24 h horizon, growing the runner to 7.7 GB;
// every virtual run now stops at a request bound, the twin at a few runs' worth, and the judge
// says so (ADV-012) and judges the subject as far as the twin got.
#include <gtest/gtest.h>

#include <map>

#include "harness/judge/judge.h"
#include "harness/judge/policy_twin.h"
#include "harness/tests/judge_test_support.h"
#include "harness/worlds/virtual_world.h"
#include "reference_impl/policy_json.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

using report::CheckStatus;
using testing::TraceBuilder;

constexpr std::string_view kForever500 = R"(faultline: 1
name: test/500-forever
description: Every attempt is answered 500.
dialect: openai-chat
responses:
  - {status: 500, error: server, repeat: 0}
expect:
  outcome: failed
)";

constexpr std::string_view kRetriesForever = R"({"extends": "one-endpoint", "mode": "always",
    "max_attempts": "unbounded", "budget": null,
    "backoff": {"strategy": "exponential", "base_ms": 1, "cap_ms": 1, "jitter": 0},
    "timeouts": {"connect_ms": null, "response_headers_ms": null, "idle_ms": null,
                 "total_ms": null}})";

scenario::Scenario Forever500() {
  auto scenario = scenario::ParseScenario(kForever500, "test.yaml");
  EXPECT_TRUE(scenario) << scenario.error().ToString();
  return scenario ? *scenario : scenario::Scenario{};
}

ref::RetryPolicy RetriesForever() {
  auto policy = ref::LoadPolicy(kRetriesForever);
  EXPECT_TRUE(policy) << policy.error().ToString();
  return policy ? *policy : ref::RetryPolicy{};
}

TEST(TwinBoundTest, AVirtualRunStopsAtItsRequestBound) {
  VirtualRunOptions options;
  options.policy = RetriesForever();
  EXPECT_EQ(options.max_requests, kMaxVirtualRequests);
  options.max_requests = 300;
  const auto trace = RunVirtual(Forever500(), options);
  ASSERT_TRUE(trace) << trace.error();
  EXPECT_TRUE(trace->subject_timed_out);
  EXPECT_EQ(trace->journal.size(), 301u);  // stopped as the request after the bound came in
  EXPECT_TRUE(StoppedAtRequestBound(*trace, 300));
  EXPECT_FALSE(StoppedAtRequestBound(*trace, 400));
}

TEST(TwinBoundTest, TheTwinStopsAfterAFewRunsAtTheBound) {
  const PolicyTwin twin =
      ComputeTwin(Forever500(), RetriesForever(), 1, 1, {.seeds = 12, .max_requests = 200});
  ASSERT_TRUE(twin.usable()) << twin.error;
  EXPECT_EQ(twin.request_bound, 200u);
  EXPECT_TRUE(twin.never_ends);
  EXPECT_TRUE(twin.outcomes.empty()) << DescribeOutcomes(twin);
  EXPECT_EQ(twin.seeds, static_cast<int>(kTwinRunsAtTheBound));  // not all 12
  EXPECT_NE(DescribeOutcomes(twin).find("still sending requests after 200 requests"),
            std::string::npos)
      << DescribeOutcomes(twin);
}

// A policy that ends: no bound is reached, nothing changes.
TEST(TwinBoundTest, APolicyThatEndsNeverMeetsTheBound) {
  auto three = ref::LoadPolicy(R"({"extends": "one-endpoint", "max_attempts": 3,
      "backoff": {"strategy": "exponential", "base_ms": 1, "cap_ms": 1, "jitter": 0}})");
  ASSERT_TRUE(three) << three.error().ToString();
  const PolicyTwin twin = ComputeTwin(Forever500(), *three, 1, 1, {.seeds = 2});
  ASSERT_TRUE(twin.usable()) << twin.error;
  EXPECT_EQ(twin.request_bound, 0u);
  ASSERT_EQ(twin.outcomes.size(), 1u);
  EXPECT_EQ(twin.outcomes[0].attempts, 3);
}

std::map<std::string, report::CheckResult> JudgedById(const Trace& trace, const PolicyTwin& twin) {
  std::map<std::string, report::CheckResult> by_id;
  for (report::CheckResult& check : Judge(Forever500(), trace, VirtualTolerance(), &twin)) {
    by_id[check.id] = std::move(check);
  }
  return by_id;
}

// Judged as far as the twin got: a subject that gave up after one request did not do what it
// declared (the twin was still retrying 200 requests in), and ADV-012 says why the twin stopped.
// A subject that sent as many requests as the bound or more ended where the twin never looked:
// its ending is not compared.
TEST(TwinBoundTest, TheSubjectIsJudgedAsFarAsTheTwinGot) {
  const PolicyTwin twin =
      ComputeTwin(Forever500(), RetriesForever(), 1, 1, {.seeds = 12, .max_requests = 200});
  const nlohmann::json declared = nlohmann::json::parse(kRetriesForever);

  TraceBuilder early(declared);
  early.Start(0, 1).Failed(12, 1, "provider-unavailable", "SERVER");
  early.Error(0, 10, "provider-unavailable", true);
  auto checks = JudgedById(early.Build(), twin);
  EXPECT_EQ(checks["EXPECT-OUTCOME"].status, CheckStatus::kFail)
      << checks["EXPECT-OUTCOME"].evidence;
  EXPECT_EQ(checks["ADV-012"].status, CheckStatus::kFail);
  EXPECT_EQ(checks["ADV-012"].severity, report::Severity::kAdvisory);
  EXPECT_NE(checks["ADV-012"].evidence.find("--max-virtual-requests"), std::string::npos)
      << checks["ADV-012"].evidence;

  TraceBuilder late(declared);
  for (int i = 0; i < 200; ++i) {
    late.Start(i * 10.0, i + 1);
    late.Error(i * 10.0, i * 10.0 + 5, "provider-unavailable", true);
    if (i < 199) late.Interrupted(i * 10.0 + 6, i + 1, "provider-unavailable", "SERVER");
  }
  late.Failed(2000, 200, "provider-unavailable", "SERVER");
  checks = JudgedById(late.Build(), twin);
  EXPECT_EQ(checks["EXPECT-OUTCOME"].status, CheckStatus::kNotApplicable)
      << checks["EXPECT-OUTCOME"].evidence;
  EXPECT_NE(checks["EXPECT-OUTCOME"].evidence.find("stopped at 200"), std::string::npos)
      << checks["EXPECT-OUTCOME"].evidence;
  EXPECT_EQ(checks["ADV-012"].status, CheckStatus::kFail);

  // A twin that ended every call: ADV-012 passes.
  PolicyTwin ended;
  ended.seeds = 2;
  TwinOutcome failed;
  failed.type = EventKind::kFailed;
  failed.attempts = 1;
  ended.outcomes = {failed};
  EXPECT_EQ(JudgedById(early.Build(), ended)["ADV-012"].status, CheckStatus::kPass);
}

}  // namespace
}  // namespace faultline::harness
