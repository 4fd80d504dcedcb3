// What a scenario's `rate_limit:` admits: a sliding window of accepted requests, at most
// `requests` of them and `tokens` of cost within any `window` (scenario.h RateLimit). Over budget
// it says how long until the window frees enough: the honest Retry-After. A request costing more
// than the whole token budget still passes through an empty window.
//
// One home for the rule both the fake provider's session (fake_provider/provider_core.cc) and the
// fleet simulator's provider model (fleet/provider_model.h) apply. Time is passed in, as an
// offset from any fixed origin that never goes back. Not thread-safe.
#pragma once

#include <deque>
#include <optional>

#include "scenarios/duration.h"
#include "scenarios/scenario.h"

namespace faultline::scenario {

class RateWindow {
 public:
  // Accepts the request (nullopt) or returns how long until the window frees enough for it.
  std::optional<Duration> Admit(const RateLimit& limit, Duration now, int cost);

 private:
  struct Accepted {
    Duration at;
    int tokens = 0;
  };
  void Expire(Duration now, Duration length);
  static bool Fits(const RateLimit& limit, std::size_t requests, long long tokens, int cost);

  std::deque<Accepted> window_;  // in acceptance order (times never decrease)
  long long tokens_ = 0;         // sum over window_
};

}  // namespace faultline::scenario
