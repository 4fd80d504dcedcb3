#include "fleet/measures.h"

#include <algorithm>
#include <cmath>

namespace faultline::fleet {
namespace {

double Ratio(std::uint64_t a, std::uint64_t b) {
  return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
}

std::optional<double> RecoverySeconds(const PolicyMeasures& m) {
  if (!m.trigger_end_seconds) return std::nullopt;
  const double trigger = *m.trigger_end_seconds;
  const auto first = static_cast<std::size_t>(std::ceil(trigger / m.bucket_seconds));
  const auto horizon_buckets = static_cast<std::size_t>(m.horizon_seconds / m.bucket_seconds);
  const std::size_t last = std::min(m.series.size(), horizon_buckets);
  for (std::size_t b = first; b + kRecoveryBuckets <= last; ++b) {
    bool healthy = true;
    for (std::size_t i = b; i < b + kRecoveryBuckets && healthy; ++i) {
      const Bucket& bucket = m.series[i];
      healthy = static_cast<double>(bucket.succeeded) >=
                kRecoveredShare * static_cast<double>(bucket.offered);
    }
    if (healthy) return std::max(0.0, static_cast<double>(b) * m.bucket_seconds - trigger);
  }
  return std::nullopt;
}

}  // namespace

double LatencyHistogram::UpperEdgeMs(int index) {
  if (index < kExact) return static_cast<double>(index + 1) / 1000.0;
  const int exponent = (index - kExact) / kPerDoubling + 6;
  const int sub = (index - kExact) % kPerDoubling;
  return std::ldexp(static_cast<double>(kPerDoubling + sub + 1), exponent - 5) / 1000.0;
}

double LatencyHistogram::QuantileMs(double q) const {
  if (count_ == 0) return 0;
  const auto rank = std::max<std::uint64_t>(
      static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_))), 1);
  std::uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts_[static_cast<std::size_t>(i)];
    if (seen >= rank) return UpperEdgeMs(i);  // never less than the true value
  }
  return UpperEdgeMs(kBuckets - 1);
}

std::vector<std::pair<double, double>> LatencyHistogram::Cdf() const {
  std::vector<std::pair<double, double>> points;
  std::uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    const std::uint64_t n = counts_[static_cast<std::size_t>(i)];
    if (n == 0) continue;
    seen += n;
    points.emplace_back(UpperEdgeMs(i), Ratio(seen, count_));
  }
  return points;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
}

std::vector<std::pair<int, std::uint64_t>> LatencyHistogram::Occupied() const {
  std::vector<std::pair<int, std::uint64_t>> occupied;
  for (int i = 0; i < kBuckets; ++i) {
    if (counts_[static_cast<std::size_t>(i)] != 0) {
      occupied.emplace_back(i, counts_[static_cast<std::size_t>(i)]);
    }
  }
  return occupied;
}

void LatencyHistogram::AddToBucket(int index, std::uint64_t count) {
  counts_[static_cast<std::size_t>(std::clamp(index, 0, kBuckets - 1))] += count;
  count_ += count;
}

void Finish(PolicyMeasures& m) {
  m.amplification = Ratio(m.attempts, m.calls);
  m.load_amplification = Ratio(m.provider_requests, m.calls);
  for (LayerMeasures& layer : m.layers) layer.amplification = Ratio(layer.sent, layer.received);
  m.success_rate = Ratio(m.succeeded, m.calls);
  m.goodput = m.horizon_seconds > 0 ? static_cast<double>(m.succeeded) / m.horizon_seconds : 0;
  m.p50_ms = m.latency.QuantileMs(0.50);
  m.p95_ms = m.latency.QuantileMs(0.95);
  m.p99_ms = m.latency.QuantileMs(0.99);
  m.p999_ms = m.latency.QuantileMs(0.999);
  m.drain_seconds = std::nullopt;
  if (m.unfinished == 0) m.drain_seconds = std::max(0.0, m.end_seconds - m.horizon_seconds);
  m.recovery_seconds = RecoverySeconds(m);
  double busy = 0;
  const auto horizon_buckets = static_cast<std::size_t>(m.horizon_seconds / m.bucket_seconds);
  for (std::size_t i = 0; i < std::min(horizon_buckets, m.series.size()); ++i) {
    busy += m.series[i].busy_slot_seconds;
  }
  m.utilisation = m.concurrency > 0 && m.horizon_seconds > 0
                      ? std::min(1.0, busy / (m.concurrency * m.horizon_seconds))
                      : 0;
  m.wasted_tokens = m.wasted_requests * static_cast<std::uint64_t>(m.tokens_per_call);
  m.wasted_bytes = m.wasted_requests * static_cast<std::uint64_t>(m.bytes_per_call);
}

}  // namespace faultline::fleet
