#include "scenarios/threshold.h"

#include <gtest/gtest.h>

#include <string>

#include "load_error_cases.h"
#include "scenarios/loader.h"

namespace faultline::scenario {
namespace {

TEST(ThresholdTest, ParsesMetricAggregationOperatorAndBound) {
  auto threshold = ParseThreshold(" ttft.p99 < 2s ");
  ASSERT_TRUE(threshold.has_value()) << threshold.error();
  EXPECT_EQ(threshold->text, "ttft.p99 < 2s");
  EXPECT_EQ(threshold->metric, ThresholdMetric::kFirstToken);
  EXPECT_EQ(threshold->aggregation, ThresholdAggregation::kPercentile);
  EXPECT_EQ(threshold->percentile, 99);
  EXPECT_EQ(threshold->op, ThresholdOp::kLess);
  EXPECT_EQ(threshold->bound, 2000);
}

TEST(ThresholdTest, ReadsEveryAggregationAndOperator) {
  struct Case {
    std::string text;
    ThresholdMetric metric;
    ThresholdAggregation aggregation;
    double percentile;
    ThresholdOp op;
    double bound;
  };
  const Case cases[] = {
      {"latency.p(99.9)<=1500ms", ThresholdMetric::kTotal, ThresholdAggregation::kPercentile, 99.9,
       ThresholdOp::kLessEqual, 1500},
      {"total.med>250", ThresholdMetric::kTotal, ThresholdAggregation::kPercentile, 50,
       ThresholdOp::kGreater, 250},
      {"attempts.max<=3", ThresholdMetric::kAttempts, ThresholdAggregation::kMax, 0,
       ThresholdOp::kLessEqual, 3},
      {"overhead.avg>=1m", ThresholdMetric::kOverhead, ThresholdAggregation::kAvg, 0,
       ThresholdOp::kGreaterEqual, 60000},
      {"wasted_bytes.min==0", ThresholdMetric::kWastedBytes, ThresholdAggregation::kMin, 0,
       ThresholdOp::kEqual, 0},
      {"ttft.count>=10", ThresholdMetric::kFirstToken, ThresholdAggregation::kCount, 0,
       ThresholdOp::kGreaterEqual, 10},
  };
  for (const Case& expected : cases) {
    SCOPED_TRACE(expected.text);
    auto threshold = ParseThreshold(expected.text);
    ASSERT_TRUE(threshold.has_value()) << threshold.error();
    EXPECT_EQ(threshold->metric, expected.metric);
    EXPECT_EQ(threshold->aggregation, expected.aggregation);
    EXPECT_EQ(threshold->percentile, expected.percentile);
    EXPECT_EQ(threshold->op, expected.op);
    EXPECT_EQ(threshold->bound, expected.bound);
  }
}

TEST(ThresholdTest, BadExpressionsSayWhatIsWrong) {
  const std::pair<std::string, std::string> cases[] = {
      {"",
       "empty threshold: expected METRIC.AGGREGATION OP BOUND, such as ttft.p99<2s or "
       "attempts.max<=3"},
      {"ttft.p99",
       "'ttft.p99' has no comparison: expected METRIC.AGGREGATION OP BOUND, such as "
       "ttft.p99<2s or attempts.max<=3"},
      {"ttfb.p99<2s",
       "unknown metric 'ttfb' (ttft, total, latency, attempts, overhead, "
       "wasted_bytes)"},
      {"ttft<2s", "'ttft' has no aggregation: write it as METRIC.AGGREGATION (ttft.p99)"},
      {"ttft.p0<2s",
       "unknown aggregation 'p0' (p50, p90, p95, p99, pN or p(N) with 0 < N <= "
       "100, med, avg, min, max, count)"},
      {"ttft.p99=<2s", "'ttft.p99=<2s': unknown comparison (<, <=, >, >=, ==)"},
      {"ttft.p99<", "missing the bound after the operator"},
      {"ttft.p99<2x",
       "bad bound '2x': unknown unit \"x\" (use us, ms, s, m or h); a time's bound is a duration "
       "such as 2s or a number of milliseconds"},
      {"attempts.max<3s", "bad bound '3s': expected a plain number (this aggregate is not a time)"},
      {"ttft.count<2s", "bad bound '2s': expected a plain number (this aggregate is not a time)"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    auto threshold = ParseThreshold(text);
    ASSERT_FALSE(threshold.has_value());
    EXPECT_EQ(threshold.error(), message);
  }
}

TEST(ThresholdTest, HoldsComparesWithTheBound) {
  const Threshold below = *ParseThreshold("ttft.p99<2s");
  EXPECT_TRUE(Holds(below, 1999.9));
  EXPECT_FALSE(Holds(below, 2000));
  const Threshold at_most = *ParseThreshold("attempts.max<=3");
  EXPECT_TRUE(Holds(at_most, 3));
  EXPECT_FALSE(Holds(at_most, 4));
  EXPECT_TRUE(Holds(*ParseThreshold("ttft.count>=1"), 1));
  EXPECT_TRUE(IsTimeValued(below));
  EXPECT_FALSE(IsTimeValued(at_most));
  EXPECT_FALSE(IsTimeValued(*ParseThreshold("ttft.count>=1")));
}

constexpr std::string_view kHeader =
    "faultline: 1\nname: t/thresholds\ndescription: d\ndialect: openai-chat\n"
    "responses:\n  - stream: {text: hi}\n";

TEST(ThresholdLoaderTest, ExpectThresholdsLoad) {
  const std::string text =
      std::string(kHeader) + "expect:\n  thresholds: [\"ttft.p99<2s\", \"attempts.max<=1\"]\n";
  auto scenario = ParseScenario(text, "t.yaml");
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  ASSERT_EQ(scenario->expect.thresholds.size(), 2u);
  EXPECT_EQ(scenario->expect.thresholds[0].text, "ttft.p99<2s");
  EXPECT_EQ(scenario->expect.thresholds[1].metric, ThresholdMetric::kAttempts);
}

TEST(ThresholdLoaderTest, ABadThresholdIsAnErrorAtItsItem) {
  ExpectErrors({
      {"bad metric",
       std::string(kHeader) + "expect:\n  thresholds:\n    - ttft.p99<2s\n"
                              "    - ttfb.p99<2s\n",
       10, 7, "expect.thresholds[1]",
       "bad threshold: unknown metric 'ttfb' (ttft, total, latency, attempts, overhead, "
       "wasted_bytes)"},
      {"not a list", std::string(kHeader) + "expect:\n  thresholds: ttft.p99<2s\n", 8, 15,
       "expect.thresholds", "expected a list, got the string \"ttft.p99<2s\""},
  });
}

}  // namespace
}  // namespace faultline::scenario
