// End-to-end: the reference client (reference_impl/, driven by its real Asio driver) against the
// real fake provider serving inline scenarios — the successful paths. These are also the
// agreement test between the provider's SSE writer and the client's independently written SSE
// parser, over every framing variant the provider can produce; and the Retry-After forms, checked
// against the arrival times in the server's journal.
#include "harness/tests/reference_e2e_support.h"

namespace faultline::ref::e2e {
namespace {

// ---------------------------------------------------------------------------------------------
// Success in all three dialects, over every SSE framing variant of the provider's writer.

constexpr std::string_view kUnicodeText = "Grüße, 世界! Ünïcödé ✓ — and a tail of ASCII text.";

struct Framing {
  std::string name;
  std::string content_extra;  // YAML members added to `content`
};

// The framings of an NDJSON stream (Ollama): how the bytes are cut, the rest being SSE's own.
std::vector<Framing> NdjsonFramings() {
  return {
      {"Plain", ""},
      {"SplitWrites", "framing: {split_writes: true}"},
      {"SplitUtf8", "framing: {split_writes: true, split_utf8: true, split_delay: 3ms}"},
      {"SlowDrip", "drip: {bytes: 5, every: 1ms}"},
  };
}

std::vector<Framing> Framings() {
  return {
      {"Plain", ""},
      {"Crlf", "framing: {line_ending: crlf}"},
      {"Cr", "framing: {line_ending: cr}"},
      {"Mixed", "framing: {line_ending: mixed}"},
      {"Bom", "framing: {bom: true}"},
      {"Comments", "framing: {comments: true}"},
      {"MultilineData", "framing: {multiline_data: true}"},
      {"SplitWrites", "framing: {split_writes: true}"},
      {"SplitUtf8", "framing: {split_writes: true, split_utf8: true, split_delay: 3ms}"},
      {"SlowDrip", "drip: {bytes: 5, every: 1ms}"},
      {"Everything",
       "framing: {line_ending: mixed, bom: true, comments: true, multiline_data: true, "
       "split_writes: true, split_utf8: true}"},
      {"CrBomMultilineSplit",
       "framing: {line_ending: cr, bom: true, multiline_data: true, split_writes: true, "
       "split_utf8: true}"},
  };
}

void PrintTo(const Framing& f, std::ostream* os) { *os << f.name; }

class FramingE2E : public ReferenceE2E,
                   public ::testing::WithParamInterface<std::tuple<Dialect, Framing>> {};

TEST_P(FramingE2E, CommitsExactlyTheScenarioText) {
  const auto& [dialect, framing] = GetParam();
  const std::string yaml =
      "faultline: 1\nname: e2e/ok\ndescription: e2e\ndialect: " +
      std::string(DialectName(dialect)) + "\nresponses:\n  - content:\n      text: \"" +
      std::string(kUnicodeText) + "\"\n      chunk_size: 3\n      " + framing.content_extra + "\n";
  RetryPolicy policy = FastPolicy();
  policy.timeouts.idle = 3000ms;  // success tests must not depend on scheduling
  const Outcome outcome = RunCall(yaml, policy);
  ASSERT_EQ(outcome.Terminals(), 1);
  EXPECT_EQ(outcome.events.back().type, EventType::kCommitted);
  EXPECT_EQ(outcome.Committed(), kUnicodeText);
  EXPECT_EQ(outcome.last().attempt, 1);
  EXPECT_TRUE(outcome.Of(EventType::kInterrupted).empty());
  // The uncommitted chunks concatenate to the same text.
  std::string chunks;
  for (const auto* chunk : outcome.Of(EventType::kChunk)) chunks += chunk->text.value_or("");
  EXPECT_EQ(chunks, kUnicodeText);
  ASSERT_EQ(outcome.journal.size(), 1u);
  EXPECT_EQ(outcome.journal[0].status, 200);
  // The client commits at the terminal event and may close before the last bytes after it.
  const EndKind end = outcome.journal[0].end;
  EXPECT_TRUE(end == EndKind::kCompleted || end == EndKind::kClientClosed) << ToString(end);
  EXPECT_TRUE(outcome.BodiesIdentical());
}

std::string FramingCaseName(const ::testing::TestParamInfo<std::tuple<Dialect, Framing>>& info) {
  std::string name(DialectName(std::get<0>(info.param)));
  std::erase(name, '-');
  return name + "_" + std::get<1>(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(
    SseDialects, FramingE2E,
    ::testing::Combine(::testing::Values(Dialect::kOpenAiChat, Dialect::kAnthropicMessages,
                                         Dialect::kOpenAiResponses, Dialect::kGemini),
                       ::testing::ValuesIn(Framings())),
    FramingCaseName);
INSTANTIATE_TEST_SUITE_P(NdjsonDialects, FramingE2E,
                         ::testing::Combine(::testing::Values(Dialect::kOllama),
                                            ::testing::ValuesIn(NdjsonFramings())),
                         FramingCaseName);

// ---------------------------------------------------------------------------------------------
// Retry-After: the second request arrives no earlier than the server asked.

struct HintCase {
  std::string name;
  std::string response;  // the first (429) response, one YAML flow mapping
  DelaySource source;
  milliseconds floor;
};

void PrintTo(const HintCase& c, std::ostream* os) { *os << c.name; }

class RetryAfterE2E : public ReferenceE2E, public ::testing::WithParamInterface<HintCase> {};

TEST_P(RetryAfterE2E, SecondRequestWaitsForTheHint) {
  const HintCase& hint = GetParam();
  const Outcome outcome =
      RunCall(Scenario(Dialect::kOpenAiChat, "  - " + hint.response + "\n" + kSecondResponse));
  ExpectRecoveredOnce(outcome, FailureCode::kRateLimit);
  const auto interrupted = outcome.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_EQ(interrupted[0]->delay_source, hint.source) << ToString(interrupted[0]->delay_source);
  EXPECT_GE(interrupted[0]->scheduled_retry, hint.floor);
  EXPECT_EQ(interrupted[0]->failure->status, 429);
  const JournalEntry* first = Entry(outcome, 0);
  const JournalEntry* second = Entry(outcome, 1);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->status, 429);
  // The client received the 429 no earlier than the server finished writing it.
  const auto waited = Ms(second->arrived - first->ended);
  EXPECT_GE(waited, hint.floor - 3ms) << waited.count() << " ms";
  EXPECT_LT(waited, hint.floor * 2 + 3000ms) << waited.count() << " ms";
}

INSTANTIATE_TEST_SUITE_P(
    Forms, RetryAfterE2E,
    ::testing::Values(
        HintCase{"Seconds", "{status: 429, error: rate_limit, retry_after: {seconds: 1}}",
                 DelaySource::kRetryAfter, 1000ms},
        HintCase{"ImfDate",
                 "{status: 429, error: rate_limit, retry_after: {http_date: 1s, form: imf}}",
                 DelaySource::kRetryAfterDate, 1000ms},
        HintCase{"Rfc850Date",
                 "{status: 429, error: rate_limit, retry_after: {http_date: 1s, form: rfc850}}",
                 DelaySource::kRetryAfterDate, 1000ms},
        HintCase{"AsctimeDate",
                 "{status: 429, error: rate_limit, retry_after: {http_date: 1s, form: asctime}}",
                 DelaySource::kRetryAfterDate, 1000ms},
        HintCase{"RetryAfterMs", "{status: 429, error: rate_limit, retry_after_ms: 400}",
                 DelaySource::kRetryAfterMs, 400ms}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace faultline::ref::e2e
