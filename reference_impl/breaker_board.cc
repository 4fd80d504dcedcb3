#include "reference_impl/breaker_board.h"

namespace faultline::ref {

CircuitBreaker& BreakerBoard::At(std::string_view route) const {
  auto found = breakers_.find(route);
  if (found == breakers_.end()) {
    found = breakers_.emplace(std::string(route), CircuitBreaker(config_)).first;
  }
  return found->second;
}

bool BreakerBoard::Admits(std::string_view route, Time now) const {
  std::lock_guard lock(mutex_);
  return At(route).admits(now);
}

BreakerBoard::Time BreakerBoard::ReadyAt(std::string_view route, Time now) const {
  std::lock_guard lock(mutex_);
  const CircuitBreaker& breaker = At(route);
  if (breaker.admits(now)) return now;
  if (breaker.state(now) == CircuitBreaker::State::kOpen && breaker.reopens_at()) {
    return *breaker.reopens_at();
  }
  return now + config_->cooldown;  // half-open, its probes out: look again after a cooldown
}

bool BreakerBoard::Begin(std::string_view route, Time now) {
  std::lock_guard lock(mutex_);
  return At(route).Allow(now);
}

void BreakerBoard::RecordFailure(std::string_view route, Time now) {
  std::lock_guard lock(mutex_);
  At(route).RecordFailure(now);
}

void BreakerBoard::RecordSuccess(std::string_view route) {
  std::lock_guard lock(mutex_);
  At(route).RecordSuccess();
}

void BreakerBoard::Release(std::string_view route) {
  std::lock_guard lock(mutex_);
  At(route).Release();
}

CircuitBreaker::State BreakerBoard::state(std::string_view route, Time now) const {
  std::lock_guard lock(mutex_);
  return At(route).state(now);
}

int BreakerBoard::consecutive_failures(std::string_view route) const {
  std::lock_guard lock(mutex_);
  return At(route).consecutive_failures();
}

}  // namespace faultline::ref
