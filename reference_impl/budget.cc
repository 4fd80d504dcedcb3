#include "reference_impl/budget.h"

#include <algorithm>

namespace faultline::ref {

RetryBudget::RetryBudget(const BudgetConfig& config) : config_(config), tokens_(config.capacity) {}

bool RetryBudget::TryWithdraw() {
  std::lock_guard lock(mutex_);
  // A small epsilon so that ten refunds of 0.1 add up to one whole retry despite rounding.
  constexpr double kEpsilon = 1e-9;
  const bool below_threshold =
      config_.retry_threshold > 0 && tokens_ <= config_.retry_threshold + kEpsilon;
  if (below_threshold || tokens_ + kEpsilon < config_.retry_cost) {
    ++refusals_;
    return false;
  }
  tokens_ = std::max(0.0, tokens_ - config_.retry_cost);
  ++withdrawals_;
  return true;
}

void RetryBudget::RecordSuccess() {
  std::lock_guard lock(mutex_);
  tokens_ = std::min(config_.capacity, tokens_ + config_.success_refund);
}

void RetryBudget::RecordFailure() {
  if (config_.failure_cost <= 0) return;
  std::lock_guard lock(mutex_);
  tokens_ = std::max(0.0, tokens_ - config_.failure_cost);
}

double RetryBudget::tokens() const {
  std::lock_guard lock(mutex_);
  return tokens_;
}

std::uint64_t RetryBudget::withdrawals() const {
  std::lock_guard lock(mutex_);
  return withdrawals_;
}

std::uint64_t RetryBudget::refusals() const {
  std::lock_guard lock(mutex_);
  return refusals_;
}

}  // namespace faultline::ref
