// The built `faultline` binary as a child process, for tests that run it as a user would: its
// stdin, stdout and stderr on pipes, bounded waits for output and for the exit.
// FAULTLINE_BINARY is defined by harness/CMakeLists.txt.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::cli::test_support {

using namespace std::chrono_literals;

class FaultlineProcess {
 public:
  explicit FaultlineProcess(std::vector<std::string> args) {
    int in_pipe[2];
    int out_pipe[2];
    int err_pipe[2];
    if (::pipe(in_pipe) != 0 || ::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in_pipe[0], STDIN_FILENO);
      ::dup2(out_pipe[1], STDOUT_FILENO);
      ::dup2(err_pipe[1], STDERR_FILENO);
      ::close(in_pipe[1]);
      ::close(out_pipe[0]);
      ::close(err_pipe[0]);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(FAULTLINE_BINARY));
      for (auto& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execv(FAULTLINE_BINARY, argv.data());
      ::_exit(127);
    }
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    in_fd_ = in_pipe[1];
    out_fd_ = out_pipe[0];
    err_fd_ = err_pipe[0];
    ::fcntl(out_fd_, F_SETFL, O_NONBLOCK);
    ::fcntl(err_fd_, F_SETFL, O_NONBLOCK);
  }
  ~FaultlineProcess() {
    if (pid_ > 0 && !exit_code_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    for (int fd : {in_fd_, out_fd_, err_fd_}) {
      if (fd >= 0) ::close(fd);
    }
  }

  void Write(std::string_view text) {
    while (!text.empty()) {
      const ssize_t n = ::write(in_fd_, text.data(), text.size());
      if (n <= 0) return;
      text.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  void CloseStdin() {
    ::close(in_fd_);
    in_fd_ = -1;
  }

  bool WaitForOutput(std::string_view needle, std::chrono::milliseconds timeout = 20s) {
    return WaitFor(out_, needle, timeout);
  }
  bool WaitForError(std::string_view needle, std::chrono::milliseconds timeout = 20s) {
    return WaitFor(err_, needle, timeout);
  }

  void Signal(int signal) { ::kill(pid_, signal); }

  // The exit code, or nullopt on timeout / death by signal.
  std::optional<int> Wait(std::chrono::milliseconds timeout = 30s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd pfd[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
      ::poll(pfd, 2, 20);
      Drain(out_fd_, out_);
      Drain(err_fd_, err_);
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        Drain(out_fd_, out_);
        Drain(err_fd_, err_);
        if (WIFEXITED(status)) exit_code_ = WEXITSTATUS(status);
        return exit_code_ ? exit_code_ : std::optional<int>(-1);
      }
    }
    return std::nullopt;
  }

  bool started() const { return pid_ > 0; }
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

 private:
  bool WaitFor(const std::string& stream, std::string_view needle,
               std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (stream.find(needle) == std::string::npos) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      pollfd pfd[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
      ::poll(pfd, 2, 50);
      Drain(out_fd_, out_);
      Drain(err_fd_, err_);
    }
    return true;
  }

  static void Drain(int fd, std::string& into) {
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n <= 0) return;
      into.append(buffer, static_cast<std::size_t>(n));
    }
  }

  pid_t pid_ = -1;
  int in_fd_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string out_;
  std::string err_;
  std::optional<int> exit_code_;
};

// What a finished run of the binary left: its exit code (-1: it did not end in time) and output.
struct ProcessRun {
  int code = -1;
  std::string out, err;
};

// Runs the binary with `args` and no standard input, up to `timeout`.
inline ProcessRun RunFaultline(std::vector<std::string> args,
                               std::chrono::milliseconds timeout = 60s) {
  FaultlineProcess process(std::move(args));
  process.CloseStdin();
  const auto code = process.Wait(timeout);
  return {code.value_or(-1), process.out(), process.err()};
}

// A fresh, empty folder for the running test: TMP/faultline-PREFIX-PID-TEST (remove it after).
inline std::filesystem::path FreshTestFolder(std::string_view prefix) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("faultline-" + std::string(prefix) + "-" + std::to_string(::getpid()) + "-" +
       ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace faultline::cli::test_support
