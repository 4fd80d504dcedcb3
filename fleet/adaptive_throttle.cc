#include "fleet/adaptive_throttle.h"

#include <algorithm>

namespace faultline::fleet {

void AdaptiveThrottle::Advance(Micros now) {
  const std::int64_t second = now / 1'000'000;
  // At most one window's worth of seconds to clear, however long the gap.
  const std::int64_t steps = std::min<std::int64_t>(second - second_, kSeconds);
  for (std::int64_t i = 1; i <= steps; ++i) {
    const std::size_t index = static_cast<std::size_t>((second_ + i) % kSeconds);
    requests_total_ -= requests_[index];
    accepts_total_ -= accepts_[index];
    requests_[index] = 0;
    accepts_[index] = 0;
  }
  second_ = std::max(second_, second);
}

double AdaptiveThrottle::RejectProbability(Micros now) {
  Advance(now);
  const double requests = static_cast<double>(requests_total_);
  const double accepts = static_cast<double>(accepts_total_);
  return std::max(0.0, (requests - k_ * accepts) / (requests + 1.0));
}

bool AdaptiveThrottle::RejectLocally(Micros now, ref::RetryRng& rng) {
  const double p = RejectProbability(now);
  ++requests_[static_cast<std::size_t>(second_ % kSeconds)];
  ++requests_total_;
  return p > 0 && ref::Uniform01(rng) < p;
}

void AdaptiveThrottle::RecordAccept(Micros now) {
  Advance(now);
  ++accepts_[static_cast<std::size_t>(second_ % kSeconds)];
  ++accepts_total_;
}

}  // namespace faultline::fleet
