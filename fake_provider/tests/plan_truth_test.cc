// The ground truth of what a stream showed before it failed (PlanTruth::output_before_failure,
// output_from), for every dialect's real writer: a cut after N events has shown output exactly
// when one of those N events carries the first text piece or the tool call's name. The oracle
// reads the writer's raw event data, not the compiler's bookkeeping.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/tests/plan_test_util.h"
#include "fake_provider/wire/dialect.h"

namespace faultline::provider {
namespace {

using namespace std::chrono_literals;
using scenario::Dialect;
using scenario::Termination;

constexpr Dialect kDialects[] = {Dialect::kOpenAiChat, Dialect::kAnthropicMessages,
                                 Dialect::kOpenAiResponses};

PlanRequest StreamRequest() {
  PlanRequest request;
  request.stream = true;
  request.now = testing::TestNow();
  request.input_tokens = 10;
  return request;
}

// The events `dialect`'s writer streams for `content`.
StreamEvents StreamOf(Dialect dialect, const scenario::Content& content) {
  const DialectWriter& writer = WriterFor(dialect);
  const ResponseIds ids = writer.MakeIds(0, 1, testing::TestNow(), writer.default_model());
  return writer.Stream(content, ids, {10, 2});
}

// Whether one of the first `count` events of `stream` carries `marker`.
bool MarkerWithin(const StreamEvents& stream, std::size_t count, const std::string& marker) {
  for (std::size_t i = 0; i < count && i < stream.events.size(); ++i) {
    if (stream.events[i].data.find(marker) != std::string::npos) return true;
  }
  return false;
}

ResponsePlan ResetAfter(Dialect dialect, scenario::Content content, int events) {
  scenario::Scenario scenario;
  scenario.dialect = dialect;
  scenario::ResponseSpec spec;
  spec.content = std::move(content);
  spec.content.end.kind = Termination::Kind::kReset;
  spec.content.end.after_event = events;
  scenario.responses = {spec};
  const CompiledScenario compiled(scenario);
  return compiled.Plan(compiled.scenario().responses[0], StreamRequest());
}

TEST(PlanTruthTest, OutputBeforeACutIsTheFirstTextOrToolCallOnTheWire) {
  scenario::Content text;
  text.text = "Hello there, friend";
  text.chunk_size = 5;
  text.reasoning = "Thinking it over";  // reasoning is not output
  scenario::Content tool;
  tool.text.clear();
  tool.tool_call = scenario::ToolCallSpec{};
  for (const Dialect dialect : kDialects) {
    for (const auto& [content, marker] :
         {std::pair{text, std::string("Hello")}, std::pair{tool, tool.tool_call->name}}) {
      const StreamEvents stream = StreamOf(dialect, content);
      const std::size_t events = stream.events.size();
      bool seen_false = false, seen_true = false;
      for (std::size_t cut = 0; cut < events; ++cut) {
        SCOPED_TRACE(std::string(scenario::ToString(dialect)) + " " + marker + " cut after " +
                     std::to_string(cut));
        const ResponsePlan plan = ResetAfter(dialect, content, static_cast<int>(cut));
        ASSERT_EQ(plan.truth.failure_class, "transport");
        EXPECT_TRUE(plan.truth.streamed);
        const bool expected = MarkerWithin(stream, cut, marker);
        EXPECT_EQ(plan.truth.output_before_failure, expected);
        (expected ? seen_true : seen_false) = true;
        EXPECT_EQ(plan.truth.output_from.has_value(), expected) << "due only once it is sent";
      }
      EXPECT_TRUE(seen_false && seen_true) << "the cuts fall on both sides of the first output";
    }
  }
}

TEST(PlanTruthTest, OutputFromIsWhenTheFirstOutputIsDue) {
  scenario::Scenario scenario;
  scenario.dialect = Dialect::kOpenAiChat;
  scenario::ResponseSpec spec;
  spec.content.text = "abcdefgh";
  spec.content.chunk_size = 4;
  spec.content.chunk_delay = 100ms;  // the role chunk with the head, "abcd" 100 ms later
  scenario.responses = {spec};
  const CompiledScenario compiled(scenario);
  const ResponsePlan plan = compiled.Plan(compiled.scenario().responses[0], StreamRequest());
  EXPECT_TRUE(plan.truth.answer.has_value());
  EXPECT_FALSE(plan.truth.output_before_failure);  // nothing failed
  ASSERT_TRUE(plan.truth.output_from.has_value());
  EXPECT_EQ(*plan.truth.output_from, plan.steps.front().at + 100ms);
  // A non-streamed body has no stream truth.
  PlanRequest json = StreamRequest();
  json.stream = false;
  const ResponsePlan body = compiled.Plan(compiled.scenario().responses[0], json);
  EXPECT_FALSE(body.truth.streamed);
  EXPECT_FALSE(body.truth.output_from.has_value());
}

}  // namespace
}  // namespace faultline::provider

namespace faultline::provider {
namespace {

// A verbatim body (`body:`) once promised nothing. Issue 26: the injected fault still has a class
// where the scenario fixes it: the wrong content type for what was asked, a JSON answer that is
// not JSON, an error status whose body cannot refine it (docs/failure-taxonomy.md).
PlanTruth VerbatimTruth(int status, std::string content_type, std::string body, bool stream) {
  scenario::Scenario scenario;
  scenario::ResponseSpec spec;
  spec.status = status;
  spec.content_type = std::move(content_type);
  spec.body = std::move(body);
  scenario.responses = {spec};
  const CompiledScenario compiled(scenario);
  PlanRequest request = StreamRequest();
  request.stream = stream;
  return compiled.Plan(compiled.scenario().responses[0], request).truth;
}

TEST(PlanTruthTest, AVerbatimBodyStillHasTheClassItsFaultFixes) {
  // A captive portal's HTML page for a stream, or for a JSON answer: malformed, retryable.
  for (const bool stream : {true, false}) {
    const PlanTruth html = VerbatimTruth(200, "text/html", "<html>Sign in</html>", stream);
    EXPECT_EQ(html.failure_class, "protocol") << stream;
    EXPECT_TRUE(html.retryable);
  }
  // JSON where a stream was asked for (a gateway that cannot stream).
  EXPECT_EQ(VerbatimTruth(200, "application/json", R"({"ok":1})", true).failure_class, "protocol");
  // A JSON answer cut off: malformed; a whole JSON answer of any shape: no promise.
  EXPECT_EQ(VerbatimTruth(200, "application/json", R"({"choices":[{"mess)", false).failure_class,
            "protocol");
  EXPECT_EQ(VerbatimTruth(200, "application/json", R"({"ok":1})", false).failure_class, "");
  // An event stream verbatim: anything may be in it.
  EXPECT_EQ(VerbatimTruth(200, "text/event-stream", "data: x\n\n", true).failure_class, "");
  // Error statuses: the status decides unless the body's words may refine it.
  EXPECT_EQ(VerbatimTruth(502, "text/plain", "Bad Gateway", true).failure_class,
            "provider-unavailable");
  EXPECT_EQ(VerbatimTruth(401, "text/plain", "nope", true).failure_class, "auth");
  EXPECT_EQ(VerbatimTruth(503, "text/plain", "currently overloaded", true).failure_class, "");
  EXPECT_EQ(VerbatimTruth(400, "application/json", R"({"error":"maximum context length"})", true)
                .failure_class,
            "");
  EXPECT_EQ(VerbatimTruth(429, "text/plain", "exceeded your current quota", true).failure_class,
            "");
  EXPECT_EQ(VerbatimTruth(429, "text/plain", "slow down", true).failure_class, "rate-limit");
}

// The fields a 429 in `dialect` carries its retry hints in, as the provider records them.
std::vector<HintField> RateLimitedFields(Dialect dialect, scenario::ResponseSpec spec) {
  scenario::Scenario scenario;
  scenario.dialect = dialect;
  spec.status = 429;
  spec.error.emplace().kind = scenario::ErrorKind::kRateLimit;
  scenario.responses = {spec};
  const CompiledScenario compiled(scenario);
  return compiled.Plan(compiled.scenario().responses[0], StreamRequest()).truth.hint_fields;
}

std::optional<std::string> FieldValue(const std::vector<HintField>& fields, std::string_view name) {
  const auto found = std::ranges::find(fields, name, &HintField::name);
  if (found == fields.end()) return std::nullopt;
  return found->value;
}

// The truth carries every hint the response carries, as sent: the default body's "try again in"
// (which the truth's own parser used to lose at the sentence's full stop), a raw value as
// written, each rate-limit header, and the Date a date is measured from.
TEST(PlanTruthTest, EveryFieldAHintMaySitInIsRecordedAsSent) {
  const auto openai = RateLimitedFields(Dialect::kOpenAiChat, {});
  ASSERT_TRUE(FieldValue(openai, "body"));
  EXPECT_NE(FieldValue(openai, "body")->find("Please try again in 1s."), std::string::npos);
  EXPECT_TRUE(FieldValue(openai, "date"));
  scenario::ResponseSpec raw;
  raw.retry_after = scenario::RetryAfter{scenario::RetryAfter::Form::kRaw, std::string(400, '9')};
  EXPECT_EQ(FieldValue(RateLimitedFields(Dialect::kOpenAiChat, raw), "retry-after"),
            std::string(400, '9'));
  scenario::ResponseSpec limited;
  limited.rate_limit_headers = scenario::RateLimitHeaders{};
  limited.retry_after_ms = "1500";
  limited.headers = {{"Retry-After", "2"}, {"X-Unrelated", "1"}};
  const auto anthropic = RateLimitedFields(Dialect::kAnthropicMessages, limited);
  EXPECT_TRUE(FieldValue(anthropic, "anthropic-ratelimit-requests-reset"));
  EXPECT_EQ(FieldValue(anthropic, "retry-after-ms"), "1500");
  EXPECT_EQ(FieldValue(anthropic, "retry-after"), "2");  // names lowercased, values as sent
  EXPECT_FALSE(FieldValue(anthropic, "x-unrelated"));
  EXPECT_TRUE(FieldValue(RateLimitedFields(Dialect::kOpenAiResponses, limited),
                         "x-ratelimit-reset-tokens"));
  // An answer is no error body: nothing of a 200 is a hint.
  EXPECT_TRUE(VerbatimTruth(200, "application/json", R"({"ok":1})", false).hint_fields.empty());
}

}  // namespace
}  // namespace faultline::provider
