// `faultline run`, `validate` and `report` as a user runs them: files, exit codes, reports.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/tests/faultline_process.h"

namespace faultline::harness {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct Ran {
  int code = -1;
  std::string out, err;
};

Ran RunFaultline(std::vector<std::string> args, std::chrono::milliseconds timeout = 60s) {
  cli::test_support::FaultlineProcess process(std::move(args));
  process.CloseStdin();
  const auto code = process.Wait(timeout);
  return {code.value_or(-1), process.out(), process.err()};
}

class RunCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("faultline-run-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(std::string_view name) const { return (dir_ / name).string(); }
  void WriteFile(std::string_view name, std::string_view text) const {
    std::ofstream(dir_ / name) << text;
  }
  static std::string Read(const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }
  fs::path dir_;
};

constexpr std::string_view kFourHundred = R"(faultline: 1
name: cli/bad-expectation
description: A 400; the scenario wrongly expects a commit, so the run must fail.
dialect: openai-chat
responses:
  - status: 400
expect:
  outcome: committed
)";

TEST_F(RunCliTest, BuiltinCatalogueVirtualWritesEveryReport) {
  const Ran ran = RunFaultline({"run", "--filter", "demo/*", "--out", Path("out"), "--seed", "3"});
  EXPECT_EQ(ran.code, 0) << ran.err;
  EXPECT_NE(ran.out.find("passed 6, failed 0, errors 0"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("fingerprint "), std::string::npos);
  for (const char* file : {"result.json", "junit.xml", "summary.md", "report.html"}) {
    EXPECT_TRUE(fs::exists(dir_ / "out" / file)) << file;
  }
  const auto result = nlohmann::json::parse(Read(Path("out/result.json")));
  EXPECT_EQ(result["scenarios"].size(), 6u);
  EXPECT_EQ(result["seed"], 3);
  // The same seed again: the same fingerprint.
  const Ran again = RunFaultline({"run", "--filter", "demo/*", "--no-reports", "--seed", "3"});
  EXPECT_NE(again.out.find(result["fingerprint"].get<std::string>()), std::string::npos);
}

TEST_F(RunCliTest, LastFailedReRunsOnlyWhatFailedInTheLastResult) {
  fs::create_directories(dir_ / "sc");
  WriteFile("sc/bad.yaml", kFourHundred);
  WriteFile("sc/good.yaml", R"(faultline: 1
name: cli/good
description: A plain answer, which passes.
dialect: openai-chat
responses:
  - content: {text: "Hello"}
)");
  const Ran first = RunFaultline({"run", Path("sc"), "--out", Path("out")});
  ASSERT_EQ(first.code, 1) << first.err;  // cli/bad-expectation fails, cli/good passes
  EXPECT_NE(first.out.find("2 run(s)"), std::string::npos) << first.out;
  const Ran again = RunFaultline({"run", Path("sc"), "--last-failed", "--out", Path("out")});
  EXPECT_EQ(again.code, 1) << again.err;
  EXPECT_NE(again.err.find("re-running the 1 scenario(s) that failed"), std::string::npos)
      << again.err;
  EXPECT_NE(again.out.find("1 run(s)"), std::string::npos) << again.out;
  const Ran none = RunFaultline({"run", Path("sc"), "--last-failed", "--out", Path("empty")});
  EXPECT_EQ(none.code, 1) << none.err;  // no earlier result there: everything runs
  EXPECT_NE(none.err.find("no earlier result"), std::string::npos) << none.err;
  EXPECT_NE(none.out.find("2 run(s)"), std::string::npos) << none.out;
}

TEST_F(RunCliTest, AFailingCheckExitsOneAndNamesTheEvidence) {
  WriteFile("bad.yaml", kFourHundred);
  const Ran ran = RunFaultline({"run", Path("bad.yaml"), "--out", Path("out")});
  EXPECT_EQ(ran.code, 1);
  EXPECT_NE(ran.out.find("fail cli/bad-expectation [virtual] EXPECT-OUTCOME"), std::string::npos)
      << ran.out;
  // The failure ends with the one command that reproduces it, and that command does.
  const std::string reproduce = "reproduce: faultline run " + Path("bad.yaml") +
                                " --filter cli/bad-expectation --seed 0 --time virtual";
  EXPECT_NE(ran.out.find(reproduce), std::string::npos) << ran.out;
  EXPECT_NE(ran.err.find(reproduce), std::string::npos) << ran.err;
  const Ran again = RunFaultline({"run", Path("bad.yaml"), "--filter", "cli/bad-expectation",
                                  "--seed", "0", "--time", "virtual", "--no-reports"});
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.out.find("EXPECT-OUTCOME"), std::string::npos) << again.out;
  const std::string junit = Read(Path("out/junit.xml"));
  EXPECT_NE(junit.find("<failure"), std::string::npos);
  EXPECT_NE(junit.find("EXPECT-OUTCOME"), std::string::npos);
}

TEST_F(RunCliTest, UsageAndInputErrorsExitTwo) {
  WriteFile("broken.yaml", "faultline: 1\nname: x/y\ndialect: klingon\n");
  EXPECT_EQ(RunFaultline({"run", Path("broken.yaml")}).code, 2);
  EXPECT_EQ(RunFaultline({"run", Path("missing.yaml")}).code, 2);
  EXPECT_EQ(RunFaultline({"run", "--filter", "no-such-scenario/*"}).code, 2);
  EXPECT_EQ(RunFaultline({"run", "--shard", "3/2"}).code, 2);
  const Ran no_jobs = RunFaultline({"run", "--jobs", "0", "--no-reports"});
  EXPECT_EQ(no_jobs.code, 2) << no_jobs.out;
  EXPECT_NE(no_jobs.err.find("--jobs"), std::string::npos) << no_jobs.err;
  const Ran no_timeout = RunFaultline({"run", "--timeout", "0", "--no-reports"});
  EXPECT_EQ(no_timeout.code, 2);
  EXPECT_NE(no_timeout.err.find("--timeout"), std::string::npos) << no_timeout.err;
  EXPECT_LT(no_timeout.err.size(), 200u) << "no 300-digit bound";
  const Ran virtual_adapter = RunFaultline({"run", "--adapter", "cat", "--time", "virtual"});
  EXPECT_EQ(virtual_adapter.code, 2);
  EXPECT_NE(virtual_adapter.err.find("real"), std::string::npos) << virtual_adapter.err;
}

TEST_F(RunCliTest, ValidateReportsFileLineAndColumn) {
  WriteFile("good.yaml", kFourHundred);
  WriteFile("bad.yaml",
            "faultline: 1\nname: x/y\ndescription: d\ndialect: openai-chat\n"
            "responses:\n  - status: abc\n");
  const Ran good = RunFaultline({"validate", Path("good.yaml")});
  EXPECT_EQ(good.code, 0) << good.err;
  EXPECT_NE(good.out.find("1 scenario(s) valid"), std::string::npos);
  const Ran bad = RunFaultline({"validate", Path("good.yaml"), Path("bad.yaml")});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("bad.yaml:6:"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("responses[0].status"), std::string::npos) << bad.err;
  EXPECT_EQ(RunFaultline({"validate", Path("nothing-here")}).code, 2);
}

TEST_F(RunCliTest, SchemasArePrintedFromTheBinaryForEditors) {
  for (const auto& [which, path] : {std::pair{"scenario", "scenarios/schema/scenario.schema.json"},
                                    std::pair{"policy", "reference_impl/schema/policy.schema.json"},
                                    std::pair{"result", "reports/schema/run-result.schema.json"}}) {
    const Ran ran = RunFaultline({"schema", which});
    EXPECT_EQ(ran.code, 0) << which << ran.err;
    EXPECT_EQ(nlohmann::json::parse(ran.out, nullptr, false),
              nlohmann::json::parse(Read(std::string(FAULTLINE_SOURCE_DIR) + "/" + path)))
        << which << ": the embedded copy is the file";
  }
  EXPECT_EQ(RunFaultline({"schema", "nonsense"}).code, 2);
}

TEST_F(RunCliTest, ShardsMergeBackIntoTheWholeRun) {
  for (const char* shard : {"1/2", "2/2"}) {
    const Ran ran = RunFaultline({"run", "--filter", "demo/*", "--shard", shard, "--format", "json",
                                  "--out", Path(std::string("shard") + shard[0])});
    EXPECT_EQ(ran.code, 0) << ran.err;
  }
  const Ran merged = RunFaultline({"report", "merge", Path("shard1/result.json"),
                                   Path("shard2/result.json"), "-o", Path("merged.json")});
  EXPECT_EQ(merged.code, 0) << merged.err;
  const auto result = nlohmann::json::parse(Read(Path("merged.json")));
  EXPECT_EQ(result["scenarios"].size(), 6u);
  EXPECT_EQ(result["shard"], "1/2+2/2");
  // Merging a shard with itself is refused: the same runs twice.
  EXPECT_EQ(
      RunFaultline({"report", "merge", Path("shard1/result.json"), Path("shard1/result.json")})
          .code,
      2);
  const Ran html = RunFaultline({"report", "render", Path("merged.json"), "-o", Path("r.html")});
  EXPECT_EQ(html.code, 0) << html.err;
  EXPECT_NE(Read(Path("r.html")).find("<svg"), std::string::npos);
  const Ran md = RunFaultline({"report", "render", Path("merged.json"), "--format", "md"});
  EXPECT_NE(md.out.find("demo/hello-openai-chat"), std::string::npos) << md.out;
  EXPECT_EQ(RunFaultline({"report", "render", Path("nothing.json")}).code, 2);
}

// The outage scenario also guards the adapter's fork: an adapter that inherited the provider's
// listening socket kept it accepting through the outage (and hung the retry after it).
TEST_F(RunCliTest, TheReferenceAdapterRunsInTheRealWorld) {
  const Ran ran = RunFaultline(
      {"run", "--filter", "demo/hello-*,connection/openai-responses-outage-during-backoff",
       "--timeout", "30", "--adapter", std::string(FAULTLINE_BINARY) + " call --adapter",
       "--no-reports", "--verbose"});
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  EXPECT_NE(ran.out.find("world real"), std::string::npos) << ran.out;
  EXPECT_NE(ran.err.find("pass demo/hello-anthropic [real]"), std::string::npos) << ran.err;
}

}  // namespace
}  // namespace faultline::harness

namespace faultline::harness {
namespace {

TEST(AdapterCheckCliTest, ExplainsEachMistakeAndPassesACorrectAdapter) {
  const Ran good = RunFaultline({"adapter", "check", "reference"});
  EXPECT_EQ(good.code, 0) << good.out << good.err;
  EXPECT_NE(good.out.find("ok   check/retry"), std::string::npos) << good.out;
  EXPECT_NE(good.out.find("no protocol mistake"), std::string::npos);
  const Ran bad = RunFaultline({"adapter", "check",
                                "echo '{\"type\":\"response/committed\","
                                "\"text\":\"Hello, world\"}'"});
  EXPECT_EQ(bad.code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("subject error no-hello"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("fix: write adapter/hello first"), std::string::npos) << bad.out;
}

TEST(RunCliSubjectErrorTest, ExitCodeThreeAndTheStderrOnTheConsole) {
  const Ran ran = RunFaultline({"run", "--adapter", "echo 'it broke' >&2; exit 3", "--filter",
                                "demo/hello-openai-chat", "--no-reports"});
  EXPECT_EQ(ran.code, 3) << ran.out << ran.err;
  EXPECT_NE(ran.out.find("subject error exited"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("exited with status 3"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("it broke"), std::string::npos) << ran.out;
  const Ran policy = RunFaultline({"run", "--adapter", "reference", "--policy", "x.json",
                                   "--filter", "demo/*", "--no-reports"});
  EXPECT_EQ(policy.code, 2) << "--policy configures only the in-process client";
}

}  // namespace
}  // namespace faultline::harness
