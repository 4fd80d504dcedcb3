#include "reference_impl/backoff.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <utility>

#include "reference_impl/name_table.h"

namespace faultline::ref {
namespace {

using std::chrono::milliseconds;

// AWS's decorrelated jitter grows the upper bound by this factor over the previous sleep.
constexpr double kDecorrelatedGrowth = 3.0;

struct Interval {
  double lower_ms;
  double upper_ms;
};

// min(cap, base * multiplier^n) without overflow (pow may give inf; min then gives cap).
double CappedExponentialMs(const BackoffConfig& config, int retry_index) {
  const double base = static_cast<double>(config.base.count());
  const double cap = static_cast<double>(config.cap.count());
  const int n = std::max(retry_index, 0);
  // Doubling, the common case: 2^n is exact, so this is pow's value without pow's cost (the fleet
  // simulator samples millions of backoffs).
  const double grown = config.multiplier == 2.0 && n < 63
                           ? base * static_cast<double>(std::uint64_t{1} << n)
                           : base * std::pow(config.multiplier, n);
  return std::isfinite(grown) ? std::min(cap, grown) : cap;
}

Interval IntervalFor(const BackoffConfig& config, int retry_index,
                     std::optional<milliseconds> previous) {
  const double cap = static_cast<double>(config.cap.count());
  const double d = CappedExponentialMs(config, retry_index);
  switch (config.strategy) {
    case BackoffStrategy::kExponential: {
      const double low = config.jitter_mode == JitterMode::kUp ? d : d * (1.0 - config.jitter);
      const double high =
          config.jitter_mode == JitterMode::kDown ? d : std::min(cap, d * (1.0 + config.jitter));
      return {low, high};
    }
    case BackoffStrategy::kFullJitter:
      return {0.0, d};
    case BackoffStrategy::kEqualJitter:
      return {d / 2.0, d};
    case BackoffStrategy::kDecorrelatedJitter: {
      const double base = static_cast<double>(config.base.count());
      const double last = static_cast<double>(previous.value_or(config.base).count());
      return {std::min(cap, base), std::min(cap, std::max(base, last * kDecorrelatedGrowth))};
    }
  }
  return {0.0, d};
}

// llround's result (half away from zero) without its library call: below 2^52 the fraction
// ms - trunc(ms) is exact, and above it every double is a whole number. Delays are finite and far
// below 2^63 ms.
milliseconds RoundMs(double ms) {
  auto whole = static_cast<std::int64_t>(ms);  // truncated toward zero
  const double fraction = ms - static_cast<double>(whole);
  if (fraction >= 0.5) ++whole;
  if (fraction <= -0.5) --whole;
  return milliseconds(whole);
}

}  // namespace

double Uniform01(RetryRng& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;  // 53 random bits -> [0, 1)
}

double StandardNormal(RetryRng& rng) {
  const double u1 = 1.0 - Uniform01(rng);  // in (0, 1]: log(u1) is finite
  const double u2 = Uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::string_view ToString(BackoffStrategy strategy) {
  return NameOf(kBackoffStrategyNames, strategy, "full-jitter");
}

std::optional<BackoffStrategy> ParseBackoffStrategy(std::string_view text) {
  return ValueOf(kBackoffStrategyNames, text);
}

std::string_view ToString(JitterMode mode) { return NameOf(kJitterModeNames, mode, "symmetric"); }

std::optional<JitterMode> ParseJitterMode(std::string_view text) {
  return ValueOf(kJitterModeNames, text);
}

BackoffBounds Bounds(const BackoffConfig& config, int retry_index,
                     std::optional<milliseconds> previous) {
  const Interval interval = IntervalFor(config, retry_index, previous);
  return {RoundMs(interval.lower_ms), RoundMs(interval.upper_ms)};
}

milliseconds SampleBackoff(const BackoffConfig& config, int retry_index, RetryRng& rng,
                           std::optional<milliseconds> previous) {
  const Interval interval = IntervalFor(config, retry_index, previous);
  const double u = Uniform01(rng);
  return RoundMs(interval.lower_ms + u * (interval.upper_ms - interval.lower_ms));
}

}  // namespace faultline::ref
