// One metric's samples (a scenario's terminal times over every run, say), summarised in bounded
// memory: count, sum, min, max and nearest-rank percentiles. The one home of the percentiles that
// latency summaries (run_result.h's Summarize), thresholds (harness/judge/thresholds.h) and the
// reports' medians give, so that a run of any length aggregates every sample.
//
// Exact up to kExactSamples samples: every sample is kept and a percentile is the nearest-rank
// one over all of them, as NearestRankPercentile gives it, so a percentile (and a threshold's
// verdict) never differs from the exact one below that count. Beyond it the samples fold into a
// log-bucket histogram (DDSketch: Masson, Rim and Lee, VLDB 2019): bucket i holds the samples in
// (g^(i-1), g^i] with g = (1 + a) / (1 - a) and answers 2 g^i / (g + 1), within a of every
// sample in it. A percentile is then the nearest-rank sample's value within kSketchRelativeError
// (a = 1 %) of it, clamped to the exact min and max. Count, sum (in the order the samples came),
// min and max stay exact. The histogram holds one bucket per occupied 2 % band of values: a few
// hundred for times from a microsecond to an hour, whatever the count.
//
// Values only. Thread-safety: values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace faultline::report {

// The nearest-rank percentile (0 < p <= 100) of `values`: the ceil(p/100 * n)-th smallest; 0 for
// an empty input.
double NearestRankPercentile(std::vector<double> values, double p);

class SampleSeries {
 public:
  // Samples kept exactly; the next one folds them all into the histogram.
  static constexpr std::size_t kExactSamples = 65536;
  // The most a percentile of a folded series is off, relative to the exact value.
  static constexpr double kSketchRelativeError = 0.01;

  void Add(double value);

  std::size_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Whether percentiles are exact (no more than kExactSamples samples were added).
  bool exact() const { return buckets_.empty(); }
  double sum() const { return sum_; }  // 0 when empty
  double min() const { return min_; }  // 0 when empty
  double max() const { return max_; }  // 0 when empty
  // The nearest-rank percentile (0 < p <= 100); 0 when empty.
  double Percentile(double p) const;

 private:
  void Fold(double value);  // into the histogram
  static std::int64_t KeyOf(double value);
  static double ValueOf(std::int64_t key);

  std::size_t count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
  std::vector<double> exact_;  // every sample while exact()
  // The histogram, once folded: key -> samples, the keys ordered as their values are (KeyOf:
  // positive samples above 0, negative ones mirrored below it, and 0 for a sample too near zero
  // for a bucket of its own).
  std::map<std::int64_t, std::uint64_t> buckets_;
};

}  // namespace faultline::report
