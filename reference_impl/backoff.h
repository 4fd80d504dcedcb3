// Local backoff: how long to wait before retry number n when the server gave no (usable) hint.
//
// Strategies, as defined in the AWS Architecture Blog "Exponential Backoff And Jitter" (2015),
// with d(n) = min(cap, base * multiplier^n) for the 0-based retry index n:
//   exponential   d(n) scaled by a jitter factor j, by `jitter_mode`:
//                   symmetric  uniform in [d(1-j), min(cap, d(1+j))]   (j = 0: no jitter)
//                   down       uniform in [d(1-j), d]   (the openai/anthropic SDKs:
//                              d * (1 - 0.25 * random))
//                   up         uniform in [d, min(cap, d(1+j))]   (p-retry's `randomize`:
//                              d * (1 + random), j = 1)
//   full-jitter   uniform in [0, d(n)]
//   equal-jitter  d(n)/2 + uniform in [0, d(n)/2]
//   decorrelated  min(cap, uniform in [base, 3 * previous]), previous = the last delay actually
//                 slept (base before the first retry). The blog's factor 3 is fixed; `multiplier`
//                 is not used by this strategy.
// Randomness comes only from the injected RNG, turned into doubles by our own bit arithmetic
// (std::uniform_real_distribution differs between standard libraries), so a seed reproduces
// the same delays everywhere.
//
// Pure functions; the RNG is the caller's (not shared between threads without a lock).
#pragma once

#include <chrono>
#include <optional>
#include <random>
#include <string_view>

#include "reference_impl/name_table.h"

namespace faultline::ref {

// The RNG every randomised decision takes; seed it to reproduce a run.
using RetryRng = std::mt19937_64;

// Uniform in [0, 1), from the top 53 bits of one draw.
double Uniform01(RetryRng& rng);

// A standard normal draw (Box-Muller from two Uniform01 draws, so it is the same on every
// standard library, whose std::normal_distribution differ).
double StandardNormal(RetryRng& rng);

enum class BackoffStrategy { kExponential, kFullJitter, kEqualJitter, kDecorrelatedJitter };
inline constexpr NameTable<BackoffStrategy, 4> kBackoffStrategyNames{{
    {BackoffStrategy::kExponential, "exponential"},
    {BackoffStrategy::kFullJitter, "full-jitter"},
    {BackoffStrategy::kEqualJitter, "equal-jitter"},
    {BackoffStrategy::kDecorrelatedJitter, "decorrelated-jitter"},
}};
std::string_view ToString(BackoffStrategy strategy);
std::optional<BackoffStrategy> ParseBackoffStrategy(std::string_view text);

enum class JitterMode { kSymmetric, kDown, kUp };
inline constexpr NameTable<JitterMode, 3> kJitterModeNames{{
    {JitterMode::kSymmetric, "symmetric"},
    {JitterMode::kDown, "down"},
    {JitterMode::kUp, "up"},
}};
std::string_view ToString(JitterMode mode);
std::optional<JitterMode> ParseJitterMode(std::string_view text);

struct BackoffConfig {
  BackoffStrategy strategy = BackoffStrategy::kFullJitter;
  std::chrono::milliseconds base{500};              // > 0
  std::chrono::milliseconds cap{8000};              // >= base
  double multiplier = 2.0;                          // >= 1
  double jitter = 0.25;                             // ratio for kExponential, 0..1
  JitterMode jitter_mode = JitterMode::kSymmetric;  // kExponential only
  friend bool operator==(const BackoffConfig&, const BackoffConfig&) = default;
};

// The closed interval every sample lies in.
struct BackoffBounds {
  std::chrono::milliseconds lower{0};
  std::chrono::milliseconds upper{0};
};

// `retry_index` is 0 for the first retry. `previous` is the last delay slept (decorrelated only;
// nullopt before the first retry).
BackoffBounds Bounds(const BackoffConfig& config, int retry_index,
                     std::optional<std::chrono::milliseconds> previous = std::nullopt);

std::chrono::milliseconds SampleBackoff(
    const BackoffConfig& config, int retry_index, RetryRng& rng,
    std::optional<std::chrono::milliseconds> previous = std::nullopt);

}  // namespace faultline::ref
