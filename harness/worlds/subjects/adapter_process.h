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
};

inline constexpr std::size_t kMaxStderr = 64 * 1024;
inline constexpr std::size_t kDefaultMaxLine = 1024 * 1024;
inline constexpr std::size_t kDefaultMaxOutput = 64 * 1024 * 1024;
inline constexpr std::size_t kDefaultMaxLines = 100'000;
inline constexpr std::chrono::seconds kStopGrace{1};

// The stdin of an adapter process that several threads write to: a session-mode adapter gets each
// call's line as the call comes due, and its cancels, from the runner's threads. Each line is
// written whole, under a lock; lines written before the process starts wait for it. Close ends
// stdin once; later lines are dropped (the adapter is gone, or was told everything).
class AdapterStdin {
 public:
  AdapterStdin() = default;
  AdapterStdin(const AdapterStdin&) = delete;
  AdapterStdin& operator=(const AdapterStdin&) = delete;
  ~AdapterStdin();
  void Write(std::string_view line);  // without the newline
  void Close();
  // The process's end of the pipe, which this channel then owns (RunAdapter).
  void Attach(int fd);

 private:
  void WriteLocked(std::string_view text);
  std::mutex mutex_;
  int fd_ = -1;
  bool closed_ = false;
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

}  // namespace faultline::harness
