#include "fleet/client_rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace faultline::fleet {
namespace {

double Seconds(Micros t) { return static_cast<double>(t) * 1e-6; }

}  // namespace

ClientRateLimiter::ClientRateLimiter(Micros start)
    : last_fail_s_(Seconds(start)),
      refilled_s_(Seconds(start)),
      // RateClocker starts its steps at the whole second (math.floor of the clock).
      rate_step_s_(std::floor(Seconds(start))) {}

void ClientRateLimiter::Refill(double now_s) {
  capacity_ = std::min(max_capacity_, capacity_ + (now_s - refilled_s_) * fill_rate_);
  refilled_s_ = now_s;
}

// TokenBucket.max_rate's setter: tokens earned so far at the old rate first, then the new rate.
void ClientRateLimiter::SetMaxRate(double rate, double now_s) {
  Refill(now_s);
  fill_rate_ = std::max(rate, kMinRate);
  max_capacity_ = std::max(rate, 1.0);
  capacity_ = std::min(capacity_, max_capacity_);
}

double ClientRateLimiter::MeasureRate(double now_s) {
  const double step = std::floor(now_s / kRateStep) * kRateStep;
  rate_count_ += 1;
  if (step > rate_step_s_) {
    const double current = rate_count_ / (step - rate_step_s_);
    measured_rate_ = current * kSmoothing + measured_rate_ * (1 - kSmoothing);
    rate_count_ = 0;
    rate_step_s_ = step;
  }
  return measured_rate_;
}

bool ClientRateLimiter::TryAcquire(Micros now) {
  if (!enabled_) return true;
  Refill(Seconds(now));
  if (capacity_ < 1) return false;
  capacity_ -= 1;
  return true;
}

Micros ClientRateLimiter::NextTokenAt(Micros now) {
  if (!enabled_) return now;
  Refill(Seconds(now));
  if (capacity_ >= 1) return now;
  // Rounded up, so that the bucket holds the whole token at the time returned.
  return now + static_cast<Micros>(std::ceil((1 - capacity_) / fill_rate_ * 1e6));
}

void ClientRateLimiter::OnResponse(Micros now, bool throttling) {
  const double now_s = Seconds(now);
  const double measured = MeasureRate(now_s);
  double rate = 0;
  if (!throttling) {
    const double dt = now_s - last_fail_s_ - k_;
    rate = kScale * dt * dt * dt + w_max_;
  } else {
    w_max_ = enabled_ ? std::min(measured, fill_rate_) : measured;
    k_ = std::cbrt(w_max_ * (1 - kBeta) / kScale);
    last_fail_s_ = now_s;
    rate = w_max_ * kBeta;
    enabled_ = true;
  }
  SetMaxRate(std::min(rate, kMaxRateAdjustScale * measured), now_s);
}

}  // namespace faultline::fleet
