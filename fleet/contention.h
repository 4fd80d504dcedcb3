// Marc Brooker's contention model ("Exponential Backoff And Jitter", AWS Architecture Blog,
// 2015, and its simulator): N clients each update one shared row once with optimistic
// concurrency: read the version, write it back; a write whose version is stale fails and the
// client backs off and starts again. Network delays are |Normal(10, 2)| ms each way. Each
// failed write is retried after the delay the reference client's Decide() gives for a 409 under
// the policy, so the jitter strategies compared are the reference client's own.
//
// A sans-I/O virtual-time model with its own event queue; deterministic from the seed.
#pragma once

#include <cstdint>

#include "fleet/profiles.h"

namespace faultline::fleet {

struct ContentionResult {
  double completion_ms = 0;  // mean over the runs: when the last client succeeded
  double calls = 0;          // mean over the runs: writes sent (Brooker's "calls")
};

// Averages `runs` runs of `clients` clients, seeds derived from `seed`.
ContentionResult RunContention(const NamedPolicy& policy, int clients, int runs,
                               std::uint64_t seed);

}  // namespace faultline::fleet
