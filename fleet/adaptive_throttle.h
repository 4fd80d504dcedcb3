// Client-side adaptive throttling (Site Reliability Engineering, 2016, ch. 21 "Handling
// Overload"): a client that sees its backend reject requests starts rejecting requests itself,
// locally, with probability max(0, (requests - K x accepts) / (requests + 1)) over the last two
// minutes. This acts on every attempt, first ones included, so it is a fleet-level admission
// control rather than a retry rule of reference_impl's policy format. A sans-I/O core: time and
// the RNG are passed in. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>

#include "fleet/event_queue.h"
#include "reference_impl/backoff.h"

namespace faultline::fleet {

class AdaptiveThrottle {
 public:
  explicit AdaptiveThrottle(double k) : k_(k) {}

  // Counts one request at `now`; true when it is to be rejected locally.
  bool RejectLocally(Micros now, ref::RetryRng& rng);
  // The backend accepted a request (answered anything but an overload or a timeout).
  void RecordAccept(Micros now);

  double RejectProbability(Micros now);

 private:
  static constexpr int kSeconds = 120;  // the book's two-minute history
  void Advance(Micros now);

  double k_;
  std::array<std::uint32_t, kSeconds> requests_{};
  std::array<std::uint32_t, kSeconds> accepts_{};
  std::uint64_t requests_total_ = 0;
  std::uint64_t accepts_total_ = 0;
  std::int64_t second_ = 0;  // the newest second in the window
};

}  // namespace faultline::fleet
