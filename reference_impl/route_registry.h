// The routes of one logical model (docs/routes.md) as one call of the reference client sees
// them, and the one question routing answers: which route takes the next attempt, and when.
//
// A route may take the next attempt when
//   - its capabilities fit the request (RequestNeeds, read from the request body itself: tools,
//     strict tools, reasoning, images, stop sequences, prefill, a large enough context window);
//   - the failed attempt's failover verdict (failover.h) allows it: the failed route itself only
//     when its own retry was granted; another route serving the same wire model for same-model;
//     any other fitting route for compatible-model; no other route for never;
//   - it is not retired for the call (a failure its retry rules refuse there: quota, auth, ...).
// It is ready at the latest of its hold (its own backoff or Retry-After) and, while its breaker
// is open, the breaker's reopening. The route ready soonest wins; ties go to a route outside the
// failed route's shared-fate group, then to a route other than the failed one (a zero backoff
// draw makes the failed route ready at once, and it has just failed: a slow-failing primary must
// not keep the call), both unless `routing.avoid_failed_group` is false; then to the lower
// priority, then to a weighted draw among the routes of that priority (seeded: runs
// reproduce). A sticky client's first attempt goes to its sticky route instead, when that route
// fits and its breaker admits it at once (`routing.sticky`). With `routing.route_attempts` the
// routes form
// a fallback chain instead: the failed route takes the next attempt while its share lasts and
// its own retry is granted; then it is retired and the call moves on. With `routing.failover`
// false the client has one endpoint: every attempt goes to the primary (the lowest priority, the
// first of those), whether or not it fits the request.
//
// Every failed attempt counts against its route's breaker (circuit_breaker.h), whatever it was:
// a refused connection, an error status, an in-stream or mid-stream error, a stall. The breakers
// are the client's (BreakerBoard, breaker_board.h), shared by all its calls, or the registry's
// own when the call shares none.
//
// Sans-I/O: times are passed in. Not thread-safe: one registry per call (the shared board is).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference_impl/backoff.h"
#include "reference_impl/breaker_board.h"
#include "reference_impl/circuit_breaker.h"
#include "reference_impl/failover.h"
#include "reference_impl/policy.h"

namespace faultline::ref {

// What a route declares it serves (the scenario's `capabilities:`, the call line's
// `routes[].capabilities`).
struct RouteCapabilities {
  bool tools = true;
  bool reasoning = false;
  bool images = false;
  bool strict_tools = false;
  bool stop_sequences = true;
  bool prefill = false;
  int context_window = 128'000;  // tokens
  friend bool operator==(const RouteCapabilities&, const RouteCapabilities&) = default;
};

// What a request needs of the route that serves it.
struct RequestNeeds {
  bool tools = false;
  bool reasoning = false;
  bool images = false;
  bool strict_tools = false;
  bool stop_sequences = false;
  bool prefill = false;
  int context_tokens = 0;  // a rough count: prompt bytes / 4 plus the output budget
  friend bool operator==(const RequestNeeds&, const RequestNeeds&) = default;
};

// The needs of a request body (any of the three dialects' JSON); a body that is not JSON needs
// nothing but its size.
RequestNeeds NeedsOf(std::string_view body);

// The first capability `needs` asks for that `capabilities` lacks ("tools", "context_window",
// ...), or "" when the route fits.
std::string_view MissingCapability(const RouteCapabilities& capabilities,
                                   const RequestNeeds& needs);

// A route as selection sees it.
struct RouteTraits {
  std::string id;
  std::string model;  // the wire model requests to it carry
  RouteCapabilities capabilities;
  int priority = 0;  // lower is tried first
  int weight = 1;    // share among routes of the same priority, >= 1
  std::string group;
  friend bool operator==(const RouteTraits&, const RouteTraits&) = default;
};

class RouteRegistry {
 public:
  using Time = PolicyClock::time_point;
  struct Choice {
    std::size_t route = 0;
    Time at{};  // when it is ready (>= the `now` asked with)
  };

  // `breakers`: the client's, shared with its other calls (must outlive the registry); null: the
  // registry keeps its own, from `config.breaker`.
  RouteRegistry(std::vector<RouteTraits> routes, RequestNeeds needs, RoutingConfig config,
                std::uint64_t seed, BreakerBoard* breakers = nullptr);
  RouteRegistry(const RouteRegistry&) = delete;
  RouteRegistry& operator=(const RouteRegistry&) = delete;
  ~RouteRegistry();  // Release()

  // The route of the first attempt, or nullopt when no route fits the request. `sticky`: where a
  // sticky client's calls start now (sticky_route.h), taken when it fits and the breakers admit
  // it at once; otherwise (and without one) the choice any client makes.
  std::optional<Choice> First(Time now, std::optional<std::size_t> sticky = std::nullopt);
  // The route of the attempt after a failed one on `failed`. `own_retry`: when the policy
  // would retry on `failed` itself (nullopt: it refused; the route is then retired).
  std::optional<Choice> Next(std::size_t failed, Failover verdict, std::optional<Time> own_retry,
                             Time now);
  // The last choice (First or Next) made again at `now`, among the same candidates: for a wait
  // that ended on a route the breakers no longer admit (another call of the client took its
  // probe, or found it down).
  std::optional<Choice> Reselect(Time now);

  // Whether the breakers admit an attempt on `route` at `now` (nothing is taken).
  bool Admits(std::size_t route, Time now) const;
  // An attempt starts on `route` at `now` (takes a half-open probe slot).
  void Begin(std::size_t route, Time now);
  void RecordFailure(std::size_t route, Time now);
  void RecordSuccess(std::size_t route);
  // The begun attempt, if any, ends with neither (its call was cancelled or abandoned): a probe
  // slot it holds goes back to the breaker.
  void Release();

  std::size_t size() const { return routes_.size(); }
  const RouteTraits& traits(std::size_t route) const { return routes_[route].traits; }
  CircuitBreaker::State breaker_state(std::size_t route, Time now) const;
  // Whether the route may still take an attempt of this call: not retired, and it fits.
  bool usable(std::size_t route) const;

 private:
  struct Entry {
    RouteTraits traits;
    std::optional<Time> hold = std::nullopt;  // no attempt before
    bool retired = false;
    int attempts = 0;  // begun on this route by this call
  };
  // Whether the route may serve the request: its capabilities fit, or the client has one
  // endpoint and cannot choose.
  bool Fits(const Entry& entry) const;
  std::optional<Time> ReadyAt(const Entry& entry, Time now) const;
  // What a choice after a failure puts last among the routes ready as soon: the failed route's
  // group, and the failed route itself.
  struct Avoid {
    std::string group;
    std::optional<std::size_t> route;
  };
  std::optional<Choice> Best(const std::vector<std::size_t>& candidates, Time now,
                             const Avoid& avoid);

  std::vector<Entry> routes_;
  std::unique_ptr<BreakerBoard> own_breakers_;  // when the call shares none
  BreakerBoard* breakers_;                      // the client's, or own_breakers_
  std::optional<std::size_t> begun_;            // the attempt begun and not yet recorded
  // What the last choice chose among (Reselect).
  std::vector<std::size_t> candidates_;
  Avoid avoid_;
  RequestNeeds needs_;
  std::optional<int> route_attempts_;
  bool avoid_failed_group_ = true;  // routing.avoid_failed_group
  // routing.failover false: a client of one endpoint, the primary, whatever it can serve.
  bool one_endpoint_ = false;
  RetryRng rng_;
};

}  // namespace faultline::ref
