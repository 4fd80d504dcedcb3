// The parts every dialect writer shares: WriterFor, EstimateTokens, id sources, UTF-8 aware
// splitting, Go durations and RFC 3339 instants.
#include "fake_provider/wire/dialect.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "fake_provider/tests/dialect_test_support.h"
#include "fake_provider/wire/dialect_internal.h"

namespace faultline::provider {
namespace {

using namespace std::chrono_literals;
using dialect_internal::GoDuration;
using dialect_internal::SplitBytes;
using dialect_internal::SplitCodePoints;
using dialect_testing::FixedNow;
using dialect_testing::kUtf8Text;
using scenario::Dialect;
using ::testing::ElementsAre;

TEST(WriterForTest, EachDialectHasItsOwnWriter) {
  const DialectWriter& chat = WriterFor(Dialect::kOpenAiChat);
  const DialectWriter& messages = WriterFor(Dialect::kAnthropicMessages);
  const DialectWriter& responses = WriterFor(Dialect::kOpenAiResponses);
  const DialectWriter& gemini = WriterFor(Dialect::kGemini);
  EXPECT_EQ(gemini.dialect(), Dialect::kGemini);
  EXPECT_EQ(gemini.request_id_header(), "");  // Gemini sends none
  EXPECT_EQ(gemini.default_model(), "gemini-2.5-flash");
  EXPECT_EQ(chat.dialect(), Dialect::kOpenAiChat);
  EXPECT_EQ(messages.dialect(), Dialect::kAnthropicMessages);
  EXPECT_EQ(responses.dialect(), Dialect::kOpenAiResponses);
  EXPECT_EQ(chat.endpoint_path(), "/v1/chat/completions");
  EXPECT_EQ(messages.endpoint_path(), "/v1/messages");
  EXPECT_EQ(responses.endpoint_path(), "/v1/responses");
  EXPECT_EQ(chat.request_id_header(), "x-request-id");
  EXPECT_EQ(messages.request_id_header(), "request-id");
  EXPECT_EQ(responses.request_id_header(), "x-request-id");
  EXPECT_EQ(chat.default_model(), "gpt-4o-mini");
  EXPECT_EQ(messages.default_model(), "claude-sonnet-4-5");
  EXPECT_EQ(&WriterFor(Dialect::kOpenAiChat), &chat);  // a singleton
}

TEST(EstimateTokensTest, RoughlyFourBytesAToken) {
  EXPECT_EQ(EstimateTokens(""), 0);
  EXPECT_EQ(EstimateTokens("a"), 1);
  EXPECT_EQ(EstimateTokens("abcd"), 1);
  EXPECT_EQ(EstimateTokens("abcde"), 2);
  EXPECT_EQ(EstimateTokens(std::string(400, 'x')), 100);
}

TEST(IdSourceTest, DeterministicAndSaltedAndSensitiveToEveryInput) {
  auto id = [](std::uint64_t seed, int attempt, WallTime now, std::string_view salt) {
    return dialect_internal::IdSource(seed, attempt, now, salt).Base62(24);
  };
  const std::string base = id(7, 1, FixedNow(), "x");
  EXPECT_EQ(base, id(7, 1, FixedNow(), "x"));
  EXPECT_NE(base, id(8, 1, FixedNow(), "x"));
  EXPECT_NE(base, id(7, 2, FixedNow(), "x"));
  EXPECT_NE(base, id(7, 1, FixedNow() + 1us, "x"));
  EXPECT_NE(base, id(7, 1, FixedNow(), "y"));
  EXPECT_TRUE(dialect_testing::IsBase62(base));
  EXPECT_TRUE(
      dialect_testing::IsLowerHex(dialect_internal::IdSource(7, 1, FixedNow(), "x").Hex(48)));
}

TEST(CreatedSecondsTest, NowInSecondsAlwaysTenDigits) {
  EXPECT_EQ(dialect_internal::CreatedSeconds(FixedNow()), dialect_testing::kFixedNowSeconds);
  EXPECT_EQ(dialect_internal::CreatedSeconds(WallTime{}), 1'000'000'000);
  EXPECT_EQ(dialect_internal::CreatedSeconds(WallTime{} + std::chrono::hours(24 * 365 * 400)),
            9'999'999'999);
}

TEST(SplitCodePointsTest, SplitsByCharactersNeverInsideOne) {
  EXPECT_THAT(SplitCodePoints("Hello, world", 4), ElementsAre("Hell", "o, w", "orld"));
  EXPECT_THAT(SplitCodePoints("abcde", 2), ElementsAre("ab", "cd", "e"));
  EXPECT_TRUE(SplitCodePoints("", 3).empty());
  EXPECT_THAT(SplitCodePoints(kUtf8Text, 3),
              ElementsAre("h\xc3\xa9l", "lo ", "\xf0\x9f\x91\x8b w", "\xc3\xb6rl", "d"));
  const std::vector<std::string> singles = SplitCodePoints(kUtf8Text, 1);
  EXPECT_EQ(singles.size(), dialect_testing::CodePoints(kUtf8Text));
  for (const std::string& piece : singles) {
    EXPECT_TRUE(dialect_testing::IsWholeUtf8(piece)) << piece;
    EXPECT_EQ(dialect_testing::CodePoints(piece), 1u);
  }
  EXPECT_THAT(SplitCodePoints("ab", 0), ElementsAre("a", "b"));  // chunk size clamped to 1
}

TEST(SplitBytesTest, ExtendsToTheNextCharacterBoundary) {
  EXPECT_THAT(SplitBytes(R"({"city":"Paris"})", 8), ElementsAre(R"({"city":)", R"("Paris"})"));
  // "Zürich": the cut after 3 bytes falls inside ü and moves past it.
  EXPECT_THAT(SplitBytes("Z\xc3\xbcrich", 2), ElementsAre("Z\xc3\xbc", "ri", "ch"));
  std::string joined;
  for (const std::string& piece : SplitBytes(kUtf8Text, 1)) {
    EXPECT_TRUE(dialect_testing::IsWholeUtf8(piece));
    joined += piece;
  }
  EXPECT_EQ(joined, kUtf8Text);
  EXPECT_TRUE(SplitBytes("", 4).empty());
}

TEST(GoDurationTest, FormatsLikeGoTimeDurationString) {
  EXPECT_EQ(GoDuration(0s), "0s");
  EXPECT_EQ(GoDuration(1s), "1s");
  EXPECT_EQ(GoDuration(6min), "6m0s");
  EXPECT_EQ(GoDuration(59600ms), "59.6s");
  EXPECT_EQ(GoDuration(8640ms), "8.64s");
  EXPECT_EQ(GoDuration(120ms), "120ms");
  EXPECT_EQ(GoDuration(1500us), "1.5ms");
  EXPECT_EQ(GoDuration(17us), "17\u00b5s");
  EXPECT_EQ(GoDuration(1h), "1h0m0s");
  EXPECT_EQ(GoDuration(1h + 2min + 3500ms), "1h2m3.5s");
  EXPECT_EQ(GoDuration(61s), "1m1s");
  EXPECT_EQ(GoDuration(-1s), "-1s");
  EXPECT_EQ(GoDuration(1000001us), "1.000001s");
}

TEST(Rfc3339Test, UtcSecondsRoundedUp) {
  EXPECT_EQ(dialect_internal::Rfc3339(FixedNow()), "2025-06-13T19:11:21Z");
  EXPECT_EQ(dialect_internal::Rfc3339(FixedNow() - 250ms), "2025-06-13T19:11:20Z");
  EXPECT_EQ(dialect_internal::Rfc3339(FixedNow() + 5h), "2025-06-14T00:11:21Z");
}

TEST(StreamErrorForTest, ErrorEnvelopeIsOpenAiShapedInEveryDialect) {
  scenario::Content content;
  scenario::EventFault fault;
  fault.kind = scenario::EventFault::Kind::kErrorEnvelope;
  fault.after_event = 2;
  fault.error.kind = scenario::ErrorKind::kServer;
  content.faults.push_back(fault);
  for (Dialect dialect : scenario::AllDialects()) {
    // An event stream's messages need a type: the loader refuses the envelope there.
    if (scenario::StreamFramingOf(dialect) == scenario::StreamFraming::kEventStream) continue;
    const DialectWriter& writer = WriterFor(dialect);
    const ResponseIds ids = writer.MakeIds(1, 1, FixedNow(), "");
    const SseEvent event = writer.StreamErrorFor(content, 0, ids);
    EXPECT_EQ(event.name, "");
    const auto data = dialect_testing::json::parse(event.data);
    ASSERT_EQ(data.size(), 1u);
    EXPECT_EQ(data["error"]["type"], "server_error");
    EXPECT_EQ(data["error"]["message"],
              "The server had an error while processing your request. Sorry about that!");
    EXPECT_TRUE(data["error"]["param"].is_null());
    EXPECT_TRUE(data["error"]["code"].is_null());
  }
}

// `end: {kind: done, after_event: N}`: the first N events, then the terminator, numbered after
// the last event sent where the dialect numbers its events.
TEST(SkipToTerminatorTest, TheTerminatorFollowsTheCutInEveryDialect) {
  scenario::Content content;
  content.text = "Hello, world, again";
  content.chunk_size = 4;
  scenario::EventFault fault;
  fault.kind = scenario::EventFault::Kind::kErrorEnvelope;
  fault.after_event = 3;
  content.faults.push_back(fault);
  content.end.kind = scenario::Termination::Kind::kDone;
  content.end.after_event = 3;
  struct Case {
    Dialect dialect;
    std::string terminator_name;
    std::string terminator_data_start;
  };
  for (const Case& c :
       {Case{Dialect::kOpenAiChat, "", "[DONE]"},
        Case{Dialect::kAnthropicMessages, "message_stop", "{\"type\":\"message_stop\""},
        Case{Dialect::kOpenAiResponses, "response.completed", "{\"type\":\"response.completed\""},
        Case{Dialect::kOllama, "", "{\"model\":\"llama3.2\",\"created_at\":"},
        Case{Dialect::kGemini, "",
             "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}],\"role\":"
             "\"model\"},\"finishReason\":\"STOP\""}}) {
    SCOPED_TRACE(scenario::ToString(c.dialect));
    const DialectWriter& writer = WriterFor(c.dialect);
    const ResponseIds ids = writer.MakeIds(1, 1, FixedNow(), "");
    scenario::Content whole = content;
    whole.end = {};
    const StreamEvents full = writer.Stream(whole, ids, {10, 3});
    const StreamEvents cut = writer.Stream(content, ids, {10, 3});
    ASSERT_EQ(cut.events.size(), 4u);
    EXPECT_EQ(cut.terminator, 3u);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(cut.events[i], full.events[i]);
    EXPECT_EQ(cut.events[3].name, c.terminator_name);
    EXPECT_TRUE(cut.events[3].data.starts_with(c.terminator_data_start)) << cut.events[3].data;
    if (c.dialect == Dialect::kOpenAiResponses) {
      EXPECT_EQ(dialect_testing::json::parse(cut.events[3].data)["sequence_number"], 3);
    }
    // A cut at or past the terminator leaves the stream whole.
    scenario::Content late = content;
    late.end.after_event = static_cast<int>(full.terminator);
    EXPECT_EQ(writer.Stream(late, ids, {10, 3}).events, full.events);
  }
}

}  // namespace
}  // namespace faultline::provider
