// The Anthropic Messages writer: event order and shapes, blocks, usage, errors, headers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_provider/tests/dialect_test_support.h"
#include "fake_provider/wire/dialect.h"

namespace faultline::provider {
namespace {

using namespace std::chrono_literals;
using dialect_testing::FixedNow;
using dialect_testing::json;
using dialect_testing::ParseData;
using dialect_testing::Spec;
using dialect_testing::TextContent;
using scenario::ErrorKind;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

const DialectWriter& Messages() { return WriterFor(scenario::Dialect::kAnthropicMessages); }
ResponseIds Ids() { return Messages().MakeIds(42, 1, FixedNow(), ""); }

std::vector<std::string> Names(const StreamEvents& stream) {
  std::vector<std::string> names;
  for (const SseEvent& event : stream.events) names.push_back(event.name);
  return names;
}

// The concatenated `field` of every content_block_delta of block `index` with `delta_type`.
std::string Concat(const std::vector<json>& events, int index, const std::string& delta_type,
                   const std::string& field) {
  std::string text;
  for (const json& event : events) {
    if (event["type"] != "content_block_delta" || event["index"] != index) continue;
    if (event["delta"]["type"] == delta_type) text += event["delta"][field].get<std::string>();
  }
  return text;
}

TEST(AnthropicIdsTest, FixedLengthsAcrossSeedsAttemptsAndTimes) {
  for (std::uint64_t seed : {0ULL, 7ULL, ~0ULL}) {
    for (int attempt : {1, 2, 9}) {
      const ResponseIds ids = Messages().MakeIds(seed, attempt, FixedNow() + attempt * 1ms, "");
      using dialect_testing::IdShape;
      using dialect_testing::IsBase62;
      EXPECT_TRUE(IdShape(ids.response_id, "msg_01", 22, IsBase62));
      EXPECT_TRUE(IdShape(ids.item_id, "toolu_01", 22, IsBase62));
      EXPECT_TRUE(IdShape(ids.request_id, "req_011C", 20, IsBase62));
      EXPECT_EQ(std::to_string(ids.created).size(), 10u);
    }
  }
  EXPECT_EQ(Ids().response_id, Ids().response_id);
  EXPECT_NE(Ids().response_id, Messages().MakeIds(42, 2, FixedNow(), "").response_id);
  EXPECT_EQ(Ids().model, "claude-sonnet-4-5");
  EXPECT_EQ(Messages().MakeIds(1, 1, FixedNow(), "claude-opus-4-1").model, "claude-opus-4-1");
}

TEST(AnthropicStreamTest, TextStreamInTheRealOrder) {
  const ResponseIds ids = Ids();
  const StreamEvents stream = Messages().Stream(TextContent("Hello, world"), ids, {25, 4});
  EXPECT_THAT(Names(stream),
              ElementsAre("message_start", "content_block_start", "ping", "content_block_delta",
                          "content_block_delta", "content_block_delta", "content_block_stop",
                          "message_delta", "message_stop"));
  EXPECT_EQ(stream.terminator, 8u);
  const std::vector<json> events = ParseData(stream);
  for (std::size_t i = 0; i < events.size(); ++i) {
    ASSERT_FALSE(events[i].is_discarded()) << stream.events[i].data;
    EXPECT_EQ(events[i]["type"], stream.events[i].name);  // data repeats the event name
  }
  EXPECT_EQ(events[0], json::parse(R"({"type":"message_start","message":{"id":")" +
                                   ids.response_id + R"(","type":"message","role":"assistant",
      "model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,
      "usage":{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,
      "output_tokens":1}}})"));
  EXPECT_EQ(events[1], json::parse(R"({"type":"content_block_start","index":0,
      "content_block":{"type":"text","text":""}})"));
  EXPECT_EQ(events[2], json::parse(R"({"type":"ping"})"));
  EXPECT_EQ(events[3], json::parse(R"({"type":"content_block_delta","index":0,
      "delta":{"type":"text_delta","text":"Hell"}})"));
  EXPECT_EQ(Concat(events, 0, "text_delta", "text"), "Hello, world");
  EXPECT_EQ(events[6], json::parse(R"({"type":"content_block_stop","index":0})"));
  EXPECT_EQ(events[7], json::parse(R"({"type":"message_delta","delta":{"stop_reason":"end_turn",
      "stop_sequence":null},"usage":{"output_tokens":4}})"));
  EXPECT_EQ(events[8], json::parse(R"({"type":"message_stop"})"));
}

TEST(AnthropicStreamTest, Utf8TextSplitsByCodePoints) {
  const StreamEvents stream =
      Messages().Stream(TextContent(std::string(dialect_testing::kUtf8Text), 1), Ids(), {1, 1});
  const std::vector<json> events = ParseData(stream);
  std::size_t deltas = 0;
  for (const json& event : events) {
    if (event["type"] != "content_block_delta") continue;
    const std::string piece = event["delta"]["text"];
    EXPECT_EQ(dialect_testing::CodePoints(piece), 1u);
    EXPECT_TRUE(dialect_testing::IsWholeUtf8(piece));
    ++deltas;
  }
  EXPECT_EQ(deltas, dialect_testing::CodePoints(dialect_testing::kUtf8Text));
  EXPECT_EQ(Concat(events, 0, "text_delta", "text"), dialect_testing::kUtf8Text);
}

TEST(AnthropicStreamTest, ThinkingTextAndToolUseBlocks) {
  scenario::Content content = TextContent("Let me check.", 5);
  content.reasoning = "The user wants weather.";
  content.tool_call = scenario::ToolCallSpec{"get_weather", R"({"city":"Paris","days":3})", 6};
  const ResponseIds ids = Ids();
  const StreamEvents stream = Messages().Stream(content, ids, {30, 40});
  const std::vector<json> events = ParseData(stream);
  EXPECT_EQ(stream.events[2].name, "ping");
  EXPECT_EQ(stream.terminator, stream.events.size() - 1);
  std::vector<json> starts;
  for (const json& event : events) {
    if (event["type"] == "content_block_start") starts.push_back(event);
  }
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_EQ(starts[0], json::parse(R"({"type":"content_block_start","index":0,
      "content_block":{"type":"thinking","thinking":"","signature":""}})"));
  EXPECT_EQ(starts[1]["content_block"]["type"], "text");
  EXPECT_EQ(starts[2], json::parse(R"({"type":"content_block_start","index":2,
      "content_block":{"type":"tool_use","id":")" +
                                   ids.item_id + R"(","name":"get_weather","input":{}}})"));
  EXPECT_EQ(Concat(events, 0, "thinking_delta", "thinking"), "The user wants weather.");
  EXPECT_THAT(Concat(events, 0, "signature_delta", "signature"), ::testing::StartsWith("Eq"));
  EXPECT_EQ(Concat(events, 1, "text_delta", "text"), "Let me check.");
  EXPECT_EQ(Concat(events, 2, "input_json_delta", "partial_json"), content.tool_call->arguments);
  // The tool block opens with an empty partial_json, then 6-byte fragments.
  const auto first_tool_delta = std::ranges::find_if(events, [](const json& event) {
    return event["type"] == "content_block_delta" && event["index"] == 2;
  });
  EXPECT_EQ((*first_tool_delta)["delta"]["partial_json"], "");
  EXPECT_EQ((*(first_tool_delta + 1))["delta"]["partial_json"], R"({"city)");
  const json& message_delta = events[events.size() - 2];
  EXPECT_EQ(message_delta["delta"]["stop_reason"], "tool_use");
  EXPECT_EQ(message_delta["usage"]["output_tokens"], 40);
}

TEST(AnthropicStreamTest, BlocksCloseInOrder) {
  scenario::Content content = TextContent("a");
  content.reasoning = "r";
  content.tool_call = scenario::ToolCallSpec{};
  const std::vector<json> events = ParseData(Messages().Stream(content, Ids(), {1, 1}));
  std::vector<int> opened, closed;
  for (const json& event : events) {
    if (event["type"] == "content_block_start") opened.push_back(event["index"]);
    if (event["type"] == "content_block_stop") closed.push_back(event["index"]);
  }
  EXPECT_THAT(opened, ElementsAre(0, 1, 2));
  EXPECT_THAT(closed, ElementsAreArray(opened));
}

TEST(AnthropicStreamTest, EmptyCompletionHasNoBlocksAndPingAfterStart) {
  const StreamEvents stream = Messages().Stream(TextContent(""), Ids(), {5, 0});
  EXPECT_THAT(Names(stream), ElementsAre("message_start", "ping", "message_delta", "message_stop"));
  EXPECT_EQ(stream.terminator, 3u);
}

TEST(AnthropicStreamTest, StopReasonOverrideAndDeterminism) {
  scenario::Content content = TextContent(std::string(dialect_testing::kUtf8Text), 3);
  content.finish_reason = "max_tokens";
  const StreamEvents a = Messages().Stream(content, Ids(), {1, 2});
  EXPECT_EQ(a.events, Messages().Stream(content, Ids(), {1, 2}).events);
  const std::vector<json> events = ParseData(a);
  EXPECT_EQ(events[a.terminator - 1]["delta"]["stop_reason"], "max_tokens");
}

TEST(AnthropicJsonTest, MessageObject) {
  scenario::Content content = TextContent("Hi there");
  content.reasoning = "think";
  content.tool_call = scenario::ToolCallSpec{};
  const ResponseIds ids = Ids();
  const Body body = Messages().Json(content, ids, {11, 22});
  EXPECT_EQ(body.content_type, "application/json");
  const json message = json::parse(body.bytes);
  EXPECT_EQ(message["id"], ids.response_id);
  EXPECT_EQ(message["type"], "message");
  EXPECT_EQ(message["role"], "assistant");
  ASSERT_EQ(message["content"].size(), 3u);
  EXPECT_EQ(message["content"][0]["type"], "thinking");
  EXPECT_EQ(message["content"][0]["thinking"], "think");
  EXPECT_EQ(message["content"][1], json::parse(R"({"type":"text","text":"Hi there"})"));
  EXPECT_EQ(message["content"][2], json::parse(R"({"type":"tool_use","id":")" + ids.item_id +
                                               R"(","name":"get_weather",
      "input":{"city":"Paris"}})"));
  EXPECT_EQ(message["stop_reason"], "tool_use");
  EXPECT_TRUE(message["stop_sequence"].is_null());
  EXPECT_EQ(message["usage"]["input_tokens"], 11);
  EXPECT_EQ(message["usage"]["output_tokens"], 22);
}

TEST(AnthropicJsonTest, ToolArgumentsThatAreNotJsonStayAString) {
  scenario::Content content = TextContent("");
  content.tool_call = scenario::ToolCallSpec{"f", "{\"broken\":", 4};
  const json message = json::parse(Messages().Json(content, Ids(), {1, 1}).bytes);
  EXPECT_EQ(message["content"][0]["input"], "{\"broken\":");
}

TEST(AnthropicErrorTest, EveryKindHasTheProvidersType) {
  const std::vector<std::pair<ErrorKind, std::string>> expected = {
      {ErrorKind::kInvalidRequest, "invalid_request_error"},
      {ErrorKind::kContextWindow, "invalid_request_error"},
      {ErrorKind::kAuth, "authentication_error"},
      {ErrorKind::kPermission, "permission_error"},
      {ErrorKind::kNotFound, "not_found_error"},
      {ErrorKind::kRequestTimeout, "timeout_error"},
      {ErrorKind::kConflict, "invalid_request_error"},
      {ErrorKind::kTooLarge, "request_too_large"},
      {ErrorKind::kUnprocessable, "invalid_request_error"},
      {ErrorKind::kRateLimit, "rate_limit_error"},
      {ErrorKind::kQuota, "invalid_request_error"},
      {ErrorKind::kServer, "api_error"},
      {ErrorKind::kUnavailable, "api_error"},
      {ErrorKind::kGatewayTimeout, "timeout_error"},
      {ErrorKind::kOverloaded, "overloaded_error"},
  };
  for (const auto& [kind, type] : expected) {
    const Body body = Messages().Error(Spec(kind), 400);
    EXPECT_EQ(body.content_type, "application/json");
    const json error = json::parse(body.bytes);
    EXPECT_EQ(error["type"], "error");
    EXPECT_EQ(error["error"]["type"], type) << body.bytes;
    EXPECT_TRUE(error["error"]["message"].is_string());
    EXPECT_FALSE(error.contains("request_id"));
  }
}

TEST(AnthropicErrorTest, RealWordingsAndRequestId) {
  auto message = [](ErrorKind kind) {
    return json::parse(Messages().Error(Spec(kind), 400).bytes)["error"]["message"];
  };
  EXPECT_EQ(message(ErrorKind::kOverloaded), "Overloaded");
  EXPECT_EQ(message(ErrorKind::kQuota),
            "Your credit balance is too low to access the Anthropic API. Please go to Plans & "
            "Billing to upgrade or purchase credits.");
  EXPECT_THAT(message(ErrorKind::kRateLimit).get<std::string>(),
              ::testing::StartsWith("Number of requests has exceeded your per-minute rate limit"));
  const ResponseIds ids = Ids();
  const json with_ids =
      json::parse(Messages().ErrorWithIds(Spec(ErrorKind::kRateLimit), 429, ids).bytes);
  EXPECT_EQ(with_ids["request_id"], ids.request_id);
  EXPECT_EQ(with_ids["error"]["type"], "rate_limit_error");
}

TEST(AnthropicErrorTest, ContextWindowInEveryWording) {
  using W = scenario::ContextWording;
  auto message = [](W wording) {
    return json::parse(
        Messages().Error(Spec(ErrorKind::kContextWindow, wording), 400).bytes)["error"]["message"];
  };
  EXPECT_EQ(message(W::kDialect), "prompt is too long: 204817 tokens > 200000 maximum");
  EXPECT_EQ(message(W::kAnthropicPromptTooLong), message(W::kDialect));
  EXPECT_EQ(message(W::kAnthropicExceedContextLimit),
            "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000, "
            "decrease input length or `max_tokens` and try again");
  EXPECT_THAT(message(W::kOpenAi).get<std::string>(),
              ::testing::StartsWith("This model's maximum context length is 128000 tokens."));
  EXPECT_THAT(message(W::kDeepSeek).get<std::string>(),
              ::testing::HasSubstr("in the messages, 1024 in the completion"));
}

TEST(AnthropicErrorTest, MessageOverrideAndBadGatewayText) {
  scenario::ErrorSpec custom = Spec(ErrorKind::kOverloaded);
  custom.message = "Overloaded, really";
  EXPECT_EQ(json::parse(Messages().Error(custom, 529).bytes)["error"]["message"],
            "Overloaded, really");
  for (const Body& gateway : {Messages().Error(Spec(ErrorKind::kBadGateway), 502),
                              Messages().ErrorWithIds(Spec(ErrorKind::kBadGateway), 502, Ids())}) {
    EXPECT_EQ(gateway.content_type, "text/plain");
    EXPECT_THAT(gateway.bytes, ::testing::HasSubstr("<title>502 Bad Gateway</title>"));
  }
}

TEST(AnthropicErrorTest, InStreamErrorEvent) {
  const SseEvent event = Messages().StreamError(Spec(ErrorKind::kOverloaded),
                                                scenario::EventFault::Shape::kDefault, Ids());
  EXPECT_EQ(event.name, "error");
  EXPECT_EQ(json::parse(event.data), json::parse(R"({"type":"error","error":{
      "type":"overloaded_error","message":"Overloaded"}})"));
  scenario::Content content;
  scenario::EventFault fault;
  fault.kind = scenario::EventFault::Kind::kProviderError;
  fault.error = Spec(ErrorKind::kOverloaded);
  content.faults = {fault};
  EXPECT_EQ(Messages().StreamErrorFor(content, 0, Ids()), event);
}

TEST(AnthropicMiscTest, PingWrongShapeAndRateLimitHeaders) {
  EXPECT_EQ(Messages().Ping(), (SseEvent{"ping", R"({"type":"ping"})"}));
  const SseEvent wrong = Messages().WrongShape();
  EXPECT_FALSE(json::parse(wrong.data)["delta"].is_object());
  scenario::RateLimitHeaders limits;
  limits.requests_limit = 50;
  limits.requests_remaining = 0;
  limits.requests_reset = 1500ms;
  limits.tokens_limit = 40000;
  limits.tokens_remaining = 100;
  limits.tokens_reset = 60s;
  std::vector<scenario::Header> headers;
  Messages().AppendRateLimitHeaders(limits, FixedNow(), headers);
  const std::string requests_reset = "2025-06-13T19:11:22Z";  // 20.25 s + 1.5 s, rounded up
  const std::string tokens_reset = "2025-06-13T19:12:21Z";
  EXPECT_EQ(headers, (std::vector<scenario::Header>{
                         {"anthropic-ratelimit-requests-limit", "50"},
                         {"anthropic-ratelimit-requests-remaining", "0"},
                         {"anthropic-ratelimit-requests-reset", requests_reset},
                         {"anthropic-ratelimit-input-tokens-limit", "40000"},
                         {"anthropic-ratelimit-input-tokens-remaining", "100"},
                         {"anthropic-ratelimit-input-tokens-reset", tokens_reset},
                         {"anthropic-ratelimit-output-tokens-limit", "40000"},
                         {"anthropic-ratelimit-output-tokens-remaining", "100"},
                         {"anthropic-ratelimit-output-tokens-reset", tokens_reset},
                         {"anthropic-ratelimit-tokens-limit", "40000"},
                         {"anthropic-ratelimit-tokens-remaining", "100"},
                         {"anthropic-ratelimit-tokens-reset", tokens_reset}}));
}

}  // namespace
}  // namespace faultline::provider
