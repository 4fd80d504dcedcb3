#include "reference_impl/backoff.h"

#include <gtest/gtest.h>

#include <vector>

namespace faultline::ref {
namespace {

using std::chrono::milliseconds;

BackoffConfig Config(BackoffStrategy strategy, double jitter = 0.25) {
  BackoffConfig config;
  config.strategy = strategy;
  config.base = milliseconds(500);
  config.cap = milliseconds(8000);
  config.multiplier = 2.0;
  config.jitter = jitter;
  return config;
}

constexpr std::array<BackoffStrategy, 4> kStrategies{
    BackoffStrategy::kExponential, BackoffStrategy::kFullJitter, BackoffStrategy::kEqualJitter,
    BackoffStrategy::kDecorrelatedJitter};

void ExpectBounds(const BackoffConfig& config, int index, std::optional<milliseconds> previous,
                  long lower, long upper) {
  const BackoffBounds bounds = Bounds(config, index, previous);
  EXPECT_EQ(bounds.lower, milliseconds(lower)) << ToString(config.strategy) << " n=" << index;
  EXPECT_EQ(bounds.upper, milliseconds(upper)) << ToString(config.strategy) << " n=" << index;
}

TEST(BackoffBoundsTest, ExponentialWithSymmetricJitter) {
  const BackoffConfig config = Config(BackoffStrategy::kExponential);
  ExpectBounds(config, 0, std::nullopt, 375, 625);
  ExpectBounds(config, 2, std::nullopt, 1500, 2500);
  ExpectBounds(config, 4, std::nullopt, 6000, 8000);  // 8000 * 1.25 clamped to the cap
  ExpectBounds(config, 9, std::nullopt, 6000, 8000);
  ExpectBounds(Config(BackoffStrategy::kExponential, 0.0), 3, std::nullopt, 4000, 4000);
  ExpectBounds(Config(BackoffStrategy::kExponential, 1.0), 1, std::nullopt, 0, 2000);
}

TEST(BackoffBoundsTest, FullEqualAndDecorrelated) {
  ExpectBounds(Config(BackoffStrategy::kFullJitter), 0, std::nullopt, 0, 500);
  ExpectBounds(Config(BackoffStrategy::kFullJitter), 3, std::nullopt, 0, 4000);
  ExpectBounds(Config(BackoffStrategy::kFullJitter), 30, std::nullopt, 0, 8000);
  ExpectBounds(Config(BackoffStrategy::kEqualJitter), 0, std::nullopt, 250, 500);
  ExpectBounds(Config(BackoffStrategy::kEqualJitter), 6, std::nullopt, 4000, 8000);
  const BackoffConfig decorrelated = Config(BackoffStrategy::kDecorrelatedJitter);
  ExpectBounds(decorrelated, 0, std::nullopt, 500, 1500);
  ExpectBounds(decorrelated, 1, milliseconds(1000), 500, 3000);
  ExpectBounds(decorrelated, 1, milliseconds(4000), 500, 8000);  // 12000 capped
  ExpectBounds(decorrelated, 1, milliseconds(100), 500, 500);    // never below base
}

TEST(BackoffBoundsTest, HugeRetryIndexStaysAtTheCap) {
  for (BackoffStrategy strategy : kStrategies) {
    const BackoffBounds bounds = Bounds(Config(strategy), 100'000, milliseconds(8000));
    EXPECT_LE(bounds.upper, milliseconds(8000)) << ToString(strategy);
    EXPECT_GE(bounds.lower, milliseconds(0)) << ToString(strategy);
  }
  BackoffConfig huge = Config(BackoffStrategy::kFullJitter);
  huge.multiplier = 1e300;
  EXPECT_EQ(Bounds(huge, 5).upper, milliseconds(8000));
}

TEST(BackoffSampleTest, EverySampleWithinBoundsOverManySeeds) {
  for (BackoffStrategy strategy : kStrategies) {
    const BackoffConfig config = Config(strategy);
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
      RetryRng rng(seed);
      std::optional<milliseconds> previous;
      for (int index = 0; index < 12; ++index) {
        const BackoffBounds bounds = Bounds(config, index, previous);
        const milliseconds sample = SampleBackoff(config, index, rng, previous);
        ASSERT_GE(sample, bounds.lower) << ToString(strategy) << " seed " << seed << " n " << index;
        ASSERT_LE(sample, bounds.upper) << ToString(strategy) << " seed " << seed << " n " << index;
        ASSERT_LE(sample, config.cap);
        previous = sample;
      }
    }
  }
}

double MeanMs(const BackoffConfig& config, int index, std::optional<milliseconds> previous,
              int samples = 20'000) {
  RetryRng rng(42);
  double total = 0;
  for (int i = 0; i < samples; ++i) {
    total += static_cast<double>(SampleBackoff(config, index, rng, previous).count());
  }
  return total / samples;
}

TEST(BackoffSampleTest, DistributionsHaveTheExpectedMeans) {
  // Full jitter: half the capped exponential. At n=3, d = 4000; at n=8, d = cap = 8000.
  EXPECT_NEAR(MeanMs(Config(BackoffStrategy::kFullJitter), 3, std::nullopt), 2000, 40);
  EXPECT_NEAR(MeanMs(Config(BackoffStrategy::kFullJitter), 8, std::nullopt), 4000, 80);
  // Equal jitter: three quarters of it.
  EXPECT_NEAR(MeanMs(Config(BackoffStrategy::kEqualJitter), 3, std::nullopt), 3000, 30);
  // Symmetric jitter: centred on d when the cap does not clip.
  EXPECT_NEAR(MeanMs(Config(BackoffStrategy::kExponential), 2, std::nullopt), 2000, 20);
  // Decorrelated: uniform in [base, 3 * previous].
  EXPECT_NEAR(MeanMs(Config(BackoffStrategy::kDecorrelatedJitter), 1, milliseconds(2000)), 3250,
              60);
}

TEST(BackoffSampleTest, FullJitterSpreadsOverTheWholeRange) {
  // A fleet must not bunch up: each quarter of [0, d] gets about a quarter of the samples.
  const BackoffConfig config = Config(BackoffStrategy::kFullJitter);
  RetryRng rng(7);
  std::array<int, 4> quarters{};
  constexpr int kSamples = 20'000;
  for (int i = 0; i < kSamples; ++i) {
    const auto ms = SampleBackoff(config, 3, rng).count();  // d = 4000
    ++quarters[static_cast<std::size_t>(std::min<long>(ms / 1000, 3))];
  }
  for (int count : quarters) EXPECT_NEAR(count, kSamples / 4, kSamples / 50);
}

TEST(BackoffSampleTest, SameSeedSameDelays) {
  for (BackoffStrategy strategy : kStrategies) {
    RetryRng a(1234);
    RetryRng b(1234);
    RetryRng c(1235);
    std::vector<milliseconds> from_a, from_b, from_c;
    for (int index = 0; index < 8; ++index) {
      from_a.push_back(SampleBackoff(Config(strategy), index, a));
      from_b.push_back(SampleBackoff(Config(strategy), index, b));
      from_c.push_back(SampleBackoff(Config(strategy), index, c));
    }
    EXPECT_EQ(from_a, from_b) << ToString(strategy);
    EXPECT_NE(from_a, from_c) << ToString(strategy);
  }
}

TEST(BackoffSampleTest, Uniform01IsHalfOpen) {
  RetryRng rng(99);
  double low = 1.0;
  double high = 0.0;
  for (int i = 0; i < 100'000; ++i) {
    const double u = Uniform01(rng);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    low = std::min(low, u);
    high = std::max(high, u);
  }
  EXPECT_LT(low, 0.001);
  EXPECT_GT(high, 0.999);
}

TEST(BackoffStrategyTest, NamesRoundTrip) {
  for (BackoffStrategy strategy : kStrategies) {
    EXPECT_EQ(ParseBackoffStrategy(ToString(strategy)), strategy);
  }
  EXPECT_EQ(ToString(BackoffStrategy::kDecorrelatedJitter), "decorrelated-jitter");
  EXPECT_EQ(ParseBackoffStrategy("full_jitter"), std::nullopt);
}

}  // namespace
}  // namespace faultline::ref
