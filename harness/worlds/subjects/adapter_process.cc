#include "harness/worlds/subjects/adapter_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "nlohmann/json.hpp"
#include "scenarios/parse_limits.h"
#include "scenarios/redact.h"

namespace faultline::harness {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::microseconds;

// Closes a file descriptor once.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int value) : fd(value) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Close(); }
  void Close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct Pipes {
  std::array<int, 2> in{-1, -1}, out{-1, -1}, err{-1, -1};
};

std::expected<void, std::string> MakePipes(Pipes& pipes) {
  for (auto* pair : {&pipes.in, &pipes.out, &pipes.err}) {
    if (::pipe2(pair->data(), O_CLOEXEC) != 0) {
      return std::unexpected(fmt::format("pipe: {}", std::strerror(errno)));
    }
  }
  return {};
}

// The child's environment: the runner's own, with `overrides` (NAME=VALUE) replacing or adding
// those names. Built before the fork: the child of a threaded process may not allocate.
std::vector<std::string> ChildEnvironment(const std::vector<std::string>& overrides) {
  std::vector<std::string> out;
  const auto overridden = [&](std::string_view entry) {
    const std::string_view name = entry.substr(0, entry.find('='));
    return std::ranges::any_of(overrides, [&](const std::string& o) {
      return o.size() > name.size() && o.starts_with(name) && o[name.size()] == '=';
    });
  };
  bool has_binary = false;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (!overridden(*entry)) out.emplace_back(*entry);
    has_binary = has_binary || std::string_view(*entry).starts_with("FAULTLINE_BIN=");
  }
  out.insert(out.end(), overrides.begin(), overrides.end());
  // The running faultline, so a subject can ask it for what it embeds (the adapter kits fetch the
  // protocol schema with `$FAULTLINE_BIN schema protocol` when copied alone, off PATH too).
  std::error_code ignored;
  if (const auto self = std::filesystem::read_symlink("/proc/self/exe", ignored);
      !has_binary && !overridden("FAULTLINE_BIN=") && !self.empty()) {
    out.push_back("FAULTLINE_BIN=" + self.string());
  }
  return out;
}

// Pointers into `entries` for execve, null-terminated.
std::vector<char*> EnvironmentPointers(std::vector<std::string>& entries) {
  std::vector<char*> out;
  for (std::string& entry : entries) out.push_back(entry.data());
  out.push_back(nullptr);
  return out;
}

[[noreturn]] void ExecChild(const Pipes& pipes, const std::string& command, char** environment) {
  ::setpgid(0, 0);  // its own group, so a kill reaches the adapter's children too
  ::dup2(pipes.in[0], STDIN_FILENO);
  ::dup2(pipes.out[1], STDOUT_FILENO);
  ::dup2(pipes.err[1], STDERR_FILENO);
  // Every other descriptor goes: sockets (the provider's listeners and connections live in this
  // process) are not close-on-exec, and an adapter holding a copy of a listening socket would
  // keep it accepting into a backlog nobody reads, through a scripted outage and after it.
  ::close_range(3, ~0U, 0);
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  ::execve("/bin/sh", const_cast<char**>(argv), environment);
  ::_exit(127);
}

// Writes all of `text` to `fd`; stops early when the reader closed its end (it will not read the
// rest anyway).
void WriteAll(int fd, std::string_view text) {
  while (!text.empty() && fd >= 0) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

struct AdapterProcess::State {
  pid_t pid = -1;
  Fd in, out, err;
  std::string partial;          // stdout past the last whole line
  bool reset_answered = false;  // it answered the last run's reset: it waits for a run
  bool exited = false;          // reaped
};

namespace {

// One run on a process: reads its stdout and stderr until it exits (or is stopped), or, after a
// reset, until it answers adapter/reset.
class Collector {
 public:
  Collector(const AdapterLaunch& launch, AdapterProcess::State& process)
      : launch_(launch),
        process_(process),
        pid_(process.pid),
        in_(process.in),
        out_(process.out),
        err_(process.err),
        partial_(process.partial) {}

  AdapterRun Run();

 private:
  microseconds Now() const {
    return std::chrono::duration_cast<microseconds>(Clock::now() - launch_.start);
  }
  void Write(std::string_view text) {
    if (launch_.stdin_channel) {
      launch_.stdin_channel->Write(text.substr(0, text.size() - 1));  // the channel adds '\n'
      return;
    }
    WriteAll(in_.fd, text);
  }
  void CloseStdin() {
    if (launch_.stdin_channel) launch_.stdin_channel->Close();
    in_.Close();
  }
  bool Resetting() const {
    return launch_.stdin_channel != nullptr && launch_.stdin_channel->resetting();
  }
  // A line after the reset: adapter/reset keeps the process for the next run; anything else ends
  // it.
  void AfterReset(std::string_view line);
  // The reset went unanswered (or was answered wrong): the process is ended, not kept.
  void RefuseReset(std::string why) {
    if (!run_.reset_refused.empty()) return;
    run_.reset_refused = std::move(why);
    ::kill(-pid_, SIGKILL);
  }
  // Splits off partial_'s whole lines (from `scanned` on: the part before was looked at) as
  // received at `now`.
  void TakeLines(microseconds now, std::size_t scanned);
  void ReadOut();
  void ReadErr();
  // Appends what the descriptor has to a kept tail (stderr, an app's stdout); closes it at its end.
  void ReadTail(Fd& fd, std::string& tail, std::size_t& bytes);
  void Overflow(std::string why) {
    if (!run_.overflow.empty()) return;
    run_.overflow = std::move(why);
    run_.stopped = Now();
    ::kill(-pid_, SIGKILL);
  }
  int PollTimeoutMs() const;
  // Reads stdout and stderr until the adapter closes both, sending the cancel when it is due;
  // ends early on a stop request, the timeout or a poll() failure.
  void Collect();
  // Waits for the adapter to exit (killing its group if it lingers) and records how it ended.
  void Reap();
  // On a stop request: SIGTERM once, SIGKILL after kStopGrace. True when the loop should end.
  bool Stopping();
  // When the cancel is due (see AdapterLaunch); nullopt while that is not known yet.
  std::optional<microseconds> CancelDue() const {
    if (!launch_.cancel_at || run_.cancel_sent) return std::nullopt;
    if (run_.lines.empty() && !launch_.free_output) return std::nullopt;  // not started yet
    if (launch_.first_attempt) {
      if (const auto first = launch_.first_attempt(run_.lines)) return *first + *launch_.cancel_at;
    }
    const microseconds started = run_.lines.empty() ? microseconds{0} : run_.lines.front().at;
    return started + *launch_.cancel_at + kCancelFallback;
  }

  const AdapterLaunch& launch_;
  AdapterProcess::State& process_;
  const pid_t pid_;
  Fd &in_, &out_, &err_;
  std::string& partial_;
  std::size_t output_bytes_ = 0;
  std::optional<microseconds> terminated_at_;  // when the stop request's SIGTERM went out
  std::optional<microseconds> reset_at_;       // when the reset was first seen written
  AdapterRun run_;
};

void Collector::AfterReset(std::string_view line) {
  if (run_.kept || !run_.reset_refused.empty()) return;
  const auto message = scenario::NestsDeeperThan(line, scenario::kMaxJsonDepth)
                           ? nlohmann::json()
                           : nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (message.is_object() && message.value("type", "") == "adapter/reset") {
    run_.kept = true;
    process_.reset_answered = true;
    return;
  }
  constexpr std::size_t kShown = 80;
  RefuseReset(fmt::format("it answered the reset with `{}{}` instead of adapter/reset",
                          line.substr(0, kShown), line.size() > kShown ? "..." : ""));
}

void Collector::ReadOut() {
  if (launch_.free_output) {
    ReadTail(out_, run_.stdout_text, run_.stdout_bytes);
    return;
  }
  std::array<char, 8192> buffer;
  const ssize_t n = ::read(out_.fd, buffer.data(), buffer.size());
  if (n <= 0) {
    if (n < 0 && errno == EINTR) return;
    if (!partial_.empty()) run_.lines.push_back({Now(), std::move(partial_)});
    partial_.clear();
    out_.Close();
    return;
  }
  const microseconds now = Now();
  if (!run_.overflow.empty()) return;  // killed: drain, keep nothing
  output_bytes_ += static_cast<std::size_t>(n);
  if (output_bytes_ > launch_.max_output_bytes) return Overflow("output-too-large");
  const std::size_t scanned = partial_.size();
  partial_.append(buffer.data(), static_cast<std::size_t>(n));
  TakeLines(now, scanned);
}

void Collector::TakeLines(microseconds now, std::size_t scanned) {
  std::size_t start = 0;
  std::size_t newline = partial_.find('\n', scanned);
  for (; newline != std::string::npos; newline = partial_.find('\n', start)) {
    std::string line = partial_.substr(start, newline - start);
    start = newline + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() > launch_.max_line_bytes) return Overflow("line-too-long");
    if (Resetting()) {
      AfterReset(line);
      if (run_.kept) break;  // what follows is the next run's
      continue;
    }
    if (run_.lines.empty() && launch_.on_first_line) launch_.on_first_line();
    if (launch_.on_line) launch_.on_line(line);
    run_.lines.push_back({now, std::move(line)});
    if (run_.lines.size() > launch_.max_lines) return Overflow("output-too-large");
  }
  partial_.erase(0, start);
  if (partial_.size() > launch_.max_line_bytes) Overflow("line-too-long");
}

void Collector::ReadErr() { ReadTail(err_, run_.stderr_text, run_.stderr_bytes); }

void Collector::ReadTail(Fd& fd, std::string& tail, std::size_t& bytes) {
  std::array<char, 8192> buffer;
  const ssize_t n = ::read(fd.fd, buffer.data(), buffer.size());
  if (n <= 0) {
    if (n < 0 && errno == EINTR) return;
    fd.Close();
    return;
  }
  bytes += static_cast<std::size_t>(n);
  tail.append(buffer.data(), static_cast<std::size_t>(n));
  // Keep the tail: the last lines say why a subject died.
  if (tail.size() > 2 * kMaxStderr) tail = scenario::CutForRedaction(std::move(tail), kMaxStderr);
}

int Collector::PollTimeoutMs() const {
  microseconds until = launch_.timeout - Now();
  if (const auto cancel = CancelDue()) until = std::min(until, *cancel - Now());
  // Waiting to learn when the first attempt began: look again soon.
  if (launch_.cancel_at && !run_.cancel_sent) until = std::min(until, microseconds{10'000});
  // A stop request has no descriptor to wake poll(): look at it every 50 ms.
  if (launch_.stop.stop_possible()) until = std::min(until, microseconds{50'000});
  // The reset is written from this thread, on the line that ended the run (on_line): its grace
  // counts from the loop's next turn.
  if (reset_at_) until = std::min(until, *reset_at_ + kResetGrace - Now());
  return static_cast<int>(std::clamp<long long>((until.count() + 999) / 1000, 0, 60'000));
}

bool Collector::Stopping() {
  if (!launch_.stop.stop_requested()) return false;
  if (!terminated_at_) {
    run_.interrupted = true;
    terminated_at_ = Now();
    run_.stopped = terminated_at_;
    ::kill(-pid_, SIGTERM);
    return false;
  }
  if (Now() < *terminated_at_ + kStopGrace) return false;
  ::kill(-pid_, SIGKILL);
  return true;
}

AdapterRun Collector::Run() {
  process_.reset_answered = false;
  if (!partial_.empty()) TakeLines(Now(), 0);  // written after the last run's reset was answered
  if (launch_.stdin_channel) {
    launch_.stdin_channel->Attach(in_.fd);  // with the lines written to it so far
    in_.fd = -1;                            // the channel's now
  } else if (launch_.call_line.empty()) {
    in_.Close();  // an app reads no call line: its stdin ends at once
  } else {
    Write(launch_.call_line + "\n");
  }
  Collect();
  if (run_.kept) {
    in_.fd = launch_.stdin_channel->Detach();
    run_.ended = Now();
  } else {
    CloseStdin();
    Reap();
  }
  for (std::string* tail : {&run_.stderr_text, &run_.stdout_text}) {
    *tail = scenario::CutForRedaction(std::move(*tail), kMaxStderr);  // then redacted whole
  }
  return std::move(run_);
}

void Collector::Collect() {
  while ((out_.fd >= 0 || err_.fd >= 0) && !run_.kept) {
    if (Stopping()) return;
    if (Resetting() && !reset_at_) reset_at_ = Now();
    if (reset_at_ && Now() >= *reset_at_ + kResetGrace) {
      RefuseReset(fmt::format("it did not answer the reset with adapter/hello within {} s",
                              kResetGrace.count()));
      return;
    }
    if (const auto cancel = CancelDue(); cancel && Now() >= *cancel) {
      if (launch_.on_cancel) {
        launch_.on_cancel();
      } else if (launch_.free_output) {
        ::kill(-pid_, SIGINT);  // an app's caller gives up the way a user does: Ctrl-C
      } else {
        Write("{\"type\":\"cancel\"}\n");
      }
      run_.cancel_sent = Now();
    }
    if (Now() >= launch_.timeout) {
      run_.timed_out = true;
      run_.stopped = Now();
      ::kill(-pid_, SIGKILL);
      return;
    }
    std::array<pollfd, 2> fds{{{out_.fd, POLLIN, 0}, {err_.fd, POLLIN, 0}}};
    const int ready = ::poll(fds.data(), fds.size(), PollTimeoutMs());
    if (ready < 0 && errno != EINTR) return;
    if (ready <= 0) continue;
    if (fds[0].revents != 0) ReadOut();
    if (fds[1].revents != 0) ReadErr();
  }
}

void Collector::Reap() {
  if (Resetting() && run_.reset_refused.empty()) {
    run_.reset_refused = "it ended instead of answering the reset with adapter/hello";
  }
  int status = 0;
  // Output closed: the adapter is exiting. Give it a moment, then make sure of it.
  for (int i = 0; i < 200 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) ::usleep(10'000);
  if (::waitpid(pid_, &status, WNOHANG) == 0) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
  }
  process_.exited = true;
  run_.ended = Now();
  run_.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (WIFSIGNALED(status)) run_.signal = WTERMSIG(status);
}

}  // namespace

AdapterStdin::~AdapterStdin() { Close(); }

void AdapterStdin::Write(std::string_view line) {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  std::string text(line);
  text += '\n';
  if (fd_ < 0) {
    pending_ += text;
    return;
  }
  WriteAll(fd_, text);
}

void AdapterStdin::Attach(int fd) {
  std::lock_guard lock(mutex_);
  fd_ = fd;
  if (closed_) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  WriteAll(fd_, pending_);
  pending_.clear();
}

void AdapterStdin::Reset() {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  closed_ = true;
  resetting_ = true;
  pending_.clear();
  if (fd_ >= 0) WriteAll(fd_, "{\"type\":\"reset\"}\n");
}

bool AdapterStdin::resetting() const {
  std::lock_guard lock(mutex_);
  return resetting_;
}

int AdapterStdin::Detach() {
  std::lock_guard lock(mutex_);
  return std::exchange(fd_, -1);
}

void AdapterStdin::Close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  pending_.clear();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::expected<std::unique_ptr<AdapterProcess>, std::string> AdapterProcess::Start(
    const std::string& command, const std::vector<std::string>& environment) {
  Pipes pipes;
  if (auto made = MakePipes(pipes); !made) return std::unexpected(made.error());
  std::vector<std::string> child_environment = ChildEnvironment(environment);
  std::vector<char*> environment_pointers = EnvironmentPointers(child_environment);
  const pid_t pid = ::fork();
  if (pid < 0) return std::unexpected(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) ExecChild(pipes, command, environment_pointers.data());
  ::setpgid(pid, pid);  // also from the parent, so a kill right away cannot miss the group
  ::close(pipes.in[0]);
  ::close(pipes.out[1]);
  ::close(pipes.err[1]);
  ::signal(SIGPIPE, SIG_IGN);  // an adapter that exits early must not kill the runner
  auto state = std::make_unique<State>();
  state->pid = pid;
  state->in.fd = pipes.in[1];
  state->out.fd = pipes.out[0];
  state->err.fd = pipes.err[0];
  return std::unique_ptr<AdapterProcess>(new AdapterProcess(std::move(state)));
}

AdapterProcess::AdapterProcess(std::unique_ptr<State> state) : state_(std::move(state)) {}

AdapterProcess::~AdapterProcess() {
  if (state_->exited) return;
  state_->in.Close();
  state_->out.Close();  // what it still writes goes nowhere
  state_->err.Close();
  int status = 0;
  const auto give_up = Clock::now() + kStopGrace;
  while (::waitpid(state_->pid, &status, WNOHANG) == 0 && Clock::now() < give_up) {
    ::usleep(10'000);
  }
  ::kill(-state_->pid, SIGKILL);  // its group: what it started goes with it
  ::waitpid(state_->pid, &status, 0);
}

AdapterRun AdapterProcess::Serve(const AdapterLaunch& launch) {
  Collector collector(launch, *state_);
  return collector.Run();
}

bool AdapterProcess::ready() const { return !state_->exited && state_->reset_answered; }

void AdapterProcess::CloseStdin() { state_->in.Close(); }

std::expected<AdapterRun, std::string> RunAdapter(const AdapterLaunch& launch) {
  auto process = AdapterProcess::Start(launch.command, launch.environment);
  if (!process) return std::unexpected(process.error());
  return (*process)->Serve(launch);
}

}  // namespace faultline::harness
