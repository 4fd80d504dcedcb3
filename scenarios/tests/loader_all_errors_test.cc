// `faultline validate` reports every error of a file, not only the first: LoadScenarios with a
// per-file cap reads on past each field at fault.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scenarios/loader.h"

namespace faultline::scenario {
namespace {

namespace fs = std::filesystem;

fs::path WriteFile(const std::string& name, const std::string& text) {
  const fs::path path = fs::path(::testing::TempDir()) / name;
  std::ofstream(path) << text;
  return path;
}

constexpr std::string_view kSeveralErrors =
    "faultline: 1\n"
    "name: t/several-errors\n"
    "description: d\n"
    "dialect: openai-chat\n"
    "responses:\n"
    "  - status: 999\n"
    "  - stream: {text: hi, chunk_sise: 4}\n"
    "expect:\n"
    "  outcome: maybe\n"
    "  thresholds: [\"ttfb.p99<2s\", \"ttft.p99<2s\", \"attempts.max<1s\"]\n";

TEST(LoaderAllErrorsTest, EveryErrorOfAFileWithItsPosition) {
  const fs::path file = WriteFile("several-errors.yaml", std::string(kSeveralErrors));
  const std::vector<fs::path> paths{file};
  auto loaded = LoadScenarios(paths, kMaxErrorsPerFile);
  ASSERT_FALSE(loaded.has_value());
  const std::vector<LoadError>& errors = loaded.error();
  struct Expected {
    int line;
    int column;
    std::string path;
  };
  const std::vector<Expected> expected = {
      {6, 13, "responses[0].status"},   {7, 24, "responses[1].stream.chunk_sise"},
      {9, 12, "expect.outcome"},        {10, 16, "expect.thresholds[0]"},
      {10, 46, "expect.thresholds[2]"},
  };
  ASSERT_EQ(errors.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(errors[i].ToString());
    EXPECT_EQ(errors[i].file, file.string());
    EXPECT_EQ(errors[i].line, expected[i].line);
    EXPECT_EQ(errors[i].column, expected[i].column);
    EXPECT_EQ(errors[i].path, expected[i].path);
  }
  EXPECT_NE(errors[1].message.find("did you mean 'chunk_size'"), std::string::npos)
      << errors[1].message;
  EXPECT_EQ(errors[4].message,
            "bad threshold: bad bound '1s': expected a plain number (this aggregate is not a "
            "time)");
}

// An error beside an unknown key, in the same mapping, is found too (it was skipped with the
// rest of the mapping); a required key the unknown one misspells is not reported again as missing.
TEST(LoaderAllErrorsTest, AnErrorBesideAnUnknownKeyIsFoundAndAMisspellingIsReportedOnce) {
  const fs::path file = WriteFile("sibling-errors.yaml",
                                  "faultline: 1\n"
                                  "name: t/sibling-errors\n"
                                  "descriptio: d\n"
                                  "dialect: openai-chat\n"
                                  "responses:\n"
                                  "  - status: 429\n"
                                  "    retry_afterr: 2\n"
                                  "    headers: 7\n"
                                  "  - content: {text: hi, chunk_sise: 4, chunk_size: -1}\n");
  const std::vector<fs::path> paths{file};
  auto loaded = LoadScenarios(paths, kMaxErrorsPerFile);
  ASSERT_FALSE(loaded.has_value());
  std::vector<std::string> found;
  for (const LoadError& error : loaded.error()) found.push_back(error.path);
  EXPECT_EQ(found, (std::vector<std::string>{
                       "descriptio", "responses[0].retry_afterr", "responses[0].headers",
                       "responses[1].content.chunk_sise", "responses[1].content.chunk_size"}))
      << loaded.error().front().ToString();
  for (const LoadError& error : loaded.error()) {
    EXPECT_EQ(error.message.find("missing required key 'description'"), std::string::npos)
        << error.ToString();
  }
}

TEST(LoaderAllErrorsTest, WithoutACapOnlyTheFirstErrorIsReported) {
  const fs::path file = WriteFile("several-errors-first.yaml", std::string(kSeveralErrors));
  const std::vector<fs::path> paths{file};
  auto loaded = LoadScenarios(paths);
  ASSERT_FALSE(loaded.has_value());
  ASSERT_EQ(loaded.error().size(), 1u);
  EXPECT_EQ(loaded.error()[0].path, "responses[0].status");
}

TEST(LoaderAllErrorsTest, StopsAtTheCapWithANote) {
  std::string text =
      "faultline: 1\nname: t/many-errors\ndescription: d\ndialect: openai-chat\n"
      "responses:\n  - stream: {text: hi}\nexpect:\n  thresholds:\n";
  for (int i = 0; i < 70; ++i) text += "    - bad\n";
  const fs::path file = WriteFile("many-errors.yaml", text);
  const std::vector<fs::path> paths{file};
  auto loaded = LoadScenarios(paths, kMaxErrorsPerFile);
  ASSERT_FALSE(loaded.has_value());
  const std::vector<LoadError>& errors = loaded.error();
  ASSERT_EQ(errors.size(), kMaxErrorsPerFile + 1);
  EXPECT_EQ(errors[kMaxErrorsPerFile - 1].path, "expect.thresholds[49]");
  EXPECT_EQ(errors.back().message,
            "stopped after 50 errors in this file; fix these and validate again");
}

TEST(LoaderAllErrorsTest, ASyntaxErrorStopsItsFile) {
  const fs::path file =
      WriteFile("syntax-error.yaml", "faultline: 1\nname: [unclosed\nresponses: 5\n");
  const std::vector<fs::path> paths{file};
  auto loaded = LoadScenarios(paths, kMaxErrorsPerFile);
  ASSERT_FALSE(loaded.has_value());
  ASSERT_EQ(loaded.error().size(), 1u);
  EXPECT_NE(loaded.error()[0].message.find("invalid YAML"), std::string::npos);
}

}  // namespace
}  // namespace faultline::scenario
