// Test support for the real server: a server running on its own thread, a blocking raw-socket
// client with deadlines (so tests see exactly what went over the wire: bytes, FIN, RST), and a
// small HTTP/1.1 response parser. Loopback only.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "fake_provider/server/server.h"
#include "scenarios/loader.h"

namespace faultline::provider::server_testing {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // de-chunked
  bool chunked = false;

  std::string Header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (key.size() == name.size() &&
          std::equal(key.begin(), key.end(), name.begin(),
                     [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
        return value;
      }
    }
    return {};
  }
  nlohmann::json Json() const { return nlohmann::json::parse(body, nullptr, false); }
};

// Parses one complete response at the front of `bytes`. Returns its length, or 0 while it is
// incomplete. Bodies: Content-Length, chunked, or none (1xx/204/304).
inline std::size_t ParseResponse(std::string_view bytes, HttpResponse& out) {
  const std::size_t head_end = bytes.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return 0;
  out = HttpResponse{};
  std::string_view head = bytes.substr(0, head_end);
  const std::size_t line_end = head.find("\r\n");
  const std::string_view status_line = head.substr(0, line_end);
  if (status_line.size() < 12) return 0;
  out.status = std::stoi(std::string(status_line.substr(9, 3)));
  std::size_t pos = line_end == std::string_view::npos ? head.size() : line_end + 2;
  while (pos < head.size()) {
    std::size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos) end = head.size();
    const std::string_view line = head.substr(pos, end - pos);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      out.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
    }
    pos = end + 2;
  }
  std::size_t at = head_end + 4;
  if (out.status < 200 || out.status == 204 || out.status == 304) return at;
  if (out.Header("transfer-encoding").find("chunked") != std::string::npos) {
    out.chunked = true;
    while (true) {
      const std::size_t size_end = bytes.find("\r\n", at);
      if (size_end == std::string_view::npos) return 0;
      const std::size_t size =
          std::stoul(std::string(bytes.substr(at, size_end - at)), nullptr, 16);
      if (bytes.size() < size_end + 2 + size + 2) return 0;
      out.body.append(bytes.substr(size_end + 2, size));
      at = size_end + 2 + size + 2;
      if (size == 0) return at;
    }
  }
  const std::string length = out.Header("content-length");
  const std::size_t size = length.empty() ? 0 : std::stoul(length);
  if (bytes.size() < at + size) return 0;
  out.body = std::string(bytes.substr(at, size));
  return at + size;
}

struct ReadOutcome {
  std::string bytes;
  bool eof = false;  // orderly close (FIN)
  int error = 0;     // errno of a failed read (ECONNRESET for an RST)
  bool timed_out = false;
};

// A blocking TCP client with per-call deadlines.
class RawClient {
 public:
  RawClient() = default;
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  RawClient(RawClient&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), pending_(std::move(other.pending_)) {}
  ~RawClient() { Close(); }

  // Connects to 127.0.0.1:port (or ::1 when `v6`). Returns errno on failure (ECONNREFUSED).
  int Connect(std::uint16_t port, bool v6 = false) {
    Close();
    fd_ = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
    int rc;
    if (v6) {
      sockaddr_in6 address{};
      address.sin6_family = AF_INET6;
      address.sin6_port = htons(port);
      address.sin6_addr = in6addr_loopback;
      rc = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    } else {
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_port = htons(port);
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      rc = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    }
    if (rc != 0) {
      const int error = errno;
      Close();
      return error;
    }
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return 0;
  }
  bool connected() const { return fd_ >= 0; }

  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  // Reads until `done(bytes so far)`, EOF, an error or the timeout. Bytes read earlier but not
  // consumed by ReadResponse come first.
  ReadOutcome ReadUntil(const std::function<bool(const std::string&)>& done,
                        std::chrono::milliseconds timeout) {
    ReadOutcome out;
    out.bytes = std::exchange(pending_, {});
    const auto deadline = Clock::now() + timeout;
    while (!done(out.bytes)) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left <= 0ms) {
        out.timed_out = true;
        break;
      }
      pollfd pfd{fd_, POLLIN, 0};
      if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
      char buffer[16384];
      const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n == 0) {
        out.eof = true;
        break;
      }
      if (n < 0) {
        out.error = errno;
        break;
      }
      out.bytes.append(buffer, static_cast<std::size_t>(n));
    }
    return out;
  }

  ReadOutcome ReadToEnd(std::chrono::milliseconds timeout = 5s) {
    return ReadUntil([](const std::string&) { return false; }, timeout);
  }

  // Reads one complete response; the bytes after it are kept for the next read.
  std::optional<HttpResponse> ReadResponse(std::chrono::milliseconds timeout = 5s) {
    HttpResponse response;
    std::size_t used = 0;
    ReadOutcome read = ReadUntil(
        [&](const std::string& bytes) { return (used = ParseResponse(bytes, response)) > 0; },
        timeout);
    if (used == 0) {
      pending_ = std::move(read.bytes);
      return std::nullopt;
    }
    pending_ = read.bytes.substr(used);
    return response;
  }

  void ShutdownWrite() { ::shutdown(fd_, SHUT_WR); }
  // Closes with an RST instead of a FIN.
  void Reset() {
    if (fd_ < 0) return;
    const linger option{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &option, sizeof(option));
    Close();
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  std::string pending_;
};

// A Server on 127.0.0.1:0 running on its own thread; stopped and joined on destruction.
class TestServer {
 public:
  explicit TestServer(ServerOptions options = {}) {
    auto server = Server::Create(std::move(options));
    if (!server) {
      ADD_FAILURE() << "Server::Create: " << server.error();
      return;
    }
    server_ = std::move(*server);
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~TestServer() { Stop(); }
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  // Stops the server and waits for Run() to return; false if it did not within `timeout`.
  bool Stop(std::chrono::milliseconds timeout = 10s) {
    if (!thread_.joinable()) return true;
    server_->Stop();
    const auto deadline = Clock::now() + timeout;
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread waiter([this, done] {
      thread_.join();
      *done = true;
    });
    while (!*done && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
    const bool stopped = *done;
    if (!stopped) ADD_FAILURE() << "Server::Run() did not return after Stop()";
    waiter.join();  // a hang here is a test failure already reported
    return stopped;
  }

  Server& server() { return *server_; }
  std::uint16_t port() const { return server_->port(); }
  std::string base_url() const { return server_->base_url(); }

 private:
  std::unique_ptr<Server> server_;
  std::thread thread_;
};

inline scenario::Scenario ScenarioFromYaml(std::string_view yaml) {
  auto scenario = scenario::ParseScenario(yaml, "<test>");
  if (!scenario) {
    ADD_FAILURE() << scenario.error().ToString();
    return {};
  }
  return std::move(*scenario);
}

inline std::string RequestBytes(std::string_view method, std::string_view target,
                                std::string_view body = {}, bool keep_alive = true,
                                std::string_view extra_headers = {}) {
  std::string out = std::string(method) + " " + std::string(target) +
                    " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
  if (!body.empty() || method == "POST") {
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  if (!keep_alive) out += "Connection: close\r\n";
  out += extra_headers;
  out += "\r\n";
  out += body;
  return out;
}

// One request on a fresh connection; nullopt when no whole response came within `timeout`.
inline std::optional<HttpResponse> Fetch(std::uint16_t port, std::string_view method,
                                         std::string_view target, std::string_view body = {},
                                         std::chrono::milliseconds timeout = 10s) {
  RawClient client;
  if (client.Connect(port) != 0) return std::nullopt;
  if (!client.Send(RequestBytes(method, target, body, /*keep_alive=*/false))) return std::nullopt;
  return client.ReadResponse(timeout);
}

// Polls `condition` until it holds or `timeout` passes (for effects that land asynchronously).
inline bool WaitFor(const std::function<bool()>& condition,
                    std::chrono::milliseconds timeout = 5s) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return condition();
}

inline nlohmann::json FetchJournal(std::uint16_t port, std::string_view session) {
  auto response = Fetch(port, "GET", "/_faultline/sessions/" + std::string(session) + "/journal");
  if (!response || response->status != 200) return nlohmann::json::object();
  return response->Json();
}

inline nlohmann::json FetchStats(std::uint16_t port) {
  auto response = Fetch(port, "GET", "/_faultline/stats");
  if (!response) return nlohmann::json::object();
  return response->Json();
}

constexpr std::string_view kChatBody =
    R"({"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Say hello."}]})";

}  // namespace faultline::provider::server_testing
