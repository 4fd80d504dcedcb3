// AWS adaptive mode's client-side rate limiter against the properties of its source (botocore
// retries/adaptive.py, throttling.py, bucket.py), in virtual time.
#include "fleet/client_rate_limiter.h"

#include <gtest/gtest.h>

#include <cmath>

namespace faultline::fleet {
namespace {

constexpr Micros kSecond = 1'000'000;
constexpr Micros kTick = 10'000;  // responses every 10 ms: about 100 a second

// Successful responses every 10 ms in [from, to): the measured rate settles near 100/s.
void Successes(ClientRateLimiter& limiter, Micros from, Micros to) {
  for (Micros t = from; t < to; t += kTick) limiter.OnResponse(t, false);
}

TEST(ClientRateLimiterTest, IsOffUntilTheFirstThrottle) {
  ClientRateLimiter limiter(0);
  Successes(limiter, 0, 2 * kSecond);
  EXPECT_FALSE(limiter.enabled());
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(limiter.TryAcquire(2 * kSecond));
  EXPECT_EQ(limiter.NextTokenAt(2 * kSecond), 2 * kSecond);
}

TEST(ClientRateLimiterTest, AThrottleCutsTheRateByBetaAndCubicGrowsItBack) {
  ClientRateLimiter limiter(0);
  Successes(limiter, 0, 3 * kSecond);
  const Micros fail = 3 * kSecond;
  limiter.OnResponse(fail, true);
  ASSERT_TRUE(limiter.enabled());
  const double w_max = limiter.w_max();
  EXPECT_DOUBLE_EQ(w_max, limiter.measured_rate());  // the rate it was sending at
  EXPECT_GT(w_max, 80);
  EXPECT_DOUBLE_EQ(limiter.fill_rate(), ClientRateLimiter::kBeta * w_max);

  // CUBIC: back at w_max K seconds after the throttle, concave before, convex after.
  const double k = std::cbrt(w_max * (1 - ClientRateLimiter::kBeta) / ClientRateLimiter::kScale);
  const auto at = [&](double seconds) { return fail + static_cast<Micros>(seconds * 1e6); };
  const auto cubic = [&](double seconds) {
    const double dt = static_cast<double>(at(seconds) - fail) * 1e-6 - k;
    return ClientRateLimiter::kScale * dt * dt * dt + w_max;
  };
  Successes(limiter, fail + kTick, at(k / 2));
  limiter.OnResponse(at(k / 2), false);
  EXPECT_NEAR(limiter.fill_rate(), cubic(k / 2), 1e-9);
  EXPECT_LT(limiter.fill_rate(), w_max);
  EXPECT_GT(limiter.fill_rate(), ClientRateLimiter::kBeta * w_max);
  Successes(limiter, at(k / 2) + kTick, at(k));
  limiter.OnResponse(at(k), false);
  EXPECT_NEAR(limiter.fill_rate(), w_max, 1e-3);
  Successes(limiter, at(k) + kTick, at(k + 2));
  limiter.OnResponse(at(k + 2), false);
  EXPECT_NEAR(limiter.fill_rate(), w_max + ClientRateLimiter::kScale * 8, 1e-3);
}

TEST(ClientRateLimiterTest, TheRateNeverExceedsTwiceTheMeasuredRate) {
  ClientRateLimiter limiter(0);
  Successes(limiter, 0, 3 * kSecond);
  limiter.OnResponse(3 * kSecond, true);
  // A response now and then: the measured rate falls, and the cap with it.
  for (Micros t = 4 * kSecond; t < 40 * kSecond; t += kSecond) {
    limiter.OnResponse(t, false);
    EXPECT_LE(limiter.fill_rate(),
              std::max(ClientRateLimiter::kMaxRateAdjustScale * limiter.measured_rate(),
                       ClientRateLimiter::kMinRate) +
                  1e-9);
  }
}

TEST(ClientRateLimiterTest, AnEmptyBucketDelaysSendsOneTokenApart) {
  ClientRateLimiter limiter(0);
  Successes(limiter, 0, 3 * kSecond);
  const Micros now = 3 * kSecond;
  limiter.OnResponse(now, true);
  const double rate = limiter.fill_rate();
  int sent = 0;
  while (limiter.TryAcquire(now) && sent < 1000) ++sent;
  EXPECT_LE(sent, static_cast<int>(std::ceil(rate)));  // at most a full bucket at once
  const Micros first = limiter.NextTokenAt(now);
  EXPECT_GT(first, now);
  EXPECT_LE(first, now + static_cast<Micros>(std::ceil(1e6 / rate)) + 1);
  EXPECT_FALSE(limiter.TryAcquire(first - 1));
  EXPECT_TRUE(limiter.TryAcquire(first));
  EXPECT_FALSE(limiter.TryAcquire(first));
  const Micros second = limiter.NextTokenAt(first);
  EXPECT_NEAR(static_cast<double>(second - first), 1e6 / rate, 2.0);
}

}  // namespace
}  // namespace faultline::fleet
