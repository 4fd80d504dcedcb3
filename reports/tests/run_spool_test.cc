// The run spool (run_spool.h): a result whose runs were slimmed into a spool renders every
// report byte for byte as the whole result does, holds no trace in memory, and loses nothing
// when the spool cannot be written.
#include "reports/run_spool.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "gtest/gtest.h"
#include "reports/report.h"
#include "reports/tests/test_results.h"

namespace faultline::report {
namespace {

namespace fs = std::filesystem;
using testing::FailuresAndAdvisories;
using testing::FullResult;
using testing::SampleResult;

fs::path TempFile(const std::string& name) {
  return fs::temp_directory_path() / fmt::format("faultline-spool-{}-{}", ::getpid(), name);
}

// `whole` with each run kept by a spool at `file`.
RunResult Spooled(const RunResult& whole, const std::shared_ptr<RunSpool>& spool) {
  RunResult slim = whole;
  for (std::size_t i = 0; i < slim.scenarios.size(); ++i) {
    slim.scenarios[i] = spool->Keep(slim.scenarios[i], i);
  }
  return slim;
}

std::string Rendered(const RunResult& result, Format format) {
  std::ostringstream out;
  Render(result, format, out);
  return out.str();
}

class RunSpoolTest : public ::testing::TestWithParam<int> {};

RunResult Fixture(int which) {
  return which == 0 ? FullResult() : which == 1 ? FailuresAndAdvisories() : SampleResult();
}

TEST_P(RunSpoolTest, EveryReportOfASpooledResultIsTheWholeResultsByteForByte) {
  const RunResult whole = Fixture(GetParam());
  const fs::path file = TempFile("same" + std::to_string(GetParam()));
  auto spool = RunSpool::Create(file);
  ASSERT_TRUE(spool) << spool.error();
  const RunResult slim = Spooled(whole, *spool);
  for (const Format format : {Format::kJson, Format::kJUnit, Format::kMarkdown, Format::kHtml}) {
    EXPECT_EQ(Rendered(slim, format), Rendered(whole, format)) << ToString(format);
  }
  std::ostringstream streamed;
  WriteJson(slim, streamed);
  EXPECT_EQ(streamed.str(), Rendered(whole, Format::kJson));
  fs::remove(file);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RunSpoolTest, ::testing::Values(0, 1, 2));

// IndentJson gives dump(2)'s bytes from dump()'s, at any depth: strings holding the structural
// characters and escapes, empty and nested containers, numbers of every kind.
TEST(IndentJson, IsDumpTwoOfTheSameValueByteForByte) {
  const nlohmann::json value = nlohmann::json::parse(R"({
    "text": "a {b} [c], d: \"e\" \\ f\n\u0001 é",
    "empty_object": {}, "empty_array": [], "nested": {"a": [1, [2, []], {"b": {}}], "c": null},
    "numbers": [0, -1, 2.5, 1e-9, 12.0, 18446744073709551615, true, false],
    "keys with \"quotes\"": {"": ""}})");
  EXPECT_EQ(IndentJson(value.dump(), 0), value.dump(2));
  const nlohmann::json nested = {{"outer", nlohmann::json::array({value, value})}};
  // Two levels down, as result.json nests a run: every line after the first gains four spaces.
  std::string expected = value.dump(2);
  for (std::size_t at = expected.find('\n'); at != std::string::npos;
       at = expected.find('\n', at + 1)) {
    expected.insert(at + 1, "    ");
  }
  EXPECT_EQ(IndentJson(value.dump(), 2), expected);
  EXPECT_EQ(IndentJson(nested.dump(), 0), nested.dump(2));
  EXPECT_EQ(IndentJson("[]", 3), "[]");
  EXPECT_EQ(IndentJson("\"x\"", 1), "\"x\"");
}

TEST(RunSpool, ASlimRunKeepsWhatEveryReportCountsAndNothingElse) {
  const RunResult whole = FullResult();
  const fs::path file = TempFile("slim");
  auto spool = RunSpool::Create(file);
  ASSERT_TRUE(spool) << spool.error();
  const ScenarioResult& pass = whole.scenarios[0];  // a passing check, an n/a one, a trace
  const ScenarioResult slim = (*spool)->Keep(pass, 0);
  EXPECT_TRUE(slim.trace.is_null());
  EXPECT_TRUE(slim.description.empty());
  EXPECT_TRUE(slim.checks.empty());
  EXPECT_EQ(slim.metrics, pass.metrics);
  EXPECT_EQ(slim.fingerprint, pass.fingerprint);
  EXPECT_EQ(slim.verdict, pass.verdict);
  ASSERT_TRUE(slim.details);
  // Read back whole, equal to the run as it was kept.
  const FullRun full(slim);
  EXPECT_EQ(full->trace, pass.trace);
  EXPECT_EQ(full->checks, pass.checks);
  EXPECT_EQ(full->description, pass.description);
  EXPECT_FALSE(full->details);
  // The stream is JSON Lines: one run a line, with its place.
  const std::string text = testing::ReadFile(file.string());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
  EXPECT_EQ(nlohmann::json::parse(text)["run"], 0);
  EXPECT_EQ(*(*spool)->ReadJson(slim.details->at, slim.details->size), ToJson(pass).dump());
  fs::remove(file);
}

TEST(RunSpool, ARunThatCannotBeWrittenIsKeptWholeAndTheErrorIsSaid) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  auto spool = RunSpool::Create("/dev/full");
  ASSERT_TRUE(spool) << spool.error();
  const ScenarioResult run = FullResult().scenarios[0];
  const ScenarioResult kept = (*spool)->Keep(run, 0);
  EXPECT_EQ(kept, run);  // whole: nothing lost
  ASSERT_TRUE((*spool)->error());
  EXPECT_NE((*spool)->error()->find("/dev/full"), std::string::npos);
  EXPECT_NE((*spool)->error()->find("No space left"), std::string::npos);
}

TEST(RunSpool, AFolderThatDoesNotExistIsAnErrorNamingTheFile) {
  auto spool = RunSpool::Create("/nonexistent-faultline-dir/runs.jsonl");
  ASSERT_FALSE(spool);
  EXPECT_NE(spool.error().find("runs.jsonl"), std::string::npos);
}

TEST(RunSpool, ASlimRunWhoseSpoolCannotBeReadIsShownSlim) {
  const ScenarioResult slim = SlimRun(FullResult().scenarios[0], {});
  const FullRun full(slim);
  EXPECT_EQ(&*full, &slim);
}

}  // namespace
}  // namespace faultline::report
