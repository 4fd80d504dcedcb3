// The judge reads the policy keys real libraries need with the reference client's own rules:
// `stream_retries: first-event`, `stream_retry_on` (error events vs broken streams) and
// `retry_after.parse: date-parse` (Retry-After as JavaScript's Date.parse reads it).
#include <gtest/gtest.h>

#include "harness/tests/judge_test_support.h"

namespace faultline::harness {
namespace {

using nlohmann::json;
using report::CheckStatus;
using testing::CheckOf;
using testing::TraceBuilder;

using testing::ExpectStatus;

// A 200 stream that fails 9 ms in: an error event (overloaded) or a cut (transport), with or
// without an event before it.
provider::JournalEntry& StreamFailure(TraceBuilder& b, double arrived, bool error_event,
                                      bool event_before) {
  provider::JournalEntry& entry = b.Entry(arrived, arrived + 9, provider::EndKind::kClosedByServer);
  entry.status = 200;
  entry.truth.failure_class = error_event ? "provider-overloaded" : "transport";
  entry.truth.retryable = true;
  entry.truth.streamed = true;
  entry.truth.error_event = error_event;
  entry.truth.events_before_failure = event_before;
  return entry;
}

Trace GaveUp(const json& policy, bool error_event, bool event_before) {
  TraceBuilder b(policy);
  b.Start(0, 1);
  StreamFailure(b, 1, error_event, event_before);
  b.Failed(11, 1, error_event ? "provider-overloaded" : "transport",
           error_event ? "OVERLOADED" : "TRANSPORT");
  return b.Build();
}

Trace Retried(const json& policy, bool error_event, bool event_before) {
  TraceBuilder b(policy);
  StreamFailure(b, 0, error_event, event_before);
  b.Answer(500, 510, "Hi");
  b.Committed(510, 2, "Hi");
  return b.Build();
}

TEST(JudgeLibraryKeysTest, FirstEventRetriesOnlyAFailureInTheFirstEvent) {
  json policy = testing::TestPolicy();
  policy["stream_retries"] = "first-event";
  ExpectStatus(GaveUp(policy, true, false), "RETRY-006", CheckStatus::kFail);  // had to retry
  ExpectStatus(GaveUp(policy, true, true), "RETRY-006", CheckStatus::kPass);
  // An error after the first event is not retried.
  ExpectStatus(Retried(policy, true, true), "RETRY-001", CheckStatus::kFail);
  ExpectStatus(Retried(policy, true, false), "RETRY-001", CheckStatus::kPass);
}

TEST(JudgeLibraryKeysTest, StreamRetryOnSeparatesErrorEventsFromBrokenStreams) {
  json frames = testing::TestPolicy();
  frames["stream_retry_on"] = {"error-event"};
  ExpectStatus(GaveUp(frames, false, false), "RETRY-006", CheckStatus::kPass);
  ExpectStatus(GaveUp(frames, true, false), "RETRY-006", CheckStatus::kFail);
  ExpectStatus(Retried(frames, false, false), "RETRY-001", CheckStatus::kFail);
  json sockets = testing::TestPolicy();
  sockets["stream_retry_on"] = {"transport"};
  ExpectStatus(GaveUp(sockets, true, false), "RETRY-006", CheckStatus::kPass);
  ExpectStatus(Retried(sockets, true, false), "RETRY-001", CheckStatus::kFail);
  ExpectStatus(Retried(sockets, false, false), "RETRY-001", CheckStatus::kPass);
}

// A 429 whose Retry-After is `text`, retried `gap_ms` after it ended.
Trace RetriedAfterRetryAfter(const json& policy, std::string text, double gap_ms) {
  TraceBuilder b(policy);
  provider::JournalEntry& limited = b.Error(0, 10, "rate-limit", true);
  limited.status = 429;
  limited.truth.hint_fields = {{"retry-after", std::move(text)}};
  b.Answer(10 + gap_ms, 20 + gap_ms, "Hi");
  b.Committed(20 + gap_ms, 2, "Hi");
  return b.Build();
}

// A client that waits 2 s x 2^n without jitter, and reads a hint instead (the Vercel AI SDK's
// shape), with Retry-After read by Date.parse or as RFC 9110 says.
json ReplacingPolicy(std::string_view parse) {
  return {{"backoff",
           {{"strategy", "exponential"}, {"base_ms", 2000}, {"cap_ms", 60000}, {"jitter", 0}}},
          {"retry_after",
           {{"mode", "replace"},
            {"parse", parse},
            {"zero", "immediate"},
            {"cap_ms", 60000},
            {"over_cap", "give-up"},
            {"jitter", 0}}}};
}

TEST(JudgeLibraryKeysTest, DateParseReadsANegativeNumberAsAPastDate) {
  // "-5" is no hint by RFC 9110 (the backoff's 2 s decides) but a date in 2001 for Date.parse:
  // a hint of 0, so the retry comes at once.
  ExpectStatus(RetriedAfterRetryAfter(ReplacingPolicy("date-parse"), "-5", 3), "RETRY-003",
               CheckStatus::kPass);
  ExpectStatus(RetriedAfterRetryAfter(ReplacingPolicy("rfc9110"), "-5", 3), "RETRY-003",
               CheckStatus::kFail);
}

TEST(JudgeLibraryKeysTest, DateParseReadsThirtyTwoAsADateYearsAway) {
  // "32" is 32 s by RFC 9110, waited; for Date.parse it is 2032, far over the cap: give up.
  ExpectStatus(RetriedAfterRetryAfter(ReplacingPolicy("rfc9110"), "32", 32'005), "RETRY-004",
               CheckStatus::kPass);
  const report::CheckResult check =
      CheckOf(RetriedAfterRetryAfter(ReplacingPolicy("date-parse"), "32", 32'005), "RETRY-004");
  EXPECT_EQ(check.status, CheckStatus::kFail) << check.evidence;
  EXPECT_NE(check.evidence.find("over the declared cap"), std::string::npos) << check.evidence;
}

TEST(JudgeLibraryKeysTest, DateParseMeasuresAnHttpDateFromTheClientsClock) {
  // The provider's Date header is 30 s behind and its Retry-After date 2 s after that header:
  // RFC 9110 waits 2 s, a Date.parse client 30 s less, i.e. not at all.
  const auto trace = [](std::string_view parse, double gap_ms) {
    TraceBuilder b(ReplacingPolicy(parse));
    provider::JournalEntry& limited = b.Error(0, 10, "rate-limit", true);
    limited.status = 429;
    // The builder's clock starts at 2026-01-01T00:00:00Z; the response came at its start.
    limited.truth.hint_fields = {{"date", "Wed, 31 Dec 2025 23:59:30 GMT"},
                                 {"retry-after", "Wed, 31 Dec 2025 23:59:32 GMT"}};
    b.Answer(10 + gap_ms, 20 + gap_ms, "Hi");
    b.Committed(20 + gap_ms, 2, "Hi");
    return b.Build();
  };
  ExpectStatus(trace("date-parse", 3), "RETRY-004", CheckStatus::kNotApplicable);
  ExpectStatus(trace("date-parse", 3), "RETRY-003", CheckStatus::kPass);
  ExpectStatus(trace("rfc9110", 3), "RETRY-004", CheckStatus::kFail);
}

}  // namespace
}  // namespace faultline::harness
