// What a streamed response's failure says about itself (Failure::error_event, stream_events) and
// the two policy keys that read it: `stream_retries: first-event` (retry only what fails in the
// first event) and `stream_retry_on` (error events, broken streams, or both).
#include <gtest/gtest.h>

#include <string>

#include "reference_impl/body_decoder.h"
#include "reference_impl/policy.h"
#include "reference_impl/policy_json.h"

namespace faultline::ref {
namespace {

constexpr std::string_view kRoleEvent =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
constexpr std::string_view kTextEvent =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
constexpr std::string_view kErrorEvent =
    "data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n";
constexpr std::string_view kPing = ": keep-alive\n\n";

// The failure a streamed openai-chat body ends in: `body`, then a clean end (truncated) unless
// an event decided it first.
Failure DecodedFailure(std::string_view body) {
  BodyDecoder decoder(Dialect::kOpenAiChat, /*stream=*/true);
  decoder.Feed(body);
  const AttemptOutcome& outcome = decoder.End();
  EXPECT_TRUE(std::holds_alternative<Failure>(outcome));
  return std::holds_alternative<Failure>(outcome) ? std::get<Failure>(outcome) : Failure{};
}

TEST(StreamFailureTest, AFailureSaysWhatFailedItAndHowManyEventsCameFirst) {
  const Failure first = DecodedFailure(std::string(kPing) + std::string(kErrorEvent));
  EXPECT_TRUE(first.error_event);
  EXPECT_EQ(first.stream_events, 0) << "a heartbeat is no event";
  const Failure second = DecodedFailure(std::string(kRoleEvent) + std::string(kErrorEvent));
  EXPECT_TRUE(second.error_event);
  EXPECT_EQ(second.stream_events, 1);
  EXPECT_EQ(second.partial_output, PartialOutput::kNone) << "the role event is no output";
  const Failure cut = DecodedFailure(std::string(kRoleEvent) + std::string(kTextEvent));
  EXPECT_FALSE(cut.error_event) << "a stream cut short is a broken stream";
  EXPECT_EQ(cut.failure_class, FailureClass::kTruncated);
  EXPECT_EQ(cut.stream_events, 2);
  EXPECT_EQ(cut.partial_output, PartialOutput::kUncommitted);
}

Failure Streamed(bool error_event, int events, bool output) {
  Failure failure;
  failure.code = error_event ? FailureCode::kOverloaded : FailureCode::kTransport;
  failure.failure_class =
      error_event ? FailureClass::kProviderOverloaded : FailureClass::kTransport;
  failure.retryable = true;
  failure.phase = Phase::kStream;
  failure.streamed = true;
  failure.error_event = error_event;
  failure.stream_events = events;
  failure.partial_output = output ? PartialOutput::kUncommitted : PartialOutput::kNone;
  return failure;
}

TEST(StreamFailureTest, FirstEventRetriesOnlyWhatFailsBeforeAnyEvent) {
  RetryPolicy policy;
  policy.stream_retries = StreamRetries::kFirstEvent;
  EXPECT_EQ(RetryForbidden(policy, Streamed(true, 0, false)), std::nullopt);
  EXPECT_EQ(RetryForbidden(policy, Streamed(false, 0, false)), std::nullopt);
  EXPECT_EQ(RetryForbidden(policy, Streamed(true, 1, false)), GiveUpReason::kStreamNotRetried)
      << "an error after a role event: before-output would retry it, first-event does not";
  policy.stream_retries = StreamRetries::kBeforeOutput;
  EXPECT_EQ(RetryForbidden(policy, Streamed(true, 1, false)), std::nullopt);
}

TEST(StreamFailureTest, StreamRetryOnSaysWhichOfTheTwoIsRetried) {
  RetryPolicy frames;
  frames.stream_retry_on = {StreamFailure::kErrorEvent};
  EXPECT_EQ(RetryForbidden(frames, Streamed(true, 0, false)), std::nullopt);
  EXPECT_EQ(RetryForbidden(frames, Streamed(false, 0, false)), GiveUpReason::kStreamNotRetried);
  RetryPolicy sockets;
  sockets.stream_retry_on = {StreamFailure::kTransport};
  EXPECT_EQ(RetryForbidden(sockets, Streamed(true, 0, false)), GiveUpReason::kStreamNotRetried);
  EXPECT_EQ(RetryForbidden(sockets, Streamed(false, 0, false)), std::nullopt);
  Failure headers = Streamed(false, 0, false);
  headers.streamed = false;  // before the headers: not a stream failure at all
  headers.phase = Phase::kResponseHeaders;
  EXPECT_EQ(RetryForbidden(frames, headers), std::nullopt);
}

TEST(StreamFailureTest, TheKeysLoadAndRoundTrip) {
  auto policy = LoadPolicy(
      R"({"stream_retries": "first-event", "stream_retry_on": ["error-event"],
          "retry_after": {"parse": "date-parse"}})");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  EXPECT_EQ(policy->stream_retries, StreamRetries::kFirstEvent);
  EXPECT_EQ(policy->stream_retry_on, std::vector<StreamFailure>{StreamFailure::kErrorEvent});
  EXPECT_EQ(policy->retry_after.parse, RetryAfterParse::kDateParse);
  EXPECT_EQ(LoadPolicy(PolicyToJson(*policy).dump()), policy);
  auto socket = LoadPolicy(R"({"stream_retry_on": ["socket"]})");
  ASSERT_FALSE(socket.has_value());
  EXPECT_EQ(socket.error().path, "stream_retry_on[0]");
  auto js = LoadPolicy(R"({"retry_after": {"parse": "date_parse"}})");
  ASSERT_FALSE(js.has_value());
  EXPECT_NE(js.error().message.find("did you mean 'date-parse'?"), std::string::npos)
      << js.error().message;
}

}  // namespace
}  // namespace faultline::ref
