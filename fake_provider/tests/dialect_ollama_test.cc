// The Ollama writer: its one path streaming by default, NDJSON lines, thinking, whole tool calls,
// the done line as the stream's end, bare-string errors, created_at per attempt.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_provider/provider_core.h"
#include "fake_provider/tests/dialect_test_support.h"
#include "fake_provider/wire/dialect.h"
#include "fake_provider/wire/sse_framing.h"

namespace faultline::provider {
namespace {

using namespace std::chrono_literals;
using dialect_testing::FixedNow;
using dialect_testing::json;
using dialect_testing::ParseData;
using dialect_testing::Spec;
using dialect_testing::TextContent;
using scenario::ErrorKind;
using Target = DialectWriter::TargetKind;

const DialectWriter& Ollama() { return WriterFor(scenario::Dialect::kOllama); }
ResponseIds Ids() { return Ollama().MakeIds(42, 1, FixedNow(), ""); }

TEST(OllamaTargetTest, OneEndpointThatStreamsUnlessTheBodySaysFalse) {
  EXPECT_EQ(Ollama().ReadTarget("/api/chat", ""), Target::kBodyDecidesStreamByDefault);
  EXPECT_EQ(Ollama().ReadTarget("/api/generate", ""), Target::kNotServed);
  EXPECT_EQ(Ollama().stream_content_type(), "application/x-ndjson");
  EXPECT_EQ(StreamFlag(R"({"model":"m","stream":false})"), false);
  EXPECT_EQ(StreamFlag(R"({"stream": true})"), true);
  EXPECT_EQ(StreamFlag(R"({"model":"m"})"), std::nullopt);
  EXPECT_EQ(StreamFlag(R"({"options":{"stream":false}})"), std::nullopt);  // not top level
  EXPECT_EQ(StreamFlag(R"({"stream":null})"), std::nullopt);
}

TEST(OllamaStreamTest, ContentLinesThenTheDoneLineAsTerminator) {
  const StreamEvents stream = Ollama().Stream(TextContent("Hello, world"), Ids(), {12, 3});
  const std::vector<json> lines = ParseData(stream);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(stream.terminator, 3u);
  std::string text;
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(lines[i]["done"], false);
    EXPECT_EQ(lines[i]["message"]["role"], "assistant");
    text += lines[i]["message"]["content"].get<std::string>();
  }
  EXPECT_EQ(text, "Hello, world");
  EXPECT_EQ(lines[3]["done"], true);
  EXPECT_EQ(lines[3]["done_reason"], "stop");
  EXPECT_EQ(lines[3]["prompt_eval_count"], 12);
  EXPECT_EQ(lines[3]["eval_count"], 3);
  // created_at: RFC 3339 with nanoseconds, of the attempt's own time.
  EXPECT_THAT(lines[0]["created_at"].get<std::string>(),
              ::testing::MatchesRegex("20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-9:]{8}\\.[0-9]{9}Z"));
  EXPECT_NE(Ollama().MakeIds(42, 1, FixedNow() + 1s, "").response_id, Ids().response_id);
}

TEST(OllamaStreamTest, ThinkingAndAWholeToolCall) {
  scenario::Content content = TextContent("Ok.");
  content.reasoning = "Hmm.";
  content.tool_call = scenario::ToolCallSpec{};
  const StreamEvents stream = Ollama().Stream(content, Ids(), {1, 1});
  const std::vector<json> lines = ParseData(stream);
  ASSERT_EQ(lines.size(), 4u);  // thinking, text, the call, the done line
  EXPECT_EQ(lines[0]["message"]["thinking"], "Hmm.");
  EXPECT_EQ(stream.first_output, 1u);
  const json& call = lines[2]["message"]["tool_calls"][0]["function"];
  EXPECT_EQ(call["name"], "get_weather");
  EXPECT_EQ(call["arguments"], json::parse(R"({"city":"Paris"})"));
}

TEST(OllamaFramingTest, OneLinePerEventWithoutSseFields) {
  SseFramer framer(scenario::Framing{}, scenario::StreamFraming::kNdjson);
  EXPECT_EQ(framer.Event({"ignored", R"({"done":false})"}), "{\"done\":false}\n");
}

TEST(OllamaErrorTest, BareStringsInTheBodyAndInTheStream) {
  const json busy = json::parse(Ollama().Error(Spec(ErrorKind::kUnavailable), 503).bytes);
  EXPECT_THAT(busy["error"].get<std::string>(), ::testing::HasSubstr("server busy"));
  const json missing = json::parse(Ollama().Error(Spec(ErrorKind::kNotFound), 404).bytes);
  EXPECT_THAT(missing["error"].get<std::string>(), ::testing::HasSubstr("try pulling it first"));
  const json context = json::parse(Ollama().Error(Spec(ErrorKind::kContextWindow), 400).bytes);
  EXPECT_THAT(context["error"].get<std::string>(),
              ::testing::HasSubstr("exceeds the context length"));
  const SseEvent line =
      Ollama().StreamError(Spec(ErrorKind::kServer), scenario::EventFault::Shape::kDefault, Ids());
  EXPECT_TRUE(json::parse(line.data)["error"].is_string());
  std::vector<scenario::Header> headers;
  Ollama().AppendRateLimitHeaders(scenario::RateLimitHeaders{}, FixedNow(), headers);
  EXPECT_TRUE(headers.empty());
}

}  // namespace
}  // namespace faultline::provider
