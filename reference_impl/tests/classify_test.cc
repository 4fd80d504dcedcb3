#include "reference_impl/classify.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace faultline::ref {
namespace {

using std::chrono::milliseconds;
using Headers = std::vector<std::pair<std::string, std::string>>;

HttpHeaders MakeHeaders(const Headers& fields) {
  HttpHeaders headers;
  for (const auto& [name, value] : fields) headers.Append(name, value);
  return headers;
}

const std::chrono::system_clock::time_point kNow =
    std::chrono::sys_days(std::chrono::year(2024) / 11 / 29) + std::chrono::hours(12);

std::string OpenAiBody(std::string_view type, std::string_view code, std::string_view message) {
  return "{\"error\":{\"message\":\"" + std::string(message) + "\",\"type\":\"" +
         std::string(type) + "\",\"param\":null,\"code\":" +
         (code.empty() ? std::string("null") : "\"" + std::string(code) + "\"") + "}}";
}

std::string AnthropicBody(std::string_view type, std::string_view message) {
  return "{\"type\":\"error\",\"error\":{\"type\":\"" + std::string(type) + "\",\"message\":\"" +
         std::string(message) + "\"}}";
}

// A google.rpc.Status body (Gemini), with `details` when given (a JSON array's items).
std::string GoogleBody(int code, std::string_view status, std::string_view message,
                       std::string_view details = "") {
  std::string body = "{\"error\":{\"code\":" + std::to_string(code) + ",\"message\":\"" +
                     std::string(message) + "\",\"status\":\"" + std::string(status) + "\"";
  if (!details.empty()) body += ",\"details\":[" + std::string(details) + "]";
  return body + "}}";
}

constexpr std::string_view kRetryInfo =
    R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"})";

struct Row {
  std::string name;
  int status;
  Dialect dialect;
  std::string body;
  FailureCode code;
  FailureClass failure_class;
  bool retryable;
};

std::vector<Row> Rows() {
  const Dialect chat = Dialect::kOpenAiChat;
  const Dialect anthropic = Dialect::kAnthropicMessages;
  const Dialect responses = Dialect::kOpenAiResponses;
  const Dialect gemini = Dialect::kGemini;
  const std::string kOpenAiContext =
      "This model's maximum context length is 128000 tokens. However, your messages resulted in "
      "131245 tokens. Please reduce the length of the messages.";
  const std::string kDeepSeekContext =
      "This model's maximum context length is 131072 tokens. However, you requested 140316 "
      "tokens (139292 in the messages, 1024 in the completion). Please reduce the length of the "
      "messages or completion.";
  using C = FailureCode;
  using K = FailureClass;
  return {
      {"400_plain", 400, chat,
       OpenAiBody("invalid_request_error", "empty_array", "Invalid 'messages': empty array."),
       C::kInvalidRequest, K::kInvalidRequest, false},
      {"400_openai_context", 400, chat,
       OpenAiBody("invalid_request_error", "context_length_exceeded", kOpenAiContext),
       C::kContextWindowExceeded, K::kContextOverflow, false},
      {"400_openai_context_words_only", 400, chat,
       OpenAiBody("invalid_request_error", "", kOpenAiContext), C::kContextWindowExceeded,
       K::kContextOverflow, false},
      {"400_deepseek_context", 400, chat,
       OpenAiBody("invalid_request_error", "invalid_request_error", kDeepSeekContext),
       C::kContextWindowExceeded, K::kContextOverflow, false},
      {"400_anthropic_prompt_too_long", 400, anthropic,
       AnthropicBody("invalid_request_error", "prompt is too long: 204817 tokens > 200000 maximum"),
       C::kContextWindowExceeded, K::kContextOverflow, false},
      {"400_anthropic_exceed_context_limit", 400, anthropic,
       AnthropicBody("invalid_request_error",
                     "input length and `max_tokens` exceed context limit: 198000 + 8192 > "
                     "200000, decrease input length or `max_tokens` and try again"),
       C::kContextWindowExceeded, K::kContextOverflow, false},
      {"400_responses_context", 400, responses,
       OpenAiBody("invalid_request_error", "context_length_exceeded",
                  "Your input exceeds the context window of this model. Please adjust your input "
                  "and try again."),
       C::kContextWindowExceeded, K::kContextOverflow, false},
      {"400_anthropic_credit_balance", 400, anthropic,
       AnthropicBody("invalid_request_error",
                     "Your credit balance is too low to access the Anthropic API."),
       C::kQuota, K::kQuota, false},
      {"401", 401, chat,
       OpenAiBody("invalid_request_error", "invalid_api_key", "Incorrect API key"), C::kAuth,
       K::kAuth, false},
      {"402_deepseek_balance", 402, chat, "{\"error\":{\"message\":\"Insufficient Balance\"}}",
       C::kQuota, K::kQuota, false},
      {"403", 403, anthropic, AnthropicBody("permission_error", "no permission"), C::kAuth,
       K::kAuth, false},
      {"404", 404, anthropic, AnthropicBody("not_found_error", "not found"), C::kInvalidRequest,
       K::kInvalidRequest, false},
      {"408", 408, chat, OpenAiBody("invalid_request_error", "timeout", "Request timed out."),
       C::kTimeout, K::kTimeout, true},
      {"409", 409, chat, OpenAiBody("invalid_request_error", "conflict", "still in progress"),
       C::kInvalidRequest, K::kInvalidRequest, true},
      {"413", 413, anthropic, AnthropicBody("request_too_large", "Request exceeds the maximum"),
       C::kInvalidRequest, K::kInvalidRequest, false},
      {"422", 422, chat, OpenAiBody("invalid_request_error", "", "could not be processed"),
       C::kInvalidRequest, K::kInvalidRequest, false},
      {"429_openai_rate_limit", 429, chat,
       OpenAiBody("requests", "rate_limit_exceeded", "Rate limit reached. Please try again in 1s."),
       C::kRateLimit, K::kRateLimit, true},
      {"429_anthropic_rate_limit", 429, anthropic,
       AnthropicBody("rate_limit_error", "Number of requests has exceeded your rate limit"),
       C::kRateLimit, K::kRateLimit, true},
      {"429_openai_quota_code", 429, chat,
       OpenAiBody("insufficient_quota", "insufficient_quota",
                  "You exceeded your current quota, please check your plan and billing details."),
       C::kQuota, K::kQuota, false},
      {"429_openai_quota_words_only", 429, responses,
       OpenAiBody("", "", "You exceeded your current quota, please check your plan."), C::kQuota,
       K::kQuota, false},
      {"429_anthropic_credit_balance", 429, anthropic,
       AnthropicBody("invalid_request_error", "Your credit balance is too low to access the API."),
       C::kQuota, K::kQuota, false},
      {"500", 500, chat, OpenAiBody("server_error", "", "The server had an error"), C::kServer,
       K::kProviderUnavailable, true},
      {"502_text_plain", 502, chat, "<html>502 Bad Gateway</html>", C::kServer,
       K::kProviderUnavailable, true},
      {"503", 503, chat,
       OpenAiBody("server_error", "", "The server is overloaded or not ready yet."),
       C::kUnavailable, K::kProviderUnavailable, true},
      {"503_openai_model_overloaded", 503, chat,
       OpenAiBody("server_error", "",
                  "That model is currently overloaded with other requests. You can retry your "
                  "request."),
       C::kOverloaded, K::kProviderOverloaded, true},
      {"504", 504, anthropic, AnthropicBody("timeout_error", "Request timed out"), C::kServer,
       K::kProviderUnavailable, true},
      {"529_anthropic", 529, anthropic, AnthropicBody("overloaded_error", "Overloaded"),
       C::kOverloaded, K::kProviderOverloaded, true},
      {"529_empty_body", 529, chat, "", C::kOverloaded, K::kProviderOverloaded, true},
      {"503_overloaded_error", 503, anthropic, AnthropicBody("overloaded_error", "Overloaded"),
       C::kOverloaded, K::kProviderOverloaded, true},
      {"500_overloaded_error", 500, anthropic, AnthropicBody("overloaded_error", "Overloaded"),
       C::kOverloaded, K::kProviderOverloaded, true},
      {"507_unknown_5xx", 507, chat, "", C::kServer, K::kProviderUnavailable, true},
      {"599_unknown_5xx", 599, chat, "", C::kServer, K::kProviderUnavailable, true},
      {"418_unknown_4xx", 418, chat, "", C::kInvalidRequest, K::kInvalidRequest, false},
      {"451_unknown_4xx", 451, anthropic, "", C::kInvalidRequest, K::kInvalidRequest, false},
      {"302_not_an_error", 302, chat, "", C::kMalformedResponse, K::kProtocol, false},
      {"500_context_words_ignored", 500, chat, OpenAiBody("server_error", "", kOpenAiContext),
       C::kServer, K::kProviderUnavailable, true},
      {"401_quota_words_ignored", 401, chat, OpenAiBody("", "", "You exceeded your current quota"),
       C::kAuth, K::kAuth, false},
      // Gemini: google.rpc.Status bodies, whose `status` name stands for a type.
      {"429_gemini_resource_exhausted", 429, gemini,
       GoogleBody(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).",
                  kRetryInfo),
       C::kRateLimit, K::kRateLimit, true},
      {"429_gemini_free_tier_quota_words_with_retry_info", 429, gemini,
       GoogleBody(429, "RESOURCE_EXHAUSTED",
                  "You exceeded your current quota, please check your plan and billing details.",
                  kRetryInfo),
       C::kRateLimit, K::kRateLimit, true},
      {"429_gemini_daily_quota", 429, gemini,
       GoogleBody(429, "RESOURCE_EXHAUSTED",
                  "You exceeded your current quota, please check your plan and billing details."),
       C::kQuota, K::kQuota, false},
      {"503_gemini_model_overloaded", 503, gemini,
       GoogleBody(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
       C::kOverloaded, K::kProviderOverloaded, true},
      {"503_gemini_unavailable", 503, gemini,
       GoogleBody(503, "UNAVAILABLE", "The service is currently unavailable."), C::kUnavailable,
       K::kProviderUnavailable, true},
      {"400_gemini_context", 400, gemini,
       GoogleBody(400, "INVALID_ARGUMENT",
                  "The input token count (1048577) exceeds the maximum number of tokens allowed "
                  "(1048576)."),
       C::kContextWindowExceeded, K::kContextOverflow, false},
      {"400_gemini_invalid_argument", 400, gemini,
       GoogleBody(400, "INVALID_ARGUMENT", "Request contains an invalid argument."),
       C::kInvalidRequest, K::kInvalidRequest, false},
  };
}

class ClassifyRowTest : public testing::TestWithParam<Row> {};

TEST_P(ClassifyRowTest, MatchesTheTable) {
  const Row& row = GetParam();
  const HttpHeaders no_headers;
  const ClassifiedResponse result =
      ClassifyHttpError({row.status, no_headers, row.body, row.dialect}, kNow);
  const Failure& failure = result.failure;
  EXPECT_EQ(failure.code, row.code) << ToString(failure.code);
  EXPECT_EQ(failure.failure_class, row.failure_class) << ToString(failure.failure_class);
  EXPECT_EQ(failure.retryable, row.retryable);
  EXPECT_EQ(failure.phase, Phase::kResponseHeaders);
  EXPECT_EQ(failure.partial_output, PartialOutput::kNone);
  EXPECT_EQ(failure.status, row.status);
  EXPECT_TRUE(failure.message.starts_with("HTTP " + std::to_string(row.status))) << failure.message;
}

INSTANTIATE_TEST_SUITE_P(ClassifyRows, ClassifyRowTest, testing::ValuesIn(Rows()),
                         [](const testing::TestParamInfo<Row>& info) { return info.param.name; });

ClassifiedResponse Classify(int status, const Headers& fields, std::string_view body = "") {
  const HttpHeaders headers = MakeHeaders(fields);
  return ClassifyHttpError({status, headers, body, Dialect::kOpenAiChat}, kNow);
}

TEST(ClassifyTest, ShouldRetryHeaderOverridesRetryability) {
  EXPECT_FALSE(Classify(500, {{"x-should-retry", "false"}}).failure.retryable);
  EXPECT_FALSE(Classify(529, {{"X-Should-Retry", "FALSE"}}).failure.retryable);
  EXPECT_TRUE(Classify(400, {{"x-should-retry", "true"}}).failure.retryable);
  EXPECT_TRUE(Classify(429, {{"x-should-retry", "maybe"}}).failure.retryable);  // ignored
  EXPECT_FALSE(Classify(400, {{"x-should-retry", ""}}).failure.retryable);      // ignored
  // The class and code stay what the status says.
  EXPECT_EQ(Classify(400, {{"x-should-retry", "true"}}).failure.code, FailureCode::kInvalidRequest);
}

TEST(ClassifyTest, RequestIdFromEitherHeader) {
  EXPECT_EQ(Classify(500, {{"X-Request-Id", "req_abc"}}).failure.request_id, "req_abc");
  EXPECT_EQ(Classify(529, {{"request-id", "req_011CV"}}).failure.request_id, "req_011CV");
  EXPECT_EQ(Classify(500, {{"request-id", "b"}, {"x-request-id", "a"}}).failure.request_id, "a");
  EXPECT_EQ(Classify(500, {{"x-request-id", " "}, {"request-id", "b"}}).failure.request_id, "b");
  EXPECT_EQ(Classify(500, {}).failure.request_id, std::nullopt);
}

TEST(ClassifyTest, RetryHintIsParsedWithItsSource) {
  const ClassifiedResponse header = Classify(429, {{"retry-after", "2"}});
  EXPECT_EQ(header.failure.retry_after, milliseconds(2000));
  ASSERT_TRUE(header.hint);
  EXPECT_EQ(header.hint->source, DelaySource::kRetryAfter);

  const ClassifiedResponse body =
      Classify(429, {}, OpenAiBody("requests", "rate_limit_exceeded", "Please try again in 1.5s."));
  EXPECT_EQ(body.failure.retry_after, milliseconds(1500));
  ASSERT_TRUE(body.hint);
  EXPECT_EQ(body.hint->source, DelaySource::kBody);

  EXPECT_EQ(Classify(500, {}).failure.retry_after, std::nullopt);
  EXPECT_FALSE(Classify(500, {}).hint);
}

TEST(ClassifyTest, GeminiRetryDelayIsABodyHint) {
  const ClassifiedResponse gemini = ClassifyHttpError(
      {429, MakeHeaders({}),
       GoogleBody(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted.", kRetryInfo),
       Dialect::kGemini},
      kNow);
  ASSERT_TRUE(gemini.hint);
  EXPECT_EQ(gemini.hint->source, DelaySource::kBody);
  EXPECT_EQ(gemini.failure.retry_after, milliseconds(37'000));
}

TEST(ClassifyTest, QuotaKeepsItsHintButIsNotRetryable) {
  const ClassifiedResponse quota = Classify(
      429, {{"retry-after", "30"}}, OpenAiBody("insufficient_quota", "insufficient_quota", "x"));
  EXPECT_EQ(quota.failure.code, FailureCode::kQuota);
  EXPECT_FALSE(quota.failure.retryable);
  EXPECT_EQ(quota.failure.retry_after, milliseconds(30'000));
}

TEST(ClassifyTest, MessageCarriesTheProviderWordsOnOneLine) {
  const Failure failure =
      Classify(400, {}, OpenAiBody("invalid_request_error", "", "bad\\nthing")).failure;
  EXPECT_EQ(failure.message, "HTTP 400: bad thing");
  EXPECT_EQ(Classify(502, {}, "Bad Gateway").failure.message, "HTTP 502: Bad Gateway");
  EXPECT_EQ(Classify(529, {}, "").failure.message, "HTTP 529");
  const std::string long_body(1000, 'x');
  EXPECT_LT(Classify(500, {}, long_body).failure.message.size(), 320u);
}

TEST(ClassifyTest, OddBodyShapes) {
  EXPECT_EQ(Classify(429, {}, "{\"error\":\"You exceeded your current quota\"}").failure.code,
            FailureCode::kQuota);
  EXPECT_EQ(
      Classify(400, {}, "{\"message\":\"maximum context length is 8192 tokens\"}").failure.code,
      FailureCode::kContextWindowExceeded);
  EXPECT_EQ(Classify(400, {}, "prompt is too long: 5 tokens > 4 maximum").failure.code,
            FailureCode::kContextWindowExceeded);
  EXPECT_EQ(Classify(400, {}, "[1,2,3]").failure.code, FailureCode::kInvalidRequest);
  EXPECT_EQ(
      Classify(502, {}, "{\"error\":{\"code\":502,\"message\":\"Bad gateway.\"}}").failure.code,
      FailureCode::kServer);
}

TEST(ClassifyTest, TransportFailuresKeepTheirPhase) {
  const Failure refused = TransportFailure(TransportKind::kRefused, Phase::kConnect,
                                           PartialOutput::kNone, "ECONNREFUSED");
  EXPECT_EQ(refused.code, FailureCode::kTransport);
  EXPECT_EQ(refused.failure_class, FailureClass::kTransport);
  EXPECT_EQ(refused.phase, Phase::kConnect);
  EXPECT_TRUE(refused.retryable);
  EXPECT_EQ(refused.message, "connection refused: ECONNREFUSED");
  EXPECT_EQ(refused.status, std::nullopt);

  const Failure reset =
      TransportFailure(TransportKind::kReset, Phase::kResponseHeaders, PartialOutput::kNone);
  EXPECT_EQ(reset.phase, Phase::kResponseHeaders);
  EXPECT_EQ(reset.message, "connection reset by peer");

  const Failure eof =
      TransportFailure(TransportKind::kClosed, Phase::kStream, PartialOutput::kUncommitted);
  EXPECT_EQ(eof.phase, Phase::kStream);
  EXPECT_EQ(eof.partial_output, PartialOutput::kUncommitted);
  EXPECT_TRUE(eof.retryable);
}

TEST(ClassifyTest, TimeoutsKeepTheirPhase) {
  const milliseconds limit(1500);
  EXPECT_EQ(TimeoutFailure(TimeoutKind::kConnect, limit).phase, Phase::kConnect);
  EXPECT_EQ(TimeoutFailure(TimeoutKind::kResponseHeaders, limit).phase, Phase::kResponseHeaders);
  const Failure idle = TimeoutFailure(TimeoutKind::kIdle, limit, PartialOutput::kUncommitted);
  EXPECT_EQ(idle.phase, Phase::kStream);
  EXPECT_EQ(idle.partial_output, PartialOutput::kUncommitted);
  EXPECT_EQ(idle.code, FailureCode::kTimeout);
  EXPECT_EQ(idle.failure_class, FailureClass::kTimeout);
  EXPECT_TRUE(idle.retryable);
  EXPECT_EQ(idle.message, "stream idle for 1500 ms");
  const Failure total =
      TimeoutFailure(TimeoutKind::kTotal, limit, PartialOutput::kNone, Phase::kResponseHeaders);
  EXPECT_EQ(total.phase, Phase::kResponseHeaders);
  EXPECT_FALSE(total.retryable);
}

TEST(ClassifyTest, AbortedIsFinal) {
  const Failure aborted = AbortedFailure(Phase::kStream, PartialOutput::kUncommitted);
  EXPECT_EQ(aborted.code, FailureCode::kAborted);
  EXPECT_EQ(aborted.failure_class, FailureClass::kAborted);
  EXPECT_EQ(aborted.phase, Phase::kStream);
  EXPECT_FALSE(aborted.retryable);
}

}  // namespace
}  // namespace faultline::ref
