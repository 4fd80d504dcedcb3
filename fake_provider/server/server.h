// The fake provider's real-world driver: a Boost.Beast HTTP/1.1 server that executes response
// plans on sockets with steady timers.
//
// One Server hosts many scenario sessions at once, each under its own base URL
// `http://HOST:PORT/s/<session>` (a session id may contain '/'; the dialect path follows it). A
// session whose scenario scripts listener outages gets a dedicated listener on its own port, so
// it can refuse connections for a window without disturbing the others.
//
// Control API (JSON) under the reserved prefix /_faultline/:
//   GET    /_faultline/health
//   GET    /_faultline/sessions                    list
//   POST   /_faultline/sessions                    {"scenario": <object or YAML/JSON text>,
//                                                   "id"?: str, "seed"?: int} -> 201 + session
//   GET    /_faultline/sessions/<id>               one session
//   GET    /_faultline/sessions/<id>/journal       its journal
//   POST   /_faultline/sessions/<id>/reset         forget attempts, journal and rate state
//   DELETE /_faultline/sessions/<id>
//   GET    /_faultline/stats                       counters, limits, rejections, timer lateness
//
// Security: the server listens on loopback unless `allow_remote`; beyond loopback every control
// request needs the control token (generated when none is given). The control API always checks
// Host and Origin (no cross-site requests, no DNS rebinding). Journals redact credentials
// (headers, query parameters and body fields; journal.h) unless `journal_secrets`.
//
// Limits: every resource a client can make the server hold is bounded by an option below; going
// over answers 4xx (503 for connections) and counts under "rejected" in the stats.
//
// Threading: Run() drives `threads` event loops; control requests other than health run on one
// worker thread of their own, so creating a session never stalls traffic. All public methods
// are thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/journal.h"
#include "scenarios/parse_limits.h"
#include "scenarios/scenario.h"

namespace faultline::provider {

struct ServerOptions {
  std::string listen_address = "127.0.0.1";
  std::uint16_t port = 0;  // 0 = pick a free port
  int threads = 1;
  std::uint64_t seed = 0;                    // default seed for sessions that do not give one
  std::size_t max_header_bytes = 16 * 1024;  // request line + header fields + trailer fields
  std::size_t max_body_bytes = 4 * 1024 * 1024;
  // Body bytes buffered by requests still arriving, summed over all connections; past it the
  // request that would take more gets 503 (many slow large bodies must not exhaust memory).
  std::size_t max_pending_body_bytes = 256 * 1024 * 1024;
  scenario::ParseLimits scenario_limits;  // nesting depth and keys of scenario documents
  std::size_t max_sessions = 10'000;
  std::size_t max_listeners = 256;  // dedicated listeners of sessions with listener outages
  // Open connections; also kept below the process's descriptor limit. Past it a connection
  // gets 503, except GET /_faultline/health and /stats, which are still answered.
  std::size_t max_connections = 10'000;
  std::size_t journal_capacity = JournalLimits{}.entries;  // entries kept per session
  std::size_t journal_max_bytes = JournalLimits{}.bytes;   // request bytes kept per session
  // A request must arrive whole within this time, counted from the first byte awaited; also the
  // idle timeout of a kept-alive connection (slowloris guard).
  std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};
  // One line per finished request ("<session> #<attempt> POST /v1/... -> 429 ... 12ms").
  std::function<void(const std::string&)> request_log;

  bool allow_remote = false;  // without it, a listen address beyond loopback is an error
  // Required as "Authorization: Bearer <token>" on every control request when not empty;
  // generated when the server listens beyond loopback and none is given.
  std::string control_token;
  std::vector<std::string> allowed_hosts;  // more Host names for the control API (e.g. a DNS name)
  bool journal_secrets = false;            // journal credentials in clear (JournalEntry)
};

// One route of a session whose scenario has routes (docs/routes.md).
struct RouteInfo {
  std::string id;
  std::string base_url;  // http://127.0.0.1:PORT/s/<session>/route/<id>
  // The route's own port (Scenario::route_ports, or an outage script), which also answers at
  // its root: http://127.0.0.1:PORT. "" on the shared port.
  std::string root_url;
  friend bool operator==(const RouteInfo&, const RouteInfo&) = default;
};

struct SessionInfo {
  std::string id;
  std::string base_url;  // e.g. http://127.0.0.1:40123/s/demo/hello
  std::string scenario_name;
  std::string dialect;  // the dialect the session speaks ("openai-chat", ...)
  int attempts = 0;
  // The steady-clock instant the session's journal times count from (set by AddSession), so an
  // in-process caller can put its own timestamps on the same axis.
  std::optional<std::chrono::steady_clock::time_point> started;
  // With routes: each route's endpoint. Requests go there; the session's own base URL answers
  // 404, and its journal holds every route's requests.
  std::vector<RouteInfo> routes;
};

class Server {
 public:
  // Binds the listener (errors: address in use, bad address) but serves only once Run() starts.
  static std::expected<std::unique_ptr<Server>, std::string> Create(ServerOptions options);
  ~Server();

  std::string base_url() const;  // http://127.0.0.1:PORT (loopback even when bound wider)
  std::uint16_t port() const;
  std::string bound_address() const;  // what the listener is bound to: "0.0.0.0:PORT", "[::1]:PORT"
  std::string control_token() const;  // "" when control requests need none

  // Adds a session; id defaults to the scenario name. Errors: duplicate id, listener failure.
  std::expected<SessionInfo, std::string> AddSession(scenario::Scenario scenario,
                                                     std::string id = {},
                                                     std::optional<std::uint64_t> seed = {});
  std::vector<SessionInfo> Sessions() const;
  // A copy of the session's journal (nullopt: no such session); usable after Run() returned.
  std::optional<std::vector<JournalEntry>> JournalOf(std::string_view id) const;
  // Forgets the session's attempts, journal and rate state (as POST .../reset); false: unknown.
  bool ResetSession(std::string_view id);
  // Scripted time of session `id` (listener outages, route health) counts from now on; the
  // journal keeps its time axis. False: unknown.
  bool AnchorOutages(std::string_view id);
  // Scripted time waits at its zero (the listener as it is at 0) until the session's first
  // attempt arrives, or until StartArmedOutages (the runner calls it at an adapter's first
  // response/start, since a refused connection never arrives). False: unknown, or (Start) no
  // longer armed.
  bool ArmOutages(std::string_view id);
  bool StartArmedOutages(std::string_view id);
  // When scripted time started, on the session's journal axis (an offset from its start, like
  // JournalEntry::arrived); nullopt: still armed, or no such session.
  std::optional<Duration> ScriptedStart(std::string_view id) const;
  // Removes the session (as DELETE); exchanges in progress finish. False: unknown.
  bool RemoveSession(std::string_view id);

  // Serves until Stop(); blocks the calling thread (and uses threads-1 more).
  void Run();
  // Thread-safe, async-signal-unsafe: stops accepting, ends exchanges (journaled as
  // kServerShutdown) and makes Run() return.
  void Stop();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultline::provider
