// What a judged run leaves: its summary on the console and its report files (result.json,
// junit.xml, summary.md, report.html), for `faultline run` and for `faultline serve --report`,
// which judges a served session's journal the same way.
#pragma once

#include <expected>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "harness/cli/cli.h"
#include "reports/report.h"

namespace faultline::cli {

struct PlannedReport {
  report::Format format;
  std::filesystem::path path;
};

// The reports to write into `out_dir` (none with `none`), checked before the first run so that a
// bad --format or an unwritable --out never costs a whole run: every format parses, the folder
// exists (or is made) and a file can be created in it. The reports an earlier run left there
// (every format's, not only the planned ones) are removed now: a run that fails to write, or is
// killed, must not leave them to pass for its own (report_files.h).
std::expected<std::vector<PlannedReport>, std::string> PlanReports(
    const std::vector<std::string>& formats, const std::string& out_dir, bool none);

// Where `faultline run` streams every judged run as it finishes, beside the reports in --out
// (reports/run_spool.h: JSON Lines, one run a line).
std::filesystem::path RunStreamPath(const std::string& out_dir);

// The summary on `out` under `command`'s name ("run", "serve": the failures with their
// reproduce commands, crossed thresholds, latency), then the planned reports; the run's exit
// code (cli.h), or kReportWriteError with the files and the OS reasons on `err` when a report
// could not be written. With `files_hold`, the files hold that result instead, and the summary
// and exit code stay `result`'s (--last-failed: what ran now, and the earlier runs beside it).
ExitCode Report(const report::RunResult& result, const std::vector<PlannedReport>& planned,
                std::string_view command, std::ostream& out, std::ostream& err,
                const report::RunResult* files_hold = nullptr);

}  // namespace faultline::cli
