// The range of every value of a fleet section, in one table. The loader checks a file's values
// against it (loader_fleet.cc, with the file's line and column) and `faultline simulate` checks a
// --sweep value and a fleet built from flags against it (fleet/experiment.cc), so a value refused
// in a file is refused on the command line too, in the same words.
//
// The ranges keep every run's arithmetic finite (no duration sum overflows, no count wraps when
// converted); what a run would cost as a whole (events, memory) is fleet/run_cost.h's question.
// Values and pure functions; reentrant.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "scenarios/fleet_spec.h"

namespace faultline::scenario {

enum class FleetValue {
  kClients,
  kHorizon,
  kDrain,
  kTimeout,
  kBucket,
  kStepAt,
  kArrivalRate,
  kThink,
  kConcurrency,
  kProviderRate,
  kBurst,
  kQueue,
  kServiceMean,
  kServiceSigma,
  kRetryAfter,
  kBrownoutFrom,
  kBrownoutFor,
  kBrownoutCapacity,
  kTokensPerCall,
  kBytesPerCall,
  kTokensPerMinute,
  kTokensSigma,
  kGatewayAttempts,
  kGatewayBackoff,
  kGatewayPerTryTimeout,
};

struct FleetBound {
  std::string_view key;  // where the file writes it, e.g. "fleet.provider.service.mean"
  double min = 0;        // inclusive; in seconds for a duration
  double max = 0;        // inclusive
  enum class Kind { kNumber, kWhole, kDuration } kind = Kind::kNumber;
};

const FleetBound& BoundOf(FleetValue which);

// nullopt when `value` (seconds for a duration) lies in the range; else "expected a duration from
// 1us to 720h, got 1000000h" (no key: the caller names where the value came from).
std::optional<std::string> OutOfRange(FleetValue which, double value);

// Every value of `spec` against its range: nullopt, or the first one out of range as
// "fleet.horizon: expected ...". For specs not read by the loader (flags, a --sweep applied).
std::optional<std::string> CheckFleetSpec(const FleetSpec& spec);

// A duration as a file writes it, in the largest of h, m, s, ms, us that divides it evenly:
// "720h", "90s", "1500us".
std::string DurationText(Duration duration);

}  // namespace faultline::scenario
