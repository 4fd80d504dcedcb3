#include "harness/worlds/scheduling_probe.h"

#include <algorithm>
#include <condition_variable>

namespace faultline::harness {

void LatenessSeries::Record(Clock::time_point due, Clock::time_point woke) {
  const auto late = std::chrono::duration_cast<std::chrono::microseconds>(woke - due);
  samples_.push_back({due, std::max(late, std::chrono::microseconds{0})});
  while (samples_.size() > capacity_) samples_.pop_front();
}

std::chrono::microseconds LatenessSeries::WorstBetween(Clock::time_point from,
                                                       Clock::time_point to) const {
  const auto first = std::ranges::lower_bound(samples_, from, {}, &Sample::due);
  std::chrono::microseconds worst{0};
  for (auto it = first; it != samples_.end() && it->due <= to; ++it)
    worst = std::max(worst, it->late);
  return worst;
}

SchedulingProbe::SchedulingProbe(std::chrono::milliseconds period, std::chrono::minutes history)
    : period_(period),
      series_(static_cast<std::size_t>(history / std::max(period, std::chrono::milliseconds(1)))),
      thread_([this](std::stop_token stop) { Loop(std::move(stop)); }) {}

SchedulingProbe::~SchedulingProbe() {
  thread_.request_stop();
  thread_.join();
}

std::chrono::microseconds SchedulingProbe::WorstBetween(Clock::time_point from,
                                                        Clock::time_point to) const {
  std::lock_guard lock(mu_);
  return series_.WorstBetween(from, to);
}

void SchedulingProbe::Loop(std::stop_token stop) {
  std::mutex sleep_mu;
  std::condition_variable_any woken;
  Clock::time_point due = Clock::now() + period_;
  while (!stop.stop_requested()) {
    {
      std::unique_lock lock(sleep_mu);
      woken.wait_until(lock, stop, due, [] { return false; });
    }
    if (stop.stop_requested()) return;
    // A little work, as a client does when it wakes to send its retry: under CPU contention
    // the time to get it done is part of the lateness too.
    volatile unsigned spin = 0;
    for (unsigned i = 0; i < 20'000; ++i) spin = spin + i;
    const Clock::time_point done = Clock::now();
    {
      std::lock_guard lock(mu_);
      series_.Record(due, done);
    }
    // The next deadline on the period's grid, never in the past (a late wake-up skips ticks).
    due = std::max(due + period_, Clock::now());
  }
}

}  // namespace faultline::harness
