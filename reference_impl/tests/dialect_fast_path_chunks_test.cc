// The fast path of Gemini, Ollama and Bedrock (decode_fast_path_gemini_ollama_bedrock.cc) must
// never change what the decoders say: every event of streams written like the fake provider's and
// the benchmark's, thousands of mutations of the hot ones, and hand-picked near misses go through a
// decoder with the fast path and one without, which must agree event by event (deltas, acceptance
// and the state they leave). The tests also check that the fast path takes the hot events, so
// that the comparison covers it, and that it leaves the near misses to the full decoder.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "reference_impl/bench/stream_fixtures.h"
#include "reference_impl/dialect_decoder.h"
#include "reference_impl/dialect_decoder_internal.h"
#include "reference_impl/event_stream_decoder.h"
#include "reference_impl/ndjson_decoder.h"
#include "reference_impl/tests/decode_test_support.h"

namespace faultline::ref {
namespace {

struct EventStream {
  Dialect dialect;
  std::vector<SseEvent> events;
  // How many of them the fast path takes: the text, thought, content, thinking, reasoning and
  // argument chunks, and Gemini's finish chunk; not calls, errors, last lines or other events.
  int hot = 0;
};

SseEvent Data(std::string data) { return {"message", std::move(data), ""}; }

// A Gemini chunk as the fake provider writes it: one candidate, one part, the running usage.
SseEvent GeminiChunk(std::string_view part) {
  return Data(R"({"candidates":[{"content":{"parts":[)" + std::string(part) +
              R"(],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":9,)"
              R"("totalTokenCount":9},"modelVersion":"gemini-2.5-flash","responseId":"r-1"})");
}

// An Ollama line as the fake provider writes it.
SseEvent OllamaLine(std::string_view message, std::string_view done = "false") {
  return Data(R"({"model":"llama3.2","created_at":"2025-03-06T19:55:58.123456789Z","message":)" +
              std::string(message) + R"(,"done":)" + std::string(done) + "}");
}

// A Bedrock event with the fake provider's padding.
SseEvent BedrockPadded(std::string_view type, std::string_view members) {
  return {std::string(type),
          "{" + std::string(members) + R"(,"p":"abcdefghijklmnopqrstuvwxyzABCDEFGH"})", ""};
}

std::vector<EventStream> Streams() {
  return {
      {Dialect::kGemini,
       {GeminiChunk(R"({"text":"Let me think","thought":true})"),
        GeminiChunk(R"({"text":" about it.","thought":true})"), GeminiChunk(R"({"text":"Hel"})"),
        GeminiChunk(R"({"text":"lo \"w\u00f6rld\"\n"})"),
        GeminiChunk("{\"text\":\" caf\xC3\xA9\"}"), GeminiChunk(R"({"text":"!","thought":false})"),
        GeminiChunk(R"({"functionCall":{"name":"get_weather","args":{"city":"Paris"}}})"),
        Data(
            R"({"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},)"
            R"("finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":9,)"
            R"("candidatesTokenCount":3,"totalTokenCount":12},"modelVersion":"gemini-2.5-flash"})")},
       7},
      {Dialect::kGemini,
       {GeminiChunk(R"({"text":"Hel"})"),
        Data(
            R"({"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}})")},
       1},
      {Dialect::kOllama,
       {OllamaLine(R"({"role":"assistant","content":"","thinking":"Hmm"})"),
        OllamaLine(R"({"role":"assistant","content":"","thinking":", let me see."})"),
        OllamaLine(R"({"role":"assistant","content":"Hel"})"),
        OllamaLine(R"({"role":"assistant","content":"lo \"w\u00f6rld\"\n"})"),
        OllamaLine("{\"role\":\"assistant\",\"content\":\" caf\xC3\xA9\"}"),
        OllamaLine(R"({"role":"assistant","content":"","tool_calls":[{"function":)"
                   R"({"name":"get_weather","arguments":{"city":"Paris"}}}]})"),
        Data(R"({"model":"llama3.2","created_at":"2025-03-06T19:55:58.123456789Z","message":)"
             R"({"role":"assistant","content":""},"done":true,"done_reason":"stop",)"
             R"("total_duration":4883583458,"prompt_eval_count":9,"eval_count":3})")},
       5},
      {Dialect::kOllama,
       {OllamaLine(R"({"role":"assistant","content":"Hel"})"),
        Data(R"({"error":"model 'llama9' not found"})")},
       1},
      {Dialect::kBedrockConverse,
       {BedrockPadded("messageStart", R"("role":"assistant")"),
        BedrockPadded("contentBlockDelta",
                      R"("contentBlockIndex":0,"delta":{"reasoningContent":{"text":"Hmm"}})"),
        BedrockPadded("contentBlockDelta",
                      R"("contentBlockIndex":0,"delta":{"reasoningContent":{"text":", so"}})"),
        BedrockPadded("contentBlockStop", R"("contentBlockIndex":0)"),
        BedrockPadded("contentBlockDelta", R"("contentBlockIndex":1,"delta":{"text":"Hel"})"),
        BedrockPadded("contentBlockDelta",
                      R"("contentBlockIndex":1,"delta":{"text":"lo \"w\u00f6rld\"\n"})"),
        BedrockPadded("contentBlockDelta",
                      "\"contentBlockIndex\":1,\"delta\":{\"text\":\" caf\xC3\xA9\"}"),
        BedrockPadded("contentBlockStop", R"("contentBlockIndex":1)"),
        BedrockPadded("contentBlockStart", R"("contentBlockIndex":2,"start":{"toolUse":)"
                                           R"({"toolUseId":"tooluse_1","name":"get_weather"}})"),
        BedrockPadded("contentBlockDelta",
                      R"("contentBlockIndex":2,"delta":{"toolUse":{"input":"{\"city\":"}})"),
        BedrockPadded("contentBlockDelta",
                      R"("contentBlockIndex":2,"delta":{"toolUse":{"input":"\"Paris\"}"}})"),
        BedrockPadded("contentBlockStop", R"("contentBlockIndex":2)"),
        BedrockPadded("messageStop", R"("stopReason":"tool_use")"),
        BedrockPadded("metadata",
                      R"("usage":{"inputTokens":9,"outputTokens":3,"totalTokens":12})")},
       7},
      {Dialect::kBedrockConverse,
       {BedrockPadded("contentBlockDelta", R"("contentBlockIndex":0,"delta":{"text":"Hel"})"),
        {"exception:throttlingException", R"({"message":"Too many requests"})", ""}},
       1},
  };
}

DialectDecoder FullOnly(Dialect dialect) {
  return DialectDecoder(dialect, DialectDecoder::Options{.fast_path = false});
}

// Whether the fast path takes `event` in `decoder`'s state (on a scratch copy of it).
bool TakenFast(const DialectDecoder& decoder, const SseEvent& event) {
  DialectDecoder::State scratch = decoder.state();
  std::vector<Delta> ignored;
  return internal::TryDecodeFast(decoder.dialect(), event, scratch, ignored);
}

// Decodes `event` with both decoders: the same deltas, the same acceptance, the same state.
void ExpectSame(DialectDecoder& fast, DialectDecoder& slow, const SseEvent& event) {
  EXPECT_EQ(DecodeOne(fast, event), DecodeOne(slow, event)) << event.type << " " << event.data;
  EXPECT_EQ(fast.state().whole_calls, slow.state().whole_calls) << event.data;
}

TEST(DialectFastPathChunksTest, StreamsDecodeIdenticallyAndTheHotEventsTakeTheFastPath) {
  for (const EventStream& stream : Streams()) {
    DialectDecoder fast(stream.dialect);
    DialectDecoder slow = FullOnly(stream.dialect);
    int taken = 0;
    for (const SseEvent& event : stream.events) {
      taken += TakenFast(fast, event) ? 1 : 0;
      ExpectSame(fast, slow, event);
    }
    EXPECT_EQ(taken, stream.hot) << ToString(stream.dialect);
  }
}

TEST(DialectFastPathChunksTest, MutatedHotEventsDecodeIdentically) {
  int compared = 0;
  int accepted = 0;
  for (const EventStream& stream : Streams()) {
    DialectDecoder fast(stream.dialect);
    DialectDecoder slow = FullOnly(stream.dialect);
    for (std::size_t i = 0; i < stream.events.size(); ++i) {
      const SseEvent& event = stream.events[i];
      for (const std::string& data :
           TakenFast(fast, event) ? Mutations(event.data) : std::vector<std::string>{}) {
        DialectDecoder fast_copy = fast;  // with the shape of the previous hot event, if any
        DialectDecoder slow_copy = slow;
        const SseEvent mutated{event.type, data, ""};
        const DecodedEvent expected = DecodeOne(slow_copy, mutated);
        ASSERT_EQ(DecodeOne(fast_copy, mutated), expected) << data;
        accepted += expected.ok ? 1 : 0;
        ++compared;
        // The state left behind (calls counted, the shape recorded) must not change what follows.
        if (i + 1 < stream.events.size()) {
          ASSERT_EQ(DecodeOne(fast_copy, stream.events[i + 1]),
                    DecodeOne(slow_copy, stream.events[i + 1]))
              << data;
        }
      }
      ExpectSame(fast, slow, event);
    }
  }
  EXPECT_GT(compared, 30000) << accepted << " accepted";
  EXPECT_GT(accepted, 3000) << compared << " compared";  // mutations accepted and refused
}

struct NearMiss {
  Dialect dialect;
  SseEvent event;
  bool falls_back = true;  // the fast path must leave it to the full decoder
};

std::vector<NearMiss> NearMisses() {
  const auto gemini = [](std::string data, bool falls_back = true) {
    return NearMiss{Dialect::kGemini, Data(std::move(data)), falls_back};
  };
  const auto ollama = [](std::string data, bool falls_back = true) {
    return NearMiss{Dialect::kOllama, Data(std::move(data)), falls_back};
  };
  const auto bedrock = [](std::string data, bool falls_back = true,
                          std::string type = "contentBlockDelta") {
    return NearMiss{Dialect::kBedrockConverse, {std::move(type), std::move(data), ""}, falls_back};
  };
  return {
      // gemini: duplicate keys, another candidate or part, another index, calls, nulls, errors.
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a","text":"b"}]}}]})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]}}],"candidates":[]})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]},"content":{}}]})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}],"parts":[]}}]})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]},"index":0,"index":0}]})"),
      gemini(
          R"({"candidates":[{"content":{"parts":[{"text":"a","thought":true,"thought":false}]}}]})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]}}],"usageMetadata":{},)"
             R"("usageMetadata":{"promptTokenCount":1}})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]}}],"usageMetadata":)"
             R"({"promptTokenCount":1,"promptTokenCount":2}})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]},"index":1}]})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]},"index":0.0}]})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]},"index":null}]})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]}},{"content":{}}]})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"},{"text":"b"}]}}]})"),
      gemini(
          R"({"candidates":[{"content":{"parts":[{"text":"a","functionCall":{"name":"f"}}]}}]})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":null}]}}]})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a","thought":"yes"}]}}]})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"","thought":1}]}}]})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]}}],"usageMetadata":null})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]}}],"usageMetadata":)"
             R"({"promptTokenCount":1.5}})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]}}],"error":null})"),
      gemini(R"({"candidates":[{"content":null}]})"),
      gemini(R"({"candidates":[]})"),
      gemini(R"({"promptFeedback":{"blockReason":"SAFETY"}})"),
      gemini(R"({"c\u0061ndidates":[{"content":{"parts":[{"text":"a"}]}}]})"),
      gemini("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\xC3\"}]}}]}"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"\ud800"}]}}]})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]}}]}})"),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]}}])"),
      // ... and what the fast path takes: escapes, members the full decoder ignores too.
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"\"\u00e9\ud83d\ude00\n"}]}}]})",
             false),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a","thoughtSignature":"xyz"}],)"
             R"("role":"model"},"safetyRatings":[{"category":"X","probability":"LOW"}]}],)"
             R"("extra":{"nested":[1,2.5,true,null]}})",
             false),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":null}]})", false),
      gemini(R"({"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"MAX_TOKENS"}],)"
             R"("usageMetadata":{"candidatesTokenCount":7}})",
             false),
      // ollama
      ollama(R"({"message":{"content":"a","content":"b"},"done":false})"),
      ollama(R"({"message":{"content":"a"},"message":{"content":"b"},"done":false})"),
      ollama(R"({"message":{"content":"a"},"done":false,"done":false})"),
      ollama(R"({"message":{"content":"a"},"done":true})"),
      ollama(R"({"message":{"content":"a"},"done":null})"),
      ollama(R"({"message":{"content":"a"},"done":0})"),
      ollama(R"({"message":{"content":"a"}})"),
      ollama(R"({"message":{"content":null},"done":false})"),
      ollama(R"({"message":{"thinking":null,"content":"a"},"done":false})"),
      ollama(R"({"message":null,"done":false})"),
      ollama(R"({"done":false})"),
      ollama(R"({"message":{"content":"a","tool_calls":[]},"done":false})"),
      ollama(R"({"message":{"content":"a"},"done":false,"error":"boom"})"),
      ollama(R"({"message":{"content":"a"},"done":false,"error":null})"),
      ollama(R"({"message":"a","done":false})"),
      ollama(R"({"message":{"c\u006fntent":"a"},"done":false})"),
      ollama("{\"message\":{\"content\":\"\xED\xA0\x80\"},\"done\":false}"),
      ollama(R"({"message":{"content":"a"},"done":false)"),
      ollama(R"({"message":{"content":"a"},"done":false}{})"),
      ollama(R"({"message":{"content":"\x"},"done":false})"),
      ollama(R"({"message":{"content":"a","thinking":"b"},"done":false})", false),
      ollama(R"({"message":{"content":"a","tool_calls":null,"images":["x"]},"done":false,)"
             R"("extra":1e5})",
             false),
      ollama(R"({"done":false,"message":{"content":"\"\u00e9\ud83d\ude00\n"}})", false),
      // bedrock
      bedrock(R"({"contentBlockIndex":0,"delta":{"text":"a","text":"b"}})"),
      bedrock(R"({"contentBlockIndex":0,"contentBlockIndex":1,"delta":{"text":"a"}})"),
      bedrock(R"({"contentBlockIndex":0,"delta":{"text":"a"},"delta":{"text":"b"}})"),
      bedrock(R"({"contentBlockIndex":0,"delta":{"text":"a","toolUse":{"input":"b"}}})"),
      bedrock(R"({"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"a","text":"b"}}})"),
      bedrock(R"({"contentBlockIndex":0,"delta":{"text":null}})"),
      bedrock(R"({"contentBlockIndex":0,"delta":{"text":null,"toolUse":{"input":"b"}}})"),
      bedrock(R"({"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"s"}}})"),
      bedrock(R"({"contentBlockIndex":0,"delta":{"toolUse":{}}})"),
      bedrock(R"({"contentBlockIndex":0,"delta":{}})"),
      bedrock(R"({"contentBlockIndex":-1,"delta":{"text":"a"}})"),
      bedrock(R"({"contentBlockIndex":1000001,"delta":{"text":"a"}})"),
      bedrock(R"({"contentBlockIndex":"0","delta":{"text":"a"}})"),
      bedrock(R"({"contentBlockIndex":0.0,"delta":{"text":"a"}})"),
      bedrock(R"({"delta":{"text":"a"}})"),
      bedrock(R"({"contentBlockIndex":0,"delta":null})"),
      bedrock(R"({"contentBlockIndex":0,"delta":{"text":"a"}})", true, "contentBlockStart"),
      bedrock(R"({"contentBlockIndex":0,"delta":{"text":"a"}})", true, "message"),
      bedrock(R"({"message":"slow down"})", true, "exception:throttlingException"),
      bedrock("{\"contentBlockIndex\":0,\"delta\":{\"text\":\"\x80\"}}"),
      bedrock(R"({"contentBlockIndex":0,"delta":{"text":"a"},})"),
      bedrock(R"({"contentBlockIndex":0,"delta":{"text":"a"}},"p":"x")"),
      bedrock(R"({"contentBlockIndex":1000000,"delta":{"text":"\"\u00e9\ud83d\ude00\n"}})", false),
      bedrock(R"({"p":"abc","contentBlockIndex":3,"delta":{"reasoningContent":)"
              R"({"signature":"s","text":"a"},"other":[1]}})",
              false),
      bedrock(R"({"contentBlockIndex":2,"delta":{"toolUse":{"input":""}}})", false),
  };
}

// Each near miss, to a fresh decoder and to one that has just recorded a plain hot event (so that
// both the full read and the shortcut's comparison see it).
TEST(DialectFastPathChunksTest, NearMissesFallBackAndAgree) {
  const std::vector<std::pair<Dialect, SseEvent>> primers = {
      {Dialect::kGemini, GeminiChunk(R"({"text":"first"})")},
      {Dialect::kOllama, OllamaLine(R"({"role":"assistant","content":"first"})")},
      {Dialect::kBedrockConverse,
       BedrockPadded("contentBlockDelta", R"("contentBlockIndex":0,"delta":{"text":"first"})")},
  };
  for (const NearMiss& miss : NearMisses()) {
    for (const auto& [dialect, primer] : primers) {
      if (dialect != miss.dialect) continue;
      for (const bool primed : {false, true}) {
        DialectDecoder fast(miss.dialect);
        DialectDecoder slow = FullOnly(miss.dialect);
        if (primed) {
          ASSERT_TRUE(TakenFast(fast, primer));
          ExpectSame(fast, slow, primer);
          ASSERT_TRUE(fast.state().last_delta.recorded());
        }
        EXPECT_EQ(TakenFast(fast, miss.event), !miss.falls_back)
            << miss.event.data << (primed ? " (primed)" : "");
        ExpectSame(fast, slow, miss.event);
        ExpectSame(fast, slow, primer);  // and what follows still agrees
      }
    }
  }
}

// The benchmark's bodies, through their framing: every event agrees, and the delta events take the
// fast path (for all six dialects, so that the figures measure what the tests check).
TEST(DialectFastPathChunksTest, BenchmarkBodiesDecodeIdenticallyOnTheFastPath) {
  for (const Dialect dialect : AllDialects()) {
    const std::string body = bench::BenchBody(dialect);
    SseDecoder sse;
    NdjsonDecoder ndjson;
    EventStreamDecoder event_stream;
    const SseFeedResult fed = dialect == Dialect::kOllama            ? ndjson.Feed(body)
                              : dialect == Dialect::kBedrockConverse ? event_stream.Feed(body)
                                                                     : sse.Feed(body);
    ASSERT_FALSE(fed.error) << ToString(dialect);
    DialectDecoder fast(dialect);
    DialectDecoder slow = FullOnly(dialect);
    int taken = 0;
    for (const SseEventView& view : fed.events) {
      const SseEvent event(view);
      taken += TakenFast(fast, event) ? 1 : 0;
      ASSERT_EQ(DecodeOne(fast, event), DecodeOne(slow, event)) << event.data;
    }
    EXPECT_GE(taken, bench::kBenchDeltas) << ToString(dialect);
  }
}

}  // namespace
}  // namespace faultline::ref
