// The `fleet:` section of a scenario file: a fleet experiment (many clients, a provider model,
// the policies to compare) as plain values. The loader (loader_fleet.cc) fills it with the same
// file:line:column errors as the rest of the format; faultline::fleet runs it.
//
// Names that only faultline::fleet can check (policy profiles) keep their position in the file,
// so that an unknown one is still reported at its line and column. Values only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/duration.h"

namespace faultline::scenario {

// A word of the file with where it was written, for errors raised after loading.
struct Located {
  std::string text;
  int line = 0;    // 1-based; 0 when built in code
  int column = 0;  // 1-based
  friend bool operator==(const Located&, const Located&) = default;
};

// From `at` on (an offset from the start), `value` holds, until the next step.
struct FleetStep {
  Duration at{0};
  double value = 0;
  friend bool operator==(const FleetStep&, const FleetStep&) = default;
};

// How logical calls arrive. Open: a Poisson (or evenly spaced) stream at a rate schedule, spread
// over the clients round-robin. Closed: every client calls, thinks, and calls again.
struct FleetWorkload {
  enum class Kind { kPoisson, kUniform, kClosed };
  Kind kind = Kind::kPoisson;
  std::vector<FleetStep> rate;              // calls per second (open only); empty: 10/s
  Duration think{std::chrono::seconds(1)};  // closed: mean think time (exponential)
  friend bool operator==(const FleetWorkload&, const FleetWorkload&) = default;
};

// A time window where the provider runs at a fraction of its capacity.
struct FleetBrownout {
  Duration from{0};
  Duration length{0};
  double capacity = 0.5;  // 0..1 of the slots and of the rate
  friend bool operator==(const FleetBrownout&, const FleetBrownout&) = default;
};

// What an overloaded provider answers (no free slot, full queue, over the rate).
struct FleetOverload {
  enum class Hint { kHonest, kConstant, kNone };
  int status = 429;  // 429 | 503 | 529
  Hint hint = Hint::kHonest;
  Duration constant{std::chrono::seconds(1)};  // kConstant: the Retry-After sent every time
  friend bool operator==(const FleetOverload&, const FleetOverload&) = default;
};

struct FleetProvider {
  enum class Service { kConstant, kExponential, kLognormal };
  int concurrency = 0;  // requests served at once; 0: unlimited
  double rate = 0;      // requests admitted per second (token bucket); 0: unlimited
  double burst = 1;     // the rate bucket's depth, in requests
  int queue = 0;        // requests waiting for a slot; beyond it the overload answer
  Service service = Service::kExponential;
  Duration service_mean{std::chrono::milliseconds(100)};
  double service_sigma = 0.5;  // kLognormal: sigma of the underlying normal
  FleetOverload overload;
  std::vector<FleetBrownout> brownouts;
  friend bool operator==(const FleetProvider&, const FleetProvider&) = default;
};

struct FleetSpec {
  std::uint64_t clients = 100;                 // 1..1,000,000
  Duration horizon{std::chrono::seconds(60)};  // arrivals stop here; the run then drains
  Duration drain{std::chrono::seconds(600)};   // longest drain after the horizon
  std::optional<std::uint64_t> seed;           // the command line's --seed wins
  FleetWorkload workload;
  FleetProvider provider;
  // Per-attempt client timeout; default: each policy's response-headers timeout.
  std::optional<Duration> timeout;
  std::vector<Located> policies;  // profile names (or policy files), compared side by side
  Duration bucket{std::chrono::seconds(1)};  // width of the time series' steps
  int tokens_per_call = 500;                 // output tokens a served request costs
  int bytes_per_call = 2000;                 // response bytes a served request costs
  friend bool operator==(const FleetSpec&, const FleetSpec&) = default;
};

}  // namespace faultline::scenario
