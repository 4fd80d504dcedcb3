// Bedrock on the client's side: the event-stream decoder (checksums, lengths, header types,
// however the bytes are split), the ConverseStream decoder through BodyDecoder (messageStop ends
// the answer; an exception message is the stream's error), and the classification of Bedrock's
// modelled exceptions over HTTP (x-amzn-ErrorType) and inside a stream. The messages are built
// by the benchmarks' hand-written encoder (bench/stream_fixtures.h), not the fake provider's.
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "reference_impl/bench/stream_fixtures.h"
#include "reference_impl/body_decoder.h"
#include "reference_impl/classify.h"
#include "reference_impl/event_stream_decoder.h"
#include "reference_impl/stream_error_class.h"

namespace faultline::ref {
namespace {

using bench::BedrockEvent;
using bench::EventStreamMessage;

std::string Exception(std::string_view type, std::string_view message) {
  return EventStreamMessage({{":exception-type", type},
                             {":content-type", "application/json"},
                             {":message-type", "exception"}},
                            "{\"message\":\"" + std::string(message) + "\"}");
}

const std::string kStream =
    BedrockEvent("messageStart", R"({"role":"assistant","p":"ab"})") +
    BedrockEvent("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"Gr\u00fc"}})") +
    BedrockEvent("contentBlockDelta",
                 "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"\xC3\xBC\xC3\x9F\"}}") +
    BedrockEvent("contentBlockStop", R"({"contentBlockIndex":0})") +
    BedrockEvent(
        "contentBlockStart",
        R"({"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tooluse_1","name":"get_weather"}}})") +
    BedrockEvent("contentBlockDelta",
                 R"({"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"city\":"}}})") +
    BedrockEvent("contentBlockDelta",
                 R"({"contentBlockIndex":1,"delta":{"toolUse":{"input":"\"Paris\"}"}}})") +
    BedrockEvent("contentBlockStop", R"({"contentBlockIndex":1})") +
    BedrockEvent("messageStop", R"({"stopReason":"tool_use","p":"abc"})") +
    BedrockEvent("metadata", R"({"usage":{"inputTokens":9,"outputTokens":3,"totalTokens":12}})");

std::vector<std::string> Types(EventStreamDecoder& decoder, std::string_view bytes) {
  std::vector<std::string> out;
  for (const SseEventView& event : decoder.Feed(bytes).events) out.emplace_back(event.type);
  return out;
}

TEST(EventStreamDecoderTest, EveryMessageWhateverTheSplit) {
  for (std::size_t cut = 0; cut <= kStream.size(); ++cut) {
    SCOPED_TRACE(cut);
    EventStreamDecoder decoder;
    std::vector<std::string> types = Types(decoder, std::string_view(kStream).substr(0, cut));
    for (std::string& type : Types(decoder, std::string_view(kStream).substr(cut))) {
      types.push_back(std::move(type));
    }
    ASSERT_EQ(types.size(), 10u);
    EXPECT_EQ(types.front(), "messageStart");
    EXPECT_EQ(types.back(), "metadata");
    EXPECT_EQ(decoder.Finish(), 0u);
  }
}

TEST(EventStreamDecoderTest, ByteByByte) {
  EventStreamDecoder decoder;
  std::size_t events = 0;
  for (char c : kStream) events += decoder.Feed(std::string_view(&c, 1)).events.size();
  EXPECT_EQ(events, 10u);
}

TEST(EventStreamDecoderTest, ExceptionsAndErrorsAreNamedByTheirPrefix) {
  EventStreamDecoder decoder;
  const std::string error = EventStreamMessage(
      {{":message-type", "error"}, {":error-code", "InternalFailure"}, {":error-message", "boom"}},
      "");
  const SseFeedResult fed = decoder.Feed(Exception("throttlingException", "slow") + error);
  ASSERT_EQ(fed.events.size(), 2u);
  EXPECT_EQ(fed.events[0].type, "exception:throttlingException");
  EXPECT_EQ(fed.events[0].data, R"({"message":"slow"})");
  EXPECT_EQ(fed.events[1].type, "error:InternalFailure");
  EXPECT_EQ(fed.events[1].data, "boom");
}

TEST(EventStreamDecoderTest, HeadersOfEveryTypeAreSkipped) {
  // A byte (2), a short (3), an integer (4), a long (5), bytes (6), a timestamp (8), a UUID (9)
  // and the booleans (0, 1) before the string headers that matter.
  std::string block;
  const auto header = [&](std::string_view name, char type, std::string_view value) {
    block.push_back(static_cast<char>(name.size()));
    block.append(name);
    block.push_back(type);
    block.append(value);
  };
  header("t", 0, "");
  header("f", 1, "");
  header("b", 2, std::string(1, '\x7f'));
  header("s", 3, std::string(2, '\x01'));
  header("i", 4, std::string(4, '\x02'));
  header("l", 5, std::string(8, '\x03'));
  header("y", 6, std::string("\x00\x03xyz", 5));
  header("d", 8, std::string(8, '\x04'));
  header("u", 9, std::string(16, '\x05'));
  header(":event-type", 7, std::string("\x00\x0cmessageStart", 14));
  header(":message-type", 7,
         std::string("\x00\x05"
                     "event",
                     7));
  std::string message;
  const auto u32 = [&](std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) message.push_back(static_cast<char>(v >> s));
  };
  const std::string payload = R"({"role":"assistant"})";
  u32(static_cast<std::uint32_t>(16 + block.size() + payload.size()));
  u32(static_cast<std::uint32_t>(block.size()));
  u32(hashing::Crc32(message));
  message += block + payload;
  u32(hashing::Crc32(message));
  EventStreamDecoder decoder;
  EXPECT_EQ(Types(decoder, message), std::vector<std::string>{"messageStart"});
}

TEST(EventStreamDecoderTest, BrokenFramingIsAnErrorThatStays) {
  std::string bad_prelude = BedrockEvent("messageStart", "{}");
  bad_prelude[9] ^= 1;
  std::string bad_message = BedrockEvent("messageStart", "{}");
  bad_message[bad_message.size() - 6] ^= 1;  // a payload byte
  std::string untyped = EventStreamMessage({{":content-type", "application/json"}}, "{}");
  for (const std::string& broken : {bad_prelude, bad_message, untyped}) {
    EventStreamDecoder decoder;
    const SseFeedResult fed = decoder.Feed(BedrockEvent("messageStart", "{}") + broken);
    EXPECT_EQ(fed.events.size(), 1u);  // the good message before it
    ASSERT_TRUE(fed.error);
    EXPECT_TRUE(decoder.Feed(BedrockEvent("messageStart", "{}")).error);
  }
}

TEST(EventStreamDecoderTest, AnImpossibleOrHugeLengthIsRefusedBeforeBuffering) {
  std::string prelude;
  const auto u32 = [&](std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) prelude.push_back(static_cast<char>(v >> s));
  };
  u32(1u << 30);
  u32(0);
  u32(hashing::Crc32(prelude));
  EventStreamDecoder decoder(1 << 20);
  const SseFeedResult fed = decoder.Feed(prelude);
  ASSERT_TRUE(fed.error);
  EXPECT_NE(fed.error->message.find("more than"), std::string::npos) << fed.error->message;
}

TEST(EventStreamDecoderTest, AnUnfinishedMessageIsDiscardedAndCounted) {
  EventStreamDecoder decoder;
  const std::string message = BedrockEvent("messageStart", "{}");
  EXPECT_TRUE(Types(decoder, std::string_view(message).substr(0, 20)).empty());
  EXPECT_EQ(decoder.Finish(), 20u);
}

AttemptOutcome Decode(std::string_view body, bool stream = true) {
  BodyDecoder decoder(Dialect::kBedrockConverse, stream);
  decoder.Feed(body);
  return decoder.End();
}

TEST(BedrockDecodeTest, AWholeStreamCommitsItsTextAndToolCall) {
  const AttemptOutcome outcome = Decode(kStream);
  const auto* done = std::get_if<Completed>(&outcome);
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->text, "Gr\xC3\xBC\xC3\xBC\xC3\x9F");
  ASSERT_EQ(done->tool_calls.size(), 1u);
  EXPECT_EQ(done->tool_calls[0].id, "tooluse_1");
  EXPECT_EQ(done->tool_calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(done->finish_reason, "tool_use");
  EXPECT_EQ(done->terminal, TerminalMarker::kMessageStopEvent);
}

TEST(BedrockDecodeTest, WithoutMessageStopTheStreamWasCut) {
  const AttemptOutcome outcome =
      Decode(BedrockEvent("messageStart", R"({"role":"assistant"})") +
             BedrockEvent("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"Hi"}})"));
  const auto* failure = std::get_if<Failure>(&outcome);
  ASSERT_NE(failure, nullptr);
  EXPECT_EQ(failure->code, FailureCode::kStreamTruncated);
}

TEST(BedrockDecodeTest, AnExceptionMessageIsTheStreamsError) {
  const AttemptOutcome outcome =
      Decode(BedrockEvent("messageStart", R"({"role":"assistant"})") +
             Exception("serviceUnavailableException",
                       "Too many connections, please wait before trying again."));
  const auto* failure = std::get_if<Failure>(&outcome);
  ASSERT_NE(failure, nullptr);
  EXPECT_EQ(failure->code, FailureCode::kOverloaded);
  EXPECT_TRUE(failure->retryable);
}

TEST(BedrockDecodeTest, ConverseBodyAndWrongShapes) {
  const AttemptOutcome body = Decode(
      R"({"output":{"message":{"role":"assistant","content":[{"text":"Hello"},)"
      R"({"toolUse":{"toolUseId":"t","name":"f","input":{"a":1}}}]}},"stopReason":"tool_use",)"
      R"("usage":{"inputTokens":3,"outputTokens":2,"totalTokens":5}})",
      false);
  const auto* done = std::get_if<Completed>(&body);
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->text, "Hello");
  ASSERT_EQ(done->tool_calls.size(), 1u);
  EXPECT_EQ(done->tool_calls[0].arguments, R"({"a":1})");
  const AttemptOutcome wrong = Decode(
      BedrockEvent("contentBlockDelta", R"({"contentBlockIndex":0,"delta":"not-an-object"})"));
  ASSERT_TRUE(std::holds_alternative<Failure>(wrong));
  EXPECT_EQ(std::get<Failure>(wrong).code, FailureCode::kMalformedResponse);
  // Unknown events are skipped, as the AWS SDKs skip union members they do not know.
  const AttemptOutcome unknown = Decode(BedrockEvent("futureEvent", "{}") + kStream);
  EXPECT_TRUE(std::holds_alternative<Completed>(unknown));
}

ClassifiedResponse ClassifyAws(int status, std::string_view type, std::string_view message) {
  HttpHeaders headers;
  headers.Append("x-amzn-ErrorType",
                 std::string(type) + ":http://internal.amazon.com/coral/com.amazon.bedrock/");
  headers.Append("x-amzn-RequestId", "4c2e6a0b-1d7e-4b5a-9c3f-0e8d7a6b5c4d");
  const std::string body = "{\"message\":\"" + std::string(message) + "\"}";
  return ClassifyHttpError({status, headers, body, Dialect::kBedrockConverse},
                           std::chrono::system_clock::time_point{});
}

TEST(BedrockClassifyTest, TheStatusDecidesAndTheTypeOrWordsRefine) {
  const ClassifiedResponse throttled = ClassifyAws(
      429, "ThrottlingException", "Too many requests, please wait before trying again.");
  EXPECT_EQ(throttled.failure.code, FailureCode::kRateLimit);
  EXPECT_EQ(throttled.failure.request_id, "4c2e6a0b-1d7e-4b5a-9c3f-0e8d7a6b5c4d");
  EXPECT_EQ(ClassifyAws(429, "ServiceQuotaExceededException", "daily tokens").failure.code,
            FailureCode::kQuota);
  EXPECT_EQ(ClassifyAws(503, "ServiceUnavailableException",
                        "Too many connections, please wait before trying again.")
                .failure.code,
            FailureCode::kOverloaded);
  EXPECT_EQ(
      ClassifyAws(503, "ServiceUnavailableException", "Bedrock is unable to process your request.")
          .failure.code,
      FailureCode::kUnavailable);
  EXPECT_EQ(ClassifyAws(400, "ValidationException", "Input is too long for requested model.")
                .failure.code,
            FailureCode::kContextWindowExceeded);
  EXPECT_EQ(ClassifyAws(400, "ValidationException", "Malformed input request").failure.code,
            FailureCode::kInvalidRequest);
  // The type in the body's __type when the header is missing (as some proxies drop it).
  HttpHeaders none;
  EXPECT_EQ(
      ClassifyHttpError(
          {429, none,
           R"({"__type":"com.amazon.coral.service#ServiceQuotaExceededException","message":"x"})",
           Dialect::kBedrockConverse},
          std::chrono::system_clock::time_point{})
          .failure.code,
      FailureCode::kQuota);
}

TEST(BedrockClassifyTest, StreamExceptionsInEitherCase) {
  EXPECT_EQ(ClassifyStreamError(Dialect::kBedrockConverse, "throttlingException", "", "slow")->code,
            FailureCode::kRateLimit);
  EXPECT_EQ(ClassifyStreamError(Dialect::kBedrockConverse, "ThrottlingException", "", "slow")->code,
            FailureCode::kRateLimit);
  EXPECT_EQ(
      ClassifyStreamError(Dialect::kBedrockConverse, "modelStreamErrorException", "", "x")->code,
      FailureCode::kServer);
  EXPECT_EQ(ClassifyStreamError(Dialect::kBedrockConverse, "validationException", "",
                                "Input is too long for requested model.")
                ->code,
            FailureCode::kContextWindowExceeded);
  EXPECT_FALSE(ClassifyStreamError(Dialect::kBedrockConverse, "madeUpException", "", "x"));
}

}  // namespace
}  // namespace faultline::ref
