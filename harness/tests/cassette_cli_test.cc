// `faultline cassette import` as a user runs it: a HAR export (and aimock fixtures) converted into
// cassettes and scenarios that pass under `faultline run FILE --time both` (issue 29's "a HAR file
// converts into a passing scenario").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/tests/faultline_process.h"

namespace faultline::harness {
namespace {

using cli::test_support::RunFaultline;
using Ran = cli::test_support::ProcessRun;
namespace fs = std::filesystem;

class CassetteCliTest : public ::testing::Test {
 protected:
  ~CassetteCliTest() override { fs::remove_all(dir_); }
  static std::string Data(std::string_view name) {
    return (fs::path(FAULTLINE_SOURCE_DIR) / "cassette_import/tests/data" / name).string();
  }
  // Runs the scenario in both worlds; every run must pass.
  static void ExpectPasses(const fs::path& scenario) {
    const Ran ran =
        RunFaultline({"run", scenario.string(), "--time", "both", "--no-reports", "--verbose"});
    EXPECT_EQ(ran.code, 0) << scenario << "\n" << ran.out << ran.err;
    EXPECT_NE(ran.out.find("passed 2, failed 0"), std::string::npos) << ran.out;
    EXPECT_NE(ran.err.find(" [virtual] "), std::string::npos) << ran.err;
    EXPECT_NE(ran.err.find(" [real] "), std::string::npos) << ran.err;
  }
  const fs::path dir_ = cli::test_support::FreshTestFolder("cassette-cli");
};

TEST_F(CassetteCliTest, ADevToolsHarConvertsIntoPassingScenarios) {
  const Ran ran = RunFaultline(
      {"cassette", "import", "--har", Data("devtools-session.har"), "--out", dir_.string()});
  ASSERT_EQ(ran.code, 0) << ran.out << ran.err;
  EXPECT_NE(ran.err.find("skipped log.entries[1]: GET https://api.openai.com/v1/models: not a "
                         "request faultline speaks"),
            std::string::npos)
      << ran.err;
  EXPECT_NE(ran.err.find("skipped log.entries[3]: POST https://api.openai.com/v1/chat/"
                         "completions: aborted (status 0: no response)"),
            std::string::npos)
      << ran.err;
  EXPECT_NE(ran.out.find("2 cassettes, 2 skipped"), std::string::npos) << ran.out;
  EXPECT_TRUE(fs::exists(dir_ / "0001-openai-chat.jsonl"));
  EXPECT_TRUE(fs::exists(dir_ / "0003-anthropic-messages.jsonl"));
  ExpectPasses(dir_ / "scenario-openai-chat.yaml");
  ExpectPasses(dir_ / "scenario-anthropic-messages.yaml");
}

TEST_F(CassetteCliTest, AimockFixturesConvertIntoAPassingScenario) {
  for (const std::string dialect : {"openai-chat", "anthropic-messages"}) {
    const fs::path out = dir_ / dialect;
    const Ran ran =
        RunFaultline({"cassette", "import", "--aimock", Data("aimock-fixtures.json"), "--dialect",
                      dialect, "--out", out.string(), "--scenario", "fixtures.yaml"});
    ASSERT_EQ(ran.code, 0) << ran.out << ran.err;
    EXPECT_NE(ran.err.find("skipped fixtures[3]: not a text, tool-call or error response"),
              std::string::npos)
        << ran.err;
    ExpectPasses(out / "fixtures.yaml");
  }
}

TEST_F(CassetteCliTest, AnErrorNamesTheFileAndTheJsonPathAndExitsTwo) {
  std::ofstream(dir_ / "bad.har") << R"({"log": {"entries": [{"request": {"method": 1}}]}})";
  const Ran ran = RunFaultline(
      {"cassette", "import", "--har", (dir_ / "bad.har").string(), "--out", (dir_ / "o").string()});
  EXPECT_EQ(ran.code, 2);
  EXPECT_NE(ran.err.find("bad.har: at log.entries[0].request.method: expected a string, got "
                         "number"),
            std::string::npos)
      << ran.err;
  EXPECT_FALSE(fs::exists(dir_ / "o"));
  const Ran neither = RunFaultline({"cassette", "import", "--out", (dir_ / "o").string()});
  EXPECT_EQ(neither.code, 2);
  EXPECT_NE(neither.err.find("give --har FILE or --aimock FILE"), std::string::npos);
}

TEST_F(CassetteCliTest, TheHelpSaysTheTimingRuleAndWhatIsSkipped) {
  const Ran help = RunFaultline({"cassette", "import", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("timings.wait"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("spread evenly over"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("status 0"), std::string::npos) << help.out;
  const Ran cassette = RunFaultline({"cassette", "--help"});
  EXPECT_EQ(cassette.code, 0);
  EXPECT_NE(cassette.out.find("import"), std::string::npos) << cassette.out;
}

}  // namespace
}  // namespace faultline::harness
