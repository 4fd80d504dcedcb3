// The fast path's shortcut for repeated delta events (JsonShape, decode_fast_path.cc) must never
// change what the decoders say. A delta event is recorded, then events that differ from it only in
// the hole values (the text, the sequence number) — every kind of value, valid or not — and in
// single bytes anywhere are decoded by a decoder that has the shape and by one without the fast
// path; their results, and the protocol state they leave, must be identical. The tests also check
// that the shortcut is really taken, so that the comparison covers it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "reference_impl/dialect_decoder.h"
#include "reference_impl/json_cursor.h"
#include "reference_impl/tests/decode_test_support.h"

namespace faultline::ref {
namespace {

using internal::JsonCursor;
using internal::JsonShape;

// A hot event with `$N` where its integer hole goes and `$S` where its string hole goes.
struct Template {
  Dialect dialect;
  std::string type;               // the SSE event type
  std::vector<SseEvent> prelude;  // what makes the event valid (content blocks)
  std::string data;
  bool shortcut = true;  // whether the fast path records it (so that the next one can match)
};

std::string Fill(std::string text, std::string_view number, std::string_view string) {
  for (auto [placeholder, value] :
       {std::pair{std::string_view("$N"), number}, std::pair{std::string_view("$S"), string}}) {
    if (const std::size_t at = text.find(placeholder); at != std::string::npos) {
      text.replace(at, placeholder.size(), value);
    }
  }
  return text;
}

std::vector<Template> Templates() {
  const SseEvent text_block{"content_block_start",
                            R"({"type":"content_block_start","index":0,)"
                            R"("content_block":{"type":"text","text":""}})",
                            ""};
  const SseEvent tool_block{"content_block_start",
                            R"({"type":"content_block_start","index":1,"content_block":)"
                            R"({"type":"tool_use","id":"toolu_1","name":"f","input":{}}})",
                            ""};
  return {
      {Dialect::kOpenAiChat,
       "message",
       {},
       R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,)"
       R"("model":"gpt-4o","choices":[{"index":0,"delta":{"content":$S},"logprobs":null,)"
       R"("finish_reason":null}],"usage":null})"},
      // A finish reason outside the holes: the shortcut must not take the event for its text alone.
      {Dialect::kOpenAiChat,
       "message",
       {},
       R"({"choices":[{"index":0,"delta":{"content":$S},"finish_reason":"length"}]})",
       /*shortcut=*/false},
      {Dialect::kAnthropicMessages,
       "content_block_delta",
       {text_block},
       R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":$S}})"},
      {Dialect::kAnthropicMessages,
       "content_block_delta",
       {text_block, tool_block},
       R"({"type":"content_block_delta","index":1,)"
       R"("delta":{"type":"input_json_delta","partial_json":$S}})"},
      {Dialect::kAnthropicMessages,
       "message",
       {text_block},
       R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":$S}})"},
      {Dialect::kOpenAiResponses,
       "response.output_text.delta",
       {},
       R"({"type":"response.output_text.delta","sequence_number":$N,"item_id":"msg_1",)"
       R"("output_index":0,"content_index":0,"delta":$S,"logprobs":[]})"},
      {Dialect::kOpenAiResponses,
       "message",
       {},
       R"({"type":"response.function_call_arguments.delta","delta":$S,"output_index":1,)"
       R"("sequence_number":$N})"},
      // The usage around the hole is recorded with the shape and repeated by a match.
      {Dialect::kGemini,
       "message",
       {},
       R"({"candidates":[{"content":{"parts":[{"text":$S}],"role":"model"},"index":0}],)"
       R"("usageMetadata":{"promptTokenCount":812,"totalTokenCount":812},)"
       R"("modelVersion":"gemini-2.5-flash","responseId":"Rm3OaNvBBPCXz7IPq4Pz2Ao"})"},
      {Dialect::kGemini,
       "message",
       {},
       R"({"candidates":[{"content":{"parts":[{"thought":true,"text":$S}]}}]})"},
      {Dialect::kGemini,
       "message",
       {},
       R"({"candidates":[{"content":{"parts":[{"text":$S}]},"finishReason":"STOP"}]})",
       /*shortcut=*/false},
      {Dialect::kOllama,
       "message",
       {},
       R"({"model":"llama3.2","created_at":"2025-03-06T19:55:58.123456789Z","message":)"
       R"({"role":"assistant","content":$S},"done":false})"},
      {Dialect::kOllama,
       "message",
       {},
       R"({"message":{"role":"assistant","content":"","thinking":$S},"done":false})"},
      {Dialect::kBedrockConverse,
       "contentBlockDelta",
       {},
       R"({"contentBlockIndex":0,"delta":{"text":$S},"p":"abcdefghijklmnopqr"})"},
      {Dialect::kBedrockConverse,
       "contentBlockDelta",
       {},
       R"({"contentBlockIndex":1,"delta":{"reasoningContent":{"text":$S}},"p":"abc"})"},
      {Dialect::kBedrockConverse,
       "contentBlockDelta",
       {},
       R"({"contentBlockIndex":2,"delta":{"toolUse":{"input":$S}}})"},
  };
}

const std::vector<std::string> kStringValues = {
    R"("x")",
    R"("")",
    R"("a\"b")",
    R"("\n\n")",
    R"("\\")",
    R"("\/")",
    R"("\u00e9")",
    R"("\ud83d\ude00")",
    R"("\ud800")",
    R"("\udc00x")",
    R"("\x")",
    R"("\u12")",
    "\"caf\xC3\xA9\"",
    "\"\xC3\"",
    "\"\xED\xA0\x80\"",
    "\"tab\there\"",
    "\"\x01\"",
    R"("a plain string that is longer than sixteen bytes")",
    R"("a longer string with an escape at its very end\n")",
    R"( "spaced")",
    R"("spaced" )",
    R"("unterminated)",
    "null",
    "1",
    "true",
    R"({"x":1})",
    R"(["x"])",
    R"("a","content":"b")",
    R"("a","text":"b")",
    R"("a","delta":"b")",
    R"("a","thinking":"b")",
    R"("a","input":"b")",
    R"("a","thought":true)",
    R"("a","functionCall":{"name":"f"})",
    R"("a"})",
    R"("a\)",
    ""};

const std::vector<std::string> kIntValues = {"1",
                                             "2",
                                             "0",
                                             "00",
                                             "01",
                                             "-1",
                                             "-0",
                                             "1.0",
                                             "1e0",
                                             "2E1",
                                             "9223372036854775807",
                                             "9223372036854775808",
                                             "99999999999999999999",
                                             " 1",
                                             "1 ",
                                             R"("1")",
                                             "null",
                                             R"(1,"sequence_number":2)",
                                             ""};

// Decodes `prelude` and the template filled with plain values (sequence number 0) with both
// decoders, so that `fast` holds the template's shape.
void Prime(const Template& t, DialectDecoder& fast, DialectDecoder& slow) {
  for (const SseEvent& event : t.prelude) {
    ASSERT_EQ(DecodeOne(fast, event), DecodeOne(slow, event));
  }
  const SseEvent first{t.type, Fill(t.data, "0", R"("first")"), ""};
  const DecodedEvent expected = DecodeOne(slow, first);
  ASSERT_TRUE(expected.ok) << first.data;
  ASSERT_EQ(DecodeOne(fast, first), expected);
  ASSERT_EQ(fast.state().last_delta.recorded(), t.shortcut) << first.data;
}

// Decodes `data` with both decoders, then a valid event after it: results and state must agree.
// Returns whether the shortcut matched `data`.
bool ExpectSame(const Template& t, std::string_view sse_type, const std::string& data) {
  DialectDecoder fast(t.dialect);
  DialectDecoder slow(t.dialect, DialectDecoder::Options{.fast_path = false});
  Prime(t, fast, slow);
  std::int64_t number = 0;
  std::string string;
  const bool matched = fast.state().last_delta.Match(data, number, string);
  const SseEvent event{std::string(sse_type), data, ""};
  EXPECT_EQ(DecodeOne(fast, event), DecodeOne(slow, event)) << sse_type << " " << data;
  EXPECT_EQ(fast.state().last_sequence_number, slow.state().last_sequence_number) << data;
  EXPECT_EQ(fast.state().whole_calls, slow.state().whole_calls) << data;
  const SseEvent next{t.type, Fill(t.data, "2", R"("next")"), ""};
  EXPECT_EQ(DecodeOne(fast, next), DecodeOne(slow, next)) << data;
  return matched;
}

TEST(DecodeShapeTest, EveryHoleValueDecodesIdentically) {
  int matched = 0;
  int compared = 0;
  for (const Template& t : Templates()) {
    const bool has_int = t.data.find("$N") != std::string::npos;
    for (const std::string& string : kStringValues) {
      for (const std::string& number : has_int ? kIntValues : std::vector<std::string>{"1"}) {
        matched += ExpectSame(t, t.type, Fill(t.data, number, string)) ? 1 : 0;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 1000);
  // The shortcut matched every event whose hole values are valid (and then agreed).
  EXPECT_GT(matched, 200) << compared;
}

TEST(DecodeShapeTest, PlainNextDeltasTakeTheShortcut) {
  for (const Template& t : Templates()) {
    DialectDecoder fast(t.dialect);
    DialectDecoder slow(t.dialect, DialectDecoder::Options{.fast_path = false});
    Prime(t, fast, slow);
    const std::string data = Fill(t.data, "1", R"("a \"quoted\" caf\u00e9 \ud83d\ude00")");
    std::int64_t number = 0;
    std::string string;
    EXPECT_EQ(fast.state().last_delta.Match(data, number, string), t.shortcut) << data;
    if (t.shortcut) {
      EXPECT_EQ(string, "a \"quoted\" caf\xC3\xA9 \xF0\x9F\x98\x80");
    }
    EXPECT_EQ(DecodeOne(fast, {t.type, data, ""}), DecodeOne(slow, {t.type, data, ""}));
  }
}

TEST(DecodeShapeTest, TheSseTypeIsCheckedOnTheShortcutToo) {
  for (const Template& t : Templates()) {
    for (std::string_view type :
         {"message", "content_block_delta", "response.output_text.delta", "response.refusal.delta",
          "response.function_call_arguments.delta", "ping"}) {
      EXPECT_EQ(ExpectSame(t, type, Fill(t.data, "1", R"("x")")), t.shortcut) << t.data;
    }
  }
}

// Deletes or replaces each byte of a plain next event, around the holes and everywhere else.
TEST(DecodeShapeTest, MutatedNextDeltasDecodeIdentically) {
  static constexpr std::string_view kReplacements[] = {"\"", "\\", "{", "}", ",",    ":",
                                                       "0",  "x",  " ", "]", "\x01", "\xC3"};
  int compared = 0;
  for (const Template& t : Templates()) {
    const std::string data = Fill(t.data, "1", R"("ab\n")");
    for (std::size_t i = 0; i < data.size(); ++i) {
      std::vector<std::string> mutated = {data.substr(0, i) + data.substr(i + 1)};
      for (std::string_view replacement : kReplacements) {
        mutated.push_back(data.substr(0, i) + std::string(replacement) + data.substr(i + 1));
      }
      for (const std::string& m : mutated) {
        ExpectSame(t, t.type, m);
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 5000);
}

// The shortcut is also taken along a real stream, once the first delta is recorded.
TEST(DecodeShapeTest, BenchmarkLikeStreamsUseTheShortcut) {
  std::string sse;
  for (int i = 0; i < 50; ++i) {
    sse += "data: " + Fill(Templates()[0].data, "", "\"token " + std::to_string(i) + "\"") + "\n\n";
  }
  SseDecoder sse_decoder;
  auto fed = sse_decoder.Feed(sse);
  ASSERT_FALSE(fed.error);
  DialectDecoder decoder(Dialect::kOpenAiChat);
  int matched = 0;
  for (const SseEventView& event : fed.events) {
    std::int64_t number = 0;
    std::string string;
    matched += decoder.state().last_delta.Match(event.data, number, string) ? 1 : 0;
    std::vector<Delta> out;
    ASSERT_TRUE(decoder.DecodeEvent(event, out).has_value());
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(std::get<TextDelta>(out[0]).text, string.empty() ? "token 0" : string);
  }
  EXPECT_EQ(matched, 49);
}

TEST(JsonShapeTest, MatchComparesTheBytesAroundTheHoles) {
  const std::string recorded = R"({"n":12,"s":"ab"})";
  JsonShape shape;
  shape.Record(recorded, JsonShape::Hole{JsonShape::HoleKind::kInt, 5, 7},
               JsonShape::Hole{JsonShape::HoleKind::kString, 12, 16}, {});
  const std::vector<std::pair<std::string, bool>> cases = {
      {R"({"n":12,"s":"ab"})", true},
      {R"({"n":7,"s":"xyz\n"})", true},
      {R"({"n":7,"s":"x"} )", false},
      {R"({"n":7,"s":"x"})", true},
      {R"({"n":7,"s":"x"})", true},
      {R"({"m":7,"s":"x"})", false},
      {R"({"n":7,"t":"x"})", false},
      {R"({"n":7.5,"s":"x"})", false},
      {R"({"n":"7","s":"x"})", false},
      {R"({"n":7,"s":x})", false},
      {R"({"n":7,"s":"x")", false},
      {R"({"n":7,"s":"x"}})", false},
      {R"({"n":)", false},
      {"", false},
  };
  for (const auto& [text, expected] : cases) {
    std::int64_t number = 0;
    std::string string;
    EXPECT_EQ(shape.Match(text, number, string), expected) << text;
  }
  std::int64_t number = 0;
  std::string string;
  ASSERT_TRUE(shape.Match(R"({"n":-3,"s":"\u00e9"})", number, string));
  EXPECT_EQ(number, -3);
  EXPECT_EQ(string, "\xC3\xA9");
  EXPECT_FALSE(JsonShape().Match(recorded, number, string));  // nothing recorded
}

// ReadString and ReadRawString read whole words, and near the end of the text the word that ends
// there: a string must read the same wherever it lies relative to word boundaries and the end.
TEST(JsonCursorTest, StringsReadTheSameAtEveryOffset) {
  const std::vector<std::string> tokens = {R"("")",
                                           R"("a")",
                                           R"("abcdefg")",
                                           R"("abcdefgh")",
                                           R"("abcdefghijklmnopq")",
                                           R"("a\"b")",
                                           R"("\\")",
                                           R"("x\u00e9y")",
                                           "\"caf\xC3\xA9\"",
                                           "\"\xC3\"",
                                           "\"a\x01\"",
                                           R"("unterminated)",
                                           R"("ab\)",
                                           R"("\ud83d\ude00")",
                                           "\"\x7F\""};
  for (const std::string& token : tokens) {
    const nlohmann::json expected = nlohmann::json::parse(token, nullptr, false);
    for (std::size_t before = 0; before <= 17; ++before) {
      for (const std::string_view after : {"", " ", "}", "}}}}}}}}}}", ",1]"}) {
        const std::string text = std::string(before, ' ') + token + std::string(after);
        JsonCursor cursor(text);
        std::string read;
        const bool ok = cursor.ReadString(read);
        EXPECT_EQ(ok, !expected.is_discarded()) << text;
        if (ok && !expected.is_discarded()) {
          EXPECT_EQ(read, expected.get<std::string>()) << text;
          EXPECT_EQ(cursor.offset(), before + token.size()) << text;
        }
        JsonCursor raw_cursor(text);
        std::string_view raw;
        if (raw_cursor.ReadRawString(raw)) {  // only strings without escapes, unchanged
          ASSERT_FALSE(expected.is_discarded()) << text;
          EXPECT_EQ(raw, expected.get<std::string>()) << text;
        }
      }
    }
  }
}

}  // namespace
}  // namespace faultline::ref
