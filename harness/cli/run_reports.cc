#include "harness/cli/run_reports.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <ostream>

#include "harness/cli/progress.h"
#include "harness/cli/report_files.h"

namespace faultline::cli {
namespace {

namespace fs = std::filesystem;

// Where --out keeps the report of `format`.
fs::path ReportPath(const std::string& out_dir, report::Format format) {
  const std::string base = format == report::Format::kJson    ? "result"
                           : format == report::Format::kJUnit ? "junit"
                           : format == report::Format::kHtml  ? "report"
                                                              : "summary";
  return fs::path(out_dir) / (base + std::string(FileExtension(format)));
}

}  // namespace

fs::path RunStreamPath(const std::string& out_dir) { return fs::path(out_dir) / "runs.jsonl"; }

std::expected<std::vector<PlannedReport>, std::string> PlanReports(
    const std::vector<std::string>& formats, const std::string& out_dir, bool none) {
  std::vector<PlannedReport> planned;
  if (none) return planned;
  for (const std::string& name : formats) {
    auto format = report::ParseFormat(name);
    if (!format) return std::unexpected("--format: " + format.error());
    planned.push_back({*format, ReportPath(out_dir, *format)});
  }
  std::error_code error;
  fs::create_directories(out_dir, error);
  if (error) {
    return std::unexpected(fmt::format("--out: cannot create '{}': {}", out_dir, error.message()));
  }
  const fs::path probe = fs::path(out_dir) / fmt::format(".faultline-probe-{}", ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    return std::unexpected(fmt::format("--out: cannot write into '{}': {}", out_dir,
                                       std::error_code(errno, std::generic_category()).message()));
  }
  ::close(fd);
  fs::remove(probe, error);
  std::vector<fs::path> earlier;  // every format's: an old junit.xml must not outlive a new run
  for (const report::Format format : {report::Format::kJson, report::Format::kJUnit,
                                      report::Format::kMarkdown, report::Format::kHtml}) {
    earlier.push_back(ReportPath(out_dir, format));
  }
  earlier.push_back(RunStreamPath(out_dir));
  if (auto removed = RemoveStaleReports(earlier); !removed) {
    return std::unexpected("--out: " + removed.error());
  }
  return planned;
}

namespace {

// The crossed thresholds as failures are shown, each with the command that re-judges it.
void PrintThresholds(const report::RunResult& result, std::ostream& out) {
  if (result.thresholds.empty()) return;
  out << fmt::format("  thresholds: {} of {} crossed\n", result.thresholds_crossed(),
                     result.thresholds.size());
  for (const report::ThresholdResult& threshold : result.thresholds) {
    if (threshold.status != report::CheckStatus::kFail) continue;
    out << fmt::format("  crossed {} [{}] {}: {}\n      reproduce: {}\n", threshold.name,
                       threshold.world, threshold.expression, threshold.evidence,
                       report::ReproduceCommand(result, threshold));
  }
}

// With --repeat: the percentiles, here when they fit on a screen (always in summary.md).
void PrintLatency(const report::RunResult& result, std::ostream& out) {
  constexpr std::size_t kMaxLatencyLines = 20;
  if (result.latency.empty() || result.latency.size() > kMaxLatencyLines) return;
  const auto show = [](const std::optional<report::LatencySummary::Percentiles>& p) {
    return p ? fmt::format("{:.0f}/{:.0f}/{:.0f}", p->p50, p->p95, p->p99) : std::string("-");
  };
  out << "  latency p50/p95/p99 ms: first token | terminal | recovery overhead\n";
  for (const report::LatencySummary& latency : result.latency) {
    const std::string count = latency.samples > latency.runs
                                  ? fmt::format("x{}, {} calls", latency.runs, latency.samples)
                                  : fmt::format("x{}", latency.runs);
    out << fmt::format("    {} [{}] {}: {} | {} | {}\n", latency.name, latency.world, count,
                       show(latency.first_token_ms), show(latency.terminal_ms),
                       show(latency.recovery_overhead_ms));
  }
}

void PrintSummary(const report::RunResult& result, std::string_view command, std::ostream& out) {
  out << fmt::format("faultline {}: {} run(s), world {}, subject {}, seed {}\n", command,
                     result.scenarios.size(), result.world, result.subject, result.seed);
  if (result.interrupted) {
    out << fmt::format("  INTERRUPTED by {}: {} of {} run(s) finished; the reports cover those\n",
                       result.interrupted->reason, result.scenarios.size(),
                       result.interrupted->planned_runs);
  }
  out << fmt::format(
      "  passed {}, failed {}, errors {}, advisories {} in {:.1f} s; fingerprint {}\n",
      result.passed(), result.failed(), result.errors(), result.advisories(), result.wall_ms / 1000,
      result.fingerprint);
  for (const report::ScenarioResult& scenario : result.scenarios) {
    if (scenario.verdict == report::Verdict::kPass) continue;
    out << "  " << OneLine(scenario, result) << "\n";
  }
  PrintThresholds(result, out);
  PrintLatency(result, out);
}

}  // namespace

ExitCode Report(const report::RunResult& result, const std::vector<PlannedReport>& planned,
                std::string_view command, std::ostream& out, std::ostream& err,
                const report::RunResult* files_hold) {
  PrintSummary(result, command, out);
  if (!planned.empty()) {
    const report::RunResult& in_files = files_hold != nullptr ? *files_hold : result;
    std::vector<ReportFile> files;
    for (const PlannedReport& report : planned) {
      files.push_back({report.path, [&in_files, format = report.format](std::ostream& stream) {
                         report::Render(in_files, format, stream);
                       }});
    }
    auto written = WriteReportFiles(files);
    if (!written) {
      err << "faultline " << command << ": " << written.error() << "\n";
      return ExitCode::kReportWriteError;
    }
    out << "  reports:";
    for (const std::string& path : *written) out << " " << path;
    out << "\n";
  }
  if (result.interrupted) return ExitCode::kInterrupted;
  if (result.failed() > 0) return ExitCode::kChecksFailed;
  if (result.errors() > 0) return ExitCode::kSubjectError;
  if (result.thresholds_crossed() > 0) return ExitCode::kThresholdsCrossed;
  return ExitCode::kSuccess;
}

}  // namespace faultline::cli
