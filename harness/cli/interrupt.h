// Ctrl-C and SIGTERM for a long command (`faultline run`): the first signal becomes a stop
// request that the runner honours (no further run starts, running subjects are ended, reports
// are written for what finished); a second one exits the process at once with 128 + signal.
//
// An InterruptGuard installs the handlers for its lifetime and restores the previous ones after.
// The handler only writes a byte to a pipe (async-signal-safe); a watcher thread turns it into
// the stop request and calls `on_stop` (from that thread), so no lock is ever taken inside a
// signal handler. One guard at a time per process.
#pragma once

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

namespace faultline::cli {

class InterruptGuard {
 public:
  // `on_stop(signal_name)` runs once, on the watcher thread, when the first signal arrives.
  explicit InterruptGuard(std::function<void(const std::string&)> on_stop);
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  std::stop_token token() const { return stop_.get_token(); }
  // "SIGINT" | "SIGTERM" once a signal arrived.
  std::optional<std::string> signal_name() const;

 private:
  std::stop_source stop_;
  std::function<void(const std::string&)> on_stop_;
  std::jthread watcher_;
};

}  // namespace faultline::cli
