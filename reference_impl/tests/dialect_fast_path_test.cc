// The fast path (decode_fast_path.cc, json_cursor.cc) must never change what the decoders say:
// these tests run every fixture event, and thousands of mutations of the hot ones, through a
// decoder with the fast path and one without, and require identical results.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "reference_impl/dialect_decoder.h"
#include "reference_impl/dialect_decoder_internal.h"
#include "reference_impl/json_cursor.h"
#include "reference_impl/tests/decode_test_support.h"
#include "reference_impl/tests/wire_fixtures.h"

namespace faultline::ref {
namespace {

using internal::JsonCursor;

struct Result {
  std::vector<Delta> deltas;
  bool ok = false;
  friend bool operator==(const Result&, const Result&) = default;
};

Result Decode(DialectDecoder& decoder, const SseEvent& event) {
  Result result;
  result.ok = decoder.DecodeEvent(event, result.deltas).has_value();
  return result;
}

std::vector<SseEvent> EventsOf(std::string_view sse) {
  SseDecoder decoder;
  auto fed = decoder.Feed(sse);
  EXPECT_TRUE(fed);
  return std::vector<SseEvent>(fed->events.begin(), fed->events.end());
}

// Decodes `events` with both decoders, requiring identical results.
void ExpectSameAlong(const std::vector<SseEvent>& events, DialectDecoder& fast,
                     DialectDecoder& slow) {
  for (const SseEvent& event : events) {
    ASSERT_EQ(Decode(fast, event), Decode(slow, event)) << event.data;
  }
}

struct Stream {
  Dialect dialect;
  std::string_view sse;
};

const std::vector<Stream> kStreams = {
    {Dialect::kOpenAiChat, fixtures::kChatText},
    {Dialect::kOpenAiChat, fixtures::kChatToolCalls},
    {Dialect::kOpenAiChat, fixtures::kChatReasoning},
    {Dialect::kAnthropicMessages, fixtures::kAnthropicText},
    {Dialect::kAnthropicMessages, fixtures::kAnthropicThinkingAndTool},
    {Dialect::kOpenAiResponses, fixtures::kResponsesText},
    {Dialect::kOpenAiResponses, fixtures::kResponsesReasoningAndTool},
};

TEST(DialectFastPathTest, FixturesDecodeIdenticallyWithAndWithoutTheFastPath) {
  for (const Stream& stream : kStreams) {
    DialectDecoder fast(stream.dialect);
    DialectDecoder slow(stream.dialect, DialectDecoder::Options{.fast_path = false});
    ExpectSameAlong(EventsOf(stream.sse), fast, slow);
  }
}

std::vector<std::string> Mutations(const std::string& data) {
  static constexpr std::string_view kReplacements[] = {"\"", "\\", "{", "}",    ",",    ":",
                                                       "0",  "x",  " ", "\x01", "\xC3", "\\u00e9"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < data.size(); ++i) {
    out.push_back(data.substr(0, i) + data.substr(i + 1));  // deletion
    for (std::string_view replacement : kReplacements) {
      out.push_back(data.substr(0, i) + std::string(replacement) + data.substr(i + 1));
    }
  }
  return out;
}

TEST(DialectFastPathTest, MutatedHotEventsDecodeIdentically) {
  int fast_accepted = 0;
  int compared = 0;
  for (const Stream& stream : kStreams) {
    const std::vector<SseEvent> events = EventsOf(stream.sse);
    DialectDecoder fast(stream.dialect);
    DialectDecoder slow(stream.dialect, DialectDecoder::Options{.fast_path = false});
    for (std::size_t i = 0; i < events.size(); ++i) {
      // Mutate the events the fast path takes (on a scratch copy of the protocol state).
      DialectDecoder::State scratch = fast.state();
      std::vector<Delta> ignored;
      const bool hot = internal::TryDecodeFast(stream.dialect, events[i], scratch, ignored);
      for (const std::string& data : hot ? Mutations(events[i].data) : std::vector<std::string>{}) {
        DialectDecoder fast_copy = fast;
        DialectDecoder slow_copy = slow;
        const SseEvent mutated{events[i].type, data, ""};
        const Result expected = Decode(slow_copy, mutated);
        ASSERT_EQ(Decode(fast_copy, mutated), expected) << data;
        fast_accepted += expected.ok ? 1 : 0;
        ++compared;
        // Only the Responses fast path changes protocol state (the sequence number): the state
        // both decoders left behind must agree too.
        if (stream.dialect == Dialect::kOpenAiResponses && i + 1 < events.size()) {
          ASSERT_EQ(Decode(fast_copy, events[i + 1]), Decode(slow_copy, events[i + 1])) << data;
        }
      }
      ASSERT_EQ(Decode(fast, events[i]), Decode(slow, events[i]));
    }
  }
  EXPECT_GT(compared, 20000) << compared << " compared, " << fast_accepted << " accepted";
  EXPECT_GT(fast_accepted, 1000) << compared;  // mutations both accepted and refused
}

TEST(DialectFastPathTest, FastPathSpecificsAgree) {
  const std::vector<std::pair<Dialect, std::string>> cases = {
      {Dialect::kOpenAiChat, R"({"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]})"},
      {Dialect::kOpenAiChat,
       R"({"choices":[{"index":0,"delta":{"content":"\ud83d\ude00 \u00e9"}}]})"},
      {Dialect::kOpenAiChat, R"({"choices":[{"index":0,"delta":{"content":"\ud83d"}}]})"},
      {Dialect::kOpenAiChat, R"({"choices":[{"index":1,"delta":{"content":"b"}}]})"},
      {Dialect::kOpenAiChat, R"({"choices":[{"delta":{"content":"no index"}}]})"},
      {Dialect::kOpenAiChat, R"({"choices":[{"index":0,"delta":null}]})"},
      {Dialect::kOpenAiChat,
       R"({"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"prompt_tokens":1}})"},
      {Dialect::kOpenAiChat, R"({"choices":[{"index":0.0,"delta":{"content":"x"}}]})"},
      {Dialect::kOpenAiChat, R"({"choices":[{"index":0,"delta":{"content":"x"}}]} )"},
      {Dialect::kOpenAiChat,
       R"({"choices":[{"index":0,"delta":{"content":"x"},"extra":[1,2.5e3,true,false,{"a":null}]}]})"},
      {Dialect::kOpenAiChat, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tab\there\"}}]}"},
      {Dialect::kOpenAiChat, R"({"choices":[{"index":0,"delta":{"content":"x"}}],})"},
      {Dialect::kOpenAiChat, R"({"choices":[{"index":01,"delta":{"content":"x"}}]})"},
      {Dialect::kOpenAiChat, R"({"choices":[{"index":0,"delta":{"content":"x"}},]})"},
  };
  for (const auto& [dialect, data] : cases) {
    DialectDecoder fast(dialect);
    DialectDecoder slow(dialect, DialectDecoder::Options{.fast_path = false});
    const SseEvent event{"message", data, ""};
    EXPECT_EQ(Decode(fast, event), Decode(slow, event)) << data;
  }
}

TEST(JsonCursorTest, ReadsStringsWithEveryEscape) {
  JsonCursor cursor(R"("a\"b\\c\/d\be\ff\ng\rh\ti\u0041\u00e9\u20ac\ud83d\ude00")");
  std::string out;
  ASSERT_TRUE(cursor.ReadString(out));
  EXPECT_EQ(out, "a\"b\\c/d\be\ff\ng\rh\tiA\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_TRUE(cursor.AtEnd());
}

TEST(JsonCursorTest, IsAtLeastAsStrictAsNlohmann) {
  const std::vector<std::string> documents = {
      R"({"a":"\ud800"})",
      R"({"a":"\udc00"})",
      R"({"a":"\x"})",
      "{\"a\":\"\x01\"}",
      "{\"a\":\"\xC3\"}",
      "{\"a\":\"\xED\xA0\x80\"}",
      R"({"a":01})",
      R"({"a":1.})",
      R"({"a":.5})",
      R"({"a":-})",
      R"({"a":1e})",
      R"({"a":tru})",
      R"({"a":[1,]})",
      R"({"a":1,})",
      R"({"a" 1})",
      R"({"a":1}})",
      R"({'a':1})",
      R"({"a":NaN})",
      R"({"a":"\u12"})",
      R"({"a":1e5,"b":-0.5E-3,"c":[],"d":{},"e":"\u00e9"})",
      " {\"a\" : [ true , false , null ] } ",
  };
  for (const std::string& document : documents) {
    JsonCursor cursor(document);
    const bool cursor_ok = cursor.SkipValue() && cursor.AtEnd();
    const bool nlohmann_ok = nlohmann::json::accept(document);
    if (cursor_ok) {
      EXPECT_TRUE(nlohmann_ok) << document;
    }
    if (document.find("1e5") != std::string::npos || document.front() == ' ') {
      EXPECT_TRUE(cursor_ok) << document;
    }
  }
}

TEST(JsonCursorTest, ReadIntRejectsFloatsAndOverflow) {
  std::int64_t value = 0;
  JsonCursor small("-42");
  ASSERT_TRUE(small.ReadInt(value));
  EXPECT_EQ(value, -42);
  JsonCursor big("9223372036854775807");
  ASSERT_TRUE(big.ReadInt(value));
  EXPECT_EQ(value, INT64_MAX);
  JsonCursor overflow("9223372036854775808");
  EXPECT_FALSE(overflow.ReadInt(value));
  JsonCursor fraction("1.5");
  EXPECT_FALSE(fraction.ReadInt(value));
  JsonCursor exponent("1e3");
  EXPECT_FALSE(exponent.ReadInt(value));
}

TEST(JsonCursorTest, DeepNestingIsRefusedNotOverflowed) {
  const std::string deep = std::string(10000, '[') + std::string(10000, ']');
  JsonCursor cursor(deep);
  EXPECT_FALSE(cursor.SkipValue());
}

}  // namespace
}  // namespace faultline::ref
