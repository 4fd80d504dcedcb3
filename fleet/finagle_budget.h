// Finagle's RetryBudget (finagle-core com/twitter/finagle/service/RetryBudget.scala: apply(ttl,
// minRetriesPerSec, percentCanRetry), TokenRetryBudget; over twitter/util's
// TokenBucket.newLeakyBucket and WindowedAdder), which a token bucket without time cannot give:
//
//   - every request deposits 1,000 (ScaleFactor) units; a retry withdraws 1,000 / percentCanRetry
//     (5,000 at the default 0.2), so about percentCanRetry of the recent requests may be retried;
//   - deposits and withdrawals EXPIRE after about `ttl`: they are summed over a WindowedAdder of
//     10 slices of ttl / 10 (the current slice and the 9 before it), slices anchored at the time
//     the last one expired, as the adder does;
//   - on top, a reserve of minRetriesPerSec x ttl retries per ttl: the balance is the window's sum
//     plus the reserve, and a retry is allowed while the balance covers it.
//
// The defaults are ttl 10 s, minRetriesPerSec 10, percentCanRetry 0.2. One budget per run,
// shared by the fleet's calls (as one Finagle client's filters share theirs). A sans-I/O core:
// time is passed in. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>

#include "fleet/event_queue.h"

namespace faultline::fleet {

struct FinagleBudgetConfig {
  Micros ttl = 10'000'000;  // 1 s .. 60 s
  int min_retries_per_sec = 10;
  double percent_can_retry = 0.2;  // 0 .. 1000
};

class FinagleRetryBudget {
 public:
  static constexpr int kScaleFactor = 1000;  // TokenRetryBudget.ScaleFactor
  static constexpr int kSlices = 10;         // newLeakyBucket's WindowedAdder(ttl, 10, ...)

  explicit FinagleRetryBudget(const FinagleBudgetConfig& config, Micros start = 0);

  // A request was issued at `now` (every logical call deposits once, retries do not).
  void Deposit(Micros now);
  // A retry at `now`: withdraws and returns true when the balance covers it.
  bool TryWithdraw(Micros now);
  // Retries allowed at `now` (RetryBudget.balance).
  std::int64_t Balance(Micros now);

 private:
  std::int64_t Count(Micros now);  // TokenBucket.count: the window's sum plus the reserve
  void Add(Micros now, std::int64_t amount);
  void Expire(Micros now);

  std::int64_t deposit_;
  std::int64_t withdrawal_;
  std::int64_t reserve_;
  Micros window_;  // one slice
  // WindowedAdder: the current slice (`writer_`, since `old_`) and the kSlices - 1 before it.
  std::int64_t writer_ = 0;
  std::array<std::int64_t, kSlices - 1> slices_{};
  std::size_t next_ = 0;  // where the current slice goes when it expires
  Micros old_;
};

}  // namespace faultline::fleet
