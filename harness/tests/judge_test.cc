// Every invariant of the catalogue, judged on a trace that keeps it and on one that breaks it.
#include <gtest/gtest.h>

#include <set>

#include "harness/tests/judge_test_support.h"

namespace faultline::harness {
namespace {

using report::CheckStatus;
using testing::TraceBuilder;
using EndKind = provider::EndKind;

// A 429 asking for 500 ms, a retry 599 ms later, "Hello" committed from attempt 2.
TraceBuilder Recovered() {
  TraceBuilder b;
  b.Start(0, 1);
  testing::WithHint(b.Error(1, 2, "rate-limit", true), "retry-after-ms", "500");
  b.Interrupted(3, 1, "rate-limit", "RATE_LIMIT");
  b.Start(540, 2);  // the 500 ms hint plus some of its declared 10 % jitter
  b.Answer(541, 650, "Hello");
  b.Chunk(620, 2, "Hel").Chunk(630, 2, "lo").Committed(650, 2, "Hello");
  return b;
}

using testing::ExpectStatus;

TEST(JudgeTest, CatalogueIdsAreUniqueAndStable) {
  std::set<std::string_view> ids;
  for (const InvariantInfo& info : InvariantCatalog()) {
    EXPECT_TRUE(ids.insert(info.id).second) << info.id;
    EXPECT_FALSE(info.statement.empty());
  }
  // ROUTE-001..009, ADV-006, ADV-007, ADV-009 (issue 12) and ADV-008 joined the 27; ADV-010
  // (issue 26) after them, ADV-011 (partial declarations) last; RETRY-007 (issue 27, shared
  // budgets); ROUTE-010 (sticky clients); RES-002 (connections reused only when healthy);
  // ADV-012 (a twin stopped at its request bound).
  EXPECT_EQ(ids.size(), 46u);
  EXPECT_EQ(InvariantCatalog().front().id, "LIFE-001");
}

TEST(JudgeTest, TheRecoveredTracePassesEverythingThatApplies) {
  for (const report::CheckResult& check : Judge({}, Recovered().Build(), VirtualTolerance())) {
    EXPECT_NE(check.status, CheckStatus::kFail) << check.id << ": " << check.evidence;
  }
}

TEST(JudgeTest, Life001OneTerminal) {
  TraceBuilder none;
  none.Start(0, 1).Chunk(5, 1, "Hi");
  none.Answer(0, 10, "Hi");
  ExpectStatus(none.Build(), "LIFE-001", CheckStatus::kFail);
  TraceBuilder twice = Recovered();
  twice.Failed(700, 2, "transport", "TRANSPORT");
  const auto check = testing::CheckOf(twice.Build(), "LIFE-001");
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("ended 2 times"), std::string::npos) << check.evidence;
}

TEST(JudgeTest, Life002NothingAfterTerminal) {
  TraceBuilder late = Recovered();
  late.Chunk(700, 2, "!");
  const auto check = testing::CheckOf(late.Build(), "LIFE-002");
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("assistant/chunk at 700.0 ms"), std::string::npos);
}

TEST(JudgeTest, Life003ChunksOnlyInsideAResponse) {
  TraceBuilder b;
  b.Chunk(1, 1, "early").Start(2, 1).Committed(10, 1, "early");
  b.Answer(2, 10, "early");
  ExpectStatus(b.Build(), "LIFE-003", CheckStatus::kFail);
  TraceBuilder after_interrupt;
  after_interrupt.Start(0, 1).Interrupted(5, 1, "transport").Chunk(6, 1, "x");
  after_interrupt.Failed(7, 1, "transport", "TRANSPORT");
  ExpectStatus(after_interrupt.Build(), "LIFE-003", CheckStatus::kFail);
}

TEST(JudgeTest, BlackBoxSubjectsGetNotApplicableForClientSideChecks) {
  TraceBuilder b;
  b.Answer(1, 10, "Hello");
  b.Committed(12, 1, "Hello");
  const Trace trace = b.Build();
  EXPECT_TRUE(IsBlackBox(trace));
  ExpectStatus(trace, "LIFE-003", CheckStatus::kNotApplicable);
  ExpectStatus(trace, "LIFE-004", CheckStatus::kNotApplicable);
  ExpectStatus(trace, "COMMIT-001", CheckStatus::kPass);
}

// Two calls of one client, each failing once (503) and retrying at once, with a budget of one
// token: the second call's retry overdraws the bucket they share; each call on its own budget
// keeps within it.
TEST(JudgeTest, Retry007ASharedBudgetIsNeverOverdrawn) {
  const auto build = [](bool one_client, double refund) {
    TraceBuilder b(nlohmann::json{
        {"budget", {{"capacity", 1}, {"retry_cost", 1}, {"success_refund", refund}}}});
    b.Calls(2);
    if (one_client) b.OneClient();
    for (int call = 0; call < 2; ++call) {
      const double at = 1000.0 * call;
      b.Error(at, at + 5, "provider-unavailable", true).call = call;
      b.Answer(at + 10, at + 20, "Hello").call = call;
      b.Start(at, 1).Interrupted(at + 6, 1, "provider-unavailable").Start(at + 10, 2);
      b.Committed(at + 20, 2, "Hello");
    }
    Trace trace = b.Build();
    // Each call's events are its own: the second call's records are call 1's.
    for (ClientRecord& record : trace.client) {
      if (record.event.kind != EventKind::kHello && record.at >= std::chrono::seconds(1)) {
        record.call = 1;
      }
    }
    return trace;
  };
  const auto shared = testing::CheckOf(build(true, 0), "RETRY-007");
  EXPECT_EQ(shared.status, CheckStatus::kFail);
  EXPECT_NE(shared.evidence.find("call 1 retried at 1010.0 ms"), std::string::npos)
      << shared.evidence;
  // Call 0's answer refunds the token the second retry needs.
  ExpectStatus(build(true, 1), "RETRY-007", CheckStatus::kPass);
  // Processes of their own: a budget each, one retry each.
  ExpectStatus(build(false, 0), "RETRY-007", CheckStatus::kPass);
  // No budget declared: nothing to judge.
  ExpectStatus(Recovered().Build(), "RETRY-007", CheckStatus::kNotApplicable);
}

TEST(JudgeTest, Life004InterruptBeforeTheRetry) {
  TraceBuilder b;
  b.Start(0, 1);
  b.Error(1, 2, "provider-unavailable", true);
  b.Start(50, 2);
  b.Answer(51, 60, "Hi");
  b.Interrupted(70, 1, "provider-unavailable");  // written after the retry went out
  b.Committed(60, 2, "Hi");
  ExpectStatus(b.Build(), "LIFE-004", CheckStatus::kFail);
}

TEST(JudgeTest, Commit001NoSplice) {
  TraceBuilder b;
  b.Start(0, 1).Chunk(5, 1, "Hel");
  b.Entry(1, 6, EndKind::kResetByServer).truth.failure_class = "transport";
  b.Interrupted(7, 1, "transport").Start(50, 2);
  b.Answer(51, 60, "Hello");
  b.Committed(60, 2, "HelHello");
  const auto check = testing::CheckOf(b.Build(), "COMMIT-001");
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("\"HelHello\""), std::string::npos) << check.evidence;
  ExpectStatus(Recovered().Build(), "COMMIT-001", CheckStatus::kPass);
}

TEST(JudgeTest, Commit002OnlyWholeAnswers) {
  TraceBuilder b;
  b.Start(0, 1).Chunk(5, 1, "Hel");
  b.Entry(1, 6, EndKind::kCompleted).truth.failure_class = "truncated";
  b.Committed(7, 1, "Hel");
  const auto check = testing::CheckOf(b.Build(), "COMMIT-002");
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("truncated"), std::string::npos) << check.evidence;
  ExpectStatus(Recovered().Build(), "COMMIT-002", CheckStatus::kPass);
}

TEST(JudgeTest, Commit003NoRequestAfterCommit) {
  TraceBuilder b = Recovered();
  b.Answer(700, 710, "Hello");
  ExpectStatus(b.Build(), "COMMIT-003", CheckStatus::kFail);
}

TEST(JudgeTest, Retry001NonRetryableIsNotRetried) {
  TraceBuilder b;
  b.Start(0, 1);
  b.Error(1, 2, "invalid-request", false);
  b.Interrupted(3, 1, "invalid-request").Start(50, 2);
  b.Answer(51, 60, "Hi");
  b.Committed(60, 2, "Hi");
  ExpectStatus(b.Build(), "RETRY-001", CheckStatus::kFail);
  // A class the subject itself says it does not retry counts too.
  TraceBuilder quota;
  quota.Start(0, 1);
  quota.Error(1, 2, "quota", true);
  quota.Start(50, 2);
  quota.Answer(51, 60, "Hi");
  quota.Committed(60, 2, "Hi");
  ExpectStatus(quota.Build(), "RETRY-001", CheckStatus::kFail);
}

TEST(JudgeTest, Retry002WithinTheDeclaredBudget) {
  TraceBuilder b;
  for (int i = 0; i < 4; ++i) b.Error(i * 10, i * 10 + 1, "provider-unavailable", true);
  b.Failed(50, 4, "provider-unavailable", "SERVER");
  const auto check = testing::CheckOf(b.Build(), "RETRY-002");
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("4 requests"), std::string::npos) << check.evidence;
}

TEST(JudgeTest, Retry003BackoffBounds) {
  const auto with_gap = [](double gap) {
    TraceBuilder b;
    b.Error(0, 10, "provider-unavailable", true);  // no hint: the backoff rules
    b.Answer(10 + gap, 20 + gap, "Hi");
    b.Committed(20 + gap, 2, "Hi");
    return b.Build();
  };
  ExpectStatus(with_gap(60), "RETRY-003", CheckStatus::kPass);    // full jitter [0, 100] ms
  ExpectStatus(with_gap(5000), "RETRY-003", CheckStatus::kFail);  // far too late
}

TEST(JudgeTest, Retry004RetryAfterHonoured) {
  TraceBuilder early;
  testing::WithHint(early.Error(0, 10, "rate-limit", true), "retry-after", "2");
  early.Answer(110, 120, "Hi");
  early.Committed(120, 2, "Hi");
  const auto check = testing::CheckOf(early.Build(), "RETRY-004");
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("asked to wait 2000 ms"), std::string::npos) << check.evidence;
  TraceBuilder over_cap;  // 20 s over the declared 10 s cap, declared give-up: no retry allowed
  testing::WithHint(over_cap.Error(0, 10, "rate-limit", true), "retry-after", "20");
  over_cap.Answer(20010, 20020, "Hi");
  over_cap.Committed(20020, 2, "Hi");
  ExpectStatus(over_cap.Build(), "RETRY-004", CheckStatus::kFail);
  ExpectStatus(Recovered().Build(), "RETRY-004", CheckStatus::kPass);
}

TEST(JudgeTest, Retry005SameBody) {
  TraceBuilder b;
  b.Error(0, 10, "provider-unavailable", true);
  b.Entry(50, 60, EndKind::kCompleted, R"({"stream":true,"retry":2})").truth.answer = "Hi";
  b.Committed(60, 2, "Hi");
  ExpectStatus(b.Build(), "RETRY-005", CheckStatus::kFail);
}

provider::Silence SilenceFrom(double from, bool before_headers) {
  provider::Silence silence;
  silence.from = testing::Ms(from);
  silence.before_headers = before_headers;
  return silence;
}

TEST(JudgeTest, Time001StallDetectedWithinIdleTimeout) {
  TraceBuilder hung;
  hung.Entry(0, 0, EndKind::kInProgress).truth.silences = {SilenceFrom(10, false)};
  const auto check = testing::CheckOf(hung.Build(), "TIME-001");
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("never closed"), std::string::npos) << check.evidence;
  TraceBuilder slow;  // gave up, but after 3 s of a 1 s idle timeout
  slow.Entry(0, 3010, EndKind::kStalledClientGaveUp).truth.silences = {SilenceFrom(10, false)};
  ExpectStatus(slow.Build(), "TIME-001", CheckStatus::kFail);
  TraceBuilder good;
  good.Entry(0, 1010, EndKind::kStalledClientGaveUp).truth.silences = {SilenceFrom(10, false)};
  ExpectStatus(good.Build(), "TIME-001", CheckStatus::kPass);
  // A connection that closed only because the runner stopped a hung subject was not the
  // client's doing.
  TraceBuilder stopped;
  stopped.Entry(0, 1200.5, EndKind::kStalledClientGaveUp).truth.silences = {SilenceFrom(10, false)};
  Trace stopped_trace = stopped.Build();
  stopped_trace.subject_timed_out = true;
  stopped_trace.subject_stopped_at = testing::Ms(1200);
  const auto by_runner = testing::CheckOf(stopped_trace, "TIME-001");
  EXPECT_EQ(by_runner.status, CheckStatus::kFail);
  EXPECT_NE(by_runner.evidence.find("runner stopped the subject"), std::string::npos)
      << by_runner.evidence;
  // Stopped before the idle timeout was even due: the subject never had its chance.
  stopped_trace.subject_stopped_at = testing::Ms(500);
  stopped_trace.journal[0].ended = testing::Ms(500);
  ExpectStatus(stopped_trace, "TIME-001", CheckStatus::kNotApplicable);
}

// The provider sent its last content at 10 ms, but the loaded client read it only at 600 ms (its
// chunk line): its 1 s idle clock started then, so closing at 1550 ms is in time; at 1700 ms it
// is not, and a chunk before the silence moves nothing.
TEST(JudgeTest, Time001CountsTheSilenceFromTheContentTheClientLastShowed) {
  const auto build = [](double chunk_at, double closed_at) {
    TraceBuilder b;
    b.Start(0, 1);
    b.Entry(0, closed_at, EndKind::kStalledClientGaveUp).truth.silences = {SilenceFrom(10, false)};
    b.Chunk(chunk_at, 1, "Hel");
    b.Failed(closed_at + 1, 1, "timeout", "TIMEOUT");
    return b.Build();
  };
  ExpectStatus(build(600, 1550), "TIME-001", CheckStatus::kPass);
  const auto late = testing::CheckOf(build(600, 1700), "TIME-001");
  EXPECT_EQ(late.status, CheckStatus::kFail);
  EXPECT_NE(late.evidence.find("the client showed content until 600.0 ms"), std::string::npos)
      << late.evidence;
  ExpectStatus(build(5, 1550), "TIME-001", CheckStatus::kFail);
}

TEST(JudgeTest, Time002HeadersDeadline) {
  TraceBuilder b;
  b.Entry(0, 5000, EndKind::kStalledClientGaveUp).truth.silences = {SilenceFrom(0, true)};
  ExpectStatus(b.Build(), "TIME-002", CheckStatus::kFail);
  TraceBuilder good;
  good.Entry(0, 2000, EndKind::kStalledClientGaveUp).truth.silences = {SilenceFrom(0, true)};
  ExpectStatus(good.Build(), "TIME-002", CheckStatus::kPass);
}

TEST(JudgeTest, Time003TotalDeadline) {
  TraceBuilder b;
  b.Start(0, 1);
  b.Answer(1, 25000, "Hi");
  b.Committed(25000, 1, "Hi");
  ExpectStatus(b.Build(), "TIME-003", CheckStatus::kFail);
  // Stopped by the run 3 s after it started, the call may yet have overrun its 20 s deadline:
  // no evidence either way (it passed, wrongly, when an adapter started late on a loaded box).
  TraceBuilder stopped;
  stopped.Start(5000, 1);
  stopped.Entry(5001, 8000, EndKind::kClientClosed);
  ExpectStatus(stopped.Build(8000), "TIME-003", CheckStatus::kNotApplicable);
  TraceBuilder on_time;
  on_time.Start(0, 1);
  on_time.Answer(1, 20, "Hi");
  on_time.Committed(20, 1, "Hi");
  ExpectStatus(on_time.Build(), "TIME-003", CheckStatus::kPass);
}

TEST(JudgeTest, Cancel001EndsPromptlyWithAborted) {
  TraceBuilder wrong;
  wrong.Start(0, 1).Cancel(100).Failed(100.5, 1, "transport", "TRANSPORT");
  wrong.Error(1, 2, "provider-unavailable", true);
  ExpectStatus(wrong.Build(), "CANCEL-001", CheckStatus::kFail);
  TraceBuilder slow;
  slow.Start(0, 1).Cancel(100).Failed(900, 1, "aborted", "ABORTED");
  ExpectStatus(slow.Build(), "CANCEL-001", CheckStatus::kFail);
  TraceBuilder good;
  good.Start(0, 1).Cancel(100).Failed(100.5, 1, "aborted", "ABORTED");
  ExpectStatus(good.Build(), "CANCEL-001", CheckStatus::kPass);
  ExpectStatus(Recovered().Build(), "CANCEL-001", CheckStatus::kNotApplicable);
}

TEST(JudgeTest, Cancel002NoRequestAfterCancel) {
  TraceBuilder b;
  b.Error(0, 10, "provider-unavailable", true);
  b.Cancel(100).Answer(600, 610, "Hi");
  b.Committed(610, 2, "Hi");
  ExpectStatus(b.Build(), "CANCEL-002", CheckStatus::kFail);
}

TEST(JudgeTest, Cancel003CancelClosesTheStream) {
  TraceBuilder b;
  b.Start(0, 1).Cancel(100).Failed(100, 1, "aborted", "ABORTED");
  b.Entry(1, 0, EndKind::kInProgress);
  ExpectStatus(b.Build(), "CANCEL-003", CheckStatus::kFail);
  TraceBuilder good;
  good.Start(0, 1).Cancel(100).Failed(100, 1, "aborted", "ABORTED");
  good.Entry(1, 100.5, EndKind::kClientClosed);
  ExpectStatus(good.Build(), "CANCEL-003", CheckStatus::kPass);
}

TEST(JudgeTest, Class001MatchesTheInjectedFault) {
  TraceBuilder b;
  b.Start(0, 1);
  b.Error(1, 2, "rate-limit", false);
  b.Failed(3, 1, "transport", "TRANSPORT");
  const auto check = testing::CheckOf(b.Build(), "CLASS-001");
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("rate-limit"), std::string::npos) << check.evidence;
  // A silence longer than the declared idle timeout makes "timeout" the right answer.
  TraceBuilder stall;
  stall.Start(0, 1);
  provider::JournalEntry& entry = stall.Entry(1, 1011, EndKind::kStalledClientGaveUp);
  entry.truth.answer = "Hi";
  entry.truth.silences = {SilenceFrom(10, false)};
  stall.Failed(1012, 1, "timeout", "TIMEOUT");
  ExpectStatus(stall.Build(), "CLASS-001", CheckStatus::kPass);
}

// Issue 26: where the provider refuses connections (a listener outage), CLASS-001 was n/a for
// every failure. A failure to connect is a refused connection, a transport failure, when the
// subject's account adds up (each response/start is a journaled attempt or a failed connect).
TEST(JudgeTest, Class001JudgesRefusedConnectionsAsTransport) {
  scenario::Scenario outage;
  outage.listener_outages.push_back({});
  const auto refused_then_answered = [&](std::string refused_class, bool account_adds_up) {
    TraceBuilder b;
    b.Start(0, 1);
    b.Event(1, {{"type", "response/interrupted"},
                {"attempt", 1},
                {"response_id", "resp-1"},
                {"failure", {{"class", refused_class}, {"code", "X"}, {"phase", "connect"}}}});
    b.Start(500, 2);
    b.Error(501, 502, "provider-unavailable", true);
    b.Event(503, {{"type", "response/interrupted"},
                  {"attempt", 2},
                  {"response_id", "resp-2"},
                  {"failure",
                   {{"class", "provider-unavailable"},
                    {"code", "UNAVAILABLE"},
                    {"phase", "response-headers"}}}});
    if (account_adds_up) b.Start(1500, 3);
    b.Answer(1501, 1510, "Hi");
    b.Committed(1511, 3, "Hi");
    return b.Build();
  };
  ExpectStatus(refused_then_answered("transport", true), "CLASS-001", CheckStatus::kPass, outage);
  const auto wrong = testing::CheckOf(refused_then_answered("unknown", true), "CLASS-001", outage);
  EXPECT_EQ(wrong.status, CheckStatus::kFail);
  EXPECT_NE(wrong.evidence.find("refused connection"), std::string::npos) << wrong.evidence;
  // One response/start short: which failure belongs to which attempt cannot be told.
  ExpectStatus(refused_then_answered("unknown", false), "CLASS-001", CheckStatus::kNotApplicable,
               outage);
}

TEST(JudgeTest, Res001NothingLeftOpen) {
  TraceBuilder b = Recovered();
  b.Entry(700, 0, EndKind::kInProgress);
  ExpectStatus(b.Build(), "RES-001", CheckStatus::kFail);
  ExpectStatus(Recovered().Build(), "RES-001", CheckStatus::kPass);
}

// RES-002: a stalled stream abandoned for a retry. The provider journals a further request's bytes
// arriving on the stalled response's connection; then the retry went out on it, not on a new one.
TEST(JudgeTest, Res002NoRequestOnAConnectionStillBeingAnswered) {
  const auto stalled_then_retried = [](bool same_connection) {
    TraceBuilder b;
    b.Start(0, 1);
    provider::JournalEntry& stalled = b.Entry(1, 6000, EndKind::kCompleted);
    stalled.truth.silences = {SilenceFrom(10, false)};
    stalled.connection = 7;
    b.Interrupted(2010, 1, "timeout", "TIMEOUT");
    b.Start(2300, 2);
    provider::JournalEntry& retry = b.Answer(same_connection ? 6001 : 2301, 6100, "Hello");
    retry.connection = same_connection ? 7 : 8;
    b.Committed(6100, 2, "Hello");
    Trace trace = b.Build();
    if (same_connection) trace.journal.front().further_request_at = std::chrono::milliseconds(2301);
    return trace;
  };
  ExpectStatus(stalled_then_retried(false), "RES-002", CheckStatus::kPass);
  const Trace reused = stalled_then_retried(true);
  ExpectStatus(reused, "RES-002", CheckStatus::kFail);
  EXPECT_NE(testing::CheckOf(reused, "RES-002")
                .evidence.find("attempt 2, served there once that response ended"),
            std::string::npos);
  // Nothing paused and nothing was left: no response tempted the client.
  ExpectStatus(Recovered().Build(), "RES-002", CheckStatus::kNotApplicable);

  // Connections outlive calls: with two calls of one request each, the run is judged whole (per
  // call, each would have had a single request and been n/a).
  TraceBuilder two_calls;
  two_calls.Calls(2).OneClient();
  two_calls.Start(0, 1);
  provider::JournalEntry& stalled = two_calls.Answer(1, 6000, "Hello");
  stalled.truth.silences = {SilenceFrom(10, false)};
  stalled.call = 0;
  two_calls.Committed(6000, 1, "Hello");
  two_calls.Event(3000, {{"type", "response/start"}, {"response_id", "r1"}, {"attempt", 1}}, 1);
  provider::JournalEntry& next = two_calls.Answer(3001, 3100, "Hello");
  next.call = 1;
  next.connection = 9;
  two_calls.Event(3100, {{"type", "response/committed"}, {"text", "Hello"}}, 1);
  ExpectStatus(two_calls.Build(), "RES-002", CheckStatus::kPass);
}

TEST(JudgeTest, ExpectBlocksAreCheckedOnTop) {
  scenario::Scenario scenario;
  scenario.expect.outcome = "failed";
  scenario.expect.attempts = 2;
  scenario.expect.text = "Hello";
  scenario.expect.failure_class = "rate-limit";
  const Trace trace = Recovered().Build();
  ExpectStatus(trace, "EXPECT-OUTCOME", CheckStatus::kFail, scenario);
  ExpectStatus(trace, "EXPECT-ATTEMPTS", CheckStatus::kPass, scenario);
  ExpectStatus(trace, "EXPECT-TEXT", CheckStatus::kPass, scenario);
  ExpectStatus(trace, "EXPECT-CLASS", CheckStatus::kFail, scenario);
}

// Issue 10: with several concurrent calls, RETRY-*, COMMIT-003, CLASS-001 and LIFE-005 were n/a,
// because the journal could not tell which call sent which request. Each call now has its own
// base URL, the journal records the call, and every call is judged on its own requests.
TEST(JudgeTest, EveryCallOfSeveralIsJudgedOnItsOwnRequests) {
  const auto storm = [](double call1_retry_at, bool attributed) {
    TraceBuilder b;
    b.Calls(2);
    const auto limited = [&](double at, int call) {
      provider::JournalEntry& entry = b.Error(at, at + 10, "rate-limit", true);
      testing::WithHint(entry, "retry-after", "2");
      entry.call = attributed ? call : -1;
    };
    limited(0, 0);
    limited(5, 1);
    b.Answer(call1_retry_at, call1_retry_at + 10, "Hi").call = attributed ? 1 : -1;
    b.Answer(2100, 2110, "Hi").call = attributed ? 0 : -1;
    for (const auto& [call, done] : {std::pair{0, 2110.0}, std::pair{1, call1_retry_at + 10}}) {
      b.Event(10,
              {{"type", "response/interrupted"},
               {"attempt", 1},
               {"failure", {{"class", "rate-limit"}, {"code", "RATE_LIMITED"}}}},
              call);
      b.Event(done, {{"type", "response/committed"}, {"attempt", 2}, {"text", "Hi"}}, call);
    }
    return b.Build();
  };
  ExpectStatus(storm(2110, true), "RETRY-004", CheckStatus::kPass);
  const auto early = testing::CheckOf(storm(115, true), "RETRY-004");
  EXPECT_EQ(early.status, CheckStatus::kFail);
  EXPECT_TRUE(early.evidence.starts_with("call 1: ")) << early.evidence;
  EXPECT_NE(early.evidence.find("asked to wait 2000 ms"), std::string::npos) << early.evidence;
  // A journal that names no call (an old trace, or a subject ignoring its base URL) leaves the
  // request-by-request checks without evidence.
  ExpectStatus(storm(115, false), "RETRY-004", CheckStatus::kNotApplicable);
}

}  // namespace
}  // namespace faultline::harness
