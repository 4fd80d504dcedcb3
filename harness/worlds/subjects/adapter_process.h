// An adapter process: any command that speaks the adapter protocol (docs/adapter-protocol.md) on
// stdin/stdout.
//
// RunAdapter starts `/bin/sh -c COMMAND` in its own process group, writes the call line, and
// collects every stdout line with the time it was received (the runner's monotonic clock, as an
// offset from the launch). It writes {"type":"cancel"} `cancel_at` after the call's first attempt
// began (`first_attempt`: its request's arrival at the provider, or the adapter's own account of
// an attempt that never arrived), as in the virtual world where that is t = 0: interpreters take
// anything from 50 ms to seconds to start and import an SDK on a busy machine, and a scripted
// cancel is about the call, not the start-up. When neither is ever known (nothing arrives and
// the adapter reports no attempt), the cancel goes `cancel_at` + kCancelFallback after the
// adapter's first line. When the process has
// not exited by `timeout` it kills the whole group (SIGKILL) and says so; on a stop request it
// ends the group (SIGTERM, then SIGKILL). stderr is kept, capped.
// Nothing blocks forever: every wait is bounded by the timeout.
//
// The same process runner serves an unmodified app (`faultline run --exec`, app_subject.h): no
// call line, its stdout kept as free text (a tail, like stderr), the scripted cancel sent as
// SIGINT to its group (the user's Ctrl-C), and its environment extended with the provider's
// endpoints.
//
// A session-mode adapter whose hello declares `reset` may serve several scenario runs in a row
// (AdapterProcess): after a run's last terminal event the runner writes {"type":"reset"} instead
// of closing its stdin (AdapterStdin::Reset), the adapter answers with a new adapter/hello, and
// the process waits, alive, for the next run; that hello is the first line of the next run.
//
// Thread-safety: each call owns its process; concurrent calls from several threads are fine.
#pragma once

#include <chrono>
#include <expected>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "harness/worlds/real_run.h"
#include "reports/run_result.h"

namespace faultline::harness {

struct AdapterLine {
  std::chrono::microseconds at{0};  // since the launch
  std::string text;                 // without the newline
};

struct AdapterRun {
  std::vector<AdapterLine> lines;  // protocol output; empty with AdapterLaunch::free_output
  std::string stderr_text;         // the LAST kMaxStderr bytes (earlier ones are counted, not kept)
  std::size_t stderr_bytes = 0;
  std::string stdout_text;  // with AdapterLaunch::free_output: stdout's last kMaxStderr bytes
  std::size_t stdout_bytes = 0;
  std::optional<std::chrono::microseconds> cancel_sent;
  std::chrono::microseconds ended{0};  // when the process exited (or was killed)
  // When the runner began to stop it (its timeout, a stop request, a flood), before any signal:
  // what the process closes from then on, it closes because it is being stopped.
  std::optional<std::chrono::microseconds> stopped;
  bool timed_out = false;
  int exit_status = 0;        // the exit code, or 128 + signal
  std::optional<int> signal;  // the signal that ended it (SIGKILL when the runner killed it)
  // Set when the runner stopped the adapter for flooding: "line-too-long" (a line over
  // max_line_bytes) or "output-too-large" (over max_output_bytes or max_lines in all).
  std::string overflow;
  bool interrupted = false;  // the runner stopped it on a stop request (see AdapterLaunch::stop)
  // After a reset (AdapterStdin::Reset): true when the process answered with its hello and waits
  // for the next run (it did not exit: `ended` is when the run ended); else why it is not kept,
  // in `reset_refused` ("" when no reset was sent).
  bool kept = false;
  std::string reset_refused;
};

// stderr's (and free stdout's) tail kept: what a result keeps of it.
inline constexpr std::size_t kMaxStderr = report::kMaxStderrTail;
inline constexpr std::size_t kDefaultMaxLine = 1024 * 1024;
inline constexpr std::size_t kDefaultMaxOutput = 64 * 1024 * 1024;
inline constexpr std::size_t kDefaultMaxLines = 100'000;
inline constexpr std::chrono::seconds kStopGrace{1};
// How long an adapter may take to answer a reset with its hello before it is ended.
inline constexpr std::chrono::seconds kResetGrace{5};

// The stdin of an adapter process that several threads write to: a session-mode adapter gets each
// call's line as the call comes due, and its cancels, from the runner's threads. Each line is
// written whole, under a lock; lines written before the process starts wait for it. Close ends
// stdin once; later lines are dropped (the adapter is gone, or was told everything). Reset, in
// Close's place, writes the reset line and drops later lines too, but keeps the pipe open for the
// process's next run (Detach gives it back).
class AdapterStdin {
 public:
  AdapterStdin() = default;
  AdapterStdin(const AdapterStdin&) = delete;
  AdapterStdin& operator=(const AdapterStdin&) = delete;
  ~AdapterStdin();
  void Write(std::string_view line);  // without the newline
  void Close();
  void Reset();
  bool resetting() const;
  // The process's end of the pipe, which this channel then owns (RunAdapter).
  void Attach(int fd);
  // After Reset: the pipe, given back to its process (-1 when closed since).
  int Detach();

 private:
  mutable std::mutex mutex_;
  int fd_ = -1;
  bool closed_ = false;
  bool resetting_ = false;
  std::string pending_;  // written before Attach
};

struct AdapterLaunch {
  std::string command;    // run with /bin/sh -c
  std::string call_line;  // the {"type":"call",...} line (no newline); "": stdin closed at once
  // NAME=VALUE pairs set in the process's environment over the runner's own.
  std::vector<std::string> environment;
  // stdout is not the protocol but free text (an app's): kept as a tail, never split into lines,
  // never a flood; the cancel is then SIGINT to the group, counted from the launch when the
  // first attempt is never known.
  bool free_output = false;
  std::optional<std::chrono::microseconds> cancel_at;  // after the first attempt began
  // When the call's first attempt began (an offset like the lines'), given the lines so far;
  // nullopt while that is not known.
  std::function<std::optional<std::chrono::microseconds>(const std::vector<AdapterLine>&)>
      first_attempt;
  // Called once, on the reader's thread, when the adapter's first stdout line arrives (its
  // hello: it is about to make its call).
  std::function<void()> on_first_line;
  // Called on the reader's thread with every stdout line as it arrives (after on_first_line).
  std::function<void(std::string_view line)> on_line;
  // When set, the process's stdin is this channel, shared with other threads (a session-mode
  // adapter's): `call_line` is unused (its owner writes the lines), and it is closed when the
  // process ends.
  std::shared_ptr<AdapterStdin> stdin_channel;
  // When set, called (on the reader's thread) when the scripted cancel is due, instead of writing
  // {"type":"cancel"}: a session-mode adapter is told which calls to cancel.
  std::function<void()> on_cancel;
  std::chrono::microseconds timeout{std::chrono::minutes(5)};
  // Flood limits: past any of them the adapter is killed and the run records why.
  std::size_t max_line_bytes = kDefaultMaxLine;
  std::size_t max_output_bytes = kDefaultMaxOutput;
  std::size_t max_lines = kDefaultMaxLines;
  // A stop request (the user's Ctrl-C) ends the adapter: SIGTERM to its group, SIGKILL
  // kStopGrace later if it is still there.
  std::stop_token stop;
  // The launch instant all times are measured from (so several adapters of one scenario share
  // the session's clock).
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

// Errors: the process could not be started (pipe/fork failure). A command that is not found
// runs and exits 127 with the shell's message on stderr: that is a result, not an error.
std::expected<AdapterRun, std::string> RunAdapter(const AdapterLaunch& launch);

// An adapter process that may outlive one run: started once, it serves a run (Serve), and when
// that run ended with a reset it answered (AdapterRun::kept), it serves the next one. Its hello
// to the reset is kept and replayed as the next run's first line, at that run's start.
class AdapterProcess {
 public:
  // Starts `/bin/sh -c command` in its own group, with `environment` over the runner's own.
  static std::expected<std::unique_ptr<AdapterProcess>, std::string> Start(
      const std::string& command, const std::vector<std::string>& environment);
  // Ends it unless it exited already: stdin closed, and its group killed (SIGKILL) when it has not
  // exited kStopGrace later.
  ~AdapterProcess();
  AdapterProcess(const AdapterProcess&) = delete;
  AdapterProcess& operator=(const AdapterProcess&) = delete;

  // One run on it, as RunAdapter runs one (`launch.command` and `launch.environment` are unused:
  // the process's are its start's).
  AdapterRun Serve(const AdapterLaunch& launch);
  // Whether it waits for another run: the last Serve ended kept.
  bool ready() const;
  // Closes its stdin, so that it exits on its own (before the destructor waits for it).
  void CloseStdin();

  struct State;  // the child, its pipes, and what it wrote past its last run (adapter_process.cc)

 private:
  explicit AdapterProcess(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace faultline::harness
