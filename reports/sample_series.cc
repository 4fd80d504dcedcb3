#include "reports/sample_series.h"

#include <algorithm>
#include <cmath>

namespace faultline::report {
namespace {

// The 0-based index of the nearest-rank sample of `count` sorted ones.
std::size_t NearestRankIndex(std::size_t count, double p) {
  const double rank = std::ceil(p / 100.0 * static_cast<double>(count));
  const std::size_t index = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return std::min(index, count - 1);
}

constexpr double kSketchGamma =
    (1 + SampleSeries::kSketchRelativeError) / (1 - SampleSeries::kSketchRelativeError);
const double kLogGamma = std::log(kSketchGamma);
// Magnitudes below this share key 0 with zero itself (a nanosecond, in milliseconds).
constexpr double kSmallestBucketed = 1e-6;
// Added to a bucket index so that every bucketed magnitude's key is above 0 (index of
// kSmallestBucketed: about -690; of the largest double: about 35,500).
constexpr std::int64_t kKeyOffset = std::int64_t{1} << 20;

}  // namespace

double NearestRankPercentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  const auto nth = values.begin() + static_cast<std::ptrdiff_t>(NearestRankIndex(values.size(), p));
  std::nth_element(values.begin(), nth, values.end());
  return *nth;
}

std::int64_t SampleSeries::KeyOf(double value) {
  const double magnitude = std::fabs(value);
  if (!(magnitude >= kSmallestBucketed)) return 0;  // and NaN
  const auto index = static_cast<std::int64_t>(std::ceil(std::log(magnitude) / kLogGamma));
  const std::int64_t key = std::max<std::int64_t>(index + kKeyOffset, 1);
  return value < 0 ? -key : key;
}

double SampleSeries::ValueOf(std::int64_t key) {
  if (key == 0) return 0;
  const auto index = static_cast<double>((key < 0 ? -key : key) - kKeyOffset);
  const double magnitude = 2 * std::exp(index * kLogGamma) / (kSketchGamma + 1);
  return key < 0 ? -magnitude : magnitude;
}

void SampleSeries::Add(double value) {
  min_ = count_ == 0 ? value : std::min(min_, value);
  max_ = count_ == 0 ? value : std::max(max_, value);
  sum_ += value;
  ++count_;
  if (exact() && exact_.size() < kExactSamples) {
    exact_.push_back(value);
    return;
  }
  // The first sample past the exact ones folds them all; the vector's memory goes with them
  // (`exact_ = {}` would assign an empty list and keep the 512 KiB buffer).
  for (const double kept : exact_) Fold(kept);
  std::vector<double>().swap(exact_);
  Fold(value);
}

void SampleSeries::Fold(double value) { ++buckets_[KeyOf(value)]; }

double SampleSeries::Percentile(double p) const {
  if (count_ == 0) return 0;
  if (exact()) return NearestRankPercentile(exact_, p);
  const std::size_t index = NearestRankIndex(count_, p);
  std::uint64_t seen = 0;
  for (const auto& [key, samples] : buckets_) {
    seen += samples;
    if (seen > index) return std::clamp(ValueOf(key), min_, max_);
  }
  return max_;
}

}  // namespace faultline::report
