// `faultline run` interrupted as a user interrupts it: SIGINT or SIGTERM mid-run must leave valid
// reports of the runs that finished, marked interrupted, and exit 4 promptly; a second signal exits
// at once; report options are checked before the first run.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/tests/faultline_process.h"
#include "reports/run_result.h"

namespace faultline::harness {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using cli::test_support::FaultlineProcess;
using Clock = std::chrono::steady_clock;

// Three quick scenarios and one that waits out a 30 s Retry-After: a signal after the quick ones
// finished finds the slow one running.
constexpr std::string_view kQuick = R"(faultline: 1
name: interrupt/quick-{}
description: A plain answer.
dialect: openai-chat
responses:
  - content: {{text: "hi"}}
)";
constexpr std::string_view kSlow = R"(faultline: 1
name: interrupt/slow
description: A 429 whose Retry-After keeps the client waiting 30 s.
dialect: openai-chat
responses:
  - status: 429
    error: rate_limit
    retry_after: {seconds: 30}
  - content: {text: "late"}
)";

class InterruptCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("faultline-interrupt-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "scenarios");
    for (int i = 1; i <= 3; ++i) {
      std::ofstream(dir_ / "scenarios" / fmt::format("quick-{}.yaml", i))
          << fmt::format(fmt::runtime(kQuick), i);
    }
    std::ofstream(dir_ / "scenarios" / "slow.yaml") << kSlow;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(std::string_view name) const { return (dir_ / name).string(); }
  static std::string Read(const fs::path& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }
  std::vector<std::string> RunArgs() const {
    return {"run", Path("scenarios"), "--time", "real",     "--jobs",
            "4",   "--verbose",       "--out",  Path("out")};
  }
  fs::path dir_;
};

// Waits until the three quick runs are reported, then sends `signal`; returns the exit code and
// how long the process took to exit after the signal.
std::pair<std::optional<int>, Clock::duration> InterruptAfterQuickRuns(FaultlineProcess& process,
                                                                       int signal) {
  for (int i = 1; i <= 3; ++i) {
    EXPECT_TRUE(process.WaitForError(fmt::format("interrupt/quick-{} [real]", i), 30s))
        << process.err();
  }
  const auto sent = Clock::now();
  process.Signal(signal);
  const auto code = process.Wait(20s);
  return {code, Clock::now() - sent};
}

void ExpectPartialReports(const fs::path& out, std::string_view reason) {
  auto parsed = report::RunResultFromJson(
      nlohmann::json::parse(std::ifstream(out / "result.json"), nullptr, false));
  ASSERT_TRUE(parsed.has_value()) << parsed.error();
  ASSERT_TRUE(parsed->interrupted.has_value());
  EXPECT_EQ(parsed->interrupted->reason, reason);
  EXPECT_EQ(parsed->interrupted->planned_runs, 4);
  ASSERT_EQ(parsed->scenarios.size(), 3u);  // the slow run was cut short: not judged
  for (const report::ScenarioResult& scenario : parsed->scenarios) {
    EXPECT_TRUE(scenario.name.starts_with("interrupt/quick-")) << scenario.name;
    EXPECT_EQ(scenario.verdict, report::Verdict::kPass) << scenario.name;
  }
  std::ifstream md(out / "summary.md");
  const std::string summary{std::istreambuf_iterator<char>(md), {}};
  EXPECT_NE(summary.find(fmt::format("**Interrupted**: by {}: 3 of 4 runs finished", reason)),
            std::string::npos)
      << summary;
  std::ifstream xml(out / "junit.xml");
  const std::string junit{std::istreambuf_iterator<char>(xml), {}};
  EXPECT_NE(junit.find("name=\"interrupted\""), std::string::npos) << junit;
  EXPECT_TRUE(fs::exists(out / "report.html"));
}

TEST_F(InterruptCliTest, SigintMidRunWritesThePartialReportsAndExitsFour) {
  FaultlineProcess process(RunArgs());
  process.CloseStdin();
  const auto [code, took] = InterruptAfterQuickRuns(process, SIGINT);
  ASSERT_EQ(code, 4) << process.err() << process.out();
  // The slow run's client is cancelled at once; its provider connection closes within the
  // world's 2 s grace: far from the 30 s it would have waited.
  EXPECT_LT(took, 10s);
  EXPECT_NE(process.out().find("INTERRUPTED by SIGINT: 3 of 4 run(s) finished"), std::string::npos)
      << process.out();
  EXPECT_NE(process.err().find("SIGINT: starting no further run"), std::string::npos);
  ExpectPartialReports(dir_ / "out", "SIGINT");
}

TEST_F(InterruptCliTest, SigtermEndsAnAdapterThatIgnoresItAndLeavesNoProcess) {
  // The slow scenario's adapter ignores SIGTERM (and so does its exec'd sleep): the runner must
  // SIGKILL it after its grace. The quick scenarios run too, against the same adapter, which
  // answers them at once when the scenario is not the slow one.
  const std::string adapter = fmt::format(
      "read line; case \"$line\" in *interrupt/slow*) echo $$ > {}; trap '' TERM; exec sleep 60;; "
      "esac; echo '{{\"type\":\"adapter/hello\",\"name\":\"sh\",\"version\":\"1\"}}'; echo "
      "'{{\"type\":\"response/committed\",\"response_id\":\"r\",\"text\":\"hi\"}}'",
      Path("slow.pid"));
  std::vector<std::string> args = RunArgs();
  args.insert(args.end(), {"--adapter", adapter});
  FaultlineProcess process(args);
  process.CloseStdin();
  const auto [code, took] = InterruptAfterQuickRuns(process, SIGTERM);
  ASSERT_EQ(code, 4) << process.err() << process.out();
  EXPECT_LT(took, 10s);
  const std::string pid_text = Read(dir_ / "slow.pid");
  ASSERT_FALSE(pid_text.empty());
  EXPECT_NE(::kill(std::stoi(pid_text), 0), 0) << "the adapter outlived the run";
  auto parsed = report::RunResultFromJson(
      nlohmann::json::parse(std::ifstream(dir_ / "out" / "result.json"), nullptr, false));
  ASSERT_TRUE(parsed.has_value()) << parsed.error();
  ASSERT_TRUE(parsed->interrupted.has_value());
  EXPECT_EQ(parsed->interrupted->reason, "SIGTERM");
  EXPECT_EQ(parsed->scenarios.size(), 3u);
}

TEST_F(InterruptCliTest, ASecondSignalExitsAtOnceWithoutReports) {
  std::vector<std::string> args = RunArgs();
  FaultlineProcess process(args);
  process.CloseStdin();
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(process.WaitForError(fmt::format("interrupt/quick-{} [real]", i), 30s));
  }
  process.Signal(SIGINT);
  ASSERT_TRUE(process.WaitForError("starting no further run", 5s)) << process.err();
  process.Signal(SIGINT);
  EXPECT_EQ(process.Wait(5s), 130) << process.err();
  EXPECT_NE(process.err().find("second interrupt"), std::string::npos) << process.err();
}

TEST_F(InterruptCliTest, ReportOptionsAreCheckedBeforeTheFirstRun) {
  const auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"run", Path("scenarios/slow.yaml"), "--time", "real"};
    args.insert(args.end(), extra.begin(), extra.end());
    FaultlineProcess process(args);
    process.CloseStdin();
    const auto started = Clock::now();
    const auto code = process.Wait(10s);
    EXPECT_LT(Clock::now() - started, 5s) << "the run started before the options were checked";
    return std::make_pair(code, process.err());
  };
  const auto [format_code, format_err] = run({"--format", "json,pdf", "--out", Path("out")});
  EXPECT_EQ(format_code, 2);
  EXPECT_NE(format_err.find("--format"), std::string::npos) << format_err;
  std::ofstream(dir_ / "a-file") << "not a folder";
  const auto [out_code, out_err] = run({"--out", Path("a-file/reports")});
  EXPECT_EQ(out_code, 2);
  EXPECT_NE(out_err.find("--out"), std::string::npos) << out_err;
}

}  // namespace
}  // namespace faultline::harness
