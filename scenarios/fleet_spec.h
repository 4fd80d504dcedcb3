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

// How a sampled value (a service time, a request's token cost) is drawn around its mean.
enum class FleetDistribution { kConstant, kExponential, kLognormal };

struct FleetProvider {
  using Service = FleetDistribution;
  int concurrency = 0;  // requests served at once; 0: unlimited
  double rate = 0;      // requests admitted per second (token bucket); 0: unlimited
  double burst = 1;     // the rate bucket's depth, in requests
  int queue = 0;        // requests waiting for a slot; beyond it the overload answer
  Service service = Service::kExponential;
  Duration service_mean{std::chrono::milliseconds(100)};
  double service_sigma = 0.5;  // kLognormal: sigma of the underlying normal
  FleetOverload overload;
  std::vector<FleetBrownout> brownouts;
  // Tokens admitted per minute, a bucket one minute deep refilled continuously (Anthropic's
  // documented token-bucket rule); each request takes its token cost. 0: unlimited. Over it the
  // provider answers 429 with the Retry-After of `overload.retry_after` (honest: until the bucket
  // holds the request's cost again).
  double tokens_per_minute = 0;
  friend bool operator==(const FleetProvider&, const FleetProvider&) = default;
};

// The backoff jitter of a gateway's retries (AWS Architecture Blog, "Exponential Backoff And
// Jitter", 2015): none (plain exponential), full, equal or decorrelated.
enum class FleetJitter { kNone, kFull, kEqual, kDecorrelated };

// Layers multiply: eight of them at the attempt limit would already be 10^24 requests a call.
inline constexpr std::size_t kMaxGatewayLayers = 8;

// One retrying layer between the clients and the provider (an API gateway, an LLM router, a
// service mesh sidecar). Each request it receives becomes up to `max_attempts` requests to the
// layer below it. The defaults are Envoy's route retry policy: one retry (num_retries: 1), a
// fully jittered backoff from 25 ms capped at ten times that, Retry-After not honoured, and the
// upstream answer (its Retry-After header included) proxied as it came.
struct FleetGateway {
  std::string name;      // for the measures; default "gateway" (then "gateway 2", ...)
  int max_attempts = 2;  // requests below per request received, 1..1000 (1: no retries)
  Duration backoff_base{std::chrono::milliseconds(25)};
  Duration backoff_cap{std::chrono::milliseconds(250)};
  FleetJitter jitter = FleetJitter::kFull;
  bool honor_retry_after = false;  // a Retry-After from below floors its own backoff
  bool pass_retry_after = true;    // the Retry-After of its last answer reaches the layer above
  std::optional<Duration> per_try_timeout;  // nullopt: it waits as long as the layer above does
  friend bool operator==(const FleetGateway&, const FleetGateway&) = default;
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
  // The tokens one call's requests cost (every attempt of a call sends the same prompt), drawn
  // per call around this mean: for `provider.tokens_per_minute`, the `rate_limit:` window and the
  // wasted tokens.
  int tokens_per_call = 500;
  FleetDistribution tokens_distribution = FleetDistribution::kConstant;
  double tokens_sigma = 0.5;  // kLognormal: sigma of the underlying normal
  int bytes_per_call = 2000;  // response bytes a served request costs
  // The retrying layers between the clients and the provider, the one the clients call first;
  // empty: the clients call the provider directly.
  std::vector<FleetGateway> gateways;
  friend bool operator==(const FleetSpec&, const FleetSpec&) = default;
};

}  // namespace faultline::scenario
