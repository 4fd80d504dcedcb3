// HAR 1.2 to cassettes (cassette_import/har_import.h): each conversion rule, each skip and
// each error with its file and JSON path, on a DevTools export checked in beside the tests and
// on small hand-made entries.
#include "cassette_import/har_import.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cassette_import/tests/cassette_test_support.h"
#include "fake_provider/wire/event_stream_encoder.h"
#include "scenarios/bytes_text.h"

namespace faultline::scenario {
namespace {

using nlohmann::json;
using std::chrono::microseconds;

using testing::Body;
using testing::DataFile;

const CassetteHeader* Find(const std::vector<CassetteHeader>& headers, std::string_view name) {
  for (const CassetteHeader& header : headers) {
    if (header.name == name) return &header;
  }
  return nullptr;
}

// One entry, as DevTools writes it, with what a test changes merged in.
json Entry(json patch = json::object()) {
  json entry = {
      {"_resourceType", "fetch"},
      {"request",
       {{"method", "POST"},
        {"url", "https://api.openai.com/v1/chat/completions"},
        {"headers", json::array({{{"name", ":method"}, {"value", "POST"}},
                                 {{"name", "authorization"},
                                  {"value", "Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123"}}})},
        {"postData",
         {{"mimeType", "application/json"}, {"text", R"({"model":"m","stream":false})"}}}}},
      {"response",
       {{"status", 200},
        {"statusText", "OK"},
        {"headers", json::array({{{"name", ":status"}, {"value", "200"}},
                                 {{"name", "content-type"}, {"value", "application/json"}},
                                 {{"name", "content-length"}, {"value", "999"}}})},
        {"content", {{"size", 2}, {"mimeType", "application/json"}, {"text", "{}"}}}}},
      {"timings", {{"blocked", -1}, {"wait", 10.5}, {"receive", 2}}}};
  entry.merge_patch(patch);
  return entry;
}

std::string Har(const std::vector<json>& entries) {
  return json{{"log", {{"version", "1.2"}, {"entries", entries}}}}.dump();
}

std::expected<Import, LoadError> ImportOne(json patch) {
  return ImportHar(Har({Entry(std::move(patch)), Entry()}), "t.har");
}

// The first entry's skip reason (the second entry converts, so the import succeeds).
std::string SkipReason(json patch) {
  auto import = ImportOne(std::move(patch));
  if (!import) return "error: " + import.error().ToString();
  if (import->skipped.empty()) return "converted";
  return import->skipped.front().where + ": " + import->skipped.front().reason;
}

std::string ErrorOf(std::string_view text) {
  auto import = ImportHar(text, "session.har");
  return import ? "imported" : import.error().ToString();
}

TEST(HarImportTest, TheDevToolsSessionBecomesOneCassetteEachAndAScenarioPerDialect) {
  auto import = ImportHar(DataFile("devtools-session.har"), "data/devtools-session.har");
  ASSERT_TRUE(import) << import.error().ToString();
  ASSERT_EQ(import->cassettes.size(), 2u);
  EXPECT_EQ(import->cassettes[0].file, "0001-openai-chat.jsonl");
  EXPECT_EQ(import->cassettes[1].file, "0003-anthropic-messages.jsonl");
  ASSERT_EQ(import->skipped.size(), 2u);
  EXPECT_EQ(import->skipped[0].where, "log.entries[1]");
  EXPECT_NE(import->skipped[0].reason.find("GET https://api.openai.com/v1/models: not a request"),
            std::string::npos);
  EXPECT_EQ(import->skipped[1].where, "log.entries[3]");
  EXPECT_NE(import->skipped[1].reason.find("aborted (status 0"), std::string::npos);
  ASSERT_EQ(import->scenarios.size(), 2u);
  EXPECT_EQ(import->scenarios[0].file, "scenario-openai-chat.yaml");
  EXPECT_EQ(import->scenarios[1].file, "scenario-anthropic-messages.yaml");
  const std::string& text = import->scenarios[0].text;
  EXPECT_NE(text.find("name: \"imported/devtools-session-openai-chat\""), std::string::npos);
  EXPECT_NE(text.find("request: {stream: true, model: \"gpt-4o-mini\"}"), std::string::npos);
  EXPECT_NE(text.find("  - cassette: \"0001-openai-chat.jsonl\"\n"), std::string::npos) << text;
  EXPECT_NE(text.find("expect: {outcome: committed, attempts: 1}"), std::string::npos);
  for (const ImportedCassette& cassette : import->cassettes) {  // valid for the reader
    auto read = ParseCassette(WriteCassette(cassette.cassette), cassette.file);
    ASSERT_TRUE(read) << read.error().ToString();
    EXPECT_EQ(*read, cassette.cassette);
    EXPECT_EQ(read->source, "har");
  }
}

TEST(HarImportTest, TheHeadComesAtWaitAndTheEventsAreSpreadEvenlyOverReceive) {
  auto import = ImportHar(DataFile("devtools-session.har"), "devtools-session.har");
  ASSERT_TRUE(import);
  const Cassette& chat = import->cassettes[0].cassette;
  EXPECT_EQ(chat.head_at, microseconds(241'703));
  // The role chunk, six text chunks, the finish chunk and [DONE]: one write each.
  ASSERT_EQ(chat.writes.size(), 9u);
  for (std::size_t i = 0; i < chat.writes.size(); ++i) {
    EXPECT_EQ(chat.writes[i].at, microseconds(241'703 + 396'607 * (i + 1) / 9)) << i;
    EXPECT_TRUE(chat.writes[i].bytes.starts_with("data: ")) << i;
    EXPECT_TRUE(chat.writes[i].bytes.ends_with("\n\n")) << i;
  }
  EXPECT_EQ(chat.writes.back().bytes, "data: [DONE]\n\n");
  EXPECT_EQ(chat.end_at, microseconds(241'703 + 396'607));
  EXPECT_EQ(chat.end, Cassette::End::kCompleted);
}

TEST(HarImportTest, Base64ContentIsDecodedAndCutAtItsEvents) {
  auto import = ImportHar(DataFile("devtools-session.har"), "devtools-session.har");
  ASSERT_TRUE(import);
  const Cassette& messages = import->cassettes[1].cassette;
  const json har = json::parse(DataFile("devtools-session.har"));
  const json& content = har["log"]["entries"][2]["response"]["content"];
  EXPECT_EQ(Body(messages), Base64Decode(content["text"].get<std::string>()).value());
  // message_start, content_block_start, ping, four deltas, content_block_stop, message_delta,
  // message_stop.
  ASSERT_EQ(messages.writes.size(), 10u);
  EXPECT_TRUE(messages.writes[2].bytes.starts_with("event: ping\n"));
  EXPECT_TRUE(messages.writes[9].bytes.starts_with("event: message_stop\n"));
}

TEST(HarImportTest, BedrocksBinaryEventStreamIsOneWriteAnEvent) {
  std::string body;
  for (const char* text : {"Hel", "lo"}) {
    body += provider::event_stream::EncodeEvent(
        {"contentBlockDelta",
         fmt::format(R"({{"contentBlockIndex":0,"delta":{{"text":"{}"}},"p":"abc"}})", text)});
  }
  body += provider::event_stream::EncodeEvent(
      {"messageStop", R"({"stopReason":"end_turn","p":"abc"})"});
  auto import = ImportOne(
      {{"request",
        {{"url",
          "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
          "anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream"}}},
       {"response",
        {{"headers", json::array({{{"name", "content-type"},
                                   {"value", "application/vnd.amazon.eventstream"}}})},
         {"content",
          {{"size", body.size()}, {"encoding", "base64"}, {"text", Base64Encode(body)}}}}}});
  ASSERT_TRUE(import) << import.error().ToString();
  const Cassette& cassette = import->cassettes[0].cassette;
  EXPECT_EQ(cassette.dialect, "bedrock-converse");
  EXPECT_TRUE(import->cassettes[0].stream);
  ASSERT_EQ(cassette.writes.size(), 3u);
  EXPECT_EQ(Body(cassette), body);
  EXPECT_EQ(WriteCassette(cassette).find("\"bytes\":"), std::string::npos);  // base64 lines
}

TEST(HarImportTest, CredentialsAreRedactedAsTheProxyRecorderDoes) {
  auto import = ImportOne(
      {{"request",
        {{"url",
          "https://generativelanguage.googleapis.com/v1beta/models/"
          "gemini-2.5-flash:streamGenerateContent?alt=sse&key=AIzaSyA1b2C3d4E5f6G7h8I9j0K"},
         {"postData", {{"text", R"({"contents":[],"api_key":"sk-live-0123456789abcdef"})"}}}}}});
  ASSERT_TRUE(import) << import.error().ToString();
  const Cassette& cassette = import->cassettes[0].cassette;
  EXPECT_EQ(cassette.dialect, "gemini");
  EXPECT_TRUE(import->cassettes[0].stream);  // the path asks for the stream
  EXPECT_EQ(cassette.target.find("AIza"), std::string::npos) << cassette.target;
  EXPECT_NE(cassette.target.find("alt=sse"), std::string::npos);
  EXPECT_EQ(cassette.request_body.find("sk-live"), std::string::npos) << cassette.request_body;
  const CassetteHeader* authorization = Find(cassette.request_headers, "authorization");
  ASSERT_NE(authorization, nullptr);
  EXPECT_EQ(authorization->value.find("abcdefghijklmnopqrstuvwxyz"), std::string::npos);
  EXPECT_NE(authorization->value.find("[redacted"), std::string::npos);
}

TEST(HarImportTest, PseudoAndFramingHeadersAreDroppedAndTheBodyFramedAnew) {
  auto import = ImportOne(json::object());
  ASSERT_TRUE(import);
  const Cassette& cassette = import->cassettes[0].cassette;
  EXPECT_EQ(Find(cassette.request_headers, ":method"), nullptr);
  EXPECT_EQ(Find(cassette.headers, ":status"), nullptr);
  ASSERT_NE(Find(cassette.headers, "content-length"), nullptr);
  EXPECT_EQ(Find(cassette.headers, "content-length")->value, "2");  // not the recorded 999
  EXPECT_FALSE(import->cassettes[0].stream);
  ASSERT_EQ(cassette.writes.size(), 1u);  // a JSON body is one write, at wait + receive
  EXPECT_EQ(cassette.writes[0].at, microseconds(12'500));
  EXPECT_EQ(cassette.head_at, microseconds(10'500));
  EXPECT_EQ(cassette.reason, "OK");
}

TEST(HarImportTest, VendorFieldsAreIgnoredAndOptionalFieldsMayBeMissing) {
  const json bare = {{"_custom", {{"anything", 1}}},
                     {"request", {{"method", "POST"}, {"url", "http://localhost:11434/api/chat"}}},
                     {"response", {{"status", 503}, {"content", {{"text", "busy"}}}}}};
  auto import = ImportHar(Har({bare}), "bare.har");
  ASSERT_TRUE(import) << import.error().ToString();
  const Cassette& cassette = import->cassettes[0].cassette;
  EXPECT_EQ(cassette.dialect, "ollama");
  EXPECT_TRUE(import->cassettes[0].stream);  // Ollama streams unless the body says not
  EXPECT_EQ(cassette.status, 503);
  EXPECT_EQ(cassette.head_at, microseconds(0));
  EXPECT_EQ(Body(cassette), "busy");
  // A first answer that is no success: the judge's truth decides, the scenario promises nothing.
  EXPECT_EQ(import->scenarios[0].text.find("expect:"), std::string::npos);
  EXPECT_EQ(import->scenarios[0].file, "scenario.yaml");
}

TEST(HarImportTest, WhatCannotBeReplayedAsRecordedIsSkippedWithTheReason) {
  EXPECT_EQ(SkipReason({{"request", {{"method", "GET"}}}}),
            "log.entries[0]: GET https://api.openai.com/v1/chat/completions: not a request "
            "faultline speaks (POST to a dialect's path)");
  EXPECT_EQ(SkipReason({{"request", {{"url", "https://example.com/api/track"}}}}).find("not a"),
            std::string("log.entries[0]: POST https://example.com/api/track: ").size());
  EXPECT_NE(SkipReason({{"response", {{"status", 0}}}}).find("aborted (status 0"),
            std::string::npos);
  EXPECT_NE(SkipReason({{"response", {{"content", {{"text", nullptr}, {"size", 120}}}}}})
                .find("no content.text: the HAR left the body (120 bytes) out"),
            std::string::npos);
  EXPECT_NE(SkipReason({{"response", {{"content", {{"encoding", "gzip"}}}}}})
                .find("content.encoding \"gzip\": only base64 is decoded"),
            std::string::npos);
  EXPECT_NE(SkipReason({{"response", {{"content", {{"size", 4096}}}}}})
                .find("truncated: content.size is 4096 bytes, content.text holds 2"),
            std::string::npos);
  // An empty body said to be empty is a body.
  EXPECT_EQ(
      SkipReason({{"response", {{"status", 204}, {"content", {{"text", nullptr}, {"size", 0}}}}}}),
      "converted");
}

TEST(HarImportTest, ErrorsNameTheFileAndTheJsonPath) {
  EXPECT_EQ(ErrorOf("{\n  \"log\": [,\n"), ErrorOf("{\n  \"log\": [,\n"));
  const std::string syntax = ErrorOf("{\n  \"log\": [,\n");
  EXPECT_TRUE(syntax.starts_with("session.har:2:")) << syntax;
  EXPECT_NE(syntax.find("not JSON"), std::string::npos);
  EXPECT_EQ(ErrorOf("[]"), "session.har: expected a HAR object {\"log\": {...}}");
  EXPECT_EQ(ErrorOf("{}"), "session.har: at log: missing; expected an object");
  EXPECT_EQ(ErrorOf(R"({"log": {"entries": {}}})"),
            "session.har: at log.entries: expected a list, got object");
  const auto at = [](json patch) {
    auto import = ImportOne(std::move(patch));
    return import ? "imported" : import.error().ToString();
  };
  EXPECT_EQ(at({{"request", {{"url", 7}}}}),
            "t.har: at log.entries[0].request.url: expected a string, got number");
  EXPECT_EQ(at({{"response", {{"content", {{"encoding", "base64"}, {"text", "%%%"}}}}}}),
            "t.har: at log.entries[0].response.content.text: content.encoding is base64, the "
            "text is not");
  EXPECT_EQ(at({{"response", {{"status", 700}}}}),
            "t.har: at log.entries[0].response.status: expected an HTTP status from 100 to 599");
  EXPECT_EQ(
      at({{"response", {{"headers", json::array({{{"name", "x"}, {"value", "a\r\nb: c"}}})}}}}),
      "t.har: at log.entries[0].response.headers[0]: a header name that is empty or holds "
      "':' or a space, or a name or value with a line break or NUL, cannot be sent again");
  EXPECT_EQ(at({{"timings", {{"wait", "soon"}}}}),
            "t.har: at log.entries[0].timings.wait: expected a number, got string");
  EXPECT_EQ(ErrorOf(Har({Entry({{"request", {{"method", "GET"}}}})})),
            "session.har: at log.entries: no entry converts into a cassette (1 entries, 1 "
            "skipped)");
}

}  // namespace
}  // namespace faultline::scenario
