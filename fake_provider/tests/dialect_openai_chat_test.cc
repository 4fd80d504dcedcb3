// The OpenAI Chat Completions writer: chunk shapes, deltas, tool calls, usage, errors, headers.
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

const DialectWriter& Chat() { return WriterFor(scenario::Dialect::kOpenAiChat); }
ResponseIds Ids() { return Chat().MakeIds(42, 1, FixedNow(), ""); }

// The content of every chunk's only choice delta, concatenated for `field`.
std::string Concat(const std::vector<json>& chunks, const std::string& field) {
  std::string text;
  for (const json& chunk : chunks) {
    if (!chunk.contains("choices") || chunk["choices"].empty()) continue;
    const json& delta = chunk["choices"][0]["delta"];
    if (delta.contains(field) && delta[field].is_string()) text += delta[field];
  }
  return text;
}

TEST(OpenAiChatIdsTest, FixedLengthsAcrossSeedsAttemptsAndTimes) {
  for (std::uint64_t seed : {0ULL, 1ULL, 42ULL, ~0ULL}) {
    for (int attempt : {1, 2, 17}) {
      const ResponseIds ids = Chat().MakeIds(seed, attempt, FixedNow() + attempt * 1s, "");
      using dialect_testing::IdShape;
      EXPECT_TRUE(IdShape(ids.response_id, "chatcmpl-", 29, dialect_testing::IsBase62));
      EXPECT_TRUE(IdShape(ids.item_id, "call_", 24, dialect_testing::IsBase62));
      EXPECT_TRUE(IdShape(ids.request_id, "req_", 32, dialect_testing::IsLowerHex));
      EXPECT_EQ(std::to_string(ids.created).size(), 10u);
    }
  }
}

TEST(OpenAiChatIdsTest, DeterministicPerAttemptAndModelDefaulted) {
  const ResponseIds a = Chat().MakeIds(42, 1, FixedNow(), "");
  const ResponseIds b = Chat().MakeIds(42, 1, FixedNow(), "");
  const ResponseIds next = Chat().MakeIds(42, 2, FixedNow(), "gpt-4.1");
  EXPECT_EQ(a.response_id, b.response_id);
  EXPECT_EQ(a.request_id, b.request_id);
  EXPECT_NE(a.response_id, next.response_id);
  EXPECT_NE(a.item_id, next.item_id);
  EXPECT_EQ(a.created, dialect_testing::kFixedNowSeconds);
  EXPECT_EQ(a.model, "gpt-4o-mini");
  EXPECT_EQ(next.model, "gpt-4.1");
}

TEST(OpenAiChatStreamTest, RoleContentFinishUsageThenDone) {
  const ResponseIds ids = Ids();
  const StreamEvents stream = Chat().Stream(TextContent("Hello, world"), ids, {12, 3});
  const std::vector<json> chunks = ParseData(stream);
  // role, 3 content chunks, finish, usage, [DONE]
  ASSERT_EQ(stream.events.size(), 7u);
  EXPECT_EQ(stream.terminator, 6u);
  EXPECT_EQ(stream.events[6].data, "[DONE]");
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(stream.events[i].name, "");
    const json& chunk = chunks[i];
    ASSERT_FALSE(chunk.is_discarded()) << stream.events[i].data;
    EXPECT_EQ(chunk["id"], ids.response_id);
    EXPECT_EQ(chunk["object"], "chat.completion.chunk");
    EXPECT_EQ(chunk["created"], ids.created);
    EXPECT_EQ(chunk["model"], "gpt-4o-mini");
    EXPECT_THAT(chunk["system_fingerprint"].get<std::string>(), ::testing::StartsWith("fp_"));
  }
  EXPECT_EQ(chunks[0]["choices"], json::parse(R"([{"index":0,"delta":{"role":"assistant",
      "content":"","refusal":null},"logprobs":null,"finish_reason":null}])"));
  EXPECT_EQ(chunks[1]["choices"][0]["delta"], json::parse(R"({"content":"Hell"})"));
  EXPECT_EQ(Concat(chunks, "content"), "Hello, world");
  EXPECT_EQ(chunks[4]["choices"], json::parse(R"([{"index":0,"delta":{},"logprobs":null,
      "finish_reason":"stop"}])"));
  EXPECT_EQ(chunks[5]["choices"], json::array());
  EXPECT_EQ(chunks[5]["usage"],
            json::parse(R"({"prompt_tokens":12,"completion_tokens":3,"total_tokens":15})"));
}

TEST(OpenAiChatStreamTest, OneLineCompactJsonWithTheRealKeyOrder) {
  const StreamEvents stream = Chat().Stream(TextContent("Hi"), Ids(), {1, 1});
  for (const SseEvent& event : stream.events) {
    EXPECT_EQ(event.data.find('\n'), std::string::npos);
    EXPECT_EQ(event.data.find(": "), std::string::npos);
  }
  EXPECT_THAT(stream.events[0].data,
              ::testing::StartsWith(R"({"id":")" + Ids().response_id +
                                    R"(","object":"chat.completion.chunk","created":1749841880,)"
                                    R"("model":"gpt-4o-mini","system_fingerprint":"fp_)"));
}

TEST(OpenAiChatStreamTest, Utf8TextSplitsByCodePoints) {
  for (int size : {1, 2, 3, 5}) {
    const StreamEvents stream =
        Chat().Stream(TextContent(std::string(dialect_testing::kUtf8Text), size), Ids(), {1, 1});
    const std::vector<json> chunks = ParseData(stream);
    std::size_t pieces = 0;
    for (std::size_t i = 1; i < stream.terminator; ++i) {
      const json& choices = chunks[i]["choices"];
      if (choices.empty() || !choices[0]["delta"].contains("content")) continue;
      const std::string piece = choices[0]["delta"]["content"];
      EXPECT_TRUE(dialect_testing::IsWholeUtf8(piece));
      EXPECT_LE(dialect_testing::CodePoints(piece), static_cast<std::size_t>(size));
      ++pieces;
    }
    const std::size_t code_points = dialect_testing::CodePoints(dialect_testing::kUtf8Text);
    EXPECT_EQ(pieces, (code_points + size - 1) / size);
    EXPECT_EQ(Concat(chunks, "content"), dialect_testing::kUtf8Text);
  }
}

TEST(OpenAiChatStreamTest, ReasoningContentComesBeforeContent) {
  scenario::Content content = TextContent("Answer.", 3);
  content.reasoning = "Think first.";
  const std::vector<json> chunks = ParseData(Chat().Stream(content, Ids(), {1, 1}));
  EXPECT_EQ(Concat(chunks, "reasoning_content"), "Think first.");
  EXPECT_EQ(Concat(chunks, "content"), "Answer.");
  EXPECT_EQ(chunks[1]["choices"][0]["delta"],
            json::parse(R"({"content":null,"reasoning_content":"Thi"})"));
  // All 4 reasoning chunks (indexes 1-4) precede the first content chunk (index 5).
  EXPECT_EQ(chunks[5]["choices"][0]["delta"], json::parse(R"({"content":"Ans"})"));
}

TEST(OpenAiChatStreamTest, ToolCallArgumentsReassembleExactly) {
  scenario::Content content = TextContent("");
  content.tool_call =
      scenario::ToolCallSpec{"get_weather", "{\"city\":\"Z\xc3\xbcrich\",\"unit\":\"c\"}", 11};
  const ResponseIds ids = Ids();
  const StreamEvents stream = Chat().Stream(content, ids, {5, 9});
  const std::vector<json> chunks = ParseData(stream);
  EXPECT_EQ(chunks[1]["choices"][0]["delta"]["tool_calls"][0],
            json::parse(R"({"index":0,"id":")" + ids.item_id +
                        R"(","type":"function","function":{"name":"get_weather",
                        "arguments":""}})"));
  std::string arguments;
  std::vector<std::string> fragments;
  for (std::size_t i = 2; i + 3 < chunks.size(); ++i) {
    const json& call = chunks[i]["choices"][0]["delta"]["tool_calls"][0];
    EXPECT_EQ(call["index"], 0);
    EXPECT_FALSE(call.contains("id"));
    const std::string piece = call["function"]["arguments"];
    EXPECT_TRUE(dialect_testing::IsWholeUtf8(piece));
    arguments += piece;
    fragments.push_back(piece);
  }
  EXPECT_EQ(arguments, content.tool_call->arguments);
  // 29 bytes in 11-byte fragments; the first cut would fall inside the ü and moves past it.
  ASSERT_EQ(fragments.size(), 3u);
  EXPECT_EQ(fragments[0], "{\"city\":\"Z\xc3\xbc");
  EXPECT_EQ(Concat(chunks, "content"), "");
  EXPECT_EQ(chunks[chunks.size() - 3]["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(stream.terminator, stream.events.size() - 1);
}

TEST(OpenAiChatStreamTest, FinishReasonOverride) {
  scenario::Content content = TextContent("cut");
  content.finish_reason = "length";
  const std::vector<json> chunks = ParseData(Chat().Stream(content, Ids(), {1, 1}));
  EXPECT_EQ(chunks[2]["choices"][0]["finish_reason"], "length");
}

TEST(OpenAiChatStreamTest, EmptyCompletionHasNoContentChunks) {
  const StreamEvents stream = Chat().Stream(TextContent(""), Ids(), {1, 0});
  ASSERT_EQ(stream.events.size(), 4u);  // role, finish, usage, [DONE]
  EXPECT_EQ(stream.terminator, 3u);
}

TEST(OpenAiChatStreamTest, SameInputsSameBytes) {
  scenario::Content content = TextContent(std::string(dialect_testing::kUtf8Text), 2);
  content.reasoning = "r";
  content.tool_call = scenario::ToolCallSpec{};
  const StreamEvents a = Chat().Stream(content, Ids(), {3, 4});
  const StreamEvents b = Chat().Stream(content, Ids(), {3, 4});
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(Chat().Json(content, Ids(), {3, 4}).bytes, Chat().Json(content, Ids(), {3, 4}).bytes);
}

TEST(OpenAiChatJsonTest, CompletionObject) {
  const ResponseIds ids = Ids();
  const Body body = Chat().Json(TextContent("Hello, world"), ids, {12, 3});
  EXPECT_EQ(body.content_type, "application/json");
  const json completion = json::parse(body.bytes);
  EXPECT_EQ(completion["id"], ids.response_id);
  EXPECT_EQ(completion["object"], "chat.completion");
  EXPECT_EQ(completion["created"], dialect_testing::kFixedNowSeconds);
  EXPECT_EQ(completion["choices"], json::parse(R"([{"index":0,"message":{"role":"assistant",
      "content":"Hello, world","refusal":null,"annotations":[]},"logprobs":null,
      "finish_reason":"stop"}])"));
  EXPECT_EQ(completion["usage"]["total_tokens"], 15);
}

TEST(OpenAiChatJsonTest, ToolCallOnlyHasNullContent) {
  scenario::Content content = TextContent("");
  content.tool_call = scenario::ToolCallSpec{};
  content.reasoning = "hmm";
  const ResponseIds ids = Ids();
  const json message = json::parse(Chat().Json(content, ids, {1, 1}).bytes)["choices"][0];
  EXPECT_EQ(message["finish_reason"], "tool_calls");
  EXPECT_TRUE(message["message"]["content"].is_null());
  EXPECT_EQ(message["message"]["reasoning_content"], "hmm");
  EXPECT_EQ(message["message"]["tool_calls"],
            json::parse(R"([{"id":")" + ids.item_id + R"(","type":"function","function":{
                "name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}])"));
}

struct ExpectedError {
  ErrorKind kind;
  const char* type;
  json code;
};

TEST(OpenAiChatErrorTest, EveryKindHasTheProvidersTypeAndCode) {
  const std::vector<ExpectedError> expected = {
      {ErrorKind::kInvalidRequest, "invalid_request_error", "empty_array"},
      {ErrorKind::kContextWindow, "invalid_request_error", "context_length_exceeded"},
      {ErrorKind::kAuth, "invalid_request_error", "invalid_api_key"},
      {ErrorKind::kPermission, "request_forbidden", "unsupported_country_region_territory"},
      {ErrorKind::kNotFound, "invalid_request_error", "model_not_found"},
      {ErrorKind::kRequestTimeout, "invalid_request_error", "timeout"},
      {ErrorKind::kConflict, "invalid_request_error", "conflict"},
      {ErrorKind::kTooLarge, "invalid_request_error", "request_too_large"},
      {ErrorKind::kUnprocessable, "invalid_request_error", nullptr},
      {ErrorKind::kRateLimit, "requests", "rate_limit_exceeded"},
      {ErrorKind::kQuota, "insufficient_quota", "insufficient_quota"},
      {ErrorKind::kServer, "server_error", nullptr},
      {ErrorKind::kUnavailable, "server_error", nullptr},
      {ErrorKind::kGatewayTimeout, "cf_gateway_timeout", 504},
      {ErrorKind::kOverloaded, "server_error", nullptr},
  };
  for (const ExpectedError& want : expected) {
    const Body body = Chat().Error(Spec(want.kind), 400);
    EXPECT_EQ(body.content_type, "application/json");
    const json error = json::parse(body.bytes);
    ASSERT_EQ(error.size(), 1u);
    EXPECT_EQ(error["error"]["type"], want.type) << body.bytes;
    EXPECT_EQ(error["error"]["code"], want.code) << body.bytes;
    EXPECT_TRUE(error["error"]["message"].is_string());
    EXPECT_TRUE(error["error"].contains("param"));
    EXPECT_EQ(Chat().Error(Spec(want.kind), 500).bytes, body.bytes);  // the status picks no words
  }
}

TEST(OpenAiChatErrorTest, RealWordings) {
  const json limit = json::parse(Chat().Error(Spec(ErrorKind::kRateLimit), 429).bytes)["error"];
  EXPECT_THAT(limit["message"].get<std::string>(),
              ::testing::StartsWith("Rate limit reached for gpt-4o-mini in organization "));
  EXPECT_THAT(limit["message"].get<std::string>(),
              ::testing::HasSubstr("on requests per min (RPM): Limit 60, Used 60, Requested 1. "
                                   "Please try again in 1s."));
  const json quota = json::parse(Chat().Error(Spec(ErrorKind::kQuota), 429).bytes)["error"];
  EXPECT_THAT(quota["message"].get<std::string>(),
              ::testing::StartsWith("You exceeded your current quota, please check your plan and "
                                    "billing details."));
  const json auth = json::parse(Chat().Error(Spec(ErrorKind::kAuth), 401).bytes)["error"];
  EXPECT_THAT(auth["message"].get<std::string>(),
              ::testing::StartsWith("Incorrect API key provided: "));
}

TEST(OpenAiChatErrorTest, ContextWindowInEveryWording) {
  using W = scenario::ContextWording;
  auto error = [](W wording) {
    return json::parse(Chat().Error(Spec(ErrorKind::kContextWindow, wording), 400).bytes)["error"];
  };
  const std::string openai =
      "This model's maximum context length is 128000 tokens. However, your messages resulted in "
      "131245 tokens. Please reduce the length of the messages.";
  EXPECT_EQ(error(W::kDialect)["message"], openai);
  EXPECT_EQ(error(W::kDialect)["param"], "messages");
  EXPECT_EQ(error(W::kOpenAi)["message"], openai);
  const json deepseek = error(W::kDeepSeek);
  EXPECT_EQ(deepseek["message"],
            "This model's maximum context length is 131072 tokens. However, you requested 140316 "
            "tokens (139292 in the messages, 1024 in the completion). Please reduce the length of "
            "the messages or completion.");
  EXPECT_EQ(deepseek["code"], "invalid_request_error");
  EXPECT_TRUE(deepseek["param"].is_null());
  EXPECT_EQ(error(W::kAnthropicPromptTooLong)["message"],
            "prompt is too long: 204817 tokens > 200000 maximum");
  EXPECT_EQ(error(W::kAnthropicExceedContextLimit)["message"],
            "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000, "
            "decrease input length or `max_tokens` and try again");
  EXPECT_EQ(error(W::kAnthropicPromptTooLong)["code"], "context_length_exceeded");
}

TEST(OpenAiChatErrorTest, MessageOverrideAndBadGatewayText) {
  scenario::ErrorSpec custom = Spec(ErrorKind::kServer);
  custom.message = "custom words";
  EXPECT_EQ(json::parse(Chat().Error(custom, 500).bytes)["error"]["message"], "custom words");
  const Body gateway = Chat().Error(Spec(ErrorKind::kBadGateway), 502);
  EXPECT_EQ(gateway.content_type, "text/plain");
  EXPECT_THAT(gateway.bytes, ::testing::HasSubstr("502 Bad Gateway"));
  EXPECT_TRUE(json::parse(gateway.bytes, nullptr, false).is_discarded());
  EXPECT_EQ(Chat().ErrorWithIds(Spec(ErrorKind::kAuth), 401, Ids()).bytes,
            Chat().Error(Spec(ErrorKind::kAuth), 401).bytes);
}

TEST(OpenAiChatErrorTest, InStreamEnvelope) {
  const SseEvent event =
      Chat().StreamError(Spec(ErrorKind::kServer), scenario::EventFault::Shape::kDefault, Ids());
  EXPECT_EQ(event.name, "");
  EXPECT_EQ(json::parse(event.data),
            json::parse(R"({"error":{"message":"The server had an error while processing your )"
                        R"(request. Sorry about that!","type":"server_error","param":null,)"
                        R"("code":null}})"));
}

TEST(OpenAiChatMiscTest, WrongShapePingAndRateLimitHeaders) {
  const json wrong = json::parse(Chat().WrongShape().data);
  EXPECT_FALSE(wrong["choices"].is_array());
  EXPECT_EQ(Chat().Ping(), (SseEvent{"", ""}));
  scenario::RateLimitHeaders limits;
  limits.requests_reset = 59600ms;
  limits.tokens_reset = 6min;
  limits.tokens_remaining = 1234;
  std::vector<scenario::Header> headers;
  Chat().AppendRateLimitHeaders(limits, FixedNow(), headers);
  EXPECT_EQ(headers, (std::vector<scenario::Header>{{"x-ratelimit-limit-requests", "60"},
                                                    {"x-ratelimit-limit-tokens", "100000"},
                                                    {"x-ratelimit-remaining-requests", "0"},
                                                    {"x-ratelimit-remaining-tokens", "1234"},
                                                    {"x-ratelimit-reset-requests", "59.6s"},
                                                    {"x-ratelimit-reset-tokens", "6m0s"}}));
}

}  // namespace
}  // namespace faultline::provider
