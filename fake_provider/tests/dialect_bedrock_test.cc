// The Bedrock writer and the event-stream encoder: the model and the method in the path, the
// binary messages with their lengths and checksums, resealed when a template is filled in per
// request, the ConverseStream events with messageStop as the terminator, modelled exceptions over
// HTTP (x-amzn-ErrorType) and inside the stream (exception messages).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fake_provider/tests/dialect_test_support.h"
#include "fake_provider/wire/byte_template.h"
#include "fake_provider/wire/dialect.h"
#include "fake_provider/wire/event_stream_encoder.h"
#include "fake_provider/wire/sse_framing.h"
#include "hashing/crc32.h"

namespace faultline::provider {
namespace {

using dialect_testing::FixedNow;
using dialect_testing::json;
using dialect_testing::Spec;
using dialect_testing::TextContent;
using scenario::ErrorKind;
using Target = DialectWriter::TargetKind;

const DialectWriter& Bedrock() { return WriterFor(scenario::Dialect::kBedrockConverse); }
ResponseIds Ids() { return Bedrock().MakeIds(42, 1, FixedNow(), ""); }

std::uint32_t U32(std::string_view bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i)
    value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

// One message read back by the published rules (checked here, apart from the decoder).
struct Message {
  std::map<std::string, std::string> headers;
  std::string payload;
};

Message Read(std::string_view bytes) {
  Message out;
  EXPECT_GE(bytes.size(), 16u);
  EXPECT_EQ(U32(bytes, 0), bytes.size());
  EXPECT_EQ(U32(bytes, 8), hashing::Crc32(bytes.substr(0, 8)));
  EXPECT_EQ(U32(bytes, bytes.size() - 4), hashing::Crc32(bytes.substr(0, bytes.size() - 4)));
  const std::size_t headers_end = 12 + U32(bytes, 4);
  for (std::size_t at = 12; at < headers_end;) {
    const std::size_t name_length = static_cast<unsigned char>(bytes[at]);
    const std::string name(bytes.substr(at + 1, name_length));
    at += 1 + name_length;
    EXPECT_EQ(bytes[at], 7) << name;  // string
    const std::size_t value_length = static_cast<std::size_t>(
        static_cast<unsigned char>(bytes[at + 1]) << 8 | static_cast<unsigned char>(bytes[at + 2]));
    out.headers[name] = std::string(bytes.substr(at + 3, value_length));
    at += 3 + value_length;
  }
  out.payload = std::string(bytes.substr(headers_end, bytes.size() - 4 - headers_end));
  return out;
}

TEST(EventStreamEncoderTest, AnEventIsOneSealedMessage) {
  const std::string message =
      event_stream::EncodeEvent({"messageStart", R"({"role":"assistant"})"});
  const Message read = Read(message);
  EXPECT_EQ(read.headers, (std::map<std::string, std::string>{{":event-type", "messageStart"},
                                                              {":content-type", "application/json"},
                                                              {":message-type", "event"}}));
  EXPECT_EQ(read.payload, R"({"role":"assistant"})");
}

TEST(EventStreamEncoderTest, AnExceptionNamesItsType) {
  const Message read =
      Read(event_stream::EncodeEvent({"exception:throttlingException", R"({"message":"slow"})"}));
  EXPECT_EQ(read.headers.at(":message-type"), "exception");
  EXPECT_EQ(read.headers.at(":exception-type"), "throttlingException");
  EXPECT_FALSE(read.headers.contains(":event-type"));
}

// A filled-in template is a valid message again, whatever the length of what was filled in.
TEST(EventStreamEncoderTest, ATemplateIsResealedWhenFilledIn) {
  SlotValues placeholders;
  placeholders[static_cast<std::size_t>(Slot::kInputTokens)] = "918273645";
  const std::string message =
      event_stream::EncodeEvent({"metadata", R"({"usage":{"inputTokens":918273645}})"});
  const ByteTemplate sealed = ByteTemplate::SealedMessage(message, placeholders);
  ASSERT_TRUE(sealed.has_holes());
  SlotValues values;
  values[static_cast<std::size_t>(Slot::kInputTokens)] = "7";
  std::string out = "chunk header before it";
  sealed.AppendTo(out, values);
  const std::string_view rendered = std::string_view(out).substr(22);
  EXPECT_EQ(Read(rendered).payload, R"({"usage":{"inputTokens":7}})");
  EXPECT_EQ(sealed.RenderedSize(values), rendered.size());
  // The same bytes unsealed keep the stale checksums: the reseal is what makes them right.
  const std::string stale = ByteTemplate::WithHoles(message, placeholders).Render(values);
  EXPECT_NE(U32(stale, stale.size() - 4),
            hashing::Crc32(std::string_view(stale).substr(0, stale.size() - 4)));
}

TEST(EventStreamEncoderTest, SplitsInsideThePayload) {
  const std::string message =
      event_stream::EncodeEvent({"contentBlockDelta", "{\"delta\":{\"text\":\"Gr\xC3\xBC\"}}"});
  const std::size_t payload = 12 + U32(message, 4);
  const std::size_t utf8 = event_stream::SplitPoint(message, true);
  EXPECT_EQ(static_cast<unsigned char>(message[utf8 - 1]), 0xC3);
  const std::size_t middle = event_stream::SplitPoint(message, false);
  EXPECT_GT(middle, payload);
  EXPECT_LT(middle, message.size() - 4);
  EXPECT_EQ(event_stream::SplitPoint("short", false), 0u);
}

TEST(BedrockTargetTest, TheModelAndTheMethodAreInThePath) {
  EXPECT_EQ(
      Bedrock().ReadTarget("/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream", ""),
      Target::kStream);
  EXPECT_EQ(Bedrock().ReadTarget("/model/m/converse", ""), Target::kJson);
  EXPECT_EQ(Bedrock().ReadTarget("/model//converse", ""), Target::kNotServed);
  EXPECT_EQ(Bedrock().ReadTarget("/model/m/invoke", ""), Target::kNotServed);
  EXPECT_EQ(Bedrock().ReadTarget("/v1/chat/completions", ""), Target::kNotServed);
  EXPECT_EQ(Bedrock().stream_content_type(), "application/vnd.amazon.eventstream");
  EXPECT_EQ(Bedrock().request_id_header(), "x-amzn-requestid");
}

TEST(BedrockStreamTest, EventsInOrderWithMessageStopAsTerminator) {
  scenario::Content content = TextContent("Hello, world", 4);
  content.reasoning = "Hmm";
  content.tool_call = scenario::ToolCallSpec{"get_weather", R"({"city":"Paris"})", 4};
  const StreamEvents stream = Bedrock().Stream(content, Ids(), {9, 3});
  std::vector<std::string> names;
  for (const SseEvent& event : stream.events) names.push_back(event.name);
  EXPECT_THAT(names,
              testing::ElementsAre("messageStart", "contentBlockDelta", "contentBlockStop",
                                   "contentBlockDelta", "contentBlockDelta", "contentBlockDelta",
                                   "contentBlockStop", "contentBlockStart", "contentBlockDelta",
                                   "contentBlockDelta", "contentBlockDelta", "contentBlockDelta",
                                   "contentBlockStop", "messageStop", "metadata"));
  ASSERT_EQ(stream.terminator, 13u);
  EXPECT_EQ(stream.first_output, 3u);
  EXPECT_EQ(json::parse(stream.events[1].data)["delta"]["reasoningContent"]["text"], "Hmm");
  EXPECT_EQ(json::parse(stream.events[3].data)["delta"]["text"], "Hell");
  const json start = json::parse(stream.events[7].data);
  EXPECT_EQ(start["contentBlockIndex"], 2);
  EXPECT_EQ(start["start"]["toolUse"]["toolUseId"], Ids().item_id);
  EXPECT_EQ(json::parse(stream.events[13].data)["stopReason"], "tool_use");
  const json metadata = json::parse(stream.events[14].data);
  EXPECT_EQ(metadata["usage"]["totalTokens"], 12);
  for (const SseEvent& event : stream.events) {
    EXPECT_TRUE(json::parse(event.data).contains("p")) << event.name;  // Bedrock's padding
  }
}

TEST(BedrockBodyTest, ConverseAnswersWithTheWholeMessage) {
  scenario::Content content = TextContent("Hello", 4);
  content.tool_call = scenario::ToolCallSpec{};
  const Body body = Bedrock().Json(content, Ids(), {9, 3});
  const json parsed = json::parse(body.bytes);
  EXPECT_EQ(parsed["output"]["message"]["content"][0]["text"], "Hello");
  EXPECT_EQ(parsed["output"]["message"]["content"][1]["toolUse"]["input"]["city"], "Paris");
  EXPECT_EQ(parsed["stopReason"], "tool_use");
}

TEST(BedrockErrorTest, ModelledExceptionsOverHttpAndInTheStream) {
  const Body throttled = Bedrock().Error(Spec(ErrorKind::kRateLimit), 429);
  ASSERT_EQ(throttled.headers.size(), 1u);
  EXPECT_EQ(throttled.headers[0].name, "x-amzn-ErrorType");
  EXPECT_THAT(throttled.headers[0].value, testing::StartsWith("ThrottlingException:http"));
  EXPECT_EQ(json::parse(throttled.bytes)["message"],
            "Too many requests, please wait before trying again.");
  EXPECT_EQ(json::parse(Bedrock().Error(Spec(ErrorKind::kOverloaded), 503).bytes)["message"],
            "Too many connections, please wait before trying again.");
  EXPECT_TRUE(Bedrock().Error(Spec(ErrorKind::kBadGateway), 502).headers.empty());

  const SseEvent in_stream =
      Bedrock().StreamError(Spec(ErrorKind::kServer), scenario::EventFault::Shape::kDefault, Ids());
  EXPECT_EQ(in_stream.name, "exception:modelStreamErrorException");
  const SseEvent throttling = Bedrock().StreamError(Spec(ErrorKind::kRateLimit),
                                                    scenario::EventFault::Shape::kDefault, Ids());
  EXPECT_EQ(throttling.name, "exception:throttlingException");
}

TEST(BedrockIdsTest, TheRequestIdIsAUuidThatVariesWhole) {
  const std::string id = Ids().request_id;
  ASSERT_EQ(id.size(), 36u);
  EXPECT_EQ(id[8], '-');
  EXPECT_EQ(id[14], '4');
  EXPECT_TRUE(id[0] >= '1' && id[0] <= '9');  // no literal prefix for the byte templates
  EXPECT_NE(Bedrock().MakeIds(42, 2, FixedNow(), "").request_id, id);
}

}  // namespace
}  // namespace faultline::provider
