// Thresholds, as k6 has them: a bound on an aggregate of a latency or attempt metric over every
// run of one scenario in one world ("ttft.p99<2s", "attempts.max<=3"). They come from a
// scenario's `expect.thresholds` and from `faultline run --threshold`; the harness evaluates them
// (harness/judge/thresholds.h) and the reports show them beside the checks.
//
// This header owns the expression syntax: METRIC.AGGREGATION OP BOUND, blanks allowed around OP.
//   metrics       ttft (first token), total (alias latency: the terminal event), attempts,
//                 overhead (recovery overhead), wasted_bytes
//   aggregations  p50 p90 p95 p99 (any pN or p(N), 0 < N <= 100), med, avg, min, max, count
//   operators     < <= > >= ==
//   bound         time metrics: a duration ("2s", "1500ms") or a bare number of milliseconds;
//                 other metrics and count: a plain number
//
// Values only. Thread-safety: reentrant.
#pragma once

#include <expected>
#include <string>
#include <string_view>

namespace faultline::scenario {

enum class ThresholdMetric { kFirstToken, kTotal, kAttempts, kOverhead, kWastedBytes };
enum class ThresholdAggregation { kPercentile, kAvg, kMin, kMax, kCount };
enum class ThresholdOp { kLess, kLessEqual, kGreater, kGreaterEqual, kEqual };

struct Threshold {
  std::string text;  // as written, trimmed: what reports show
  ThresholdMetric metric = ThresholdMetric::kFirstToken;
  ThresholdAggregation aggregation = ThresholdAggregation::kPercentile;
  double percentile = 0;  // for kPercentile: 0 < percentile <= 100
  ThresholdOp op = ThresholdOp::kLess;
  double bound = 0;  // milliseconds for time metrics (not for count), else a plain number
  friend bool operator==(const Threshold&, const Threshold&) = default;
};

// Parses one expression. Errors say what was wrong and what is accepted.
std::expected<Threshold, std::string> ParseThreshold(std::string_view text);

// Whether the aggregate of `threshold` is a time in milliseconds (for display: "ms" or nothing).
bool IsTimeValued(const Threshold& threshold);

// Whether `value` satisfies the threshold's comparison with its bound.
bool Holds(const Threshold& threshold, double value);

std::string_view ToString(ThresholdOp op);  // "<", "<=", ...

}  // namespace faultline::scenario
