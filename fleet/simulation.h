// One fleet run: many clients' logical calls, each run by one retry policy (the reference
// client's Decide(), backoff, Retry-After rules and shared budget), against the provider model,
// in virtual time. Deterministic: the same spec, policy and seed give the same measures.
//
// Open workloads draw arrivals from the rate schedule up to the horizon; closed ones keep every
// client calling and thinking until the horizon. The run then drains (no new calls) until every
// call has ended or `spec.drain` has passed. Per-request faults come from the scenario's `chaos`
// section when one is given, each answer classified by the reference client's own classifier.
//
// Memory: about 24 bytes per client plus the event queue (24 bytes per pending event, a few per
// call in flight), so a million clients fit in about 120 MB. Single-threaded; reentrant (no
// shared state).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "fleet/measures.h"
#include "fleet/profiles.h"
#include "scenarios/scenario.h"

namespace faultline::fleet {

// Called now and then with the share of the horizon simulated so far (0..1, >1 while draining)
// and the events simulated so far (which move even when a long horizon's share hardly does).
using ProgressFn = std::function<void(double, std::uint64_t)>;

struct RunInput {
  const scenario::FleetSpec* spec = nullptr;
  const scenario::Chaos* chaos = nullptr;  // optional per-request faults
  const NamedPolicy* policy = nullptr;
  std::uint64_t seed = 1;
  ProgressFn progress;
  // Optional: the scenario's stateful `rate_limit:`, each request costing tokens_per_call.
  const scenario::RateLimit* rate_limit = nullptr;
};

PolicyMeasures Simulate(const RunInput& input);

// When the trigger of a metastable episode ends: the end of the last brownout, or the first step
// down after the highest arrival rate. nullopt when the spec has neither.
std::optional<double> TriggerEndSeconds(const scenario::FleetSpec& spec);

}  // namespace faultline::fleet
