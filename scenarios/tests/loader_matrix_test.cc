// A matrix file: `dialects: [...]` instead of `dialect:` expands one file into one scenario per
// dialect, each named by {dialect}, each validated in its own dialect.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scenarios/loader.h"

namespace faultline::scenario {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr std::string_view kMatrix = R"(faultline: 1
name: retry-after/{dialect}-imf
description: A 503 with an IMF-fixdate Retry-After in every dialect.
dialects: [openai-chat, gemini, ollama]
responses:
  - {status: 503, error: unavailable, retry_after: {http_date: 2s}}
  - content: {text: "Hello, world"}
expect: {outcome: committed, attempts: 2, text: "Hello, world"}
)";

fs::path Write(std::string_view name, std::string_view text) {
  const fs::path path = fs::path(::testing::TempDir()) / name;
  std::ofstream(path) << text;
  return path;
}

std::expected<std::vector<Scenario>, std::vector<LoadError>> LoadOne(const fs::path& path) {
  const std::vector<fs::path> paths{path};
  return LoadScenarios(paths, kMaxErrorsPerFile);
}

TEST(LoaderMatrixTest, OneScenarioPerDialectNamedByIt) {
  const auto loaded = LoadOne(Write("matrix.yaml", kMatrix));
  ASSERT_TRUE(loaded) << loaded.error().front().message;
  ASSERT_EQ(loaded->size(), 3u);
  const std::vector<std::pair<std::string, Dialect>> expected = {
      {"retry-after/openai-chat-imf", Dialect::kOpenAiChat},
      {"retry-after/gemini-imf", Dialect::kGemini},
      {"retry-after/ollama-imf", Dialect::kOllama}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ((*loaded)[i].name, expected[i].first);
    EXPECT_EQ((*loaded)[i].dialect, expected[i].second);
    EXPECT_EQ((*loaded)[i].responses.size(), 2u);
    EXPECT_EQ((*loaded)[i].responses[0].retry_after->date_offset, std::chrono::seconds(2));
  }
}

TEST(LoaderMatrixTest, EachDialectIsCheckedOnItsOwn) {
  // A ping heartbeat exists only in anthropic-messages: the ollama expansion is refused, with the
  // file's own line and column, and the anthropic one would have loaded.
  std::string text(kMatrix);
  const auto replace = [&](std::string_view from, std::string_view to) {
    text.replace(text.find(from), from.size(), to);
  };
  replace("dialects: [openai-chat, gemini, ollama]", "dialects: [anthropic-messages, ollama]");
  replace("  - content: {text: \"Hello, world\"}",
          "  - content: {text: \"Hello, world\", faults: [{after_event: 1, stall: 1s, "
          "heartbeat: {every: 100ms, style: ping}}]}");
  const auto loaded = LoadOne(Write("matrix-ping.yaml", text));
  ASSERT_FALSE(loaded);
  ASSERT_EQ(loaded.error().size(), 1u);
  EXPECT_EQ(loaded.error()[0].line, 7);
  EXPECT_THAT(loaded.error()[0].message, HasSubstr("ollama"));
}

TEST(LoaderMatrixTest, WhatAMatrixFileMustSay) {
  struct Case {
    std::string_view from;
    std::string_view to;
    std::string_view message;
  };
  for (const Case& c : {
           Case{"{dialect}-imf", "imf", "put {dialect} in its name"},
           Case{"dialects: [openai-chat, gemini, ollama]", "dialects: [openai-chat, openai-chat]",
                "'openai-chat' is listed twice"},
           Case{"dialects: [openai-chat, gemini, ollama]", "dialects: [openai-chat, bedrock]",
                "expected one of"},
           Case{"dialects: [openai-chat, gemini, ollama]", "dialects: []",
                "expected at least one dialect"},
           Case{"dialects: [openai-chat, gemini, ollama]",
                "dialect: openai-chat\ndialects: [gemini]", "give one of them"},
       }) {
    SCOPED_TRACE(c.to);
    std::string text(kMatrix);
    text.replace(text.find(c.from), c.from.size(), c.to);
    const auto loaded = LoadOne(Write("matrix-bad.yaml", text));
    ASSERT_FALSE(loaded);
    EXPECT_THAT(loaded.error()[0].message, HasSubstr(c.message));
  }
}

TEST(LoaderMatrixTest, OneDocumentAloneCannotBeSeveralScenarios) {
  const auto parsed = ParseScenario(kMatrix, "matrix.yaml");
  ASSERT_FALSE(parsed);
  EXPECT_THAT(parsed.error().message, HasSubstr("load it as a scenario file or folder"));
  EXPECT_EQ(parsed.error().path, "dialects");
}

}  // namespace
}  // namespace faultline::scenario
