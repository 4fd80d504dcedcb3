// Internal to the real server (server.cc, http_connection.cc, plan_execution.cc,
// control_api.cc): the state that does not depend on Asio — the clock anchor, counters, the
// timer-lateness histogram and the per-session state — and the SessionHost seam through which
// the control API manages sessions.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fake_provider/admission.h"
#include "fake_provider/http_request.h"
#include "fake_provider/journal.h"
#include "fake_provider/plan/plan.h"
#include "fake_provider/provider_core.h"
#include "fake_provider/server/server.h"
#include "fake_provider/wire/dialect.h"
#include "scenarios/parse_limits.h"
#include "scenarios/scenario.h"

namespace faultline::provider::internal {

using SteadyTime = std::chrono::steady_clock::time_point;

// Wall time derived from the steady clock: anchored once, so it never jumps backwards and
// offsets computed from it agree with the steady timers that schedule the writes.
class ServerClock {
 public:
  ServerClock();
  WallTime Now() const { return ToWall(std::chrono::steady_clock::now()); }
  WallTime ToWall(SteadyTime t) const;
  SteadyTime ToSteady(WallTime t) const;

 private:
  SteadyTime steady_anchor_;
  WallTime wall_anchor_;
};

// A lock-free log-linear histogram of timer lateness in microseconds: exact below 64 µs, then
// 32 sub-buckets per power of two (relative error under ~3%).
class LatenessHistogram {
 public:
  struct Summary {
    std::uint64_t count = 0;
    std::int64_t p50_us = 0;
    std::int64_t p99_us = 0;
    std::int64_t max_us = 0;
  };
  void Record(Duration lateness);
  Summary Summarize() const;

 private:
  static constexpr int kExactBuckets = 64;
  static constexpr int kSubBuckets = 32;
  static constexpr int kMaxExponent = 42;
  static constexpr int kBuckets = kExactBuckets + (kMaxExponent - 6 + 1) * kSubBuckets;
  static int BucketOf(std::uint64_t us);
  static std::uint64_t ValueOf(int bucket);
  std::array<std::atomic<std::uint64_t>, kBuckets> buckets_{};
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::int64_t> max_us_{0};
};

// What the server refused because a limit or a check said no; each counted in
// GET /_faultline/stats under "rejected", by the name in kRejectionNames.
enum class Rejection {
  kHeaderBytes,   // 431: header + trailer fields over --max-header-bytes
  kBodyBytes,     // 413: body over --max-body-bytes
  kScenario,      // 413: scenario deeper than --max-scenario-depth or over --max-scenario-keys
  kSessions,      // 429: --max-sessions reached
  kListeners,     // 429: --max-listeners (dedicated outage listeners) reached
  kConnections,   // 503 or closed: --max-connections reached
  kPendingBody,   // 503: bodies still arriving would pass --max-pending-body-bytes
  kForbidden,     // 403: control request with a foreign Host or Origin
  kUnauthorized,  // 401: control request without the control token
  kCount,
};
inline constexpr std::string_view kRejectionNames[] = {
    "header_bytes", "body_bytes",   "scenario",  "sessions",    "listeners",
    "connections",  "pending_body", "forbidden", "unauthorized"};
static_assert(std::size(kRejectionNames) == static_cast<std::size_t>(Rejection::kCount));

// Server-wide counters, readable by tests through GET /_faultline/stats.
struct ServerCounters {
  void Reject(Rejection what) {
    rejected[static_cast<std::size_t>(what)].fetch_add(1, std::memory_order_relaxed);
  }

  std::atomic<std::uint64_t> requests{0};          // complete requests read
  std::atomic<std::uint64_t> session_requests{0};  // requests answered by a session's plan
  std::atomic<std::uint64_t> control_requests{0};
  std::atomic<std::uint64_t> not_found{0};         // 404 hints
  std::atomic<std::uint64_t> bad_requests{0};      // 400 / 413 / 431
  std::atomic<std::uint64_t> aborted_requests{0};  // client vanished mid-request
  std::atomic<std::uint64_t> read_timeouts{0};     // request not complete within the timeout
  std::atomic<std::uint64_t> connections_total{0};
  std::atomic<std::int64_t> connections_open{0};
  std::atomic<std::uint64_t> pending_body_bytes{0};  // held by requests still arriving
  std::atomic<std::uint64_t> bytes_received{0};
  std::atomic<std::uint64_t> bytes_sent{0};
  // Exceptions caught where they would have ended an event loop or a connection unlogged.
  std::atomic<std::uint64_t> internal_errors{0};
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(Rejection::kCount)> rejected{};
};

struct StatsSnapshot {
  std::uint64_t requests = 0, session_requests = 0, control_requests = 0, not_found = 0;
  std::uint64_t bad_requests = 0, aborted_requests = 0, read_timeouts = 0;
  std::uint64_t connections_total = 0;
  std::int64_t connections_open = 0;
  std::uint64_t pending_body_bytes = 0;
  std::uint64_t bytes_received = 0, bytes_sent = 0, internal_errors = 0;
  std::array<std::uint64_t, static_cast<std::size_t>(Rejection::kCount)> rejected{};
  // The limits in force, by their `faultline serve` flag without the dashes.
  std::vector<std::pair<std::string_view, std::uint64_t>> limits;
  std::size_t sessions = 0;
  std::int64_t uptime_ms = 0;
  LatenessHistogram::Summary lateness;
};

// One request admitted into a session: its plan and where to journal its execution.
struct Admission {
  ResponsePlan plan;
  std::shared_ptr<Journal> journal;  // the journal current at arrival (reset swaps it)
  std::uint64_t entry_index = 0;
  WallTime session_start;
  WallTime arrived;
  bool started_scripted_time = false;  // this request was the armed session's first attempt
};

// One hosted scenario session. ProviderSession is not thread-safe: `mu_` serialises it and is
// held only for the short, non-blocking calls below.
//
// A scenario with routes is a parent session plus one route session per route
// (scenario::RouteSessionId, compiled from scenario::RouteScenario): each route has its own base
// URL, attempt counter and (when it refuses connections) listener, but journals into its
// parent's journal on its parent's time axis, so the parent's journal is the whole story in
// arrival order. Resetting or anchoring the parent does the same to its routes.
class SessionState {
 public:
  // `parent`: the session whose journal and start this route session shares (null: none).
  SessionState(std::string id, std::string base_url, std::uint16_t dedicated_port,
               scenario::Scenario scenario, std::uint64_t seed, WallTime start,
               JournalLimits journal_limits, std::shared_ptr<SessionState> parent = nullptr);

  const std::string& id() const { return id_; }
  const std::string& base_url() const { return base_url_; }
  std::uint16_t dedicated_port() const { return dedicated_port_; }  // 0 = the shared listener
  const scenario::Scenario& scenario() const { return scenario_; }
  std::uint64_t seed() const { return seed_; }

  // Admits the request (admission.h) under the session lock, so journal order is attempt
  // order; its headers, trailers and body move into the journal. `path` is the request's
  // Destination::path.
  Admission Admit(HttpRequest& request, std::string_view path, std::uint64_t connection,
                  bool keep_secrets, WallTime now);
  void Reset(WallTime now);
  // Scripted time of this session and its routes (ProviderSession::AnchorOutages, ArmOutages).
  // A request admitted while armed starts it at its arrival (Admission::started_scripted_time).
  void AnchorOutages(WallTime now);
  void ArmOutages();
  bool AnchorIfArmed(WallTime now);  // true: it was armed and now starts at `now`
  std::optional<WallTime> scripted_start() const;
  std::shared_ptr<SessionState> parent() const { return parent_.lock(); }  // null: none

  bool ListenerDown(WallTime now) const;
  std::optional<WallTime> NextListenerChange(WallTime now) const;
  bool HasListenerOutages() const { return has_outages_; }

  int attempts() const;
  std::shared_ptr<Journal> journal() const;
  WallTime start() const;
  SessionInfo Info() const;

  // The route sessions of a parent, in the scenario's order.
  void AddRoute(std::shared_ptr<SessionState> route);
  std::vector<std::shared_ptr<SessionState>> routes() const;

 private:
  const std::string id_;
  const std::string base_url_;
  const std::uint16_t dedicated_port_;
  const scenario::Scenario scenario_;
  const std::uint64_t seed_;
  const JournalLimits journal_limits_;
  // Weak: the parent owns its routes (routes_), and a strong pointer back would keep a deleted
  // session alive. A route whose parent is gone journals into its own journal.
  const std::weak_ptr<SessionState> parent_;
  bool has_outages_ = false;
  mutable std::mutex mu_;
  ProviderSession provider_;          // guarded by mu_
  std::shared_ptr<Journal> journal_;  // guarded by mu_ (the pointer; Journal locks itself)
  WallTime start_;                    // guarded by mu_
  std::vector<std::shared_ptr<SessionState>> routes_;  // guarded by mu_
};

struct AddSessionError {
  // kLimit: --max-sessions or --max-listeners reached.
  enum class Code { kInvalid, kDuplicate, kListener, kLimit };
  Code code = Code::kInvalid;
  std::string message;
};

// What the control API needs from the server.
class SessionHost {
 public:
  virtual ~SessionHost() = default;
  virtual std::expected<std::shared_ptr<SessionState>, AddSessionError> CreateSession(
      scenario::Scenario scenario, std::string id, std::optional<std::uint64_t> seed) = 0;
  virtual bool DeleteSession(std::string_view id) = 0;
  virtual std::shared_ptr<SessionState> ResetSession(std::string_view id) = 0;  // null: unknown
  // Outage windows of session `id` count from now on; false: unknown.
  virtual bool AnchorOutages(std::string_view id) = 0;
  virtual std::shared_ptr<SessionState> FindSession(std::string_view id) const = 0;
  virtual std::vector<std::shared_ptr<SessionState>> ListSessions() const = 0;
  virtual StatsSnapshot Stats() const = 0;
  virtual std::string base_url() const = 0;
  virtual WallTime Now() const = 0;
  virtual const scenario::ParseLimits& scenario_limits() const = 0;
  virtual void Reject(Rejection what) = 0;
};

// Checks a session id: non-empty, printable ASCII without spaces, '?', '#', '%' or "/v1/",
// and neither starting nor ending with '/'. Returns the reason when invalid.
std::optional<std::string> InvalidSessionIdReason(std::string_view id);

// "http://127.0.0.1:PORT" with IPv6 addresses bracketed and wildcard addresses mapped to
// loopback (a URL a client on this machine can use).
std::string HttpBaseUrl(std::string_view address, std::uint16_t port);

}  // namespace faultline::provider::internal
