#include "harness/cli/progress.h"

#include <fmt/format.h>

#include <algorithm>

#include "reports/report.h"

namespace faultline::cli {
namespace {

const report::CheckResult* FirstFailure(const report::ScenarioResult& result) {
  const report::CheckResult* advisory = nullptr;
  for (const report::CheckResult& check : result.checks) {
    if (check.status != report::CheckStatus::kFail) continue;
    if (check.severity == report::Severity::kViolation) return &check;
    if (advisory == nullptr) advisory = &check;
  }
  return advisory;
}

// The last lines of stderr, indented.
std::string SubjectErrorDetail(const report::SubjectError& error) {
  std::string out;  // the message already names the exit status or signal
  if (!error.stderr_tail.empty()) {
    out += "\n      stderr:";
    std::string_view rest = error.stderr_tail;
    while (!rest.empty()) {
      const std::size_t end = std::min(rest.find('\n'), rest.size());
      out += fmt::format("\n        {}", rest.substr(0, end));
      rest.remove_prefix(std::min(end + 1, rest.size()));
    }
  }
  return out;
}

std::string OneLineHead(const report::ScenarioResult& result) {
  const std::string head =
      fmt::format("{} {} [{}{}]", ToString(result.verdict), result.name, result.world,
                  result.repetition > 0 ? fmt::format(" #{}", result.repetition + 1) : "");
  if (result.verdict == report::Verdict::kError) {
    if (result.subject_error) {
      return fmt::format("{} subject error {}: {}{}", head, result.subject_error->kind,
                         result.error, SubjectErrorDetail(*result.subject_error));
    }
    return head + " " + result.error;
  }
  if (const report::CheckResult* check = FirstFailure(result)) {
    return fmt::format("{} {}: {}", head, check->id, check->evidence);
  }
  return fmt::format("{} {:.0f} ms", head, result.wall_ms);
}

}  // namespace

std::string OneLine(const report::ScenarioResult& result, const report::RunResult& context) {
  std::string line = OneLineHead(result);
  if (result.verdict != report::Verdict::kPass) {
    line += "\n      reproduce: " + report::ReproduceCommand(context, result);
  }
  return line;
}

ProgressPrinter::ProgressPrinter(std::ostream& err, ProgressOptions options,
                                 report::RunResult context, int total)
    : err_(err), options_(options), context_(std::move(context)) {
  last_.total = total;
  ticker_ = std::jthread([this](std::stop_token stop) {
    std::unique_lock lock(mutex_);
    const auto every = std::min(options_.refresh, options_.heartbeat);
    while (!stop.stop_requested()) {
      wake_.wait_for(lock, stop, every, [] { return false; });  // woken by time or the stop
      if (stop.stop_requested()) break;
      lock.unlock();
      Tick();
      lock.lock();
    }
  });
}

ProgressPrinter::~ProgressPrinter() {
  ticker_.request_stop();
  if (ticker_.joinable()) ticker_.join();
  std::lock_guard lock(mutex_);
  if (options_.live && last_.done < last_.total) err_ << "\n" << std::flush;
}

std::string ProgressPrinter::Status() const {
  const auto now = std::chrono::steady_clock::now();
  std::string status =
      fmt::format("[{}/{}] {} failed · {:.0f} s", last_.done, last_.total, last_.failed,
                  std::chrono::duration<double>(now - started_).count());
  const auto seconds = [](auto duration) {
    return std::chrono::duration<double>(duration).count();
  };
  if (last_.slowest_running.empty()) return status;
  if (last_.slowest_judging) {
    // Its subject has stopped: say so, with how long it ran, rather than count it as running.
    return status + fmt::format("; slowest: {}, judging for {:.1f} s (its subject ran {:.1f} s)",
                                last_.slowest_running, seconds(now - last_.slowest_judged_since),
                                seconds(last_.slowest_judged_since - last_.slowest_since));
  }
  return status + fmt::format("; slowest running: {} ({:.1f} s)", last_.slowest_running,
                              seconds(now - last_.slowest_since));
}

void ProgressPrinter::Tick() {
  std::lock_guard lock(mutex_);
  if (last_.done >= last_.total) return;
  if (options_.live) {
    err_ << "\r\033[K" << Status() << std::flush;
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (now - last_status_ < options_.heartbeat) return;
  err_ << Status() << "\n" << std::flush;
  last_status_ = now;
}

void ProgressPrinter::operator()(const harness::RunProgress& progress) {
  std::lock_guard lock(mutex_);
  last_ = progress;
  last_.finished = nullptr;            // only valid during this call
  if (progress.finished == nullptr) {  // between completions: the next status line shows it
    if (options_.live) err_ << "\r\033[K" << Status() << std::flush;
    return;
  }
  const report::ScenarioResult& result = *progress.finished;
  const bool show = result.verdict != report::Verdict::kPass || options_.verbose;
  if (options_.live) {
    err_ << "\r\033[K";
    if (show) err_ << OneLine(result, context_) << "\n";
    err_ << Status() << (progress.done == progress.total ? "\n" : "") << std::flush;
    return;
  }
  if (show) err_ << OneLine(result, context_) << "\n";
  const auto now = std::chrono::steady_clock::now();
  if (progress.done == progress.total || now - last_status_ >= options_.heartbeat) {
    err_ << Status() << "\n";
    last_status_ = now;
  }
  err_.flush();
}

void ProgressPrinter::Note(std::string_view text) {
  std::lock_guard lock(mutex_);
  err_ << (options_.live ? "\r\033[K" : "") << text << "\n" << std::flush;
}

}  // namespace faultline::cli
