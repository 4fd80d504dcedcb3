// `faultline serve` and `faultline proxy`: listen-address parsing, and the built binary run as a
// user would run it (started, read its URL from stdout, talk to it over a raw socket, stop it
// with SIGINT); the proxy in front of the fake provider, each in its own process.
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
#include "harness/tests/faultline_process.h"

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

using ServeProcess = test_support::FaultlineProcess;

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
  const std::string response = Exchange(
      port, "GET /_faultline/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
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

// The port a command printed as "<what>: listening on http://127.0.0.1:PORT".
std::uint16_t ListeningPort(const std::string& out) {
  std::smatch match;
  if (!std::regex_search(out, match, std::regex(R"(listening on http://127\.0\.0\.1:(\d+))"))) {
    return 0;
  }
  return static_cast<std::uint16_t>(std::stoi(match[1]));
}

TEST(ProxyBinaryTest, CutsAServedStreamAtEventOneAndJournalsBothSides) {
  const auto scenario = WriteScenario("hello.yaml", kScenario);
  ServeProcess serve({"serve", "--listen", "127.0.0.1:0", "--scenario", scenario.string()});
  ASSERT_TRUE(serve.WaitForOutput("control API:")) << serve.out() << serve.err();
  const std::uint16_t upstream = ListeningPort(serve.out());
  ASSERT_NE(upstream, 0);
  const auto rules = WriteScenario("rules.yaml", R"(faultline: 1
rules:
  - name: cut
    response: {content: {end: {kind: no_terminator, after_event: 1}}}
)");
  const auto journal = rules.parent_path() / "proxy.jsonl";
  ServeProcess proxy({"proxy", "--upstream",
                      "http://127.0.0.1:" + std::to_string(upstream) + "/s/cli/hello", "--faults",
                      rules.string(), "--seed", "3", "--journal", journal.string()});
  ASSERT_TRUE(proxy.WaitForOutput("(1 rule, seed 3)")) << proxy.out() << proxy.err();
  const std::uint16_t port = ListeningPort(proxy.out());
  ASSERT_NE(port, 0);
  const std::string body = R"({"model":"m","stream":true,"messages":[]})";
  const std::string response =
      Exchange(port,
               "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
               "Content-Type: application/json\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_THAT(response, HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(response, HasSubstr("data: {"));
  EXPECT_EQ(response.find("[DONE]"), std::string::npos) << response;
  EXPECT_TRUE(proxy.WaitForOutput("#1 POST /v1/chat/completions -> 200 rule=cut")) << proxy.out();
  proxy.Signal(SIGINT);
  EXPECT_EQ(proxy.Wait(), 0) << proxy.err();
  EXPECT_THAT(proxy.out(), HasSubstr("stopped after 1 exchanges"));
  serve.Signal(SIGINT);
  EXPECT_EQ(serve.Wait(), 0) << serve.err();
  std::ifstream lines(journal);
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  EXPECT_THAT(line, HasSubstr(R"("rule":"cut")"));
  EXPECT_THAT(line, HasSubstr(R"("target":"/s/cli/hello/v1/chat/completions")"));
  EXPECT_THAT(line, HasSubstr("[DONE]"));  // in what the upstream sent, not what the client got
}

TEST(ProxyBinaryTest, AnInvalidRuleFileIsAUsageErrorAtItsLine) {
  const auto rules = WriteScenario("bad-rules.yaml",
                                   "faultline: 1\nrules:\n  - response: {content: {text: hi}}\n");
  ServeProcess proxy({"proxy", "--upstream", "http://127.0.0.1:9", "--faults", rules.string()});
  EXPECT_EQ(proxy.Wait(), 2);
  EXPECT_THAT(proxy.err(), HasSubstr(rules.string() + ":3:26: at rules[0].response.content.text"));
  ServeProcess no_upstream({"proxy"});
  EXPECT_EQ(no_upstream.Wait(), 2);
  ServeProcess https({"proxy", "--upstream", "https://api.openai.com"});
  EXPECT_EQ(https.Wait(), 2);
  EXPECT_THAT(https.err(), HasSubstr("--upstream"));
}

TEST(ProxyBinaryTest, HelpExplainsTheRulesAndTheFlags) {
  ServeProcess help({"proxy", "--help"});
  EXPECT_EQ(help.Wait(), 0);
  for (const char* text : {"--upstream", "--listen", "--faults", "--seed", "--journal",
                           "after_event", "retry_after", "docs/proxy.md"}) {
    EXPECT_THAT(help.out(), HasSubstr(text));
  }
}

}  // namespace
}  // namespace faultline::cli
