// The AWS SDKs' "adaptive" retry mode: the standard mode's retries plus a client-side rate
// limiter that slows every send (first attempts included) once the service throttles. Read from
// botocore/retries/ (commit 40454ea): adaptive.py:35-73 ClientRateLimiter, :76-107 RateClocker;
// throttling.py:6-38 CubicCalculator; bucket.py:19-121 TokenBucket.
//
//   - The limiter is off until the first throttling response; from then on a send takes a token
//     from a bucket that fills at `fill_rate` tokens/s (at least 0.5/s) and holds at most
//     max(1, fill_rate); an empty bucket makes the send wait for its token.
//   - Every response feeds a measured rate: responses counted in half-second steps, smoothed
//     0.8 new / 0.2 old.
//   - The fill rate follows CUBIC (scale C = 0.4, beta = 0.7): a throttle sets w_max to the rate
//     sent at (the measured rate, or the bucket's rate when lower) and the new rate to
//     beta x w_max; a success sets it to C (t - t_fail - K)^3 + w_max with K = cbrt(w_max (1 -
//     beta) / C), so the rate is back at w_max K seconds after the throttle and grows past it
//     after. Either way the fill rate is capped at twice the measured rate.
//
// In virtual time a send that finds the bucket empty (or others waiting) waits in line: the
// simulation asks NextTokenAt() when the first in line gets its token at the current rate, and
// asks again whenever the rate changes, as botocore's waiting threads re-check when notified.
// One limiter per run: the fleet's calls share it, as the calls of one botocore client do. A
// sans-I/O core: time is passed in. Not thread-safe.
#pragma once

#include "fleet/event_queue.h"

namespace faultline::fleet {

class ClientRateLimiter {
 public:
  static constexpr double kBeta = 0.7;                // CubicCalculator._BETA
  static constexpr double kScale = 0.4;               // CubicCalculator._SCALE_CONSTANT
  static constexpr double kMinRate = 0.5;             // TokenBucket._MIN_RATE
  static constexpr double kSmoothing = 0.8;           // RateClocker._DEFAULT_SMOOTHING
  static constexpr double kRateStep = 0.5;            // RateClocker._TIME_BUCKET_RANGE, seconds
  static constexpr double kMaxRateAdjustScale = 2.0;  // ClientRateLimiter._MAX_RATE_ADJUST_SCALE

  explicit ClientRateLimiter(Micros start);

  // Takes a token for a send at `now` and returns true when the send may go now: the limiter is
  // off, or the bucket holds a whole token. False: nothing taken; the send waits.
  bool TryAcquire(Micros now);
  // When the bucket will hold a whole token at the current fill rate (`now` when it does).
  Micros NextTokenAt(Micros now);
  // A response to a send arrived at `now` (a timeout or a connection fault counts, as not
  // throttling); `throttling` when the service throttled it (429, overloaded).
  void OnResponse(Micros now, bool throttling);

  bool enabled() const { return enabled_; }
  double fill_rate() const { return fill_rate_; }          // tokens per second
  double measured_rate() const { return measured_rate_; }  // responses per second, smoothed
  double w_max() const { return w_max_; }

 private:
  void Refill(double now_s);
  void SetMaxRate(double rate, double now_s);
  double MeasureRate(double now_s);

  bool enabled_ = false;
  // CubicCalculator: starting_max_rate 0 at the start of the run.
  double w_max_ = 0;
  double k_ = 0;
  double last_fail_s_;
  // TokenBucket: created with max_rate 1, empty.
  double fill_rate_ = 1;
  double max_capacity_ = 1;
  double capacity_ = 0;
  double refilled_s_;
  // RateClocker.
  double measured_rate_ = 0;
  double rate_step_s_;
  double rate_count_ = 0;
};

}  // namespace faultline::fleet
