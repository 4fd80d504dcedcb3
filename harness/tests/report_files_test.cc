// Reports on a disk that fails (issue 30): every command that writes one (run, simulate, report
// merge and render) exits 5 with the OS reason, leaves nothing truncated under a report's name,
// and leaves no report of an earlier run that could pass for this one's.
//
// The failures are the kernel's own, with no root, mount or sleep: /dev/full (ENOSPC) where a
// report is written through a device, and RLIMIT_FSIZE (EFBIG past the limit) for the files a
// command writes into a folder. In process, through cli::Run, as the other CLI tests run.
#include "harness/cli/report_files.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/tests/cli_in_process.h"

namespace faultline::cli {
namespace {

namespace fs = std::filesystem;

// While it lives, no file of this process grows past `bytes`: a write past it fails with EFBIG
// (SIGXFSZ, whose default ends the process, is ignored meanwhile).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    previous_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    ::signal(SIGXFSZ, previous_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  sighandler_t previous_ = SIG_DFL;
};

std::string Reason(int error) { return std::error_code(error, std::generic_category()).message(); }

using test_support::Faultline;
using test_support::Ran;

std::string Read(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

class ReportFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("faultline-report-files-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "out");
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Out(std::string_view name) const { return dir_ / "out" / name; }
  // What an earlier run left in out/: each file says it is stale.
  void LeaveStale(std::initializer_list<std::string_view> names) const {
    for (std::string_view name : names) std::ofstream(Out(name)) << "stale " << name << "\n";
  }
  // out/'s entries: never a stale report, never a temporary file.
  void ExpectNothingStaleOrTemporary() const {
    for (const fs::directory_entry& entry : fs::directory_iterator(dir_ / "out")) {
      const std::string name = entry.path().filename().string();
      EXPECT_NE(name.front(), '.') << "a temporary file is left: " << name;
      EXPECT_FALSE(Read(entry.path()).starts_with("stale")) << name << " is the earlier run's";
    }
  }
  // A small run's result.json, written without any limit.
  fs::path AResult() const {
    const Ran ran = Faultline({"run", "--time", "virtual", "--filter", kScenario, "--out",
                               (dir_ / "earlier").string(), "--format", "json"});
    EXPECT_EQ(ran.code, ExitCode::kSuccess) << ran.err;
    return dir_ / "earlier" / "result.json";
  }

  static constexpr const char* kScenario = "termination/anthropic-close-mid-line";
  fs::path dir_;
};

TEST_F(ReportFilesTest, AReportReplacesTheEarlierWholeAndLeavesNoTemporaryFile) {
  LeaveStale({"result.json"});
  const auto written =
      WriteReportFile(Out("result.json"), [](std::ostream& out) { out << "this run's\n"; });
  ASSERT_TRUE(written.has_value()) << written.error();
  EXPECT_EQ(Read(Out("result.json")), "this run's\n");
  ExpectNothingStaleOrTemporary();
}

TEST_F(ReportFilesTest, AFailedWriteLeavesNothingUnderTheNameAndSaysWhy) {
  LeaveStale({"report.html"});
  std::expected<void, std::string> written;
  {
    const FileSizeLimit limit(4096);
    written = WriteReportFile(Out("report.html"),
                              [](std::ostream& out) { out << std::string(64 * 1024, 'r'); });
  }
  ASSERT_FALSE(written.has_value());
  EXPECT_EQ(written.error(),
            "cannot write '" + Out("report.html").string() + "': " + Reason(EFBIG));
  EXPECT_FALSE(fs::exists(fs::symlink_status(Out("report.html"))));
  EXPECT_TRUE(fs::is_empty(dir_ / "out"));
}

// A device the user names (`-o /dev/stdout`, or a link to one) is written through, not replaced.
TEST_F(ReportFilesTest, ADeviceIsWrittenThroughAndItsErrorSaid) {
  fs::create_symlink("/dev/full", Out("full"));
  for (const fs::path& path : {fs::path("/dev/full"), Out("full")}) {
    const auto written = WriteReportFile(path, [](std::ostream& out) { out << "x"; });
    ASSERT_FALSE(written.has_value()) << path;
    EXPECT_EQ(written.error(), "cannot write '" + path.string() + "': " + Reason(ENOSPC));
  }
  EXPECT_TRUE(fs::is_symlink(Out("full")));
}

// `-o /dev/stdout` with stdout on a file, or any link the user keeps: the link stays, its file
// gets the report; a failed write empties it rather than leave a truncated report there.
TEST_F(ReportFilesTest, ALinkToAFileIsWrittenThroughAndEmptiedOnAFailure) {
  LeaveStale({"target.md"});
  fs::create_symlink(Out("target.md"), Out("link.md"));
  const auto written = WriteReportFile(Out("link.md"), [](std::ostream& out) { out << "new\n"; });
  ASSERT_TRUE(written.has_value()) << written.error();
  EXPECT_TRUE(fs::is_symlink(Out("link.md")));
  EXPECT_EQ(Read(Out("target.md")), "new\n");
  std::expected<void, std::string> failed;
  {
    const FileSizeLimit limit(1024);
    failed =
        WriteReportFile(Out("link.md"), [](std::ostream& out) { out << std::string(4096, 'r'); });
  }
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error(), "cannot write '" + Out("link.md").string() + "': " + Reason(EFBIG));
  EXPECT_TRUE(fs::is_symlink(Out("link.md")));
  EXPECT_EQ(fs::file_size(Out("target.md")), 0u);
}

TEST_F(ReportFilesTest, RunExitsFiveWithTheReasonAndLeavesNoEarlierReport) {
  LeaveStale({"result.json", "junit.xml", "summary.md", "report.html"});
  Ran ran;
  {
    const FileSizeLimit limit(1024);
    ran = Faultline(
        {"run", "--time", "virtual", "--filter", kScenario, "--out", (dir_ / "out").string()});
  }
  EXPECT_EQ(ran.code, ExitCode::kReportWriteError) << ran.err;
  EXPECT_NE(ran.err.find("faultline run: cannot write '" + Out("result.json").string() +
                         "': " + Reason(EFBIG)),
            std::string::npos)
      << ran.err;
  EXPECT_FALSE(fs::exists(Out("result.json")));
  EXPECT_FALSE(fs::exists(Out("report.html")));
  ExpectNothingStaleOrTemporary();
}

// The earlier reports go when the run starts, every format's: a --format json run leaves no old
// junit.xml for CI to publish. A link under a report's name is replaced, never written through.
TEST_F(ReportFilesTest, RunRemovesEveryEarlierReportAndReplacesALink) {
  LeaveStale({"junit.xml", "summary.md", "report.html"});
  fs::create_symlink("/dev/full", Out("result.json"));
  const Ran ran = Faultline({"run", "--time", "virtual", "--filter", kScenario, "--out",
                             (dir_ / "out").string(), "--format", "json"});
  ASSERT_EQ(ran.code, ExitCode::kSuccess) << ran.err;
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(Out("result.json"))));
  EXPECT_FALSE(nlohmann::json::parse(Read(Out("result.json")), nullptr, false).is_discarded());
  EXPECT_FALSE(fs::exists(Out("junit.xml")));
  EXPECT_FALSE(fs::exists(Out("summary.md")));
  EXPECT_FALSE(fs::exists(Out("report.html")));
}

TEST_F(ReportFilesTest, SimulateExitsFiveWithTheReasonAndLeavesNoEarlierReport) {
  LeaveStale({"result.json", "result.csv", "summary.md", "report.html"});
  const std::vector<std::string> simulate = {
      "simulate", "--compare", "no-retry", "--clients", "2",     "--rate",
      "5",        "--horizon", "2s",       "--quiet",   "--out", (dir_ / "out").string()};
  Ran ran;
  {
    const FileSizeLimit limit(1024);
    ran = Faultline(simulate);
  }
  EXPECT_EQ(ran.code, ExitCode::kReportWriteError) << ran.err;
  EXPECT_NE(ran.err.find("faultline simulate: cannot write '" + Out("result.json").string() +
                         "': " + Reason(EFBIG)),
            std::string::npos)
      << ran.err;
  EXPECT_FALSE(fs::exists(Out("result.json")));
  ExpectNothingStaleOrTemporary();

  // A fleet result merges as a run's does: a device's error is said, exit 5.
  ASSERT_EQ(Faultline(simulate).code, ExitCode::kSuccess);
  const Ran merged = Faultline({"report", "merge", Out("result.json").string(), "-o", "/dev/full"});
  EXPECT_EQ(merged.code, ExitCode::kReportWriteError) << merged.err;
  EXPECT_EQ(merged.err,
            "faultline report merge: cannot write '/dev/full': " + Reason(ENOSPC) + "\n");
}

TEST_F(ReportFilesTest, ReportMergeAndRenderExitFiveWithTheReasonAndLeaveNoEarlierFile) {
  const std::string result = AResult().string();
  const Ran full = Faultline({"report", "merge", result, "-o", "/dev/full"});
  EXPECT_EQ(full.code, ExitCode::kReportWriteError) << full.err;
  EXPECT_EQ(full.err, "faultline report merge: cannot write '/dev/full': " + Reason(ENOSPC) + "\n");

  LeaveStale({"merged.json", "matrix.html"});
  Ran merged, matrix;
  {
    const FileSizeLimit limit(1024);
    merged = Faultline({"report", "merge", result, "-o", Out("merged.json").string()});
    matrix = Faultline({"report", "render", "--matrix", result, "-o", Out("matrix.html").string()});
  }
  EXPECT_EQ(merged.code, ExitCode::kReportWriteError) << merged.err;
  EXPECT_EQ(merged.err, "faultline report merge: cannot write '" + Out("merged.json").string() +
                            "': " + Reason(EFBIG) + "\n");
  EXPECT_EQ(matrix.code, ExitCode::kReportWriteError) << matrix.err;
  EXPECT_NE(matrix.err.find(Reason(EFBIG)), std::string::npos) << matrix.err;
  EXPECT_FALSE(fs::exists(Out("merged.json")));
  EXPECT_FALSE(fs::exists(Out("matrix.html")));
  ExpectNothingStaleOrTemporary();
}

// Issue 30: a result.json with a field nested 200,000 deep (a hostile or corrupted file) crashed
// `report render`, `report merge` and `run --last-failed` with SIGSEGV: nlohmann's dump and
// comparisons recurse as deep as the value nests. Every result file is now read with the one
// depth limit for outside JSON, and refused with a usage error that says so.
TEST_F(ReportFilesTest, AResultFileNestedPastTheLimitIsRefusedNotACrash) {
  std::string text = Read(AResult());
  const std::size_t trace = text.find("\"trace\": {");
  ASSERT_NE(trace, std::string::npos);
  constexpr int kDepth = 200'000;
  text.insert(trace + 10, "\"zz\":" + std::string(kDepth, '[') + std::string(kDepth, ']') + ",");
  const fs::path deep = dir_ / "deep" / "result.json";
  fs::create_directories(deep.parent_path());
  std::ofstream(deep) << text;
  const std::string said = "nest deeper than 64 levels";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", "render", deep.string(), "-o", Out("r.html").string()},
        std::vector<std::string>{"report", "merge", deep.string(), deep.string(), "-o",
                                 Out("m.json").string()},
        std::vector<std::string>{"run", "--time", "virtual", "--filter", kScenario, "--last-failed",
                                 "--out", deep.parent_path().string()}}) {
    const Ran ran = Faultline(args);
    EXPECT_EQ(ran.code, ExitCode::kUsageError) << args[0] << " " << args[1] << ": " << ran.err;
    EXPECT_NE(ran.err.find(said), std::string::npos) << ran.err;
  }
  const auto read = ReadJsonFile(deep);
  ASSERT_FALSE(read.has_value());
  EXPECT_NE(read.error().find(said), std::string::npos) << read.error();
  EXPECT_TRUE(ReadJsonFile(AResult()).has_value());
}

// A second interrupt exits at once; the handler removes the temporaries of the reports being
// written then, so no ".NAME.tmp-PID-N" is left in --out (the handler calls exactly this).
TEST_F(ReportFilesTest, ASecondInterruptLeavesNoTemporaryBehind) {
  const std::filesystem::path temporary = Out(".result.json.tmp-1-0");
  std::ofstream(temporary) << "half a report";
  {
    const PendingTemporary pending(temporary);
    RemoveReportTemporariesNow();
    EXPECT_FALSE(std::filesystem::exists(temporary)) << "a pending temporary is removed";
  }
  std::ofstream(temporary) << "a file of the user's, no longer pending";
  RemoveReportTemporariesNow();
  EXPECT_TRUE(std::filesystem::exists(temporary)) << "only what is being written is removed";
  // Nine at once: the ninth is not registered, and the slots free again afterwards.
  {
    std::vector<std::unique_ptr<PendingTemporary>> many;
    for (int i = 0; i < 9; ++i) {
      many.push_back(std::make_unique<PendingTemporary>(Out("t" + std::to_string(i))));
    }
  }
  const PendingTemporary again(temporary);
  RemoveReportTemporariesNow();
  EXPECT_FALSE(std::filesystem::exists(temporary));
}

}  // namespace
}  // namespace faultline::cli
