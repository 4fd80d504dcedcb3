// The OpenAI Responses writer: event order and shapes, items, sequence numbers and their faults,
// usage, the three in-stream error shapes.
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
using scenario::EventFault;
using ::testing::ElementsAre;

const DialectWriter& Responses() { return WriterFor(scenario::Dialect::kOpenAiResponses); }
ResponseIds Ids() { return Responses().MakeIds(42, 1, FixedNow(), ""); }

std::vector<std::string> Names(const StreamEvents& stream) {
  std::vector<std::string> names;
  for (const SseEvent& event : stream.events) names.push_back(event.name);
  return names;
}

std::vector<int> SequenceNumbers(const std::vector<json>& events) {
  std::vector<int> numbers;
  for (const json& event : events) numbers.push_back(event["sequence_number"]);
  return numbers;
}

std::string Concat(const std::vector<json>& events, const std::string& type) {
  std::string text;
  for (const json& event : events) {
    if (event["type"] == type) text += event["delta"].get<std::string>();
  }
  return text;
}

EventFault Fault(EventFault::Kind kind, int after_event) {
  EventFault fault;
  fault.kind = kind;
  fault.after_event = after_event;
  fault.error = Spec(ErrorKind::kServer);
  return fault;
}

TEST(ResponsesIdsTest, FixedLengthsAndSharedSuffix) {
  for (std::uint64_t seed : {0ULL, 3ULL, ~0ULL}) {
    for (int attempt : {1, 2, 5}) {
      const ResponseIds ids = Responses().MakeIds(seed, attempt, FixedNow() + attempt * 1s, "");
      ASSERT_TRUE(
          dialect_testing::IdShape(ids.response_id, "resp_", 48, dialect_testing::IsLowerHex));
      ASSERT_TRUE(dialect_testing::IdShape(ids.item_id, "msg_", 48, dialect_testing::IsLowerHex));
      EXPECT_EQ(ids.response_id.substr(ids.response_id.size() - 16),
                ids.item_id.substr(ids.item_id.size() - 16));
      ASSERT_EQ(ids.request_id.size(), 4u + 32u);
      EXPECT_EQ(std::to_string(ids.created).size(), 10u);
    }
  }
  EXPECT_EQ(Ids().response_id, Ids().response_id);
  EXPECT_NE(Ids().item_id, Responses().MakeIds(42, 2, FixedNow(), "").item_id);
}

TEST(ResponsesStreamTest, TextStreamInTheRealOrder) {
  const ResponseIds ids = Ids();
  const StreamEvents stream = Responses().Stream(TextContent("Hello, world"), ids, {9, 3});
  EXPECT_THAT(Names(stream),
              ElementsAre("response.created", "response.in_progress", "response.output_item.added",
                          "response.content_part.added", "response.output_text.delta",
                          "response.output_text.delta", "response.output_text.delta",
                          "response.output_text.done", "response.content_part.done",
                          "response.output_item.done", "response.completed"));
  EXPECT_EQ(stream.terminator, 10u);
  const std::vector<json> events = ParseData(stream);
  for (std::size_t i = 0; i < events.size(); ++i) {
    ASSERT_FALSE(events[i].is_discarded()) << stream.events[i].data;
    EXPECT_EQ(events[i]["type"], stream.events[i].name);
    EXPECT_EQ(events[i]["sequence_number"], static_cast<int>(i));
  }
  const json& created = events[0]["response"];
  EXPECT_EQ(created["id"], ids.response_id);
  EXPECT_EQ(created["object"], "response");
  EXPECT_EQ(created["created_at"], dialect_testing::kFixedNowSeconds);
  EXPECT_EQ(created["status"], "in_progress");
  EXPECT_EQ(created["output"], json::array());
  EXPECT_TRUE(created["usage"].is_null());
  EXPECT_EQ(events[2]["item"], json::parse(R"({"id":")" + ids.item_id + R"(","type":"message",
      "status":"in_progress","content":[],"role":"assistant"})"));
  EXPECT_EQ(events[3]["part"],
            json::parse(R"({"type":"output_text","annotations":[],"logprobs":[],"text":""})"));
  EXPECT_EQ(events[4], json::parse(R"({"type":"response.output_text.delta","item_id":")" +
                                   ids.item_id + R"(","output_index":0,"content_index":0,
      "delta":"Hell","logprobs":[],"sequence_number":4})"));
  EXPECT_EQ(Concat(events, "response.output_text.delta"), "Hello, world");
  EXPECT_EQ(events[7]["text"], "Hello, world");
  EXPECT_EQ(events[9]["item"]["status"], "completed");
  EXPECT_EQ(events[9]["item"]["content"][0]["text"], "Hello, world");
  const json& completed = events[10]["response"];
  EXPECT_EQ(completed["status"], "completed");
  EXPECT_EQ(completed["output"], json::array({events[9]["item"]}));
  EXPECT_EQ(completed["usage"], json::parse(R"({"input_tokens":9,"input_tokens_details":{
      "cached_tokens":0},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":0},
      "total_tokens":12})"));
}

TEST(ResponsesStreamTest, Utf8TextSplitsByCodePoints) {
  const std::vector<json> events = ParseData(
      Responses().Stream(TextContent(std::string(dialect_testing::kUtf8Text), 2), Ids(), {1, 1}));
  for (const json& event : events) {
    if (event["type"] != "response.output_text.delta") continue;
    const std::string piece = event["delta"];
    EXPECT_TRUE(dialect_testing::IsWholeUtf8(piece));
    EXPECT_LE(dialect_testing::CodePoints(piece), 2u);
  }
  EXPECT_EQ(Concat(events, "response.output_text.delta"), dialect_testing::kUtf8Text);
}

TEST(ResponsesStreamTest, ReasoningMessageAndFunctionCallItems) {
  scenario::Content content = TextContent("Checking.", 4);
  content.reasoning = "Need the weather tool.";
  content.tool_call = scenario::ToolCallSpec{"get_weather", R"({"city":"Paris"})", 5};
  const ResponseIds ids = Ids();
  const StreamEvents stream = Responses().Stream(content, ids, {10, 20});
  const std::vector<json> events = ParseData(stream);
  const std::string suffix = ids.item_id.substr(4);
  std::vector<json> added;
  for (const json& event : events) {
    if (event["type"] == "response.output_item.added") added.push_back(event);
  }
  ASSERT_EQ(added.size(), 3u);
  EXPECT_EQ(added[0]["output_index"], 0);
  EXPECT_EQ(added[0]["item"],
            json::parse(R"({"id":"rs_)" + suffix + R"(","type":"reasoning","summary":[]})"));
  EXPECT_EQ(added[1]["output_index"], 1);
  EXPECT_EQ(added[1]["item"]["id"], ids.item_id);
  EXPECT_EQ(added[2]["output_index"], 2);
  EXPECT_EQ(added[2]["item"], json::parse(R"({"id":"fc_)" + suffix + R"(","type":"function_call",
      "status":"in_progress","arguments":"","call_id":"call_)" +
                                          suffix + R"(","name":"get_weather"})"));
  EXPECT_EQ(Concat(events, "response.reasoning_summary_text.delta"), "Need the weather tool.");
  EXPECT_EQ(Concat(events, "response.output_text.delta"), "Checking.");
  EXPECT_EQ(Concat(events, "response.function_call_arguments.delta"), R"({"city":"Paris"})");
  const auto done = std::ranges::find_if(events, [](const json& event) {
    return event["type"] == "response.function_call_arguments.done";
  });
  ASSERT_NE(done, events.end());
  EXPECT_EQ((*done)["arguments"], R"({"city":"Paris"})");
  EXPECT_EQ((*done)["name"], "get_weather");
  EXPECT_EQ((*done)["item_id"], "fc_" + suffix);
  const json& completed = events.back()["response"];
  ASSERT_EQ(completed["output"].size(), 3u);
  EXPECT_EQ(completed["output"][2]["arguments"], R"({"city":"Paris"})");
  EXPECT_EQ(completed["output"][2]["status"], "completed");
  EXPECT_EQ(completed["usage"]["output_tokens_details"]["reasoning_tokens"], 6);
  EXPECT_EQ(stream.terminator, events.size() - 1);
  const std::vector<int> numbers = SequenceNumbers(events);
  for (std::size_t i = 0; i < numbers.size(); ++i) EXPECT_EQ(numbers[i], static_cast<int>(i));
}

TEST(ResponsesStreamTest, SequenceGapSkipsOneAtItsPosition) {
  scenario::Content content = TextContent("Hello, world");
  content.faults = {Fault(EventFault::Kind::kSequenceGap, 5),
                    Fault(EventFault::Kind::kStall, 2)};  // not a numbering fault
  const StreamEvents stream = Responses().Stream(content, Ids(), {1, 1});
  const std::vector<int> numbers = SequenceNumbers(ParseData(stream));
  ASSERT_EQ(numbers.size(), 11u);
  EXPECT_THAT(numbers, ElementsAre(0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11));
}

TEST(ResponsesStreamTest, ProviderErrorGetsTheNumberKeptFreeForIt) {
  scenario::Content content = TextContent("Hello, world");
  content.faults = {Fault(EventFault::Kind::kSequenceGap, 2),
                    Fault(EventFault::Kind::kProviderError, 6),
                    Fault(EventFault::Kind::kProviderError, 6)};
  content.faults[2].shape = EventFault::Shape::kFlat;
  const ResponseIds ids = Ids();
  const StreamEvents stream = Responses().Stream(content, ids, {1, 1});
  const std::vector<int> numbers = SequenceNumbers(ParseData(stream));
  EXPECT_THAT(numbers, ElementsAre(0, 1, 3, 4, 5, 6, 9, 10, 11, 12, 13));
  // Injected after events[0..5] (numbers up to 6), before events[6] (9): 7 then 8.
  const json first = json::parse(Responses().StreamErrorFor(content, 1, ids).data);
  const json second = json::parse(Responses().StreamErrorFor(content, 2, ids).data);
  EXPECT_EQ(first["type"], "response.failed");
  EXPECT_EQ(first["sequence_number"], 7);
  EXPECT_EQ(second["type"], "error");
  EXPECT_EQ(second["sequence_number"], 8);
}

TEST(ResponsesStreamTest, UnusualFinishEndsIncomplete) {
  scenario::Content content = TextContent("cut sh");
  content.finish_reason = "max_output_tokens";
  const StreamEvents stream = Responses().Stream(content, Ids(), {1, 1});
  EXPECT_EQ(stream.events[stream.terminator].name, "response.incomplete");
  const json response = json::parse(stream.events[stream.terminator].data)["response"];
  EXPECT_EQ(response["status"], "incomplete");
  EXPECT_EQ(response["incomplete_details"], json::parse(R"({"reason":"max_output_tokens"})"));
  content.finish_reason = "stop";
  EXPECT_EQ(Responses().Stream(content, Ids(), {1, 1}).events.back().name, "response.completed");
}

TEST(ResponsesStreamTest, EmptyCompletionHasNoItemsAndSameInputsSameBytes) {
  const StreamEvents empty = Responses().Stream(TextContent(""), Ids(), {1, 0});
  EXPECT_THAT(Names(empty),
              ElementsAre("response.created", "response.in_progress", "response.completed"));
  scenario::Content content = TextContent(std::string(dialect_testing::kUtf8Text), 3);
  content.reasoning = "r";
  content.tool_call = scenario::ToolCallSpec{};
  content.faults = {Fault(EventFault::Kind::kSequenceGap, 4)};
  EXPECT_EQ(Responses().Stream(content, Ids(), {2, 3}).events,
            Responses().Stream(content, Ids(), {2, 3}).events);
}

TEST(ResponsesJsonTest, ResponseObject) {
  scenario::Content content = TextContent("Hi");
  content.tool_call = scenario::ToolCallSpec{};
  const ResponseIds ids = Ids();
  const Body body = Responses().Json(content, ids, {4, 5});
  EXPECT_EQ(body.content_type, "application/json");
  const json response = json::parse(body.bytes);
  EXPECT_EQ(response["id"], ids.response_id);
  EXPECT_EQ(response["object"], "response");
  EXPECT_EQ(response["status"], "completed");
  ASSERT_EQ(response["output"].size(), 2u);
  EXPECT_EQ(response["output"][0]["content"][0]["text"], "Hi");
  EXPECT_EQ(response["output"][1]["type"], "function_call");
  EXPECT_EQ(response["usage"]["total_tokens"], 9);
}

TEST(ResponsesErrorTest, HttpErrorsUseTheOpenAiEnvelopeAndResponsesWording) {
  const json context =
      json::parse(Responses().Error(Spec(ErrorKind::kContextWindow), 400).bytes)["error"];
  EXPECT_EQ(
      context,
      json::parse(R"({"message":"Your input exceeds the context window of this model. )"
                  R"(Please adjust your input and try again.","type":"invalid_request_error",)"
                  R"("param":"input","code":"context_length_exceeded"})"));
  const json openai = json::parse(
      Responses()
          .Error(Spec(ErrorKind::kContextWindow, scenario::ContextWording::kOpenAi), 400)
          .bytes)["error"];
  EXPECT_THAT(openai["message"].get<std::string>(),
              ::testing::StartsWith("This model's maximum context length is 128000 tokens."));
  const json invalid =
      json::parse(Responses().Error(Spec(ErrorKind::kInvalidRequest), 400).bytes)["error"];
  EXPECT_EQ(invalid["param"], "input");
  EXPECT_EQ(Responses().Error(Spec(ErrorKind::kBadGateway), 502).content_type, "text/plain");
  // Every other kind reads exactly as in Chat Completions.
  const DialectWriter& chat = WriterFor(scenario::Dialect::kOpenAiChat);
  for (ErrorKind kind : dialect_testing::AllErrorKinds()) {
    if (kind == ErrorKind::kContextWindow || kind == ErrorKind::kInvalidRequest ||
        kind == ErrorKind::kUnprocessable) {
      continue;
    }
    const Body body = Responses().Error(Spec(kind), 400);
    EXPECT_EQ(body.content_type, chat.Error(Spec(kind), 400).content_type);
    EXPECT_EQ(body.bytes, chat.Error(Spec(kind), 400).bytes) << static_cast<int>(kind);
  }
}

TEST(ResponsesErrorTest, InStreamErrorShapes) {
  const ResponseIds ids = Ids();
  scenario::ErrorSpec limit = Spec(ErrorKind::kRateLimit);
  const SseEvent failed = Responses().StreamError(limit, EventFault::Shape::kDefault, ids);
  EXPECT_EQ(failed.name, "response.failed");
  const json failed_data = json::parse(failed.data);
  EXPECT_EQ(failed_data["type"], "response.failed");
  EXPECT_EQ(failed_data["response"]["id"], ids.response_id);
  EXPECT_EQ(failed_data["response"]["status"], "failed");
  EXPECT_EQ(failed_data["response"]["error"]["code"], "rate_limit_exceeded");
  EXPECT_THAT(failed_data["response"]["error"]["message"].get<std::string>(),
              ::testing::StartsWith("Rate limit reached for"));
  EXPECT_EQ(Responses().StreamError(limit, EventFault::Shape::kResponseFailed, ids), failed);

  const SseEvent flat =
      Responses().StreamError(Spec(ErrorKind::kServer), EventFault::Shape::kFlat, ids);
  EXPECT_EQ(flat.name, "error");
  EXPECT_EQ(json::parse(flat.data),
            json::parse(R"({"type":"error","code":"server_error","message":"The server had an )"
                        R"(error while processing your request. Sorry about that!","param":null,)"
                        R"("sequence_number":0})"));

  scenario::ErrorSpec context = Spec(ErrorKind::kContextWindow);
  const SseEvent nested = Responses().StreamError(context, EventFault::Shape::kNested, ids);
  EXPECT_EQ(nested.name, "error");
  EXPECT_EQ(json::parse(nested.data),
            json::parse(R"({"type":"error","error":{"type":"invalid_request_error",)"
                        R"("code":"context_length_exceeded","message":"Your input exceeds the )"
                        R"(context window of this model. Please adjust your input and try )"
                        R"(again.","param":"input"},"sequence_number":0})"));
}

TEST(ResponsesMiscTest, PingWrongShapeAndRateLimitHeaders) {
  EXPECT_EQ(Responses().Ping(), (SseEvent{"", ""}));
  const SseEvent wrong = Responses().WrongShape();
  const json data = json::parse(wrong.data);
  EXPECT_EQ(data["type"], wrong.name);
  EXPECT_FALSE(data["delta"].is_string());
  EXPECT_FALSE(data.contains("sequence_number"));
  std::vector<scenario::Header> headers;
  Responses().AppendRateLimitHeaders({}, FixedNow(), headers);
  ASSERT_EQ(headers.size(), 6u);
  EXPECT_EQ(headers[4], (scenario::Header{"x-ratelimit-reset-requests", "1s"}));
  EXPECT_EQ(headers[5], (scenario::Header{"x-ratelimit-reset-tokens", "6s"}));
}

}  // namespace
}  // namespace faultline::provider
