// The judge against the subject's own declared policy: each false positive and false negative
// found by third-party adapters, as the trace that showed it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

#include "harness/tests/judge_test_support.h"
#include "harness/worlds/virtual_world.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

using nlohmann::json;
using provider::EndKind;
using report::CheckStatus;
using testing::CheckOf;
using testing::TraceBuilder;
using testing::WithHint;

using testing::ExpectStatus;

// The Vercel AI SDK's defaults: 2 s x 2^n, no jitter, a hint honoured when under 60 s.
json VercelPolicy() {
  return {{"max_attempts", 3},
          {"backoff",
           {{"strategy", "exponential"}, {"base_ms", 2000}, {"cap_ms", 60000}, {"jitter", 0}}},
          {"retry_after",
           {{"mode", "replace"}, {"cap_ms", 60000}, {"over_cap", "backoff"}, {"jitter", 0}}}};
}

TEST(JudgePolicyTest, Retry003AcceptsARetryAtOnceAfterRetryAfterZero) {
  TraceBuilder b(VercelPolicy());
  WithHint(b.Error(0, 10, "rate-limit", true), "retry-after", "0");
  b.Answer(12, 20, "Hi");
  b.Committed(20, 2, "Hi");
  ExpectStatus(b.Build(), "RETRY-003", CheckStatus::kPass);
}

TEST(JudgePolicyTest, Retry003AcceptsAFractionalHintBelowTheBackoff) {
  TraceBuilder b(VercelPolicy());  // backoff 2 s; the server said 1.5 s and the client obeyed
  WithHint(b.Error(0, 10, "rate-limit", true), "retry-after", "1.5");
  b.Answer(1512, 1520, "Hi");
  b.Committed(1520, 2, "Hi");
  ExpectStatus(b.Build(), "RETRY-003", CheckStatus::kPass);
  TraceBuilder early(VercelPolicy());  // neither the hint nor the backoff: 300 ms
  WithHint(early.Error(0, 10, "rate-limit", true), "retry-after", "1.5");
  early.Answer(310, 320, "Hi");
  early.Committed(320, 2, "Hi");
  ExpectStatus(early.Build(), "RETRY-003", CheckStatus::kFail);
}

TEST(JudgePolicyTest, Retry003AcceptsTheOpenAiDefaultMessageHint) {
  TraceBuilder b;  // full jitter [0, 100] ms; "Please try again in 1s." in the body
  WithHint(b.Error(0, 10, "rate-limit", true), "body",
           R"({"error":{"message":"Rate limit reached. Please try again in 1s. Visit ..."}})");
  b.Answer(1060, 1070, "Hi");
  b.Committed(1070, 2, "Hi");
  ExpectStatus(b.Build(), "RETRY-003", CheckStatus::kPass);
}

TEST(JudgePolicyTest, AHintOverTheCapFallingBackToBackoffIsAnAdvisory) {
  json policy = VercelPolicy();
  TraceBuilder b(policy);  // 90 s asked, 2 s waited: legal as declared, harmful all the same
  WithHint(b.Error(0, 10, "rate-limit", true), "retry-after", "90");
  b.Answer(2010, 2020, "Hi");
  b.Committed(2020, 2, "Hi");
  const Trace trace = b.Build();
  ExpectStatus(trace, "RETRY-004", CheckStatus::kPass);
  ExpectStatus(trace, "RETRY-003", CheckStatus::kPass);
  const report::CheckResult advisory = CheckOf(trace, "ADV-001");
  EXPECT_EQ(advisory.status, CheckStatus::kFail);
  EXPECT_EQ(advisory.severity, report::Severity::kAdvisory);
  EXPECT_NE(advisory.evidence.find("exceeds the declared cap"), std::string::npos);
}

TEST(JudgePolicyTest, Retry006GivingUpWithBudgetLeftIsAViolation) {
  TraceBuilder b;  // declares 3 attempts and retries rate-limit, yet stops after one 429
  b.Start(0, 1);
  b.Error(1, 10, "rate-limit", true);
  b.Failed(11, 1, "rate-limit", "RATE_LIMIT");
  const Trace trace = b.Build();
  const report::CheckResult check = CheckOf(trace, "RETRY-006");
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("could have retried"), std::string::npos) << check.evidence;
  // The same give-up under a declared single attempt: legal, and an advisory.
  TraceBuilder once(json{{"max_attempts", 1}});
  once.Start(0, 1);
  once.Error(1, 10, "rate-limit", true);
  once.Failed(11, 1, "rate-limit", "RATE_LIMIT");
  const Trace single = once.Build();
  ExpectStatus(single, "RETRY-006", CheckStatus::kPass);
  ExpectStatus(single, "ADV-004", CheckStatus::kFail);
}

TEST(JudgePolicyTest, Retry006AcceptsGivingUpOnAHintlessFailureWhenDeclared) {
  json policy = testing::TestPolicy();
  policy["retry_after"]["statuses"] = {429};
  policy["retry_after"]["missing"] = "give-up";  // LangChain: a 429 is retried only with a hint
  const auto trace = [&](const json& declared, std::optional<double> hint_ms) {
    TraceBuilder b(declared);
    b.Start(0, 1);
    provider::JournalEntry& entry = b.Error(1, 10, "rate-limit", true);
    entry.status = 429;
    if (hint_ms) WithHint(entry, "retry-after-ms", fmt::format("{}", *hint_ms));
    b.Failed(11, 1, "rate-limit", "RATE_LIMIT");
    return b.Build();
  };
  ExpectStatus(trace(policy, std::nullopt), "RETRY-006", CheckStatus::kPass);
  ExpectStatus(trace(policy, 500), "RETRY-006", CheckStatus::kFail);  // it had a hint
  policy["retry_after"]["missing"] = "backoff";
  ExpectStatus(trace(policy, std::nullopt), "RETRY-006", CheckStatus::kFail);
}

// A 200 event stream cut by the server 9 ms after it arrived, with or without output before.
void StreamCut(TraceBuilder& b, double arrived, bool output_before) {
  provider::JournalEntry& cut = b.Entry(arrived, arrived + 9, provider::EndKind::kClosedByServer);
  cut.status = 200;
  cut.truth.failure_class = "transport";
  cut.truth.retryable = true;
  cut.truth.streamed = true;
  cut.truth.output_before_failure = output_before;
}

TEST(JudgePolicyTest, StreamRetriesDecideWhetherAStreamFailureMustBeRetried) {
  // A 200 stream reset; the client gives up after it. Whether it had to retry depends on the
  // declared stream_retries and on whether output had gone out before the reset.
  const auto gave_up = [](const json& declared, bool output_before) {
    TraceBuilder b(declared);
    b.Start(0, 1);
    StreamCut(b, 1, output_before);
    b.Failed(11, 1, "transport", "CONNECTION_RESET");
    return b.Build();
  };
  json policy = testing::TestPolicy();
  ExpectStatus(gave_up(policy, true), "RETRY-006", CheckStatus::kFail);  // until-commit
  policy["stream_retries"] = "before-output";
  ExpectStatus(gave_up(policy, true), "RETRY-006", CheckStatus::kPass);
  ExpectStatus(gave_up(policy, false), "RETRY-006", CheckStatus::kFail);
  policy["stream_retries"] = "never";
  ExpectStatus(gave_up(policy, false), "RETRY-006", CheckStatus::kPass);
}

TEST(JudgePolicyTest, Retry001FailsARetryAfterOutputThatTheDeclarationRules) {
  TraceBuilder b(json{{"stream_retries", "before-output"}});
  StreamCut(b, 0, true);
  b.Answer(50, 60, "Hi");
  b.Committed(60, 2, "Hi");
  const report::CheckResult check = CheckOf(b.Build(), "RETRY-001");
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("stream_retries"), std::string::npos) << check.evidence;
}

TEST(JudgePolicyTest, OutputBeforeATimedOutSilenceIsPlacedByTime) {
  // The response would answer, but a 5 s silence exceeds the declared 1 s idle timeout: the
  // failure is the timeout, and output before it is what went out before the silence.
  const auto gave_up = [](double output_from_ms) {
    TraceBuilder b(json{{"stream_retries", "before-output"}, {"timeouts", {{"idle_ms", 1000}}}});
    b.Start(0, 1);
    provider::JournalEntry& stalled = b.Entry(1, 1'300, provider::EndKind::kClientClosed);
    stalled.status = 200;
    stalled.truth.answer = "Hi";
    stalled.truth.streamed = true;
    stalled.truth.output_from = testing::Ms(output_from_ms);
    stalled.truth.silences.push_back({testing::Ms(200), testing::Ms(5'200), false, false});
    b.Failed(1'301, 1, "timeout", "TIMEOUT");
    return b.Build();
  };
  ExpectStatus(gave_up(100), "RETRY-006", CheckStatus::kPass);    // output, then the silence
  ExpectStatus(gave_up(5'200), "RETRY-006", CheckStatus::kFail);  // silence before any output
}

TEST(JudgePolicyTest, Retry006RespectsTheDeadline) {
  json policy = testing::TestPolicy();  // total 20 s, full jitter from 100 ms
  TraceBuilder b(policy);
  b.Start(0, 1);
  b.Error(1, 19'500, "provider-unavailable", true);  // no time left for another attempt
  b.Failed(19'501, 1, "provider-unavailable", "SERVER");
  ExpectStatus(b.Build(), "RETRY-006", CheckStatus::kPass);
}

TEST(JudgePolicyTest, Retry001FollowsTheDeclaredPhasesAndStatuses) {
  json sdk = {{"retry_phases", {"connect", "response-headers"}}};
  TraceBuilder mid_stream(sdk);  // a 200 stream cut mid-way, retried by a client that says not
  provider::JournalEntry& cut = mid_stream.Entry(0, 10, EndKind::kClosedByServer);
  cut.status = 200;
  cut.truth.failure_class = "transport";
  cut.truth.retryable = true;
  mid_stream.Answer(50, 60, "Hi");
  mid_stream.Committed(60, 2, "Hi");
  ExpectStatus(mid_stream.Build(), "RETRY-001", CheckStatus::kFail);
  json by_status = {{"statuses", {{"retry", {"4xx"}}}}};
  TraceBuilder quota(by_status);  // retries every 4xx, by its own declaration: no violation...
  provider::JournalEntry& entry = quota.Error(0, 10, "quota", false);
  entry.status = 429;
  quota.Answer(50, 60, "Hi");
  quota.Committed(60, 2, "Hi");
  const Trace trace = quota.Build();
  ExpectStatus(trace, "RETRY-001", CheckStatus::kPass);
  ExpectStatus(trace, "ADV-005", CheckStatus::kFail);  // ...but a retry that cannot succeed
}

// A 503 that says x-should-retry: false, then the answer `retried_at` (nullopt: the call gives
// up after it), from a subject declaring `policy`.
Trace ShouldRetryFalse(json policy, std::optional<double> retried_at) {
  TraceBuilder b(std::move(policy));
  b.Start(0, 1);
  provider::JournalEntry& entry = b.Error(1, 10, "provider-unavailable", false);
  entry.truth.retryable_ignoring_header = true;
  entry.truth.should_retry = false;
  entry.status = 503;
  if (retried_at) {
    b.Answer(*retried_at, *retried_at + 10, "Hi");
    b.Committed(*retried_at + 10, 2, "Hi");
  } else {
    b.Failed(11, 1, "provider-unavailable", "UNAVAILABLE");
  }
  return b.Build();
}

// Ignoring x-should-retry is legal under a policy that declares it (no violation), and was
// silent: the server's explicit "do not retry" is an advisory's business (ADV-010).
TEST(JudgePolicyTest, ShouldRetryHeaderIgnoredWhenDeclared) {
  const Trace retried = ShouldRetryFalse(json{{"should_retry_header", false}}, 50);
  ExpectStatus(retried, "RETRY-001", CheckStatus::kPass);
  const report::CheckResult advisory = CheckOf(retried, "ADV-010");
  EXPECT_EQ(advisory.status, CheckStatus::kFail);
  EXPECT_EQ(advisory.severity, report::Severity::kAdvisory);
  EXPECT_NE(advisory.evidence.find("x-should-retry: false"), std::string::npos)
      << advisory.evidence;
  ExpectStatus(ShouldRetryFalse(json{{"should_retry_header", false}}, std::nullopt), "ADV-010",
               CheckStatus::kPass);
  // A policy that honours the header breaks its contract by retrying: RETRY-001, not ADV-010.
  const Trace honoured = ShouldRetryFalse(testing::TestPolicy(), 50);
  ExpectStatus(honoured, "RETRY-001", CheckStatus::kFail);
  ExpectStatus(honoured, "ADV-010", CheckStatus::kNotApplicable);
}

// The reference obeyed x-should-retry: false on a 429 and ADV-004 advised it to retry the
// transient failure: obeying the server's explicit "do not retry" is right.
TEST(JudgePolicyTest, Adv004LeavesAnObeyedShouldRetryFalseAlone) {
  const Trace obeyed = ShouldRetryFalse(testing::TestPolicy(), std::nullopt);
  ExpectStatus(obeyed, "ADV-004", CheckStatus::kNotApplicable);
  ExpectStatus(obeyed, "RETRY-006", CheckStatus::kPass);
  auto catalog = scenario::LoadBuiltinCatalog();
  ASSERT_TRUE(catalog);
  const auto scenario = std::ranges::find(*catalog, "rate-limit/openai-chat-429-should-retry-false",
                                          &scenario::Scenario::name);
  ASSERT_NE(scenario, catalog->end());
  auto trace = RunVirtual(*scenario, {});
  ASSERT_TRUE(trace) << trace.error();
  for (const report::CheckResult& check : Judge(*scenario, *trace, VirtualTolerance())) {
    EXPECT_NE(check.status, CheckStatus::kFail) << check.id << ": " << check.evidence;
  }
}

TEST(JudgePolicyTest, Life004JudgesTheSubjectsOwnOrderNotThePipe) {
  TraceBuilder late;  // the interruption is received after the retry's arrival, in order
  late.Start(0, 1);
  late.Error(1, 10, "provider-unavailable", true);
  late.Answer(60, 70, "Hi");
  late.Interrupted(157, 1, "provider-unavailable", "SERVER");  // 97 ms late through the pipe
  late.Start(158, 2);
  late.Committed(170, 2, "Hi");
  ExpectStatus(late.Build(), "LIFE-004", CheckStatus::kPass);
  TraceBuilder unannounced;  // a retry started without announcing the failure first
  unannounced.Start(0, 1);
  unannounced.Error(1, 10, "provider-unavailable", true);
  unannounced.Start(50, 2);
  unannounced.Answer(51, 70, "Hi");
  unannounced.Interrupted(55, 1, "provider-unavailable", "SERVER");
  unannounced.Committed(70, 2, "Hi");
  ExpectStatus(unannounced.Build(), "LIFE-004", CheckStatus::kFail);
}

TEST(JudgePolicyTest, Life005AttemptsAgreeWithTheJournal) {
  TraceBuilder hidden;  // two requests, one reported
  hidden.Start(0, 1);
  hidden.Error(1, 10, "provider-unavailable", true);
  hidden.Answer(60, 70, "Hi");
  hidden.Committed(70, 1, "Hi");
  ExpectStatus(hidden.Build(), "LIFE-005", CheckStatus::kFail);
  TraceBuilder dead;  // a retry reported that never reached the provider
  dead.Start(0, 1);
  dead.Error(1, 10, "provider-unavailable", true);
  dead.Interrupted(11, 1, "provider-unavailable", "SERVER");
  dead.Start(60, 2);
  dead.Failed(70, 2, "transport", "TRANSPORT");
  ExpectStatus(dead.Build(), "LIFE-005", CheckStatus::kFail);
}

TEST(JudgePolicyTest, Class001AcceptsEitherClassAtTheExactIdleBoundary) {
  TraceBuilder b;  // idle 1 s; the server stalls exactly 1 s and then closes
  b.Start(0, 1);
  provider::JournalEntry& entry = b.Entry(0, 1010, EndKind::kClosedByServer);
  entry.status = 200;
  entry.truth.failure_class = "transport";
  entry.truth.retryable = true;
  provider::Silence silence;
  silence.from = testing::Ms(10);
  silence.to = testing::Ms(1010);
  entry.truth.silences = {silence};
  b.Failed(1010, 1, "timeout", "TIMEOUT");
  ExpectStatus(b.Build(), "CLASS-001", CheckStatus::kPass);
}

TEST(JudgePolicyTest, NoEvidenceIsNeverAPass) {
  TraceBuilder b;  // one clean answer: no retry, no stall, no hint to judge
  b.Start(0, 1);
  b.Answer(1, 10, "Hi");
  b.Committed(10, 1, "Hi");
  const Trace trace = b.Build();
  for (std::string_view id : {"RETRY-003", "RETRY-004", "RETRY-005", "TIME-001", "ADV-001"}) {
    ExpectStatus(trace, id, CheckStatus::kNotApplicable);
  }
}

TEST(JudgePolicyTest, NoDeclaredPolicyMakesPolicyChecksNotApplicable) {
  TraceBuilder b{json(nullptr)};
  b.Start(0, 1);
  b.Error(1, 10, "provider-unavailable", true);
  b.Interrupted(11, 1, "provider-unavailable", "SERVER");
  b.Start(50, 2);
  b.Answer(51, 70, "Hi");
  b.Committed(70, 2, "Hi");
  const report::CheckResult check = CheckOf(b.Build(), "RETRY-003");
  EXPECT_EQ(check.status, CheckStatus::kNotApplicable);
  EXPECT_NE(check.evidence.find("declares no policy"), std::string::npos);
}

// A call that its declared policy never ends (openai-node's idle timer reset by keep-alive
// comments, no total deadline): the runner's stop is no lifecycle violation and there is no
// ending to compare with `expect:`; ADV-008 says what it costs. A policy that would have ended
// the call before the stop keeps LIFE-001 failing.
TEST(JudgePolicyTest, ACallItsPolicyNeverEndsIsAnAdvisoryNotAViolation) {
  scenario::Scenario scenario;
  scenario.expect.outcome = "committed";
  scenario.expect.attempts = 2;
  TraceBuilder b;
  b.Start(0, 1).Chunk(5, 1, "Hell");
  b.Entry(0, 40'000, EndKind::kStalledClientGaveUp);
  Trace trace = b.Build(40'000);
  trace.subject_timed_out = true;
  trace.subject_stopped_at = testing::Ms(40'000);
  const auto judge = [&](const PolicyTwin* twin) {
    std::map<std::string, report::CheckResult> by_id;
    for (report::CheckResult& check : Judge(scenario, trace, VirtualTolerance(), twin)) {
      by_id[check.id] = std::move(check);
    }
    return by_id;
  };
  PolicyTwin endless;
  endless.seeds = 12;
  endless.never_ends = true;
  auto checks = judge(&endless);
  EXPECT_EQ(checks["LIFE-001"].status, CheckStatus::kNotApplicable) << checks["LIFE-001"].evidence;
  EXPECT_NE(checks["LIFE-001"].evidence.find("never ends the call"), std::string::npos)
      << checks["LIFE-001"].evidence;
  EXPECT_EQ(checks["EXPECT-OUTCOME"].status, CheckStatus::kNotApplicable);
  EXPECT_EQ(checks["EXPECT-ATTEMPTS"].status, CheckStatus::kNotApplicable);
  EXPECT_EQ(checks["ADV-008"].status, CheckStatus::kFail);
  EXPECT_EQ(checks["ADV-008"].severity, report::Severity::kAdvisory);

  PolicyTwin ends_soon;  // the policy gives up 20 s in: the subject should have ended
  ends_soon.seeds = 12;
  TwinOutcome failed;
  failed.type = EventKind::kFailed;
  failed.attempts = 1;
  failed.ended_ms = 20'000;
  ends_soon.outcomes = {failed};
  checks = judge(&ends_soon);
  EXPECT_EQ(checks["LIFE-001"].status, CheckStatus::kFail);
  EXPECT_EQ(checks["EXPECT-OUTCOME"].status, CheckStatus::kFail);
  EXPECT_EQ(checks["ADV-008"].status, CheckStatus::kPass);

  checks = judge(nullptr);  // no twin: the runner's stop is all there is
  EXPECT_EQ(checks["LIFE-001"].status, CheckStatus::kFail);
}

// EXPECT-TEXT's evidence names the text the declared policy commits, not only how many attempts
// it takes: a router that committed another route's answer is told which answer was due.
TEST(JudgePolicyTest, ExpectTextSaysWhichTextThePolicyCommits) {
  scenario::Scenario scenario;
  scenario.expect.text = "Hello from the tertiary";
  TraceBuilder b;
  b.Start(0, 1).Committed(10, 1, "Hello from the secondary");
  b.Entry(0, 10, EndKind::kCompleted);
  PolicyTwin twin;
  twin.seeds = 4;
  TwinOutcome committed;
  committed.type = EventKind::kCommitted;
  committed.attempts = 2;
  committed.text = "Hello from the tertiary";
  twin.outcomes = {committed};
  report::CheckResult text_check;
  for (report::CheckResult& check : Judge(scenario, b.Build(), VirtualTolerance(), &twin)) {
    if (check.id == "EXPECT-TEXT") text_check = std::move(check);
  }
  EXPECT_EQ(text_check.status, CheckStatus::kFail);
  EXPECT_NE(text_check.evidence.find("the declared policy commits \"Hello from the tertiary\""),
            std::string::npos)
      << text_check.evidence;
  b = TraceBuilder();
  b.Start(0, 1).Committed(10, 1, "Hello from the tertiary");
  b.Entry(0, 10, EndKind::kCompleted);
  for (report::CheckResult& check : Judge(scenario, b.Build(), VirtualTolerance(), &twin)) {
    if (check.id == "EXPECT-TEXT") {
      EXPECT_EQ(check.status, CheckStatus::kPass) << check.evidence;
    }
  }
}

// ADV-008 from the subject's own events: ten minutes of silence after a 429 (a Retry-After
// without a cap) is advised against; a call that kept its caller informed is not.
TEST(JudgePolicyTest, Adv008ALongSilenceBeforeTheAnswer) {
  TraceBuilder slept;
  slept.Start(0, 1);
  slept.Error(1, 10, "rate-limit", true);
  slept.Interrupted(11, 1, "rate-limit", "RATE_LIMIT");
  slept.Start(600'011, 2);
  slept.Answer(600'012, 600'020, "Hi");
  slept.Committed(600'020, 2, "Hi");
  const auto check = CheckOf(slept.Build(700'000), "ADV-008");
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("nothing for 600 s"), std::string::npos) << check.evidence;
  TraceBuilder quick;
  quick.Start(0, 1);
  quick.Answer(1, 10, "Hi");
  quick.Committed(10, 1, "Hi");
  ExpectStatus(quick.Build(), "ADV-008", CheckStatus::kPass);
}

// A client that declares no idle timeout and waits on a dead stream for good does what its
// policy says: TIME-001 cannot fault it (ADV-003 and ADV-008 advise); one that declares a timeout
// and does not keep it still fails.
TEST(JudgePolicyTest, Time001NoDeclaredIdleTimeoutIsNoViolation) {
  json policy = testing::TestPolicy();
  policy["timeouts"]["idle_ms"] = nullptr;
  TraceBuilder b(policy);
  b.Start(0, 1);
  provider::Silence forever;
  forever.from = testing::Ms(10);
  b.Entry(0, 0, EndKind::kInProgress).truth.silences = {forever};
  const auto check = CheckOf(b.Build(), "TIME-001");
  EXPECT_EQ(check.status, CheckStatus::kNotApplicable) << check.evidence;
  EXPECT_NE(check.evidence.find("declares no idle timeout"), std::string::npos) << check.evidence;
  EXPECT_EQ(CheckOf(b.Build(), "ADV-003").status, CheckStatus::kFail);
}

// Issue 26: a scenario that sets a total deadline (the call line's limits) is written for a
// client that applies it; a subject declaring another deadline is not judged on its expectations.
TEST(JudgePolicyTest, ADeadlineScenarioIsNotApplicableToASubjectWithAnotherDeadline) {
  scenario::Scenario scenario;
  scenario.policy =
      scenario::PolicySpec{R"({"max_attempts": 3, "timeouts": {"total_ms": 4500}})", {}};
  scenario.expect.outcome = "failed";
  const auto expect_outcome = [&](json total) {
    json policy = testing::TestPolicy();
    policy["timeouts"]["total_ms"] = total;
    TraceBuilder b(policy);
    b.Start(0, 1);
    b.Error(1, 2, "provider-unavailable", true);
    b.Failed(3, 1, "provider-unavailable", "UNAVAILABLE");
    return CheckOf(b.Build(), "EXPECT-OUTCOME", scenario);
  };
  const auto other = expect_outcome(600000);
  EXPECT_EQ(other.status, CheckStatus::kNotApplicable);
  EXPECT_NE(other.evidence.find("4500 ms"), std::string::npos) << other.evidence;
  EXPECT_EQ(expect_outcome(nullptr).status, CheckStatus::kNotApplicable);
  EXPECT_EQ(expect_outcome(4500).status, CheckStatus::kPass);
}

}  // namespace
}  // namespace faultline::harness
