// The `faultline` command line: builds the CLI11 app with its subcommands and runs the chosen
// one. The app's main() only maps the result to the process exit code.
#pragma once

#include <ostream>
#include <vector>

#include "harness/cli/config_file.h"

namespace faultline::cli {

// README.md's exit codes: 0 = all passed, 1 = checks failed, 2 = usage or input error; 3 = a
// subject error and no check failed; 4 = interrupted (Ctrl-C / SIGTERM) with the reports of what
// finished written; 5 = a report could not be written (an I/O error, whatever the verdict). A
// second signal exits at once with 128 + signal, writing nothing.
enum class ExitCode {
  kSuccess = 0,
  kChecksFailed = 1,
  kUsageError = 2,
  kSubjectError = 3,
  kInterrupted = 4,
  // A report file could not be written (disk full, read-only, ...: report_files.h). Outranks
  // every verdict: the reports CI would publish are missing, so the run cannot count as judged.
  kReportWriteError = 5,
  // A run that gave up for want of memory (std::bad_alloc) or hit an internal size limit
  // (std::length_error): an error message instead of a crash. `faultline simulate` only.
  kOutOfResources = 6,
  // Every check passed and no subject broke, but a threshold was crossed (k6's code for it).
  kThresholdsCrossed = 99,
};

// Parses `argv` and runs the subcommand. Normal output goes to `out`, diagnostics to `err`.
ExitCode Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// The keys faultline.yaml may hold, from the commands Run builds: what config.schema.json must
// list (harness/tests/config_file_test.cc).
std::vector<ConfigKey> ConfigFileKeys();

}  // namespace faultline::cli
