// The progress of `faultline run` on stderr. On a terminal: one live status line, redrawn every
// `refresh` (so the slowest run's clock keeps counting between completions), with a line per
// failure above it. Otherwise (CI logs): a line per failure at once and a status line every
// `heartbeat`. With `verbose`, a line per run. A run that did not pass ends with the command
// that reproduces it.
//
// The sink is called from the runner's worker threads; a ticker thread of its own redraws.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "harness/runner.h"
#include "reports/run_result.h"

namespace faultline::cli {

struct ProgressOptions {
  bool verbose = false;
  bool live = false;  // a terminal: one status line redrawn in place
  std::chrono::milliseconds refresh{1000};
  std::chrono::milliseconds heartbeat{10000};
};

// One run as the console shows it; a run that did not pass ends with "reproduce: <command>"
// (`context` gives the run's seed and subject).
std::string OneLine(const report::ScenarioResult& result, const report::RunResult& context);

class ProgressPrinter {
 public:
  ProgressPrinter(std::ostream& err, ProgressOptions options, report::RunResult context, int total);
  ~ProgressPrinter();
  ProgressPrinter(const ProgressPrinter&) = delete;
  ProgressPrinter& operator=(const ProgressPrinter&) = delete;

  void operator()(const harness::RunProgress& progress);
  // A line of its own, between progress updates.
  void Note(std::string_view text);

 private:
  std::string Status() const;  // under mutex_
  void Tick();

  std::ostream& err_;
  ProgressOptions options_;
  report::RunResult context_;
  std::mutex mutex_;
  harness::RunProgress last_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_status_ = started_;
  std::condition_variable_any wake_;
  std::jthread ticker_;
};

}  // namespace faultline::cli
