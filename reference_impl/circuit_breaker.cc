#include "reference_impl/circuit_breaker.h"

#include <algorithm>

namespace faultline::ref {

CircuitBreaker::State CircuitBreaker::state(Time now) const {
  if (!open_until_) return State::kClosed;
  return now < *open_until_ ? State::kOpen : State::kHalfOpen;
}

std::optional<CircuitBreaker::Time> CircuitBreaker::reopens_at() const { return open_until_; }

bool CircuitBreaker::admits(Time now) const {
  switch (state(now)) {
    case State::kClosed:
      return true;
    case State::kOpen:
      return false;
    case State::kHalfOpen:
      return probes_in_flight_ < std::max(1, config_->half_open_probes);
  }
  return false;
}

bool CircuitBreaker::Allow(Time now) {
  if (!admits(now)) return false;
  if (state(now) == State::kHalfOpen) ++probes_in_flight_;
  return true;
}

void CircuitBreaker::Release() {
  if (probes_in_flight_ > 0) --probes_in_flight_;
}

void CircuitBreaker::RecordSuccess() {
  failures_ = 0;
  open_until_.reset();
  probes_in_flight_ = 0;
}

void CircuitBreaker::RecordFailure(Time now) {
  ++failures_;
  if (!config_) return;
  const bool probing = open_until_.has_value();
  if (probing || failures_ >= std::max(1, config_->threshold)) {
    open_until_ = now + config_->cooldown;
    probes_in_flight_ = 0;
  }
}

std::string_view ToString(CircuitBreaker::State state) {
  switch (state) {
    case CircuitBreaker::State::kClosed:
      return "closed";
    case CircuitBreaker::State::kOpen:
      return "open";
    case CircuitBreaker::State::kHalfOpen:
      return "half-open";
  }
  return "closed";
}

}  // namespace faultline::ref
