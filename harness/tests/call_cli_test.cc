// `faultline call`: the built binary, run as a user (or the runner) would run it, against an
// in-process fake provider serving inline scenarios.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_provider/server.h"
#include "scenarios/loader.h"

namespace faultline::cli {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

// The faultline binary as a child with stdin, stdout and stderr on pipes.
class Child {
 public:
  explicit Child(std::vector<std::string> args) {
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
  ~Child() {
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
    const auto deadline = Clock::now() + timeout;
    while (out_.find(needle) == std::string::npos) {
      if (Clock::now() >= deadline) return false;
      pollfd pfd{out_fd_, POLLIN, 0};
      ::poll(&pfd, 1, 50);
      Drain(out_fd_, out_);
      Drain(err_fd_, err_);
    }
    return true;
  }

  void Signal(int signal) { ::kill(pid_, signal); }

  // The exit code, or nullopt on timeout / death by signal.
  std::optional<int> Wait(std::chrono::milliseconds timeout = 30s) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
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

  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

  // stdout as JSON lines.
  std::vector<json> JsonLines() const {
    std::vector<json> lines;
    std::istringstream in(out_);
    std::string line;
    while (std::getline(in, line)) lines.push_back(json::parse(line, nullptr, false));
    return lines;
  }

 private:
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

// An in-process fake provider with inline scenarios, served on its own thread.
class Provider {
 public:
  Provider() {
    auto server = provider::Server::Create({});
    EXPECT_TRUE(server.has_value());
    server_ = std::move(*server);
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~Provider() {
    server_->Stop();
    thread_.join();
  }
  // Adds a scenario (the `responses:` block as YAML) and returns its session base URL.
  std::string Session(std::string_view name, std::string_view dialect, std::string_view responses) {
    const std::string yaml =
        "faultline: 1\nname: " + std::string(name) +
        "\ndescription: an inline test scenario\ndialect: " + std::string(dialect) +
        "\nrequest: {stream: true}\nresponses:\n" + std::string(responses);
    auto scenario = scenario::ParseScenario(yaml, "<test>");
    if (!scenario) {
      ADD_FAILURE() << scenario.error().ToString();
      return "http://127.0.0.1:1";
    }
    auto session = server_->AddSession(std::move(*scenario));
    if (!session) {
      ADD_FAILURE() << session.error();
      return "http://127.0.0.1:1";
    }
    return session->base_url;
  }

 private:
  std::unique_ptr<provider::Server> server_;
  std::thread thread_;
};

constexpr std::string_view kRateLimitThenOk = R"(  - status: 429
    error: rate_limit
    retry_after: {seconds: 1}
  - content:
      text: "Hello, world"
      chunk_size: 4
)";

constexpr std::string_view kTruncatedThenOk = R"(  - content:
      text: "Hello, world"
      chunk_size: 4
      end: no_terminator
  - content:
      text: "Hello, world"
      chunk_size: 4
)";

constexpr std::string_view kBadRequest = R"(  - status: 400
    error: invalid_request
)";

std::vector<std::string> Types(const std::vector<json>& lines) {
  std::vector<std::string> types;
  for (const json& line : lines) types.push_back(line.value("type", "<not json>"));
  return types;
}

TEST(CallCliTest, RateLimitThenSuccessAsJsonLines) {
  Provider provider;
  const std::string url = provider.Session("cli/rate", "openai-chat", kRateLimitThenOk);
  const auto started = Clock::now();
  Child child({"call", "--base-url", url, "--dialect", "openai-chat", "--json", "--seed", "3"});
  ASSERT_EQ(child.Wait(), 0) << child.err();
  EXPECT_GE(Clock::now() - started, 1s);  // Retry-After: 1 was honoured
  const auto lines = child.JsonLines();
  EXPECT_THAT(Types(lines),
              ::testing::ElementsAre("adapter/hello", "response/start", "response/interrupted",
                                     "response/start", "assistant/chunk", "assistant/chunk",
                                     "assistant/chunk", "response/committed"));
  EXPECT_EQ(lines[2]["failure"]["code"], "RATE_LIMIT");
  EXPECT_EQ(lines[2]["failure"]["status"], 429);
  EXPECT_EQ(lines[2]["delay_source"], "retry-after");
  EXPECT_GE(lines[2]["scheduled_retry_ms"].get<int>(), 1000);
  EXPECT_EQ(lines.back()["text"], "Hello, world");
  EXPECT_EQ(lines.back()["attempt"], 2);
}

TEST(CallCliTest, TruncatedThenSuccessForPeople) {
  Provider provider;
  const std::string url = provider.Session("cli/truncated", "openai-chat", kTruncatedThenOk);
  const std::filesystem::path policy =
      std::filesystem::temp_directory_path() / ("call_cli_policy_" + std::to_string(::getpid()));
  std::ofstream(policy) << R"({"max_attempts": 2, "backoff": {"base_ms": 10, "cap_ms": 50}})";
  Child child({"call", "--base-url", url, "--policy", policy.string()});
  ASSERT_EQ(child.Wait(), 0) << child.err();
  std::filesystem::remove(policy);
  EXPECT_THAT(child.out(), HasSubstr("attempt 1 started"));
  EXPECT_THAT(child.out(), HasSubstr("attempt 1 interrupted: STREAM_TRUNCATED"));
  EXPECT_THAT(child.out(), HasSubstr("committed attempt 2 (finish stop, 0 tool calls): "
                                     "\"Hello, world\""));
}

TEST(CallCliTest, BadRequestFailsWithExitCode1) {
  Provider provider;
  const std::string url = provider.Session("cli/bad", "anthropic-messages", kBadRequest);
  Child child({"call", "--base-url", url, "--dialect", "anthropic-messages", "--json"});
  ASSERT_EQ(child.Wait(), 1) << child.err();
  const auto lines = child.JsonLines();
  EXPECT_THAT(Types(lines),
              ::testing::ElementsAre("adapter/hello", "response/start", "response/failed"));
  EXPECT_EQ(lines.back()["failure"]["code"], "INVALID_REQUEST");
  EXPECT_EQ(lines.back()["failure"]["retryable"], false);
}

TEST(CallCliTest, UsageErrors) {
  Child no_url({"call"});
  EXPECT_EQ(no_url.Wait(), 2);
  EXPECT_THAT(no_url.err(), HasSubstr("--base-url"));
  Child bad_dialect({"call", "--base-url", "http://127.0.0.1:1", "--dialect", "nope"});
  EXPECT_EQ(bad_dialect.Wait(), 2);
  Child https({"call", "--base-url", "https://api.openai.com/v1"});
  EXPECT_EQ(https.Wait(), 2);
}

TEST(CallCliTest, AdapterModeSpeaksTheProtocol) {
  Provider provider;
  const std::string url = provider.Session("cli/adapter", "openai-chat", kTruncatedThenOk);
  Child child({"call", "--adapter"});
  const json call = {{"type", "call"},
                     {"base_url", url},
                     {"api_key", "sk-x"},
                     {"dialect", "openai-chat"},
                     {"request",
                      {{"model", "gpt-4o-mini"},
                       {"stream", true},
                       {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}}},
                     {"scenario", "cli/adapter"}};
  child.Write(call.dump() + "\n");
  ASSERT_EQ(child.Wait(), 0) << child.err();
  const auto lines = child.JsonLines();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front()["type"], "adapter/hello");
  EXPECT_TRUE(lines.front()["policy"].contains("max_retries"));
  EXPECT_EQ(lines.back()["type"], "response/committed");
  EXPECT_EQ(lines.back()["text"], "Hello, world");
}

TEST(CallCliTest, AdapterModeHonoursCancel) {
  Provider provider;
  const std::string url = provider.Session("cli/stall", "openai-chat", R"(  - content:
      text: "Hello, world"
      chunk_size: 4
      faults:
        - {after_event: 2, stall: forever}
)");
  Child child({"call", "--adapter"});
  const json call = {{"type", "call"},
                     {"base_url", url},
                     {"dialect", "openai-chat"},
                     {"request", {{"model", "m"}, {"stream", true}, {"messages", json::array()}}}};
  child.Write(call.dump() + "\n");
  ASSERT_TRUE(child.WaitForOutput("assistant/chunk")) << child.out() << child.err();
  child.Write("{\"type\":\"cancel\"}\n");
  ASSERT_EQ(child.Wait(10s), 1) << child.err();
  const auto lines = child.JsonLines();
  EXPECT_EQ(lines.back()["type"], "response/failed");
  EXPECT_EQ(lines.back()["failure"]["code"], "ABORTED");
  EXPECT_EQ(lines.back()["failure"]["phase"], "stream");
}

TEST(CallCliTest, InterruptCancelsTheCall) {
  Provider provider;
  const std::string url = provider.Session("cli/sigint", "openai-chat", R"(  - content:
      text: "Hello, world"
      chunk_size: 4
      faults:
        - {after_event: 2, stall: forever}
)");
  Child child({"call", "--base-url", url, "--json"});
  ASSERT_TRUE(child.WaitForOutput("assistant/chunk")) << child.out() << child.err();
  child.Signal(SIGINT);
  ASSERT_EQ(child.Wait(10s), 1) << child.err();
  EXPECT_EQ(child.JsonLines().back()["failure"]["code"], "ABORTED");
}

}  // namespace
}  // namespace faultline::cli
