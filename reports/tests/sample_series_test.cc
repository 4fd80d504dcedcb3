// SampleSeries: exact nearest-rank percentiles up to kExactSamples samples, and within
// kSketchRelativeError of them beyond, with count, sum, min and max exact throughout.
#include "reports/sample_series.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace faultline::report {
namespace {

TEST(SampleSeries, EmptyGivesZeros) {
  const SampleSeries series;
  EXPECT_TRUE(series.empty());
  EXPECT_TRUE(series.exact());
  EXPECT_EQ(series.Percentile(99), 0);
  EXPECT_EQ(series.min(), 0);
  EXPECT_EQ(series.max(), 0);
}

TEST(SampleSeries, ExactUpToItsLimitAsNearestRankPercentile) {
  std::mt19937_64 random(7);
  std::lognormal_distribution<double> latency(5, 1.5);
  SampleSeries series;
  std::vector<double> all;
  double sum = 0;
  for (std::size_t i = 0; i < SampleSeries::kExactSamples; ++i) {
    const double value = std::round(latency(random) * 10) / 10;
    series.Add(value);
    all.push_back(value);
    sum += value;
  }
  ASSERT_TRUE(series.exact());
  for (const double p : {1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0}) {
    EXPECT_EQ(series.Percentile(p), NearestRankPercentile(all, p)) << "p" << p;
  }
  EXPECT_EQ(series.count(), all.size());
  EXPECT_EQ(series.sum(), sum) << "summed in the order the samples came";
  EXPECT_EQ(series.min(), std::ranges::min(all));
  EXPECT_EQ(series.max(), std::ranges::max(all));
}

TEST(SampleSeries, BeyondItsLimitWithinTheStatedRelativeError) {
  std::mt19937_64 random(11);
  std::lognormal_distribution<double> latency(6, 2);
  std::uniform_real_distribution<double> overhead(-50, 50);  // recovery overhead may be < 0
  for (const bool signed_values : {false, true}) {
    SampleSeries series;
    std::vector<double> all;
    for (std::size_t i = 0; i < 3 * SampleSeries::kExactSamples; ++i) {
      const double value = signed_values ? overhead(random) : latency(random);
      series.Add(value);
      all.push_back(value);
    }
    ASSERT_FALSE(series.exact());
    EXPECT_EQ(series.count(), all.size());
    EXPECT_EQ(series.min(), std::ranges::min(all));
    EXPECT_EQ(series.max(), std::ranges::max(all));
    for (const double p : {1.0, 25.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0}) {
      const double exact = NearestRankPercentile(all, p);
      EXPECT_NEAR(series.Percentile(p), exact,
                  std::fabs(exact) * SampleSeries::kSketchRelativeError + 1e-6)
          << "p" << p << (signed_values ? " of signed values" : "");
    }
  }
}

TEST(SampleSeries, ZerosAndRepeatedValuesFoldExactly) {
  SampleSeries series;
  for (std::size_t i = 0; i <= SampleSeries::kExactSamples; ++i) series.Add(i % 2 == 0 ? 0 : 120);
  ASSERT_FALSE(series.exact());
  EXPECT_EQ(series.Percentile(50), 0);
  EXPECT_NEAR(series.Percentile(99), 120, 120 * SampleSeries::kSketchRelativeError);
  EXPECT_EQ(series.Percentile(100), 120) << "clamped to the exact max";
}

}  // namespace
}  // namespace faultline::report
