// The fleet's provider model, a sans-I/O core: concurrency slots and/or a request rate, a FIFO
// queue, a service-time distribution, brownouts, what it answers when it is overloaded, a
// tokens-per-minute bucket, and the scenario's stateful `rate_limit:` window (the fake provider's
// own rule, scenarios/rate_window.h).
//
// The simulation tells it when a request arrives and when a request's service ends; it answers
// with when to schedule the end of a service, or with an overload answer (and the Retry-After it
// would send). It never sees the clients: a request whose client has given up is still served
// (the wasted work that keeps a metastable system collapsed). Time is passed in.
//
// Ownership: one per simulation run; holds its own seeded RNG. Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "fleet/event_queue.h"
#include "reference_impl/backoff.h"
#include "scenarios/fleet_spec.h"
#include "scenarios/rate_window.h"

namespace faultline::fleet {

// The provider's capacity in requests/s as a step function: (seconds, capacity from then on),
// starting at 0 and changing at each brownout's edges. Capacity is the tightest of the rate,
// the slots over the mean service time and the `rate_limit:` window's requests (and tokens)
// per second; empty when nothing limits the provider. For the report's capacity line.
std::vector<std::pair<double, double>> CapacitySteps(const scenario::FleetProvider& spec,
                                                     const scenario::RateLimit* rate_limit,
                                                     int tokens_per_request);

// A draw around `mean` (constant, exponential, or lognormal with `sigma`), from our own uniforms
// (the standard distributions differ between libraries). Draws nothing for a constant.
double SampleAround(scenario::FleetDistribution distribution, double mean, double sigma,
                    ref::RetryRng& rng);

struct RequestId {
  std::uint32_t slot = 0;
  std::uint32_t token = 0;
};

struct Admission {
  // kRateLimited: over the scenario's `rate_limit:` window (answered 429 with an honest hint) or
  // over `tokens_per_minute` (429 with the overload's hint rule).
  enum class Kind { kServing, kQueued, kOverloaded, kRateLimited };
  Kind kind = Kind::kServing;
  Micros done_at = 0;                 // kServing: when the service ends
  std::optional<Micros> retry_after;  // kOverloaded, kRateLimited: the hint sent, if any
};

struct Started {
  RequestId id;
  Micros done_at = 0;
};

class ProviderModel {
 public:
  // `rate_limit` (optional): the scenario's stateful limit.
  ProviderModel(const scenario::FleetProvider& spec, std::uint64_t seed,
                const scenario::RateLimit* rate_limit = nullptr);

  // A request costing `tokens` (of the `rate_limit:` window and of tokens_per_minute) arrives.
  Admission Arrive(Micros now, RequestId id, int tokens = 0);
  // A service ended at `now`: frees its slot and starts the next queued request, if capacity
  // allows.
  std::optional<Started> Complete(Micros now);
  // Capacity may have grown (a brownout ended): the queued requests that can start now.
  std::optional<Started> StartQueued(Micros now);

  std::size_t queue_length() const { return queue_.size(); }
  int busy() const { return busy_; }
  int overload_status() const { return spec_.overload.status; }
  // The provider's capacity factor at `now` (1 outside brownouts).
  double CapacityAt(Micros now) const;

 private:
  int SlotsAt(Micros now) const;
  bool TakeRateToken(Micros now);
  // nullopt: the request's tokens were taken; else how long until the bucket holds them.
  std::optional<Micros> TakeMinuteTokens(Micros now, int tokens);
  Micros SampleService();
  Micros HonestWait(Micros now) const;
  // The overload's Retry-After rule; `honest` is the honest wait.
  std::optional<Micros> Hint(Micros honest) const;

  scenario::FleetProvider spec_;
  ref::RetryRng rng_;
  std::deque<RequestId> queue_;
  const scenario::RateLimit* rate_limit_;
  scenario::RateWindow window_;
  int busy_ = 0;
  double rate_tokens_ = 0;
  Micros rate_updated_ = 0;
  double minute_tokens_ = 0;  // the tokens_per_minute bucket, full at the start
  Micros minute_updated_ = 0;
};

}  // namespace faultline::fleet
