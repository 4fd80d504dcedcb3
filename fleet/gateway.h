// A retrying layer between a fleet's clients and its provider (scenario::FleetGateway: an API
// gateway, an LLM router, a service mesh sidecar). Each request it receives from the layer above
// becomes up to `max_attempts` tries to the layer below; its retries are decided by the reference
// client's own Decide() under a policy built from the layer's `retry:` block, so a gateway backs
// off, honours Retry-After and gives up by the same rules as a client (no second backoff).
//
// Retries multiply across layers: a client making 3 attempts through a gateway making 4 sends up
// to 12 requests to the provider per call (the Google SRE book's "64 attempts (4^3)" for three
// layers of 4).
//
// The simulation (simulation.cc) keeps one GatewaySession per call and layer and tells the layer
// each answer from below; the layer says when to try again or what to hand up. Time is passed in.
// Ownership: one GatewayLayer per layer per run, holding its own seeded RNG. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>

#include "fleet/event_queue.h"
#include "fleet/outcomes.h"
#include "reference_impl/policy.h"
#include "scenarios/fleet_spec.h"
#include "scenarios/scenario.h"

namespace faultline::fleet {

// The reference policy a layer retries by: `max_attempts`, the backoff, Retry-After as a floor of
// the backoff when honoured (no cap, no jitter on the hint), no deadline, no budget, every
// transient class retried. In range for every spec CheckFleetSpec accepts.
ref::RetryPolicy GatewayPolicy(const scenario::FleetGateway& spec);

// One request a layer received from above, being tried below.
struct GatewaySession {
  std::uint32_t token = 0;              // the try in flight below; stale events carry another
  std::int32_t previous_delay_ms = -1;  // the last backoff slept (decorrelated jitter)
  std::uint16_t attempt = 0;            // tries made for this request
  bool in_flight = false;               // a try is waiting for its answer from below
};

// What a layer does with an answer from below.
struct GatewayVerdict {
  std::optional<Micros> retry_in;  // try again after this long; nullopt: hand `answer` up
  Outcome answer;                  // what the layer above gets
  std::optional<Micros> hint;      // the Retry-After it gets with it, if any
};

class GatewayLayer {
 public:
  // `chaos` and `overload_status` are the run's, so that this layer's Outcomes match the
  // client's answer for answer (outcomes.h).
  GatewayLayer(const scenario::FleetGateway& spec, const scenario::Chaos* chaos,
               int overload_status, std::uint64_t seed);

  const scenario::FleetGateway& spec() const { return spec_; }
  // The layer's own per-try timeout, as its Outcomes classifies it.
  const Outcome& timeout() const { return outcomes_.timeout(); }

  // The answer `below` (with its Retry-After `hint`) to the session's current try, at `now`.
  GatewayVerdict OnAnswer(GatewaySession& session, Micros now, const Outcome& below,
                          std::optional<Micros> hint);

 private:
  scenario::FleetGateway spec_;
  ref::RetryPolicy policy_;
  Outcomes outcomes_;
  ref::RetryRng rng_;
};

}  // namespace faultline::fleet
