// The sans-I/O call engine: ONE logical call (its attempts, timeouts, retries, cancellation and the
// one commit), as a state machine the driver feeds with what happened and that answers with what
// to do next.
//
// Inputs (each takes the driver's monotonic `now`):
//   Start            begin the call (attempt 1)
//   Connected        the TCP connection of the current attempt is up
//   BytesReceived    bytes read from it
//   ConnectionClosed the peer ended the connection (EOF)
//   ConnectionFailed connect/read/write failed (refused, reset, ...)
//   TimerFired       the timer armed by the last ArmTimer/Wait went off (stale firings are ignored)
//   Cancel           the caller gave up
//   Abandon          the driver broke (an exception in it or in the caller's sink)
// Outputs: Actions (Connect, Send, ArmTimer, CancelTimer, CloseConnection, Wait, Done) returned by
// every input, and LifecycleEvents (call_event.h) collected until TakeEvents().
//
// Rules it keeps:
//   - the same request bytes (built here, see BuildHttpRequest) on every attempt;
//   - one timer: the earliest of the connect / response-headers / idle / total deadlines that
//     applies to the current phase; the idle watchdog counts only meaningful events (unless the
//     policy lets heartbeats count) and is armed only while waiting for response data;
//   - a failed attempt's connection is closed, never reused; its chunks are never committed and
//     never spliced with a later attempt (each attempt has its own BodyDecoder);
//   - after a failed attempt the policy decides (policy.h); a retry writes the retry log record
//     and emits response/interrupted BEFORE the Wait action;
//   - with several routes, the failed route's own retry is weighed against failing over
//     (route_registry.h: failover only before commit, as the taxonomy allows, to a route whose
//     capabilities fit, not before its own hold or breaker cooldown); one attempt budget,
//     deadline and shared budget bound the whole call (DecideFailover); when no route can take
//     the request any more the call ends at once, listing every route's last failure (these
//     decisions are call_routes.cc);
//   - a route's circuit breaker is the client's, shared by its calls (CallOptions::breakers): an
//     attempt, the first one too, goes only where the breakers admit it; when a wait ends on a
//     route they no longer admit (another call took its probe or found it down), the route is
//     chosen again among the same candidates, waiting for it if need be;
//   - a sticky client's call (CallOptions::sticky) starts on the route the client's last
//     failover moved to while that route fits and its breaker admits it, and every attempt that
//     begins on another route than the call's attempt before it is reported there as a failover;
//   - exactly one terminal event (response/committed or response/failed), followed by Done;
//     after it every input returns no action and emits nothing;
//   - Cancel in any phase ends the call at once with ABORTED; Abandon with UNKNOWN.
//
// Ownership: the Call owns its request, policy copy and RNG; the budget, breakers and retry log
// are the caller's and must outlive the Call (all are internally synchronised, so they may be
// shared between concurrent calls). Not thread-safe: one driver thread per Call.
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/version.h"
#include "reference_impl/body_decoder.h"
#include "reference_impl/call_event.h"
#include "reference_impl/classify.h"
#include "reference_impl/dialect.h"
#include "reference_impl/http_response.h"
#include "reference_impl/policy.h"
#include "reference_impl/retry_log.h"
#include "reference_impl/route_registry.h"
#include "reference_impl/sticky_route.h"

namespace faultline::ref {

// An http:// base URL split into its pieces ("http://127.0.0.1:8080/v1").
struct BaseUrl {
  std::string host;  // "127.0.0.1"
  std::uint16_t port = 80;
  std::string path;  // "" or "/v1" (no trailing slash)
};
// Only http:// (this client speaks plain HTTP/1.1); errors name what is wrong.
std::expected<BaseUrl, std::string> ParseBaseUrl(std::string_view url);

// One concrete route of the logical model: what it serves and where and how to ask it.
struct CallRoute {
  RouteTraits traits;
  Dialect dialect = Dialect::kOpenAiChat;
  BaseUrl base_url;
  std::string body;  // the request in the route's dialect with its wire model
};

struct CallRequest {
  Dialect dialect = Dialect::kOpenAiChat;
  BaseUrl base_url;
  std::string api_key;
  std::string body;  // the request JSON, sent byte for byte on every attempt
  bool stream = true;
  std::optional<std::string> idempotency_key;
  // More header fields, sent on every attempt after the dialect's own (a gateway's routing
  // header, harness/gateways/gateway.h). Names and values must be valid field text.
  std::vector<std::pair<std::string, std::string>> extra_headers;
  // The logical model's routes (docs/routes.md); empty: the one endpoint above. With routes,
  // `dialect`, `base_url` and `body` are unused: each attempt goes to the route the registry
  // chooses (route_registry.h), with that route's own bytes, the same on every attempt there.
  std::vector<CallRoute> routes;
};

// The request path for the dialect under the base URL's path ("/v1" is not repeated). Gemini's
// and Bedrock's paths name the model and the method: `model` (empty: "{model}", "{modelId}";
// Bedrock's percent-encoded) and `stream` choose them.
std::string RequestPath(Dialect dialect, std::string_view base_path, std::string_view model = {},
                        bool stream = true);

// What goes on the wire for a request JSON in the adapter protocol's shape (the call line's
// `request`): its path under `base_path`, and its body. The body goes as it is, except in Gemini
// and Bedrock, whose paths carry the model and the choice of a stream: the protocol's request
// says them as "model" and "stream" (docs/adapter-protocol.md), and the wire body is the rest.
struct WireRequest {
  std::string path;
  std::string body;
};
WireRequest ToWire(Dialect dialect, std::string_view base_path, std::string_view request);
// The complete HTTP/1.1 request text: POST, Host, content-type, content-length, the dialect's
// auth headers (Authorization: Bearer / x-api-key + anthropic-version / x-goog-api-key), accept,
// idempotency-key, the extra headers; the path and body ToWire gives.
std::string BuildHttpRequest(const CallRequest& request);

struct Action {
  enum class Kind {
    kConnect,          // open a new TCP connection to target()
    kSend,             // write `bytes` (valid while the Call lives)
    kArmTimer,         // (re)arm the call's one timer for `at`, replacing any armed one
    kCancelTimer,      // no deadline applies now
    kCloseConnection,  // close the current connection (never reused)
    kWait,             // backoff: arm the timer for `at`; TimerFired then starts the next attempt
    kDone,             // the call is over; drop it
  };
  Kind kind = Kind::kDone;
  std::string_view bytes;
  PolicyClock::time_point at{};
  friend bool operator==(const Action&, const Action&) = default;
};
std::string_view ToString(Action::Kind kind);

struct CallOptions {
  std::string call_id = "call";  // prefix of response ids, key of the retry log
  std::uint64_t seed = 0;        // seeds the retry RNG
  // The client's retry budget and circuit breakers, shared with its other calls
  // (client_state.h); null: no budget, and the call keeps its own breakers.
  RetryBudget* budget = nullptr;
  BreakerBoard* breakers = nullptr;
  // A sticky client's route (the policy's routing.sticky, sticky_route.h): the call starts there
  // while it holds one, and reports its failovers to it. Null: the call starts afresh.
  StickyRoute* sticky = nullptr;
  RetryLog* retry_log = nullptr;
  // A restarted call: what RetryLog::Recover() found for call_id. The attempts already made
  // count against max_attempts, and the first attempt of this run starts no earlier than the
  // retry time that was logged. That wait is bounded like any other: a log whose attempts
  // already reach max_attempts, whose retry is due later than the policy ever waits (the longer
  // of backoff.cap and retry_after.cap) or too late for the total deadline ends the call at once
  // with the logged failure, sending nothing.
  std::optional<RecoveredCall> recovered = std::nullopt;
};

class Call {
 public:
  Call(CallRequest request, RetryPolicy policy, CallOptions options);
  // Send actions point into the Call's own request bytes: it stays where it was built.
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  using Time = PolicyClock::time_point;
  // `wall_now` anchors the wall clock (HTTP-date hints, retry log); later wall times are derived
  // from it and the monotonic `now`.
  std::vector<Action> Start(Time now, std::chrono::system_clock::time_point wall_now);
  std::vector<Action> Connected(Time now);
  std::vector<Action> BytesReceived(std::string_view bytes, Time now);
  std::vector<Action> ConnectionClosed(Time now);
  std::vector<Action> ConnectionFailed(TransportKind kind, std::string_view detail, Time now);
  std::vector<Action> TimerFired(Time now);
  std::vector<Action> Cancel(Time now);
  // Ends the call at once with an internal failure (UNKNOWN, not retryable) saying `what`: the
  // driver's way to end a call in a defined state when something threw.
  std::vector<Action> Abandon(std::string_view what, Time now);

  // The lifecycle events emitted since the last call, in order.
  std::vector<LifecycleEvent> TakeEvents();

  const CallRequest& request() const { return request_; }
  // The current attempt's route: where to connect, what to send, its id ("" without routes).
  const BaseUrl& target() const { return routes_[route_].base_url; }
  std::string_view request_bytes() const { return route_bytes_[route_]; }
  const std::string& route_id() const { return routes_[route_].traits.id; }
  int attempt() const { return attempt_; }
  bool done() const { return state_ == State::kDone; }

 private:
  enum class State { kNotStarted, kConnecting, kAwaitingHead, kBody, kErrorBody, kBackoff, kDone };

  void Resume(const RecoveredCall& recovered, Time now, std::vector<Action>& out);
  std::chrono::milliseconds RecoveredWait(const RecoveredCall& recovered) const;
  std::optional<std::string> RefuseResume(int retries, std::chrono::milliseconds wait,
                                          Time now) const;
  std::optional<std::size_t> StickyStart(Time now) const;
  void BeginAttempt(Time now, std::vector<Action>& out);
  void BeginWhenAdmitted(Time now, std::vector<Action>& out);
  void WaitForRoute(Time at, Time now, std::vector<Action>& out);
  bool ReadingResponse() const;
  void HandleFeed(const HttpFeed& fed, bool eof, Time now, std::vector<Action>& out);
  void FailRead(const Failure& failure, Time now, std::vector<Action>& out);
  void OnHead(Time now, std::vector<Action>& out);
  void OnBody(std::string_view body, Time now, std::vector<Action>& out);
  void AfterBody(bool complete, Time now, std::vector<Action>& out);
  void FinishErrorBody(Time now, std::vector<Action>& out);
  void CheckOutcome(Time now, std::vector<Action>& out);
  void FailAttempt(Failure failure, std::vector<RetryHint> hints, Time now,
                   std::vector<Action>& out);
  Decision Reroute(const Failure& failure, const Decision& own, const DecisionInput& input,
                   Time now);
  Decision HeldByBreaker(const Decision& own, const DecisionInput& input, Time ready);
  Failure AllRoutesDown(Failure last) const;
  LifecycleEvent Event(EventType type) const;
  std::vector<Action> End(Failure failure);
  void Commit(const Completed& completed, std::vector<Action>& out);
  void Finish(Failure failure, bool with_response, std::vector<Action>& out,
              std::string give_up = {});
  void ArmTimer(std::vector<Action>& out);
  Phase CurrentPhase() const;
  PartialOutput CurrentPartial() const;
  std::chrono::system_clock::time_point Wall(Time now) const;
  std::string ResponseId() const;

  CallRequest request_;
  RetryPolicy policy_;
  CallOptions options_;
  RetryRng rng_;
  std::vector<CallRoute> routes_;  // request_.routes, or the one endpoint as a route
  std::vector<std::string> route_bytes_;
  RouteRegistry registry_;
  std::size_t route_ = 0;                             // the current (or next) attempt's route
  std::optional<std::size_t> begun_route_;            // the route of the last attempt begun
  std::vector<std::optional<Failure>> last_failure_;  // per route

  State state_ = State::kNotStarted;
  int attempt_ = 0;
  Time start_{};
  std::chrono::system_clock::time_point wall_start_{};
  std::optional<Time> deadline_;        // end-to-end
  std::optional<Time> phase_deadline_;  // connect / headers / idle of the current phase
  std::optional<Time> retry_at_;
  std::optional<std::chrono::milliseconds> previous_delay_;
  std::optional<Time> armed_;
  bool connection_open_ = false;

  std::unique_ptr<HttpResponseParser> parser_;
  std::unique_ptr<BodyDecoder> decoder_;
  std::string error_body_;
  WastedWork wasted_;
  std::vector<LifecycleEvent> events_;
};

// The `adapter/hello` event for a client running `policy`.
LifecycleEvent HelloEvent(const RetryPolicy& policy, std::string name = "faultline-ref",
                          std::string version = std::string(kVersion));

}  // namespace faultline::ref
