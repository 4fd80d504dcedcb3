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

std::vector<SseEvent> EventsOf(std::string_view sse) {
  SseDecoder decoder;
  auto fed = decoder.Feed(sse);
  EXPECT_FALSE(fed.error);
  return std::vector<SseEvent>(fed.events.begin(), fed.events.end());
}

// Decodes `events` with both decoders, requiring identical results.
void ExpectSameAlong(const std::vector<SseEvent>& events, DialectDecoder& fast,
                     DialectDecoder& slow) {
  for (const SseEvent& event : events) {
    ASSERT_EQ(DecodeOne(fast, event), DecodeOne(slow, event)) << event.data;
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
        const DecodedEvent expected = DecodeOne(slow_copy, mutated);
        ASSERT_EQ(DecodeOne(fast_copy, mutated), expected) << data;
        fast_accepted += expected.ok ? 1 : 0;
        ++compared;
        // Only the Responses fast path changes protocol state (the sequence number): the state
        // both decoders left behind must agree too.
        if (stream.dialect == Dialect::kOpenAiResponses && i + 1 < events.size()) {
          ASSERT_EQ(DecodeOne(fast_copy, events[i + 1]), DecodeOne(slow_copy, events[i + 1]))
              << data;
        }
      }
      ASSERT_EQ(DecodeOne(fast, events[i]), DecodeOne(slow, events[i]));
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
    EXPECT_EQ(DecodeOne(fast, event), DecodeOne(slow, event)) << data;
  }
}

TEST(DialectFastPathTest, ResponsesSpecificsAgree) {
  const std::vector<std::string> cases = {
      R"({"type":"response.completed","sequence_number":3,"response":{"usage":{"input_tokens":1,"output_tokens":2}}})",
      R"({"type":"response.completed","response":{"output":[{"text":"x"}],"usage":{"output_tokens":2}}})",
      R"({"type":"response.completed","response":{"status":"completed"}})",
      R"({"type":"response.completed","response":{"usage":null}})",
      R"({"type":"response.completed","response":{"usage":{"input_tokens":null}}})",
      R"({"type":"response.completed","response":{"usage":{"input_tokens":1.5}}})",
      R"({"type":"response.completed","response":{"usage":{"input_tokens":1,"input_tokens":2}}})",
      R"({"type":"response.completed","response":{"usage":{},"usage":{"input_tokens":2}}})",
      R"({"type":"response.completed","response":{},"response":{"usage":{}}})",
      R"({"type":"response.completed","response":null})",
      R"({"type":"response.completed","response":[]})",
      R"({"type":"response.completed"})",
      R"({"response":{"usage":{"input_tokens":5}},"type":"response.completed"})",
      R"({"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}}})",
      R"({"type":"response.failed","response":{"error":{"code":"x","message":"y"}}})",
      R"({"type":"response.output_text.done","sequence_number":7,"text":"a\"b\u00e9"})",
      R"({"type":"response.output_text.done","text":"x","extra":1e400})",
      R"({"type":"response.output_text.done","text":"x","extra":1e-400})",
      R"({"type":"response.output_text.done","text":"x","extra":-2.5E+300})",
      R"({"type":"response.output_text.done","delta":5})",
      R"({"type":"response.content_part.done","part":{"type":"output_text","text":"\ud800"}})",
      R"({"type":"response.output_item.done","item":{"content":[{"text":"x"}]}})",
      R"({"type":"response.output_item.added","output_index":0,"item":{"type":"message"}})",
      R"({"type":"error","code":"server_error","message":"boom"})",
      R"({"type":"error","delta":"x","message":"boom"})",
      R"({"type":"response.created","sequence_number":"1"})",
      R"({"type":"response.created","sequence_number":1,"sequence_number":2})",
      R"({"type":"response.created","type":"response.created"})",
      R"({"type":"response.\u0063reated"})",
      R"({"type":null})",
      R"(["type"])",
  };
  for (const std::string& data : cases) {
    for (std::string_view type : {"message", "response.completed", "response.output_text.done"}) {
      for (const bool with_last : {false, true}) {
        DialectDecoder fast(Dialect::kOpenAiResponses);
        DialectDecoder slow(Dialect::kOpenAiResponses, DialectDecoder::Options{.fast_path = false});
        if (with_last) {  // sequence number 6 seen: 7 follows, 3 is a step back
          const SseEvent first{"message", R"({"type":"response.in_progress","sequence_number":6})",
                               ""};
          ASSERT_EQ(DecodeOne(fast, first), DecodeOne(slow, first));
        }
        const SseEvent event{std::string(type), data, ""};
        EXPECT_EQ(DecodeOne(fast, event), DecodeOne(slow, event)) << type << " " << data;
        EXPECT_EQ(fast.state().last_sequence_number, slow.state().last_sequence_number) << data;
      }
    }
  }
}

// The Anthropic events around the deltas: near misses of each, under its own SSE name, under
// "message" and under another name, before and after a text block was started.
TEST(DialectFastPathTest, AnthropicEventsAroundTheDeltasAgree) {
  const std::vector<std::string> cases = {
      R"({"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":5,)"
      R"("cache_creation_input_tokens":2,"cache_read_input_tokens":3,"output_tokens":1}}})",
      R"({"type":"message_start","message":{"usage":{"output_tokens":1}}})",
      R"({"type":"message_start","message":{"usage":{"input_tokens":null}}})",
      R"({"type":"message_start","message":{"usage":{"input_tokens":-1}}})",
      R"({"type":"message_start","message":{"usage":{"input_tokens":9223372036854775807,)"
      R"("cache_read_input_tokens":1}}})",
      R"({"type":"message_start","message":{"usage":{"input_tokens":1,"input_tokens":2}}})",
      R"({"type":"message_start","message":{"usage":{"input_tokens":"1"}}})",
      R"({"type":"message_start","message":{"usage":null}})",
      R"({"type":"message_start","message":{}})",
      R"({"type":"message_start","message":null})",
      R"({"type":"message_start"})",
      R"({"message":{"usage":{"input_tokens":4}},"type":"message_start"})",
      R"({"type":"message_start","message":{},"message":{"usage":{"input_tokens":4}}})",
      R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})",
      R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hi"}})",
      R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":null}})",
      R"({"type":"content_block_start","index":0,"content_block":{"type":"text"}})",
      R"({"type":"content_block_start","index":2,"content_block":{"type":"thinking",)"
      R"("thinking":"hmm","signature":""}})",
      R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t",)"
      R"("name":"f","input":{}}})",
      R"({"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use"}})",
      R"({"type":"content_block_start","index":4294967296,"content_block":{"type":"text"}})",
      R"({"type":"content_block_start","index":0,"content_block":{"type":"text","type":"x"}})",
      R"({"type":"content_block_start","content_block":{"type":"text"}})",
      R"({"type":"content_block_start","index":0})",
      R"({"type":"content_block_stop","index":0})",
      R"({"type":"content_block_stop","index":0.5})",
      R"({"type":"content_block_stop"})",
      R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},)"
      R"("usage":{"output_tokens":15}})",
      R"({"type":"message_delta","delta":{"stop_reason":null},"usage":{"output_tokens":15}})",
      R"({"type":"message_delta","delta":{"stop_reason":5}})",
      R"({"type":"message_delta","delta":{}})",
      R"({"type":"message_delta","usage":{"output_tokens":15}})",
      R"({"type":"message_delta","delta":{"stop_reason":"a","stop_reason":"b"}})",
      R"({"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{}})",
      R"({"type":"message_stop"})",
      R"({"type":"message_stop","extra":[1,{"a":null}]})",
      R"({"type":"message_stop"} x)",
      R"({"type":"ping"})",
      R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})",
      R"({"error":{"type":"overloaded_error","message":"Overloaded"}})",
      R"({"type":"future_event","index":0})",
      R"({"type":"message_stop"})",
  };
  const SseEvent text_block{"content_block_start",
                            R"({"type":"content_block_start","index":0,)"
                            R"("content_block":{"type":"text","text":""}})",
                            ""};
  const SseEvent next_delta{"content_block_delta",
                            R"({"type":"content_block_delta","index":2,)"
                            R"("delta":{"type":"thinking_delta","thinking":"x"}})",
                            ""};
  int taken = 0;
  for (const std::string& data : cases) {
    const std::string own_type = nlohmann::json::parse(data, nullptr, false).is_object()
                                     ? nlohmann::json::parse(data).value("type", "message")
                                     : "message";
    for (const std::string& type : {own_type, std::string("message"), std::string("ping")}) {
      for (const bool started : {false, true}) {
        DialectDecoder fast(Dialect::kAnthropicMessages);
        DialectDecoder slow(Dialect::kAnthropicMessages,
                            DialectDecoder::Options{.fast_path = false});
        if (started) {
          ASSERT_EQ(DecodeOne(fast, text_block), DecodeOne(slow, text_block));
        }
        const SseEvent event{type, data, ""};
        DialectDecoder::State scratch = fast.state();
        std::vector<Delta> ignored;
        taken += internal::TryDecodeFast(Dialect::kAnthropicMessages, event, scratch, ignored);
        EXPECT_EQ(DecodeOne(fast, event), DecodeOne(slow, event)) << type << " " << data;
        // The blocks started (or not) agree: a delta to block 2 is accepted by both or neither.
        EXPECT_EQ(DecodeOne(fast, next_delta), DecodeOne(slow, next_delta)) << data;
      }
    }
  }
  EXPECT_GT(taken, 40);  // the shortcut is really taken, so that the comparison covers it
}

// The large Responses events that repeat the whole text are taken by the fast path (no tree).
TEST(DialectFastPathTest, ResponsesDoneAndCompletedEventsTakeTheFastPath) {
  DialectDecoder decoder(Dialect::kOpenAiResponses);
  int taken = 0;
  for (const SseEvent& event : EventsOf(fixtures::kResponsesText)) {
    DialectDecoder::State scratch = decoder.state();
    std::vector<Delta> out;
    const bool fast = internal::TryDecodeFast(Dialect::kOpenAiResponses, event, scratch, out);
    if (event.type.ends_with(".done") || event.type == "response.completed") {
      EXPECT_TRUE(fast) << event.data;
      taken += fast ? 1 : 0;
    }
    if (event.type == "response.completed") {
      ASSERT_EQ(out.size(), 3u);
      EXPECT_EQ(out[0], Delta(UsageDelta{37, 11}));
      EXPECT_EQ(out[1], Delta(FinishDelta{"completed"}));
      EXPECT_EQ(out[2], Delta(TerminalDelta{TerminalMarker::kResponseCompleted}));
    }
    std::vector<Delta> ignored;
    ASSERT_TRUE(decoder.DecodeEvent(event, ignored).has_value()) << event.data;
  }
  EXPECT_EQ(taken, 4);
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
      R"({"a":1e400})",
      R"({"a":-1E+309})",
      "{\"a\":1" + std::string(400, '0') + "}",
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
