// A per-route circuit breaker: after `threshold` consecutive failed attempts the route gets no
// traffic for `cooldown`; then up to `half_open_probes` attempts probe it, and a good probe
// closes the breaker again while a failed one opens it for another cooldown.
//
//   closed --threshold consecutive failures--> open --cooldown passed--> half-open
//   half-open --probe succeeded--> closed         half-open --probe failed--> open
//
// Every failed attempt counts, wherever it failed: a refused connection, an error status, an
// in-stream or mid-stream error, a stall. Its parameters (BreakerConfig, policy.h) are the
// policy file's `routing.breaker`; without one (`breaker: null`) it counts failures and never
// opens. Sans-I/O: `now` is passed in; not thread-safe (BreakerBoard, breaker_board.h, keeps one
// per route for the calls of a client and synchronises them).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "reference_impl/policy.h"

namespace faultline::ref {

class CircuitBreaker {
 public:
  enum class State { kClosed, kOpen, kHalfOpen };
  using Time = PolicyClock::time_point;

  explicit CircuitBreaker(BreakerConfig config = {}) : config_(config) {}
  // nullopt: no breaker (the policy's `breaker: null`).
  explicit CircuitBreaker(std::optional<BreakerConfig> config) : config_(config) {}

  // Whether an attempt may go to the route at `now`. While half-open, a true answer takes one of
  // the probe slots until RecordSuccess/RecordFailure returns it.
  bool Allow(Time now);
  // Whether Allow(now) would say yes, taking nothing.
  bool admits(Time now) const;
  void RecordSuccess();
  void RecordFailure(Time now);
  // An admitted attempt ended with neither success nor failure (its call was cancelled): the
  // probe slot it may hold goes back.
  void Release();

  State state(Time now) const;
  // When an open breaker lets a probe through (nullopt unless open).
  std::optional<Time> reopens_at() const;
  int consecutive_failures() const { return failures_; }

 private:
  std::optional<BreakerConfig> config_;
  int failures_ = 0;
  std::optional<Time> open_until_;  // set while open or half-open
  int probes_in_flight_ = 0;
};

std::string_view ToString(CircuitBreaker::State state);  // "closed", "open", "half-open"

}  // namespace faultline::ref
