// The circuit breakers of one client: one per route id (circuit_breaker.h), shared by every call
// the client makes, so that what one call learnt about a route (it failed `threshold` times, its
// probe came back good) holds for the next call too. A breaker that forgets with each call never
// protects a failing route from the next request; this one does.
//
// The calls of one client take a route's half-open probe slots from one pool: while one call's
// probe is out, another call is not let through (Admits says so, ReadyAt says when to look
// again). A call that ends without an answer from its probe (cancelled, abandoned) gives its slot
// back with Release, or the breaker would stay half-open with no probe ever allowed.
//
// Ownership: the client's (ClientState, client_state.h) or, for a call that shares nothing, its
// own route registry's. Thread-safety: every member is safe to call concurrently (the calls of
// one client may run on several threads). Sans-I/O: `now` is passed in.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "reference_impl/circuit_breaker.h"
#include "reference_impl/policy.h"

namespace faultline::ref {

class BreakerBoard {
 public:
  using Time = CircuitBreaker::Time;

  // nullopt: the client has no breaker (the policy's `routing.breaker: null`): every route is
  // always admitted.
  explicit BreakerBoard(std::optional<BreakerConfig> config) : config_(config) {}
  BreakerBoard(const BreakerBoard&) = delete;
  BreakerBoard& operator=(const BreakerBoard&) = delete;

  // Whether an attempt may go to `route` at `now`, without taking anything.
  bool Admits(std::string_view route, Time now) const;
  // When an attempt may go to `route`, looking from `now`: `now` when admitted; the end of the
  // cooldown while open; while half-open with every probe slot taken by another call, `now` plus
  // one cooldown (by then that probe has come back, or the breaker opened again).
  Time ReadyAt(std::string_view route, Time now) const;

  // An attempt starts on `route` (a half-open breaker gives it a probe slot); false when the
  // breaker did not admit it.
  bool Begin(std::string_view route, Time now);
  void RecordFailure(std::string_view route, Time now);
  void RecordSuccess(std::string_view route);
  // An attempt begun on `route` ended with neither answer nor failure: its probe slot, if it
  // held one, goes back.
  void Release(std::string_view route);

  CircuitBreaker::State state(std::string_view route, Time now) const;
  int consecutive_failures(std::string_view route) const;

 private:
  // The route's breaker, created closed on first use. Call with mutex_ held.
  CircuitBreaker& At(std::string_view route) const;

  const std::optional<BreakerConfig> config_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, CircuitBreaker, std::less<>> breakers_;  // guarded by mutex_
};

}  // namespace faultline::ref
