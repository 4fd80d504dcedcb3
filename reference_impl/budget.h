// A retry budget shared by concurrent calls: a token bucket that stops retry storms.
//
// Each retry withdraws `retry_cost` tokens and is refused when fewer are left; each successful
// call refunds `success_refund` tokens, up to `capacity`. The bucket starts full. With the defaults
// (capacity 10, cost 1, refund 0.1) a fleet may retry at most about one call in ten once the
// initial ten tokens are gone: while the provider is healthy the bucket stays full, and during an
// outage retries stop after ten instead of multiplying the load (the design of gRPC's retry
// throttling and the AWS SDKs' retry quota). First attempts never need a token.
//
// Two optional knobs give gRPC's retry throttling (gRFC A6) exactly: `failure_cost` tokens are
// taken by every failed attempt (RecordFailure, which Decide() calls once per failed attempt),
// and retries are refused while the bucket holds `retry_threshold` tokens or fewer. gRPC's
// {max_tokens: 10, token_ratio: 0.1} is capacity 10, retry_cost 0, success_refund 0.1,
// failure_cost 1, retry_threshold 5: retrying stops once failures outnumber ten times the
// successes, i.e. a failure rate above about 1/11.
//
// Ownership: one RetryBudget per policy, shared (e.g. through std::shared_ptr) by every call that
// uses the policy. Thread-safety: all members are safe to call concurrently.
#pragma once

#include <cstdint>
#include <mutex>

namespace faultline::ref {

struct BudgetConfig {
  double capacity = 10.0;       // > 0: the most tokens the bucket holds (and its initial fill)
  double retry_cost = 1.0;      // >= 0, <= capacity: tokens one retry takes
  double success_refund = 0.1;  // >= 0: tokens a successful call gives back
  double failure_cost = 0.0;    // >= 0, <= capacity: tokens every failed attempt takes
  // >= 0, < capacity: retries are refused while tokens <= this (0: only `retry_cost` limits them)
  double retry_threshold = 0.0;
  friend bool operator==(const BudgetConfig&, const BudgetConfig&) = default;
};

class RetryBudget {
 public:
  explicit RetryBudget(const BudgetConfig& config);
  RetryBudget(const RetryBudget&) = delete;
  RetryBudget& operator=(const RetryBudget&) = delete;

  // Takes `retry_cost` tokens and returns true, or returns false (and takes nothing) when the
  // bucket holds less than that.
  bool TryWithdraw();

  // A call succeeded: refunds `success_refund`, never above capacity.
  void RecordSuccess();

  // An attempt failed: takes `failure_cost` tokens, never below zero.
  void RecordFailure();

  double tokens() const;
  std::uint64_t withdrawals() const;  // retries allowed so far
  std::uint64_t refusals() const;     // retries refused so far
  const BudgetConfig& config() const { return config_; }

 private:
  const BudgetConfig config_;
  mutable std::mutex mutex_;
  double tokens_;                  // guarded by mutex_
  std::uint64_t withdrawals_ = 0;  // guarded by mutex_
  std::uint64_t refusals_ = 0;     // guarded by mutex_
};

}  // namespace faultline::ref
