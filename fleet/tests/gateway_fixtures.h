// The gateway the fleet tests stand between clients and provider: `attempts` tries 1 ms apart, no
// jitter, so every count and time it leads to is exact. Each test sets what it is about on top
// (a per-try timeout, Retry-After handling).
#pragma once

#include <chrono>

#include "scenarios/scenario.h"

namespace faultline::fleet::testing {

inline scenario::FleetGateway FixedGateway(int attempts) {
  using namespace std::chrono_literals;
  scenario::FleetGateway gateway;
  gateway.name = "gateway";
  gateway.max_attempts = attempts;
  gateway.backoff_base = 1ms;
  gateway.backoff_cap = 1ms;
  gateway.jitter = scenario::FleetJitter::kNone;
  return gateway;
}

}  // namespace faultline::fleet::testing
