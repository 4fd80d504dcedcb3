#include "fleet/finagle_budget.h"

#include <algorithm>
#include <numeric>

namespace faultline::fleet {

FinagleRetryBudget::FinagleRetryBudget(const FinagleBudgetConfig& config, Micros start)
    // Without percentCanRetry, requests earn nothing and a retry costs 1: only the reserve.
    : deposit_(config.percent_can_retry == 0 ? 0 : kScaleFactor),
      withdrawal_(config.percent_can_retry == 0
                      ? 1
                      : static_cast<std::int64_t>(kScaleFactor / config.percent_can_retry)),
      reserve_(static_cast<std::int64_t>(config.min_retries_per_sec) * (config.ttl / 1'000'000) *
               withdrawal_),
      // WindowedAdder(range = ttl in ms, 10 slices): range / slices, in whole ms.
      window_((config.ttl / 1000 / kSlices) * 1000),
      old_(start) {}

// WindowedAdder.expired(): the current slice joins the old ones, and the slices a long silence
// skipped are emptied.
void FinagleRetryBudget::Expire(Micros now) {
  if (now - old_ < window_) return;
  constexpr std::size_t n = kSlices - 1;
  slices_[next_] = writer_;
  writer_ = 0;
  next_ = (next_ + 1) % n;
  const auto skip = static_cast<std::size_t>(
      std::clamp<Micros>((now - old_) / window_ - 1, 0, static_cast<Micros>(n)));
  for (std::size_t k = 0; k < skip; ++k) slices_[(next_ + k) % n] = 0;
  next_ = (next_ + skip) % n;
  old_ = now;
}

void FinagleRetryBudget::Add(Micros now, std::int64_t amount) {
  Expire(now);
  writer_ += amount;
}

std::int64_t FinagleRetryBudget::Count(Micros now) {
  Expire(now);
  return std::accumulate(slices_.begin(), slices_.end(), writer_) + reserve_;
}

void FinagleRetryBudget::Deposit(Micros now) { Add(now, deposit_); }

bool FinagleRetryBudget::TryWithdraw(Micros now) {
  if (Count(now) < withdrawal_) return false;
  Add(now, -withdrawal_);
  return true;
}

std::int64_t FinagleRetryBudget::Balance(Micros now) { return Count(now) / withdrawal_; }

}  // namespace faultline::fleet
