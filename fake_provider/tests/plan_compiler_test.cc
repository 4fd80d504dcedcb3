// The plan compiler: status lines, headers, ids, bodies and ErrorPlan. Timing and faults are in
// plan_faults_test.cc.
#include "fake_provider/plan/plan_compiler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "fake_provider/plan/plan_internal.h"
#include "fake_provider/tests/plan_test_util.h"
#include "fake_provider/wire/http_date.h"
#include "fake_provider/wire/sse_framing.h"

namespace faultline::provider {
namespace {

using namespace std::chrono_literals;
using scenario::ResponseSpec;
using scenario::RetryAfter;
using testing::Decode;
using testing::FakeWriter;
using testing::SentBytes;

constexpr std::string_view kModel = "fake-model";

class PlanCompilerTest : public ::testing::Test {
 protected:
  static PlanRequest Request(int attempt = 1, bool stream = true) {
    PlanRequest request;
    request.attempt = attempt;
    request.stream = stream;
    request.seed = 42;
    request.now = testing::TestNow();
    request.input_tokens = 37;
    return request;
  }

  ResponsePlan PlanFor(const ResponseSpec& spec, const PlanRequest& request) {
    scenario::Scenario scenario;
    scenario.name = "test/plan";
    scenario.responses = {spec};
    compiled_ = std::make_unique<CompiledScenario>(scenario, &writer_);
    return compiled_->Plan(compiled_->scenario().responses[0], request);
  }

  ResponseIds Ids(const PlanRequest& request) const {
    return writer_.MakeIds(request.seed, request.attempt, request.now, kModel);
  }

  // What the stream body must be: the writer's events with the request's real ids, framed.
  std::string ExpectedSse(const scenario::Content& content, const PlanRequest& request) const {
    const Usage usage{content.input_tokens.value_or(request.input_tokens),
                      plan_internal::OutputTokens(content)};
    SseFramer framer(content.framing);
    std::string out;
    for (const SseEvent& event : writer_.Stream(content, Ids(request), usage).events) {
      out += framer.Event(event);
    }
    return out;
  }

  FakeWriter writer_;
  std::unique_ptr<CompiledScenario> compiled_;
};

TEST_F(PlanCompilerTest, ZeroDelayStreamIsOneSendWithExactHeadAndBody) {
  ResponseSpec spec;
  const ResponsePlan plan = PlanFor(spec, Request());
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].kind, PlanStep::Kind::kSend);
  EXPECT_EQ(plan.steps[0].at, 0us);
  EXPECT_EQ(plan.status, 200);
  EXPECT_EQ(plan.attempt, 1);
  EXPECT_TRUE(plan.keep_alive);
  EXPECT_EQ(plan.summary, "200 stream 5 events end=done");

  const auto response = Decode(plan.steps[0].bytes);
  EXPECT_EQ(response.status_line, "HTTP/1.1 200 OK");
  EXPECT_EQ(response.Header("date"), "Sun, 10 Mar 2024 12:34:56 GMT");
  EXPECT_EQ(response.Header("content-type"), "text/event-stream; charset=utf-8");
  EXPECT_EQ(response.Header("x-request-id"), Ids(Request()).request_id);
  EXPECT_EQ(response.Header("connection"), "keep-alive");
  EXPECT_EQ(response.Header("transfer-encoding"), "chunked");
  EXPECT_FALSE(response.Header("content-length"));
  EXPECT_FALSE(response.Header("retry-after"));
  EXPECT_EQ(response.body, ExpectedSse(spec.content, Request()));
  EXPECT_TRUE(response.final_chunk);
  EXPECT_EQ(response.chunks.size(), 5u) << "one chunk per event";
  EXPECT_EQ(
      response.chunks[0],
      "data: " + writer_.Stream(spec.content, Ids(Request()), {37, 3}).events[0].data + "\n\n");
}

TEST_F(PlanCompilerTest, IdsCreatedAndUsageAreFilledInPerRequest) {
  ResponseSpec spec;
  spec.content.output_tokens = 5;
  PlanRequest second = Request(2);
  second.now += 3600s;
  second.input_tokens = 12345;
  const ResponsePlan first_plan = PlanFor(spec, Request());
  const ResponsePlan second_plan = compiled_->Plan(compiled_->scenario().responses[0], second);
  const std::string first_body = Decode(SentBytes(first_plan)).body;
  const std::string second_body = Decode(SentBytes(second_plan)).body;
  EXPECT_EQ(first_body, ExpectedSse(spec.content, Request()));
  EXPECT_EQ(second_body, ExpectedSse(spec.content, second));
  EXPECT_NE(Ids(Request()).response_id, Ids(second).response_id);
  EXPECT_NE(second_body.find(Ids(second).response_id), std::string::npos);
  EXPECT_NE(second_body.find(Ids(second).item_id), std::string::npos);
  EXPECT_NE(second_body.find(R"("created":)" + std::to_string(Ids(second).created)),
            std::string::npos);
  EXPECT_NE(second_body.find(R"("in":12345,"out":5,"total":12350)"), std::string::npos);
  EXPECT_EQ(SentBytes(second_plan).find("~FL"), std::string::npos);
}

TEST_F(PlanCompilerTest, ScriptedInputTokensAreKept) {
  ResponseSpec spec;
  spec.content.input_tokens = 7;
  spec.content.output_tokens = 2;
  const std::string body = Decode(SentBytes(PlanFor(spec, Request()))).body;
  EXPECT_NE(body.find(R"("in":7,"out":2,"total":9)"), std::string::npos);
}

TEST_F(PlanCompilerTest, NonStreamRequestGetsTheJsonBodyWithContentLength) {
  ResponseSpec spec;
  spec.content.output_tokens = 4;
  const ResponsePlan plan = PlanFor(spec, Request(1, false));
  ASSERT_EQ(plan.steps.size(), 1u);
  const auto response = Decode(plan.steps[0].bytes);
  const Body expected = writer_.Json(spec.content, Ids(Request()), {37, 4});
  EXPECT_EQ(response.Header("content-type"), "application/json");
  EXPECT_EQ(response.Header("content-length"), std::to_string(expected.bytes.size()));
  EXPECT_FALSE(response.Header("transfer-encoding"));
  EXPECT_EQ(response.body, expected.bytes);
  EXPECT_EQ(plan.summary, "200 json");
}

TEST_F(PlanCompilerTest, ErrorStatusSendsTheDialectErrorBody) {
  ResponseSpec spec;
  spec.status = 503;
  spec.error = scenario::ErrorSpec{scenario::ErrorKind::kUnavailable, {}, "try later", {}};
  for (const bool stream : {true, false}) {
    const ResponsePlan plan = PlanFor(spec, Request(1, stream));
    ASSERT_EQ(plan.steps.size(), 1u);
    const auto response = Decode(plan.steps[0].bytes);
    const std::string expected = writer_.Error(*spec.error, 503).bytes;
    EXPECT_EQ(response.status_line, "HTTP/1.1 503 Service Unavailable");
    EXPECT_EQ(response.Header("content-type"), "application/json");
    EXPECT_EQ(response.Header("content-length"), std::to_string(expected.size()));
    EXPECT_EQ(response.body, expected);
    EXPECT_EQ(plan.status, 503);
    EXPECT_TRUE(plan.keep_alive);
    EXPECT_TRUE(plan.summary.starts_with("503 unavailable")) << plan.summary;
  }
}

TEST_F(PlanCompilerTest, BadGatewayIsPlainText) {
  ResponseSpec spec;
  spec.status = 502;
  spec.error = scenario::ErrorSpec{scenario::ErrorKind::kBadGateway, {}, {}, {}};
  const auto response = Decode(SentBytes(PlanFor(spec, Request())));
  EXPECT_EQ(response.status_line, "HTTP/1.1 502 Bad Gateway");
  EXPECT_EQ(response.Header("content-type"), "text/plain");
  EXPECT_EQ(response.body, "bad gateway\n");
}

TEST_F(PlanCompilerTest, RetryAfterHttpDatesParseBackToTheDateHeaderPlusTheOffset) {
  const std::pair<RetryAfter::Form, Duration> cases[] = {
      {RetryAfter::Form::kImfFixdate, 2s},
      {RetryAfter::Form::kRfc850, -30s},
      {RetryAfter::Form::kAsctime, 120s},
      {RetryAfter::Form::kImfFixdate, 0s},
  };
  for (const Duration skew : {Duration{0}, Duration{-90s}, Duration{3600s}}) {
    for (const auto& [form, offset] : cases) {
      ResponseSpec spec;
      spec.status = 429;
      spec.error = scenario::ErrorSpec{scenario::ErrorKind::kRateLimit, {}, {}, {}};
      spec.retry_after = RetryAfter{form, "", offset};
      spec.date_skew = skew;
      const auto response = Decode(SentBytes(PlanFor(spec, Request())));
      const auto date = testing::ParseHttpDate(*response.Header("date"));
      const auto retry = testing::ParseHttpDate(*response.Header("retry-after"));
      ASSERT_TRUE(date && retry) << *response.Header("retry-after");
      EXPECT_EQ(*date, std::chrono::floor<std::chrono::seconds>(Request().now + skew));
      EXPECT_EQ(*retry - *date, offset);
    }
  }
}

TEST_F(PlanCompilerTest, SummaryIsAShortHumanLine) {
  ResponseSpec spec;
  spec.status = 429;
  spec.error = scenario::ErrorSpec{scenario::ErrorKind::kRateLimit, {}, {}, {}};
  spec.retry_after = RetryAfter{RetryAfter::Form::kImfFixdate, "", 2s};
  EXPECT_EQ(PlanFor(spec, Request()).summary, "429 rate_limit retry-after=imf(+2s)");
  spec.retry_after = RetryAfter{RetryAfter::Form::kRfc850, "", -30s};
  spec.retry_after_ms = "1500";
  EXPECT_EQ(PlanFor(spec, Request()).summary,
            "429 rate_limit retry-after=rfc850(-30s) retry-after-ms=1500");
}

TEST_F(PlanCompilerTest, RetryAfterTextFormsAreVerbatim) {
  for (const std::string text : {"2", "0", "-5", "1.5", "9e99"}) {
    ResponseSpec spec;
    spec.status = 429;
    spec.retry_after = RetryAfter{RetryAfter::Form::kSeconds, text, {}};
    EXPECT_EQ(Decode(SentBytes(PlanFor(spec, Request()))).Header("retry-after"), text);
  }
  ResponseSpec raw;
  raw.status = 503;
  raw.retry_after = RetryAfter{RetryAfter::Form::kRaw, "soon-ish", {}};
  const ResponsePlan plan = PlanFor(raw, Request());
  EXPECT_EQ(Decode(SentBytes(plan)).Header("retry-after"), "soon-ish");
  EXPECT_TRUE(plan.summary.starts_with("503 unavailable retry-after=raw(soon-ish)"))
      << plan.summary;
}

TEST_F(PlanCompilerTest, ScriptedHeadersKeepTheirOrderAndDuplicates) {
  ResponseSpec spec;
  spec.status = 429;
  spec.retry_after = RetryAfter{RetryAfter::Form::kSeconds, "2", {}};
  spec.retry_after_ms = "1500";
  spec.should_retry = false;
  spec.rate_limit_headers = scenario::RateLimitHeaders{};
  spec.headers = {{"Retry-After", "30"}, {"x-a", "1"}, {"x-a", "2"}};
  const auto response = Decode(SentBytes(PlanFor(spec, Request())));
  EXPECT_EQ(response.Headers("retry-after"), (std::vector<std::string>{"2", "30"}));
  EXPECT_EQ(response.Header("retry-after-ms"), "1500");
  EXPECT_EQ(response.Header("x-should-retry"), "false");
  EXPECT_EQ(response.Header("x-ratelimit-limit-requests"), "60");
  EXPECT_EQ(response.Headers("x-a"), (std::vector<std::string>{"1", "2"}));
  // Order: ... retry-after, retry-after-ms, x-should-retry, rate limits, extras, connection,
  // length.
  std::vector<std::string> names;
  for (const auto& header : response.headers) names.push_back(header.first);
  const std::vector<std::string> expected = {"date",
                                             "content-type",
                                             "x-request-id",
                                             "retry-after",
                                             "retry-after-ms",
                                             "x-should-retry",
                                             "x-ratelimit-limit-requests",
                                             "x-ratelimit-remaining-requests",
                                             "retry-after",
                                             "x-a",
                                             "x-a",
                                             "connection",
                                             "content-length"};
  EXPECT_EQ(names, expected);
}

TEST_F(PlanCompilerTest, ContentTypeAndBodyOverrides) {
  ResponseSpec spec;
  spec.content_type = "application/json";
  auto response = Decode(SentBytes(PlanFor(spec, Request())));
  EXPECT_EQ(response.Header("content-type"), "application/json");
  EXPECT_EQ(response.Header("transfer-encoding"), "chunked") << "still an SSE body";

  spec.content_type.reset();
  spec.body = "data: {\"raw\":true}\n\n";
  const ResponsePlan plan = PlanFor(spec, Request());
  response = Decode(SentBytes(plan));
  EXPECT_EQ(response.body, *spec.body);
  EXPECT_EQ(response.Header("content-length"), std::to_string(spec.body->size()));
  EXPECT_EQ(response.Header("content-type"), "text/event-stream; charset=utf-8");

  spec.status = 500;
  spec.body = "oops";
  response = Decode(SentBytes(PlanFor(spec, Request(1, false))));
  EXPECT_EQ(response.status_line, "HTTP/1.1 500 Internal Server Error");
  EXPECT_EQ(response.body, "oops");
}

TEST_F(PlanCompilerTest, ConnectionFaultsSendNothing) {
  ResponseSpec spec;
  spec.connection = scenario::ConnectionFault::kResetBeforeHeaders;
  spec.headers_delay = 1500ms;
  ResponsePlan plan = PlanFor(spec, Request());
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].kind, PlanStep::Kind::kReset);
  EXPECT_EQ(plan.steps[0].at, 1500ms);
  EXPECT_EQ(plan.status, 0);
  EXPECT_FALSE(plan.keep_alive);
  EXPECT_EQ(plan.summary, "reset-before-headers headers-delay=1500ms");

  spec.connection = scenario::ConnectionFault::kCloseBeforeHeaders;
  spec.headers_delay = 0s;
  plan = PlanFor(spec, Request());
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].kind, PlanStep::Kind::kClose);
  EXPECT_EQ(plan.steps[0].at, 0s);
}

TEST_F(PlanCompilerTest, HeadersDelayAndStall) {
  ResponseSpec spec;
  spec.headers_delay = 2s;
  spec.headers_stall = scenario::Wait{5s, false};
  ResponsePlan plan = PlanFor(spec, Request());
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(plan.steps[0].kind, PlanStep::Kind::kStall);
  EXPECT_EQ(plan.steps[0].at, 2s);
  EXPECT_EQ(plan.steps[0].length, Duration{5s});
  EXPECT_EQ(plan.steps[1].at, 7s);
  EXPECT_TRUE(plan.steps[1].bytes.starts_with("HTTP/1.1 200 OK\r\n"));

  spec.headers_stall = scenario::Wait{0s, true};
  plan = PlanFor(spec, Request());
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].kind, PlanStep::Kind::kStall);
  EXPECT_EQ(plan.steps[0].at, 2s);
  EXPECT_FALSE(plan.steps[0].length);
  EXPECT_EQ(plan.status, 0);
  EXPECT_FALSE(plan.keep_alive);
  EXPECT_EQ(PlanEnd(plan), 2s);
}

TEST_F(PlanCompilerTest, ErrorPlanAnswersUnscriptedRequests) {
  ResponseSpec spec;
  PlanFor(spec, Request());
  PlanRequest request = Request(0);
  ResponsePlan plan = compiled_->ErrorPlan(404, scenario::ErrorKind::kNotFound,
                                           "use /v1/chat/completions", std::nullopt, request);
  auto response = Decode(SentBytes(plan));
  EXPECT_EQ(response.status_line, "HTTP/1.1 404 Not Found");
  EXPECT_NE(response.body.find("use /v1/chat/completions"), std::string::npos);
  EXPECT_EQ(response.Header("content-length"), std::to_string(response.body.size()));
  EXPECT_FALSE(response.Header("retry-after"));
  EXPECT_TRUE(plan.keep_alive);
  EXPECT_EQ(plan.attempt, 0);

  plan = compiled_->ErrorPlan(405, scenario::ErrorKind::kInvalidRequest, "POST only", std::nullopt,
                              request);
  response = Decode(SentBytes(plan));
  EXPECT_EQ(response.status_line, "HTTP/1.1 405 Method Not Allowed");
  EXPECT_EQ(response.Header("allow"), "POST");

  request.attempt = 3;
  plan = compiled_->ErrorPlan(429, scenario::ErrorKind::kRateLimit, "", Duration{1200ms}, request);
  response = Decode(SentBytes(plan));
  EXPECT_EQ(response.Header("retry-after"), "2") << "rounded up to whole seconds";
  scenario::ErrorSpec rate_limit;
  rate_limit.kind = scenario::ErrorKind::kRateLimit;
  EXPECT_EQ(response.body, writer_.Error(rate_limit, 429).bytes);
  EXPECT_EQ(plan.summary, "429 rate_limit retry-after=2 (unscripted)");
  EXPECT_EQ(plan.attempt, 3);
}

TEST_F(PlanCompilerTest, ChaosChoicesAndOtherwiseArePreRendered) {
  scenario::Scenario scenario;
  scenario::Chaos chaos;
  scenario::Chaos::Choice overloaded;
  overloaded.probability = 0.5;
  overloaded.response.status = 529;
  overloaded.response.error = scenario::ErrorSpec{scenario::ErrorKind::kOverloaded, {}, {}, {}};
  chaos.faults.push_back(overloaded);
  scenario.chaos = chaos;
  const CompiledScenario compiled(scenario, &writer_);
  EXPECT_EQ(compiled.Plan(compiled.scenario().chaos->faults[0].response, Request()).status, 529);
  const ResponsePlan plan = compiled.Plan(compiled.scenario().chaos->otherwise, Request());
  EXPECT_EQ(plan.status, 200);
  EXPECT_EQ(Decode(SentBytes(plan)).body, ExpectedSse(scenario::Content{}, Request()));
}

TEST_F(PlanCompilerTest, ResponsesOutsideTheScenarioStillWork) {
  PlanFor(ResponseSpec{}, Request());
  ResponseSpec other;
  other.status = 401;
  const ResponsePlan plan = compiled_->Plan(other, Request());
  EXPECT_EQ(Decode(SentBytes(plan)).status_line, "HTTP/1.1 401 Unauthorized");
}

// The real dialect writers: templates filled per request must equal what the writer renders
// directly with the request's ids (this covers ids derived from other ids, e.g. Responses'
// rs_/fc_ items), and no placeholder may leak.
class RealWriterPlanTest : public ::testing::TestWithParam<scenario::Dialect> {};

TEST_P(RealWriterPlanTest, FilledTemplatesEqualDirectRendering) {
  scenario::Scenario scenario;
  scenario.dialect = GetParam();
  ResponseSpec plain;
  plain.content.text = "Hello, wörld — ünïcode";
  ResponseSpec tools = plain;
  tools.content.reasoning = "thinking about it";
  tools.content.tool_call = scenario::ToolCallSpec{};
  ResponseSpec error;
  error.status = 429;
  error.error = scenario::ErrorSpec{scenario::ErrorKind::kRateLimit, {}, {}, {}};
  scenario.responses = {plain, tools, error};
  const CompiledScenario compiled(scenario);
  const DialectWriter& writer = compiled.writer();

  for (int attempt = 1; attempt <= 3; ++attempt) {
    PlanRequest request;
    request.attempt = attempt;
    request.seed = 7 + attempt;
    request.now = testing::TestNow() + std::chrono::hours(attempt * 1000);
    request.input_tokens = 11 * attempt;
    const ResponseSpec& spec = compiled.scenario().responses[attempt - 1];
    const ResponseIds ids =
        writer.MakeIds(request.seed, attempt, request.now, writer.default_model());
    const Usage usage{request.input_tokens, plan_internal::OutputTokens(spec.content)};
    for (const bool stream : {true, false}) {
      request.stream = stream;
      const std::string bytes = SentBytes(compiled.Plan(spec, request));
      EXPECT_EQ(bytes.find("~FL"), std::string::npos) << bytes;
      const auto response = Decode(bytes);
      EXPECT_EQ(response.Header(std::string(writer.request_id_header())), ids.request_id);
      std::string expected;
      if (spec.status != 200) {
        expected = writer.ErrorWithIds(*spec.error, spec.status, ids).bytes;
      } else if (stream) {
        SseFramer framer(spec.content.framing);
        for (const SseEvent& event : writer.Stream(spec.content, ids, usage).events) {
          expected += framer.Event(event);
        }
      } else {
        expected = writer.Json(spec.content, ids, usage).bytes;
      }
      EXPECT_EQ(response.body, expected) << "attempt " << attempt << " stream " << stream;
    }
  }
}

TEST_P(RealWriterPlanTest, InjectedFaultEventsCarryRealIds) {
  scenario::Scenario scenario;
  scenario.dialect = GetParam();
  ResponseSpec spec;
  for (const auto kind :
       {scenario::EventFault::Kind::kProviderError, scenario::EventFault::Kind::kErrorEnvelope,
        scenario::EventFault::Kind::kTwoObjects, scenario::EventFault::Kind::kInvalidJson,
        scenario::EventFault::Kind::kWrongShape, scenario::EventFault::Kind::kSequenceGap}) {
    scenario::EventFault fault;
    fault.kind = kind;
    fault.after_event = 2;
    fault.error.kind = scenario::ErrorKind::kOverloaded;
    spec.content.faults.push_back(fault);
  }
  scenario.responses = {spec};
  const CompiledScenario compiled(scenario);
  PlanRequest request;
  request.now = testing::TestNow();
  const std::string bytes = SentBytes(compiled.Plan(compiled.scenario().responses[0], request));
  EXPECT_EQ(bytes.find("~FL"), std::string::npos) << bytes;
  const ResponseIds ids =
      compiled.writer().MakeIds(0, 1, request.now, compiled.writer().default_model());
  const auto events = testing::ParseSse(Decode(bytes).body);
  int with_id = 0;
  for (const auto& event : events) with_id += event.data.find(ids.response_id) != std::string::npos;
  EXPECT_GE(with_id, 1);
}

INSTANTIATE_TEST_SUITE_P(Dialects, RealWriterPlanTest,
                         ::testing::Values(scenario::Dialect::kOpenAiChat,
                                           scenario::Dialect::kAnthropicMessages,
                                           scenario::Dialect::kOpenAiResponses));

}  // namespace
}  // namespace faultline::provider
