// `faultline serve`: listen-address parsing, and the built binary run as a user would run it
// (started, read its URL from stdout, talk to it over a raw socket, stop it with SIGINT).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "harness/cli/serve_command.h"

namespace faultline::cli {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

TEST(ParseListenAddressTest, AcceptsTheUsualForms) {
  auto v4 = ParseListenAddress("127.0.0.1:8080");
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 8080);
  auto v6 = ParseListenAddress("[::1]:0");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  auto port_only = ParseListenAddress(":9000");
  ASSERT_TRUE(port_only);
  EXPECT_EQ(port_only->host, "127.0.0.1");
  EXPECT_EQ(port_only->port, 9000);
  auto bare = ParseListenAddress("9001");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->port, 9001);
  auto localhost = ParseListenAddress("localhost:1");
  ASSERT_TRUE(localhost);
  EXPECT_EQ(localhost->host, "127.0.0.1");
}

TEST(ParseListenAddressTest, RejectsNonsense) {
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:"));
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:65536"));
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:80x"));
  EXPECT_FALSE(ParseListenAddress("::1:80"));
  EXPECT_FALSE(ParseListenAddress("[::1]80"));
  EXPECT_FALSE(ParseListenAddress("[::1"));
  EXPECT_FALSE(ParseListenAddress("host:-1"));
}

// The faultline binary as a child process with its stdout and stderr on pipes.
class ServeProcess {
 public:
  explicit ServeProcess(std::vector<std::string> args) {
    int out_pipe[2];
    int err_pipe[2];
    if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out_pipe[1], STDOUT_FILENO);
      ::dup2(err_pipe[1], STDERR_FILENO);
      ::close(out_pipe[0]);
      ::close(err_pipe[0]);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(FAULTLINE_BINARY));
      for (auto& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execv(FAULTLINE_BINARY, argv.data());
      ::_exit(127);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    out_fd_ = out_pipe[0];
    err_fd_ = err_pipe[0];
    ::fcntl(out_fd_, F_SETFL, O_NONBLOCK);
    ::fcntl(err_fd_, F_SETFL, O_NONBLOCK);
  }
  ~ServeProcess() {
    if (pid_ > 0 && !exit_code_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) ::close(out_fd_);
    if (err_fd_ >= 0) ::close(err_fd_);
  }

  // Reads stdout until it contains `needle` or the timeout passes.
  bool WaitForOutput(std::string_view needle, std::chrono::milliseconds timeout = 20s) {
    const auto deadline = Clock::now() + timeout;
    while (out_.find(needle) == std::string::npos) {
      if (Clock::now() >= deadline) return false;
      pollfd pfd{out_fd_, POLLIN, 0};
      ::poll(&pfd, 1, 50);
      Drain(out_fd_, out_);
      if (exited()) {
        Drain(out_fd_, out_);
        return out_.find(needle) != std::string::npos;
      }
    }
    return true;
  }

  // Waits for the process to exit; its exit code, or nullopt on timeout / death by signal.
  std::optional<int> Wait(std::chrono::milliseconds timeout = 20s) {
    const auto deadline = Clock::now() + timeout;
    while (!exited() && Clock::now() < deadline) {
      Drain(out_fd_, out_);
      Drain(err_fd_, err_);
      std::this_thread::sleep_for(10ms);
    }
    Drain(out_fd_, out_);
    Drain(err_fd_, err_);
    return exit_code_;
  }

  void Signal(int signal) { ::kill(pid_, signal); }
  bool started() const { return pid_ > 0; }
  const std::string& out() const { return out_; }
  const std::string& err() { return Drain(err_fd_, err_), err_; }

 private:
  bool exited() {
    if (exit_code_ || exited_by_signal_) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    if (WIFEXITED(status)) {
      exit_code_ = WEXITSTATUS(status);
    } else {
      exited_by_signal_ = true;
    }
    return true;
  }
  static void Drain(int fd, std::string& into) {
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fd, buffer, sizeof(buffer))) > 0)
      into.append(buffer, static_cast<std::size_t>(n));
  }

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string out_;
  std::string err_;
  std::optional<int> exit_code_;
  bool exited_by_signal_ = false;
};

// One HTTP/1.1 exchange with Connection: close over a raw socket; returns all bytes received.
std::string Exchange(std::uint16_t port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return {};
  }
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  const auto deadline = Clock::now() + 10s;
  while (Clock::now() < deadline) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 100) <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    response.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return response;
}

std::filesystem::path WriteScenario(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("faultline_serve_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path;
}

constexpr char kScenario[] = R"(faultline: 1
name: cli/hello
description: A healthy OpenAI chat stream.
dialect: openai-chat
responses:
  - content: {text: "Hello, world", chunk_size: 4}
)";

TEST(ServeBinaryTest, ServesAScenarioAndStopsOnSigint) {
  const auto scenario = WriteScenario("hello.yaml", kScenario);
  ServeProcess serve({"serve", "--listen", "127.0.0.1:0", "--scenario", scenario.string()});
  ASSERT_TRUE(serve.started());
  ASSERT_TRUE(serve.WaitForOutput("control API:")) << serve.out() << serve.err();
  std::smatch match;
  const std::string out = serve.out();
  ASSERT_TRUE(std::regex_search(
      out, match, std::regex(R"(faultline serve: listening on http://127\.0\.0\.1:(\d+))")))
      << out;
  const auto port = static_cast<std::uint16_t>(std::stoi(match[1]));
  EXPECT_THAT(out, HasSubstr("cli/hello"));
  EXPECT_THAT(out, HasSubstr("openai-chat"));
  EXPECT_THAT(out, HasSubstr("http://127.0.0.1:" + std::to_string(port) + "/s/cli/hello"));

  const std::string body = R"({"model":"m","stream":true,"messages":[]})";
  const std::string response =
      Exchange(port,
               "POST /s/cli/hello/v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
               "Content-Type: application/json\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_THAT(response, HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(response, HasSubstr("data: [DONE]"));
  // The request log line.
  EXPECT_TRUE(serve.WaitForOutput("cli/hello #1 POST /v1/chat/completions")) << serve.out();

  serve.Signal(SIGINT);
  EXPECT_EQ(serve.Wait(), 0) << serve.err();
  EXPECT_THAT(serve.out(), HasSubstr("stopped"));
}

TEST(ServeBinaryTest, ServesTheBuiltInCatalogueByDefaultAndStopsOnSigterm) {
  ServeProcess serve({"serve", "--quiet"});
  ASSERT_TRUE(serve.started());
  ASSERT_TRUE(serve.WaitForOutput("control API:")) << serve.out() << serve.err();
  EXPECT_THAT(serve.out(), HasSubstr("demo/"));
  std::smatch match;
  const std::string out = serve.out();
  ASSERT_TRUE(
      std::regex_search(out, match, std::regex(R"(listening on http://127\.0\.0\.1:(\d+))")));
  const auto port = static_cast<std::uint16_t>(std::stoi(match[1]));
  const std::string response =
      Exchange(port, "GET /_faultline/sessions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(response, HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(response, HasSubstr("demo/"));
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(), 0) << serve.err();
}

TEST(ServeBinaryTest, InvalidScenarioIsAnInputError) {
  const auto scenario =
      WriteScenario("bad.yaml",
                    "faultline: 1\nname: cli/bad\ndescription: d\ndialect: klingon\n"
                    "responses: []\n");
  ServeProcess serve({"serve", "--scenario", scenario.string()});
  ASSERT_TRUE(serve.started());
  EXPECT_EQ(serve.Wait(), 2);
  EXPECT_THAT(serve.err(), HasSubstr(scenario.string() + ":4:"));
}

TEST(ServeBinaryTest, BadOptionsAreUsageErrors) {
  ServeProcess bad_listen({"serve", "--listen", "nowhere"});
  EXPECT_EQ(bad_listen.Wait(), 2);
  ServeProcess unknown({"serve", "--frobnicate"});
  EXPECT_EQ(unknown.Wait(), 2);
  ServeProcess no_command({});
  EXPECT_EQ(no_command.Wait(), 2);
}

TEST(ServeBinaryTest, HelpExplainsSessionsSdksAndTheControlApi) {
  ServeProcess help({"serve", "--help"});
  EXPECT_EQ(help.Wait(), 0);
  EXPECT_THAT(help.out(), HasSubstr("--listen"));
  EXPECT_THAT(help.out(), HasSubstr("base_url = <session base URL>/v1"));
  EXPECT_THAT(help.out(), HasSubstr("/_faultline/sessions/<id>/journal"));
}

}  // namespace
}  // namespace faultline::cli
