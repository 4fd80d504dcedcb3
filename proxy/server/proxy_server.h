// The proxy's driver: `faultline proxy` on sockets. It accepts HTTP/1.1 clients, reads each
// request whole (the fake provider's request reader, with its limits), opens a connection to the
// upstream per request, and runs the sans-I/O exchange (proxy_core.h): the upstream's bytes go
// in with the time they arrived, the actions come out and are performed on the client's socket
// with steady timers, in order. A client that goes away ends its exchange (and the upstream
// connection) at once; a stall holds the client's connection until it does.
//
// Plain HTTP only, on both sides (the upstream URL is http://; a client speaks to the proxy as
// to a provider). Kept-alive client connections carry one request after another.
//
// Threading: Run() serves on the calling thread; every exchange runs there. Stop() may be
// called from any thread. The journal and log callbacks are called on the serving thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>

#include "fake_provider/http_request.h"
#include "proxy/proxy_core.h"
#include "scenarios/proxy_rules.h"

namespace faultline::proxy {

struct ProxyOptions {
  std::string listen_address = "127.0.0.1";
  std::uint16_t port = 0;     // 0: a free port
  bool allow_remote = false;  // without it, a listen address beyond loopback is an error
  std::string upstream;       // http://HOST:PORT[/PATH]: PATH goes before every request's target
  std::uint64_t seed = 0;     // the rules' draws (fault_rules.h)
  scenario::ProxyRules rules;
  provider::RequestLimits limits;
  // A request must arrive whole within this time (also a kept-alive connection's idle time).
  std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};
  // The upstream must accept the connection within this time, else the client gets a 502.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
  std::function<void(const std::string&)> journal;      // one JSON line per exchange
  std::function<void(const std::string&)> request_log;  // one line per exchange, for people
  // Every finished exchange, both sides (`--record` makes a cassette of it: proxy_cassette.h).
  std::function<void(const ExchangeRecord&)> exchange;
};

class ProxyServer {
 public:
  // Binds the listener and checks the upstream URL; serves only once Run() starts.
  static std::expected<std::unique_ptr<ProxyServer>, std::string> Create(ProxyOptions options);
  ~ProxyServer();

  std::string base_url() const;  // http://127.0.0.1:PORT
  std::uint16_t port() const;
  std::uint64_t exchanges() const;  // exchanges finished (journaled) so far; thread-safe

  void Run();   // serves until Stop()
  void Stop();  // thread-safe; exchanges in progress end with the server

 private:
  struct Impl;
  explicit ProxyServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultline::proxy
