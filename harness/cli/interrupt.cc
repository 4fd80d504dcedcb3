#include "harness/cli/interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "harness/cli/report_files.h"

namespace faultline::cli {
namespace {

// Process-wide, as signal dispositions are.
int g_pipe[2] = {-1, -1};
std::atomic<int> g_signals{0};
std::atomic<int> g_first{0};
struct sigaction g_old_int {};
struct sigaction g_old_term {};

constexpr char kQuit = 0;  // the guard's own "stop watching" byte

void OnSignal(int signal) {
  if (g_signals.fetch_add(1) == 0) {
    g_first = signal;
    const char byte = static_cast<char>(signal);
    [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &byte, 1);
    return;
  }
  constexpr char kMessage[] = "\nfaultline: second interrupt, exiting at once (no reports)\n";
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  RemoveReportTemporariesNow();  // a report half written is removed, never left beside the rest
  ::_exit(128 + signal);
}

std::string NameOf(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal);
}

}  // namespace

InterruptGuard::InterruptGuard(std::function<void(const std::string&)> on_stop)
    : on_stop_(std::move(on_stop)) {
  g_signals = 0;
  g_first = 0;
  if (::pipe2(g_pipe, O_CLOEXEC) != 0) return;  // no pipe: signals keep their default
  struct sigaction action {};
  action.sa_handler = &OnSignal;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &g_old_int);
  ::sigaction(SIGTERM, &action, &g_old_term);
  watcher_ = std::jthread([this] {
    char byte = kQuit;
    ssize_t n = 0;
    do {
      n = ::read(g_pipe[0], &byte, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1 || byte == kQuit) return;
    stop_.request_stop();
    if (on_stop_) on_stop_(NameOf(byte));
  });
}

InterruptGuard::~InterruptGuard() {
  if (g_pipe[1] < 0) return;
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
  const char byte = kQuit;
  [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &byte, 1);
  if (watcher_.joinable()) watcher_.join();
  ::close(g_pipe[0]);
  ::close(g_pipe[1]);
  g_pipe[0] = g_pipe[1] = -1;
}

std::optional<std::string> InterruptGuard::signal_name() const {
  if (g_signals.load() == 0) return std::nullopt;
  return NameOf(g_first.load());
}

}  // namespace faultline::cli
