// The Gemini writer: the paths it serves, chunk shapes, thoughts, function calls, the finish
// chunk as the stream's end, google.rpc.Status errors with their QuotaFailure and RetryInfo.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_provider/tests/dialect_test_support.h"
#include "fake_provider/wire/dialect.h"

namespace faultline::provider {
namespace {

using dialect_testing::FixedNow;
using dialect_testing::json;
using dialect_testing::ParseData;
using dialect_testing::Spec;
using dialect_testing::TextContent;
using scenario::ErrorKind;
using Target = DialectWriter::TargetKind;

const DialectWriter& Gemini() { return WriterFor(scenario::Dialect::kGemini); }
ResponseIds Ids() { return Gemini().MakeIds(42, 1, FixedNow(), ""); }

TEST(GeminiTargetTest, TheModelAndTheStreamAreInThePath) {
  const DialectWriter& writer = Gemini();
  EXPECT_EQ(writer.ReadTarget("/v1beta/models/gemini-2.5-flash:streamGenerateContent", "alt=sse"),
            Target::kStream);
  EXPECT_EQ(
      writer.ReadTarget("/v1beta/models/gemini-2.5-pro:streamGenerateContent", "key=abc&alt=sse"),
      Target::kStream);
  EXPECT_EQ(writer.ReadTarget("/v1beta/models/gemini-2.5-flash:generateContent", ""),
            Target::kJson);
  // Without alt=sse the API streams a JSON array, which faultline does not serve.
  EXPECT_EQ(writer.ReadTarget("/v1beta/models/gemini-2.5-flash:streamGenerateContent", ""),
            Target::kNotServed);
  EXPECT_EQ(writer.ReadTarget("/v1beta/models/:generateContent", ""), Target::kNotServed);
  EXPECT_EQ(writer.ReadTarget("/v1beta/models/a/b:generateContent", ""), Target::kNotServed);
  EXPECT_EQ(writer.ReadTarget("/v1beta/models/gemini-2.5-flash:countTokens", ""),
            Target::kNotServed);
  EXPECT_EQ(writer.ReadTarget("/v1/chat/completions", ""), Target::kNotServed);
  // The other dialects keep their one path, the body's stream flag deciding.
  EXPECT_EQ(WriterFor(scenario::Dialect::kOpenAiChat).ReadTarget("/v1/chat/completions", ""),
            Target::kBodyDecides);
}

TEST(GeminiStreamTest, TextChunksThenTheFinishChunkAsTerminator) {
  const StreamEvents stream = Gemini().Stream(TextContent("Hello, world"), Ids(), {12, 3});
  const std::vector<json> chunks = ParseData(stream);
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(stream.terminator, 3u);
  EXPECT_EQ(stream.first_output, 0u);
  std::string text;
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(stream.events[i].name, "");
    const json& candidate = chunks[i]["candidates"][0];
    EXPECT_FALSE(candidate.contains("finishReason"));
    EXPECT_EQ(candidate["content"]["role"], "model");
    text += candidate["content"]["parts"][0]["text"].get<std::string>();
    EXPECT_EQ(chunks[i]["usageMetadata"]["promptTokenCount"], 12);
    EXPECT_EQ(chunks[i]["modelVersion"], "gemini-2.5-flash");
    EXPECT_EQ(chunks[i]["responseId"], Ids().response_id);
  }
  EXPECT_EQ(text, "Hello, world");
  const json& last = chunks[3];
  EXPECT_EQ(last["candidates"][0]["finishReason"], "STOP");
  EXPECT_EQ(last["usageMetadata"]["candidatesTokenCount"], 3);
  EXPECT_EQ(last["usageMetadata"]["totalTokenCount"], 15);
}

TEST(GeminiStreamTest, ThoughtsFirstAndAFunctionCallWholeInOnePart) {
  scenario::Content content = TextContent("Ok.");
  content.reasoning = "Think.";
  content.tool_call = scenario::ToolCallSpec{};
  const StreamEvents stream = Gemini().Stream(content, Ids(), {1, 1});
  const std::vector<json> chunks = ParseData(stream);
  ASSERT_EQ(chunks.size(), 5u);  // two thought chunks, one text, one call, the finish
  EXPECT_EQ(chunks[0]["candidates"][0]["content"]["parts"][0]["thought"], true);
  EXPECT_EQ(stream.first_output, 2u);
  EXPECT_EQ(chunks[2]["candidates"][0]["content"]["parts"][0]["text"], "Ok.");
  const json& call = chunks[3]["candidates"][0]["content"]["parts"][0]["functionCall"];
  EXPECT_EQ(call["name"], "get_weather");
  EXPECT_EQ(call["args"], json::parse(R"({"city":"Paris"})"));
  EXPECT_EQ(stream.terminator, 4u);
}

TEST(GeminiBodyTest, OneResponseWithEveryPart) {
  scenario::Content content = TextContent("Hello");
  content.finish_reason = "MAX_TOKENS";
  const Body body = Gemini().Json(content, Ids(), {5, 1});
  EXPECT_EQ(body.content_type, "application/json; charset=UTF-8");
  const json parsed = json::parse(body.bytes);
  EXPECT_EQ(parsed["candidates"][0]["content"]["parts"][0]["text"], "Hello");
  EXPECT_EQ(parsed["candidates"][0]["finishReason"], "MAX_TOKENS");
}

TEST(GeminiErrorTest, GoogleRpcStatusWithQuotaFailureAndRetryInfo) {
  scenario::ErrorSpec rate = Spec(ErrorKind::kRateLimit);
  rate.retry_delay = "37s";
  const json error = json::parse(Gemini().Error(rate, 429).bytes)["error"];
  EXPECT_EQ(error["code"], 429);
  EXPECT_EQ(error["status"], "RESOURCE_EXHAUSTED");
  ASSERT_EQ(error["details"].size(), 2u);
  EXPECT_EQ(error["details"][0]["@type"], "type.googleapis.com/google.rpc.QuotaFailure");
  EXPECT_THAT(error["details"][0]["violations"][0]["quotaId"].get<std::string>(),
              ::testing::HasSubstr("PerMinute"));
  EXPECT_EQ(error["details"][1]["@type"], "type.googleapis.com/google.rpc.RetryInfo");
  EXPECT_EQ(error["details"][1]["retryDelay"], "37s");

  // A daily quota: another window, no RetryInfo unless the scenario gives one.
  const json quota = json::parse(Gemini().Error(Spec(ErrorKind::kQuota), 429).bytes)["error"];
  ASSERT_EQ(quota["details"].size(), 1u);
  EXPECT_THAT(quota["details"][0]["violations"][0]["quotaId"].get<std::string>(),
              ::testing::HasSubstr("PerDay"));
  EXPECT_THAT(quota["message"].get<std::string>(),
              ::testing::HasSubstr("exceeded your current quota"));

  const json overloaded =
      json::parse(Gemini().Error(Spec(ErrorKind::kOverloaded), 503).bytes)["error"];
  EXPECT_EQ(overloaded["status"], "UNAVAILABLE");
  EXPECT_THAT(overloaded["message"].get<std::string>(), ::testing::HasSubstr("overloaded"));
  EXPECT_FALSE(overloaded.contains("details"));

  const json context =
      json::parse(Gemini().Error(Spec(ErrorKind::kContextWindow), 400).bytes)["error"];
  EXPECT_EQ(context["status"], "INVALID_ARGUMENT");
  EXPECT_THAT(context["message"].get<std::string>(),
              ::testing::HasSubstr("exceeds the maximum number of tokens allowed"));
  EXPECT_EQ(Gemini().Error(Spec(ErrorKind::kBadGateway), 502).content_type.substr(0, 10),
            "text/plain");
}

TEST(GeminiErrorTest, InStreamErrorIsTheSameStatusOnADataLine) {
  const SseEvent event = Gemini().StreamError(Spec(ErrorKind::kOverloaded),
                                              scenario::EventFault::Shape::kDefault, Ids());
  EXPECT_EQ(event.name, "");
  const json error = json::parse(event.data)["error"];
  EXPECT_EQ(error["code"], 503);
  EXPECT_EQ(error["status"], "UNAVAILABLE");
}

TEST(GeminiHeadersTest, NoRateLimitHeaders) {
  std::vector<scenario::Header> headers;
  Gemini().AppendRateLimitHeaders(scenario::RateLimitHeaders{}, FixedNow(), headers);
  EXPECT_TRUE(headers.empty());
}

}  // namespace
}  // namespace faultline::provider
