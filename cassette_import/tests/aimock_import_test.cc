// aimock fixtures to cassettes (cassette_import/aimock_import.h). The bytes are checked
// against what aimock 1.43.0 itself sent for the same fixtures (cassette_import/tests/data/
// aimock-1.43.0/: `llmock -f fixtures.json`, one streamed request each, the raw answers kept).
#include "cassette_import/aimock_import.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>

#include "cassette_import/tests/cassette_test_support.h"

namespace faultline::scenario {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

using testing::Body;
using testing::DataFile;

// aimock's answer as recorded: its head's lines but Date and X-Request-Id (they vary), its body.
struct Recorded {
  std::vector<CassetteHeader> headers;
  std::string body;
};
Recorded Answer(std::string_view name) {
  const std::string http = DataFile(std::string("aimock-1.43.0/") + std::string(name));
  const std::size_t end = http.find("\r\n\r\n");
  Recorded recorded{{}, http.substr(end + 4)};
  std::istringstream head(http.substr(0, end));
  std::string line;
  std::getline(head, line);  // the status line
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t colon = line.find(": ");
    const std::string name_of = line.substr(0, colon);
    if (name_of == "Date" || name_of == "X-Request-Id") continue;
    recorded.headers.push_back({name_of, line.substr(colon + 2)});
  }
  return recorded;
}

std::vector<CassetteHeader> WithoutRequestId(std::vector<CassetteHeader> headers) {
  std::erase_if(headers, [](const CassetteHeader& h) { return h.name == "X-Request-Id"; });
  return headers;
}

AimockOptions In(Dialect dialect) {
  AimockOptions options;
  options.dialect = dialect;
  return options;
}

Import ImportCompared(Dialect dialect) {
  auto import = ImportAimock(DataFile("aimock-1.43.0/fixtures.json"), "fixtures.json", In(dialect));
  EXPECT_TRUE(import) << import.error().ToString();
  return import.value_or(Import{});
}

// The import of fixtures.json in `dialect` against aimock's answers PREFIX-{text,tool,error}.http.
void ExpectAimocksBytes(Dialect dialect, std::string_view prefix) {
  const Import import = ImportCompared(dialect);
  ASSERT_EQ(import.cassettes.size(), 3u);
  const char* kinds[] = {"text", "tool", "error"};
  for (std::size_t i = 0; i < 3; ++i) {
    const std::string name = fmt::format("{}-{}.http", prefix, kinds[i]);
    const Recorded recorded = Answer(name);
    const Cassette& cassette = import.cassettes[i].cassette;
    EXPECT_EQ(Body(cassette), recorded.body) << name;
    EXPECT_EQ(WithoutRequestId(cassette.headers), recorded.headers) << name;
  }
  EXPECT_EQ(import.cassettes[2].cassette.status, 429);
  EXPECT_EQ(import.cassettes[0].file, fmt::format("0001-{}.jsonl", ToString(dialect)));
  EXPECT_EQ(import.cassettes[0].cassette.source, "aimock");
}

TEST(AimockImportTest, OpenAiChatStreamsAreAimocksBytes) {
  ExpectAimocksBytes(Dialect::kOpenAiChat, "openai");
  EXPECT_EQ(ImportCompared(Dialect::kOpenAiChat).cassettes[0].cassette.writes.back().bytes,
            "data: [DONE]\n\n");
}

TEST(AimockImportTest, AnthropicStreamsAreAimocksBytes) {
  ExpectAimocksBytes(Dialect::kAnthropicMessages, "anthropic");
  EXPECT_EQ(ImportCompared(Dialect::kAnthropicMessages).cassettes[0].cassette.target,
            "/v1/messages");
}

TEST(AimockImportTest, TimingIsAimocksDelayBeforeEachChunk) {
  const std::string fixtures = R"({"fixtures": [
    {"match": {"userMessage": "a"}, "response": {"content": "abcdefgh"}, "chunkSize": 4,
     "recordedTimings": {"ttftMs": 100, "interChunkDelaysMs": [10, 30], "totalDurationMs": 1}},
    {"match": {"userMessage": "b"}, "response": {"content": "abcd"}, "chunkSize": 4,
     "streamingProfile": {"ttft": 50, "tps": 20, "jitter": 0.5}, "replaySpeed": 2},
    {"match": {"userMessage": "c"}, "response": {"content": "ab"}, "latency": 7}]})";
  auto import = ImportAimock(fixtures, "t.json");
  ASSERT_TRUE(import) << import.error().ToString();
  // The role chunk, two slices, the finish chunk; [DONE] with the last.
  const auto times = [](const Cassette& cassette) {
    std::vector<std::int64_t> ms;
    for (const CassetteWrite& write : cassette.writes) {
      ms.push_back(std::chrono::duration_cast<milliseconds>(write.at).count());
    }
    return ms;
  };
  // recordedTimings: ttft, then the gaps, then their mean (20) past the end.
  EXPECT_EQ(times(import->cassettes[0].cassette),
            (std::vector<std::int64_t>{100, 110, 140, 160, 160}));
  EXPECT_EQ(import->cassettes[0].cassette.head_at, milliseconds(100));
  // streamingProfile: ttft, then 1000/tps (the jitter left out); all halved by replaySpeed 2.
  EXPECT_EQ(times(import->cassettes[1].cassette), (std::vector<std::int64_t>{25, 50, 75, 75}));
  // latency before every chunk.
  EXPECT_EQ(times(import->cassettes[2].cassette), (std::vector<std::int64_t>{7, 14, 21, 21}));
  EXPECT_EQ(import->cassettes[2].cassette.end_at, milliseconds(21));
}

TEST(AimockImportTest, IdsAreDerivedNotDrawnAndTheImportIsDeterministic) {
  const std::string fixtures =
      R"({"fixtures": [{"match": {"userMessage": "hi"}, "response": {"content": "yo"}}]})";
  auto first = ImportAimock(fixtures, "f.json");
  auto again = ImportAimock(fixtures, "f.json");
  ASSERT_TRUE(first && again);
  EXPECT_EQ(first->cassettes[0].cassette, again->cassettes[0].cassette);
  const std::string body = Body(first->cassettes[0].cassette);
  EXPECT_NE(body.find(R"("id":"chatcmpl-)"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("created":1767225600,"model":"gpt-4o-mini")"), std::string::npos) << body;
  EXPECT_EQ(first->scenarios[0].file, "scenario.yaml");
  EXPECT_NE(first->scenarios[0].text.find("expect: {outcome: committed, attempts: 1}"),
            std::string::npos);
}

TEST(AimockImportTest, WhatTheImportDoesNotRenderIsSkippedWithTheReason) {
  const std::string fixtures = R"({"fixtures": [
    {"match": {"inputText": "x"}, "response": {"embedding": [0.1]}},
    {"match": {"userMessage": "x"}, "response": {"content": "a", "reasoning": "think"}},
    {"match": {"userMessage": "x"}, "response": {"content": "a", "toolCalls": []}},
    {"match": {"userMessage": "x"}, "response": {"content": "a"}, "truncateAfterChunks": 2},
    {"match": {"userMessage": "x"}, "response": {"content": "fine"}}]})";
  auto import = ImportAimock(fixtures, "t.json");
  ASSERT_TRUE(import) << import.error().ToString();
  ASSERT_EQ(import->skipped.size(), 4u);
  EXPECT_EQ(import->skipped[0].where, "fixtures[0]");
  EXPECT_NE(import->skipped[0].reason.find("not a text, tool-call or error response"),
            std::string::npos);
  EXPECT_EQ(import->skipped[1].reason, "'reasoning' is not rendered by the import yet");
  EXPECT_EQ(import->skipped[2].reason, "content with tool calls is not rendered yet");
  EXPECT_NE(import->skipped[3].reason.find("'truncateAfterChunks' is not imported"),
            std::string::npos);
  ASSERT_EQ(import->cassettes.size(), 1u);
  EXPECT_EQ(import->cassettes[0].file, "0005-openai-chat.jsonl");
}

TEST(AimockImportTest, ErrorsNameTheFileAndTheJsonPath) {
  const auto error = [](std::string_view text, AimockOptions options = {}) {
    auto import = ImportAimock(text, "fx.json", options);
    return import ? "imported" : import.error().ToString();
  };
  EXPECT_TRUE(error("{\"fixtures\": [\n  {,\n").starts_with("fx.json:2:")) << error("{\n,");
  EXPECT_EQ(error("{}"), "fx.json: at fixtures: missing; expected a list");
  EXPECT_EQ(error(R"({"fixtures": [7]})"),
            "fx.json: at fixtures[0]: expected an object {match, response}");
  EXPECT_EQ(error(R"({"fixtures": [{"response": {"toolCalls": [{"arguments": "{}"}]}}]})"),
            "fx.json: at fixtures[0].response.toolCalls[0].name: missing; expected a string");
  EXPECT_EQ(error(R"({"fixtures": [{"response": {"error": {"message": "x"}, "status": 42}}]})"),
            "fx.json: at fixtures[0].response.status: expected an HTTP status from 100 to 599");
  EXPECT_EQ(error(R"({"fixtures": [{"response": {"embedding": []}}]})"),
            "fx.json: at fixtures: no fixture converts into a cassette (1 fixtures, 1 skipped)");
  EXPECT_EQ(error(R"({"fixtures": []})", In(Dialect::kGemini)),
            "fx.json: the aimock import renders openai-chat and anthropic-messages, not gemini "
            "(yet)");
}

}  // namespace
}  // namespace faultline::scenario
