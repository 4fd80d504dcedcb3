// The catalogue index: its pieces (first sentence, category, expectation summary), its layout,
// and scenarios/README.md kept equal to the rendering of the embedded catalogue.
#include "scenarios/catalog_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/loader.h"

namespace faultline::scenario {
namespace {

TEST(FirstSentenceTest, StopsAtTheFirstSentenceEnd) {
  EXPECT_EQ(FirstSentence("One 429, then a stream. A correct client retries."),
            "One 429, then a stream.");
  EXPECT_EQ(FirstSentence("Is it over? Yes."), "Is it over?");
  EXPECT_EQ(FirstSentence("Stop! Now."), "Stop!");
  EXPECT_EQ(FirstSentence("Ends at the end."), "Ends at the end.");
}

TEST(FirstSentenceTest, IgnoresPeriodsThatDoNotEndASentence) {
  EXPECT_EQ(FirstSentence("Waits 1.5 s, then retries. More."), "Waits 1.5 s, then retries.");
  EXPECT_EQ(FirstSentence("Reads api.openai.com answers. More."), "Reads api.openai.com answers.");
  EXPECT_EQ(FirstSentence("No sentence end at all"), "No sentence end at all");
}

TEST(FirstSentenceTest, IgnoresSentenceEndsInsideDoubleQuotes) {
  EXPECT_EQ(FirstSentence(R"(A 500 with "Server error. Sorry about that!" as body. Then more.)"),
            R"(A 500 with "Server error. Sorry about that!" as body.)");
  EXPECT_EQ(FirstSentence(R"(Commits "Hello, world". Nothing else.)"),
            R"(Commits "Hello, world".)");
}

TEST(FirstSentenceTest, CollapsesWhitespace) {
  EXPECT_EQ(FirstSentence("  One\n429,\t\tthen   a stream.\nMore."), "One 429, then a stream.");
  EXPECT_EQ(FirstSentence(""), "");
  EXPECT_EQ(FirstSentence(" \n "), "");
}

TEST(CategoryOfTest, IsTheNamePrefix) {
  EXPECT_EQ(CategoryOf("rate-limit/openai-chat-429"), "rate-limit");
  EXPECT_EQ(CategoryOf("a/b/c"), "a");
  EXPECT_EQ(CategoryOf("standalone"), "other");
  EXPECT_EQ(CategoryOf("/odd"), "other");
}

Expect MakeExpect(std::optional<std::string> outcome, std::optional<int> attempts,
                  std::optional<std::string> failure_class = std::nullopt,
                  std::optional<std::string> failure_code = std::nullopt) {
  Expect expect;
  expect.outcome = std::move(outcome);
  expect.attempts = attempts;
  expect.failure_class = std::move(failure_class);
  expect.failure_code = std::move(failure_code);
  return expect;
}

TEST(ExpectSummaryTest, SaysOutcomeCodeAndAttempts) {
  EXPECT_EQ(ExpectSummary(Expect{}), "");
  EXPECT_EQ(ExpectSummary(MakeExpect("committed", 2)), "committed, 2 attempts");
  EXPECT_EQ(ExpectSummary(MakeExpect("committed", std::nullopt)), "committed");
  EXPECT_EQ(ExpectSummary(MakeExpect("failed", 1, "rate-limit", "RATE_LIMIT")),
            "failed RATE_LIMIT, 1 attempt");
  EXPECT_EQ(ExpectSummary(MakeExpect("failed", std::nullopt, "aborted")), "failed (aborted)");
  EXPECT_EQ(ExpectSummary(MakeExpect(std::nullopt, 3)), "3 attempts");
}

Scenario Make(std::string name, Dialect dialect, std::string description) {
  Scenario scenario;
  scenario.source = "<builtin>/" + name + ".yaml";
  scenario.name = std::move(name);
  scenario.dialect = dialect;
  scenario.description = std::move(description);
  return scenario;
}

std::vector<Scenario> SmallCatalogue() {
  std::vector<Scenario> scenarios;
  scenarios.push_back(Make("stall/b", Dialect::kAnthropicMessages, "Stalls. Then recovers."));
  scenarios.push_back(Make("cancel/z", Dialect::kOpenAiChat, "Cancels | mid-stream. More."));
  scenarios.push_back(Make("stall/a", Dialect::kOpenAiResponses, "Goes <silent>. More."));
  scenarios.back().expect = MakeExpect("committed", 2);
  scenarios.push_back(Make("stall/c", Dialect::kAnthropicMessages, "Third stall."));
  scenarios.back().source = "elsewhere/c.yaml";
  return scenarios;
}

TEST(RenderCatalogIndexTest, GroupsSortsCountsAndEscapes) {
  const std::string index = RenderCatalogIndex(SmallCatalogue());
  EXPECT_NE(index.find("4 scenarios in 2 categories"), std::string::npos) << index;
  EXPECT_NE(index.find("| [cancel](#cancel) | 1 | 1 | 0 | 0 |"), std::string::npos) << index;
  EXPECT_NE(index.find("| [stall](#stall) | 3 | 0 | 2 | 1 |"), std::string::npos) << index;
  EXPECT_NE(index.find("| **all** | **4** | **1** | **2** | **1** |"), std::string::npos);
  EXPECT_NE(index.find("\n## stall\n\n3 scenarios.\n"), std::string::npos) << index;
  EXPECT_NE(index.find("| [`stall/a`](catalog/stall/a.yaml) | openai-responses | committed, 2 "
                       "attempts | Goes &lt;silent>. |"),
            std::string::npos)
      << index;
  EXPECT_NE(index.find("| `stall/c` | anthropic-messages |  | Third stall. |"), std::string::npos)
      << index;
  EXPECT_NE(index.find("Cancels \\| mid-stream."), std::string::npos) << index;
  // Categories in order, scenarios by name inside them.
  const std::size_t cancel = index.find("## cancel");
  const std::size_t stall = index.find("## stall");
  ASSERT_NE(cancel, std::string::npos);
  ASSERT_NE(stall, std::string::npos);
  EXPECT_LT(cancel, stall);
  EXPECT_LT(index.find("`stall/a`", stall), index.find("`stall/b`", stall));
  EXPECT_LT(index.find("`stall/b`", stall), index.find("`stall/c`", stall));
}

TEST(RenderCatalogIndexTest, DoesNotDependOnInputOrder) {
  std::vector<Scenario> scenarios = SmallCatalogue();
  const std::string forward = RenderCatalogIndex(scenarios);
  std::reverse(scenarios.begin(), scenarios.end());
  EXPECT_EQ(RenderCatalogIndex(scenarios), forward);
}

TEST(RenderCatalogIndexTest, EmptyCatalogue) {
  const std::string index = RenderCatalogIndex({});
  EXPECT_NE(index.find("0 scenarios in 0 categories"), std::string::npos) << index;
  EXPECT_EQ(index.find("\n## "), std::string::npos);
}

std::string ReadFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "line N: expected ... got ..." for the first line where the two texts differ.
std::string FirstDifference(std::string_view want, std::string_view have) {
  std::istringstream want_lines{std::string(want)};
  std::istringstream have_lines{std::string(have)};
  std::string a;
  std::string b;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(want_lines, a));
    const bool more_b = static_cast<bool>(std::getline(have_lines, b));
    if (!more_a && !more_b) return "the texts differ only in line endings";
    if (a != b || more_a != more_b) {
      return "line " + std::to_string(line) + ":\n  rendered: " + (more_a ? a : "<end>") +
             "\n  on disk:  " + (more_b ? b : "<end>");
    }
  }
}

// scenarios/README.md is the index of the embedded catalogue, byte for byte. With
// FAULTLINE_UPDATE_INDEX=1 the test rewrites it instead of comparing.
TEST(CatalogIndexTest, ReadmeMatchesTheEmbeddedCatalogue) {
  const auto catalogue = LoadBuiltinCatalog();
  ASSERT_TRUE(catalogue.has_value()) << catalogue.error().front().ToString();
  const std::string rendered = RenderCatalogIndex(*catalogue);
  const char* update = std::getenv("FAULTLINE_UPDATE_INDEX");
  if (update != nullptr && std::string_view(update) == "1") {
    std::ofstream out(FAULTLINE_CATALOG_INDEX_PATH, std::ios::binary | std::ios::trunc);
    out << rendered;
    out.close();
    ASSERT_TRUE(out.good()) << "cannot write " << FAULTLINE_CATALOG_INDEX_PATH;
    std::cout << "wrote " << FAULTLINE_CATALOG_INDEX_PATH << "\n";
    return;
  }
  const std::string on_disk = ReadFile(FAULTLINE_CATALOG_INDEX_PATH);
  EXPECT_TRUE(rendered == on_disk)
      << FAULTLINE_CATALOG_INDEX_PATH << " is out of date with scenarios/catalog/ ("
      << FirstDifference(rendered, on_disk)
      << ").\nRegenerate it: rebuild scenarios_tests, then run\n  FAULTLINE_UPDATE_INDEX=1 "
         "<build>/scenarios/scenarios_tests --gtest_filter=CatalogIndexTest.*";
}

}  // namespace
}  // namespace faultline::scenario
