// The `expect:` facts beyond the ending (expect_facts.cc) and the scenario's own policy
// (scenario_policy.h): each check with a trace that keeps it and one that breaks it.
#include <gtest/gtest.h>

#include "harness/judge/policy_twin.h"
#include "harness/judge/scenario_policy.h"
#include "harness/tests/judge_test_support.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

using provider::EndKind;
using report::CheckStatus;
using testing::TraceBuilder;

// 429 (hint 1 s, request id) at 1..2 ms, retried at 1005 ms and committed "Hello" in 2 chunks.
TraceBuilder RateLimitedThenCommitted() {
  TraceBuilder b;
  b.Start(0, 1);
  provider::JournalEntry& first = b.Entry(1, 2, EndKind::kCompleted);
  first.truth.failure_class = "rate-limit";
  first.truth.retryable = true;
  first.headers = {{"content-type", "application/json"}, {"idempotency-key", "k-1"}};
  b.Event(3, {{"type", "response/interrupted"},
              {"attempt", 1},
              {"response_id", "resp-1"},
              {"failure",
               {{"class", "rate-limit"},
                {"code", "RATE_LIMIT"},
                {"status", 429},
                {"retry_after_ms", 1000},
                {"request_id", "req_1"}}}});
  b.Start(1004, 2);
  b.Answer(1005, 1100, "Hello").headers = {{"Content-Type", "application/json"},
                                           {"Idempotency-Key", "k-1"}};
  b.Chunk(1050, 2, "Hel").Chunk(1060, 2, "lo").Committed(1100, 2, "Hello");
  return b;
}

// The same 429 as the final failure.
Trace RateLimitedAndFailed(nlohmann::json failure) {
  TraceBuilder b;
  b.Start(0, 1);
  b.Error(1, 2, "rate-limit", true);
  b.Event(3, {{"type", "response/failed"}, {"attempt", 1}, {"failure", std::move(failure)}});
  return b.Build();
}

report::CheckResult Check(const Trace& trace, std::string_view id,
                          const scenario::Scenario& scenario) {
  return testing::CheckOf(trace, id, scenario);
}

TEST(ExpectFactsTest, RequestsCountsWhatReachedTheProvider) {
  scenario::Scenario scenario;
  scenario.expect.requests = 2;
  EXPECT_EQ(Check(RateLimitedThenCommitted().Build(), "EXPECT-REQUESTS", scenario).status,
            CheckStatus::kPass);
  scenario.expect.requests = 3;
  const auto broken = Check(RateLimitedThenCommitted().Build(), "EXPECT-REQUESTS", scenario);
  EXPECT_EQ(broken.status, CheckStatus::kFail);
  EXPECT_NE(broken.evidence.find("2 request(s)"), std::string::npos) << broken.evidence;
}

TEST(ExpectFactsTest, AttemptFailuresAreComparedInOrder) {
  scenario::Scenario scenario;
  scenario.expect.attempt_failures = {{"rate-limit", "RATE_LIMIT"}};
  EXPECT_EQ(Check(RateLimitedThenCommitted().Build(), "EXPECT-ATTEMPT-FAILURES", scenario).status,
            CheckStatus::kPass);
  scenario.expect.attempt_failures = {{std::nullopt, "OVERLOADED"}};
  const auto wrong = Check(RateLimitedThenCommitted().Build(), "EXPECT-ATTEMPT-FAILURES", scenario);
  EXPECT_EQ(wrong.status, CheckStatus::kFail);
  EXPECT_NE(wrong.evidence.find("RATE_LIMIT"), std::string::npos) << wrong.evidence;
  scenario.expect.attempt_failures = {{"rate-limit", "RATE_LIMIT"}, {"rate-limit", std::nullopt}};
  EXPECT_EQ(Check(RateLimitedThenCommitted().Build(), "EXPECT-ATTEMPT-FAILURES", scenario).status,
            CheckStatus::kFail);  // one failed attempt reported, two expected
}

TEST(ExpectFactsTest, RetryDelaysRunFromTheFailedAttemptsEnd) {
  scenario::Scenario scenario;
  scenario.expect.retry_delays = {{std::chrono::seconds(1), std::chrono::milliseconds(1100)}};
  EXPECT_EQ(Check(RateLimitedThenCommitted().Build(), "EXPECT-RETRY-DELAYS", scenario).status,
            CheckStatus::kPass);  // 1005 - 2 = 1003 ms
  scenario.expect.retry_delays = {{std::chrono::milliseconds(1200), std::chrono::seconds(2)}};
  EXPECT_EQ(Check(RateLimitedThenCommitted().Build(), "EXPECT-RETRY-DELAYS", scenario).status,
            CheckStatus::kFail);
  scenario.expect.retry_delays.push_back({std::chrono::seconds(0), std::chrono::seconds(9)});
  EXPECT_EQ(Check(RateLimitedThenCommitted().Build(), "EXPECT-RETRY-DELAYS", scenario).status,
            CheckStatus::kFail);  // only one retry happened
}

TEST(ExpectFactsTest, ChunksCountOverAllAttempts) {
  scenario::Scenario scenario;
  scenario.expect.chunks = 2;
  EXPECT_EQ(Check(RateLimitedThenCommitted().Build(), "EXPECT-CHUNKS", scenario).status,
            CheckStatus::kPass);
  scenario.expect.chunks = 0;
  EXPECT_EQ(Check(RateLimitedThenCommitted().Build(), "EXPECT-CHUNKS", scenario).status,
            CheckStatus::kFail);
}

TEST(ExpectFactsTest, RequestHeadersArePresentAndUnchangedWhateverTheirCase) {
  scenario::Scenario scenario;
  scenario.expect.headers_present = {"idempotency-key"};
  scenario.expect.headers_same = {"idempotency-key"};
  EXPECT_EQ(Check(RateLimitedThenCommitted().Build(), "EXPECT-REQUEST-HEADERS", scenario).status,
            CheckStatus::kPass);
  TraceBuilder changed = RateLimitedThenCommitted();
  Trace trace = changed.Build();
  trace.journal[1].headers[1].value = "k-2";
  const auto broken = Check(trace, "EXPECT-REQUEST-HEADERS", scenario);
  EXPECT_EQ(broken.status, CheckStatus::kFail);
  EXPECT_NE(broken.evidence.find("k-2"), std::string::npos) << broken.evidence;
  trace.journal[1].headers.pop_back();
  EXPECT_EQ(Check(trace, "EXPECT-REQUEST-HEADERS", scenario).status, CheckStatus::kFail);
}

TEST(ExpectFactsTest, FailureFactsAreTheFinalFailures) {
  scenario::Scenario scenario;
  scenario.expect.failure =
      scenario::ExpectFailure{429, std::chrono::seconds(1), false, /*request_id=*/true};
  const nlohmann::json good = {{"class", "rate-limit"},
                               {"code", "RATE_LIMIT"},
                               {"status", 429},
                               {"retry_after_ms", 1000},
                               {"request_id", "req_1"}};
  EXPECT_EQ(Check(RateLimitedAndFailed(good), "EXPECT-FAILURE", scenario).status,
            CheckStatus::kPass);
  for (const char* key : {"status", "retry_after_ms", "request_id"}) {
    nlohmann::json wrong = good;
    wrong[key] = key == std::string_view("request_id") ? nlohmann::json("") : nlohmann::json(1);
    EXPECT_EQ(Check(RateLimitedAndFailed(wrong), "EXPECT-FAILURE", scenario).status,
              CheckStatus::kFail)
        << "with a wrong " << key;
  }
  scenario.expect.failure = scenario::ExpectFailure{std::nullopt, std::nullopt, true, {}};
  EXPECT_EQ(Check(RateLimitedAndFailed(good), "EXPECT-FAILURE", scenario).status,
            CheckStatus::kFail);  // it carried a hint; none was expected
  EXPECT_EQ(Check(RateLimitedThenCommitted().Build(), "EXPECT-FAILURE", scenario).status,
            CheckStatus::kFail);  // it committed
}

// timeout/openai-chat-deadline-spans-retry-after-waits states {status: 503, retry_after: 2s}:
// a client that does not report the optional retry_after_ms failed on "retry_after_ms none".
// An optional field the subject leaves out is no evidence: the facts it reports are judged, and
// with none reported the check is n/a.
TEST(ExpectFactsTest, AnOptionalFieldTheSubjectDoesNotReportIsNotJudged) {
  scenario::Scenario scenario;
  scenario.expect.failure =
      scenario::ExpectFailure{503, std::chrono::seconds(2), false, /*request_id=*/true};
  const nlohmann::json bare = {{"class", "provider-unavailable"}, {"code", "UNAVAILABLE"}};
  nlohmann::json with_status = bare;
  with_status["status"] = 503;
  EXPECT_EQ(Check(RateLimitedAndFailed(with_status), "EXPECT-FAILURE", scenario).status,
            CheckStatus::kPass);
  const auto none = Check(RateLimitedAndFailed(bare), "EXPECT-FAILURE", scenario);
  EXPECT_EQ(none.status, CheckStatus::kNotApplicable) << none.evidence;
  nlohmann::json wrong_hint = with_status;
  wrong_hint["retry_after_ms"] = 0;
  EXPECT_EQ(Check(RateLimitedAndFailed(wrong_hint), "EXPECT-FAILURE", scenario).status,
            CheckStatus::kFail);
  scenario.expect.failure = scenario::ExpectFailure{std::nullopt, std::nullopt, true, {}};
  EXPECT_EQ(Check(RateLimitedAndFailed(bare), "EXPECT-FAILURE", scenario).status,
            CheckStatus::kNotApplicable);  // "no hint": not reporting one is no evidence of it
}

// EXPECT-CODE wanted UNAVAILABLE for a 503 and a subject said SERVER: the same class and the
// same retryability, so nothing it or its policy does differs. Another class, or the same class
// called non-retryable, still fails.
TEST(ExpectFactsTest, ACodeOfTheSameClassAndRetryabilityIsTheSameCode) {
  scenario::Scenario scenario;
  scenario.expect.failure_code = "UNAVAILABLE";
  const auto code_check = [&](const char* failure_class, const char* code, bool retryable) {
    TraceBuilder b;
    b.Start(0, 1);
    b.Error(1, 2, "provider-unavailable", true).status = 503;
    b.Event(3, {{"type", "response/failed"},
                {"attempt", 1},
                {"failure", {{"class", failure_class}, {"code", code}, {"retryable", retryable}}}});
    return Check(b.Build(), "EXPECT-CODE", scenario).status;
  };
  EXPECT_EQ(code_check("provider-unavailable", "UNAVAILABLE", true), CheckStatus::kPass);
  EXPECT_EQ(code_check("provider-unavailable", "SERVER", true), CheckStatus::kPass);
  EXPECT_EQ(code_check("provider-unavailable", "SERVER", false), CheckStatus::kFail);
  EXPECT_EQ(code_check("provider-overloaded", "OVERLOADED", true), CheckStatus::kFail);
  // Against a twin: the twin's own code and retryability decide.
  PolicyTwin twin;
  twin.seeds = 1;
  TwinOutcome failed;
  failed.attempts = 1;
  failed.requests = 1;
  failed.failure_class = "provider-unavailable";
  failed.failure_code = "UNAVAILABLE";
  failed.retryable = true;
  twin.outcomes.push_back(failed);
  TraceBuilder b;
  b.Start(0, 1);
  b.Error(1, 2, "provider-unavailable", true).status = 503;
  b.Event(3, {{"type", "response/failed"},
              {"attempt", 1},
              {"failure",
               {{"class", "provider-unavailable"}, {"code", "SERVER"}, {"retryable", true}}}});
  const auto checks = Judge(scenario, b.Build(), VirtualTolerance(), &twin);
  const auto code = *std::ranges::find(checks, "EXPECT-CODE", &report::CheckResult::id);
  EXPECT_EQ(code.status, CheckStatus::kPass) << code.evidence;
}

TEST(ExpectFactsTest, UnderAnotherDeclaredPolicyTheDelaysAreNotTheScenarios) {
  scenario::Scenario scenario;
  scenario.expect.retry_delays = {{std::chrono::seconds(5), std::chrono::seconds(6)}};
  scenario.expect.chunks = 7;
  PolicyTwin twin;
  twin.seeds = 1;
  TwinOutcome committed;
  committed.type = EventKind::kCommitted;
  committed.attempts = 2;
  committed.requests = 2;
  committed.text = "Hello";
  twin.outcomes.push_back(committed);
  const auto checks =
      Judge(scenario, RateLimitedThenCommitted().Build(), VirtualTolerance(), &twin);
  const auto find = [&](std::string_view id) {
    return *std::ranges::find(checks, id, &report::CheckResult::id);
  };
  EXPECT_EQ(find("EXPECT-RETRY-DELAYS").status, CheckStatus::kNotApplicable);
  EXPECT_EQ(find("EXPECT-CHUNKS").status, CheckStatus::kPass);  // some, as 7 says
}

scenario::Scenario WithPolicy(std::string_view policy) {
  auto loaded = scenario::ParseScenario(std::string(R"(faultline: 1
name: t/policy
description: d
dialect: openai-chat
responses: [{content: {text: "x"}}]
policy:
)") + std::string(policy),
                                        "p.yaml");
  EXPECT_TRUE(loaded) << (loaded ? "" : loaded.error().ToString());
  return loaded ? *loaded : scenario::Scenario{};
}

TEST(ScenarioPolicyTest, AValidPolicyParsesAndAnInvalidOneNamesItsLineAndColumn) {
  auto policy = ScenarioPolicy(WithPolicy("  max_attempts: 5\n  timeouts: {total_ms: 4000}\n"));
  ASSERT_TRUE(policy) << policy.error();
  EXPECT_EQ(policy->max_attempts, 5);
  EXPECT_EQ(policy->timeouts.total, std::chrono::milliseconds(4000));

  auto typo =
      ScenarioPolicy(WithPolicy("  max_attempts: 5\n  backoff: {base_ms: 100, cpa_ms: 9}\n"));
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.error().find("p.yaml:8:"), std::string::npos) << typo.error();
  EXPECT_NE(typo.error().find("policy.backoff.cpa_ms"), std::string::npos) << typo.error();

  auto range = ScenarioPolicy(WithPolicy("  max_attempts: 0\n"));
  ASSERT_FALSE(range);
  EXPECT_NE(range.error().find("p.yaml:7:17"), std::string::npos) << range.error();

  EXPECT_EQ(*ScenarioPolicy(scenario::Scenario{}), ref::RetryPolicy{});
}

}  // namespace
}  // namespace faultline::harness
