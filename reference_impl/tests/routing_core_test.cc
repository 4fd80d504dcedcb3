// The routing pieces of the reference client's core: the failover rule of the failure taxonomy
// and the per-route circuit breaker, in virtual time.
#include <gtest/gtest.h>

#include "reference_impl/circuit_breaker.h"
#include "reference_impl/classify.h"
#include "reference_impl/failover.h"

namespace faultline::ref {
namespace {

using std::chrono::milliseconds;
using Time = CircuitBreaker::Time;

Failure OfClass(FailureClass failure_class, bool retryable = true,
                PartialOutput partial = PartialOutput::kNone) {
  Failure failure;
  failure.failure_class = failure_class;
  failure.retryable = retryable;
  failure.partial_output = partial;
  return failure;
}

TEST(FailoverTest, TheTaxonomySaysWhereAFailureMayGo) {
  EXPECT_EQ(FailoverOf(OfClass(FailureClass::kRateLimit)), Failover::kCompatibleModel);
  EXPECT_EQ(FailoverOf(OfClass(FailureClass::kQuota, false)), Failover::kCompatibleModel);
  EXPECT_EQ(FailoverOf(OfClass(FailureClass::kProviderOverloaded)), Failover::kCompatibleModel);
  EXPECT_EQ(
      FailoverOf(TransportFailure(TransportKind::kRefused, Phase::kConnect, PartialOutput::kNone)),
      Failover::kCompatibleModel);
  EXPECT_EQ(FailoverOf(
                TimeoutFailure(TimeoutKind::kIdle, milliseconds(100), PartialOutput::kUncommitted)),
            Failover::kCompatibleModel);
  EXPECT_EQ(FailoverOf(OfClass(FailureClass::kTruncated, true, PartialOutput::kUncommitted)),
            Failover::kSameModel);
  EXPECT_EQ(FailoverOf(OfClass(FailureClass::kProtocol)), Failover::kSameModel);
  EXPECT_EQ(FailoverOf(OfClass(FailureClass::kInvalidRequest, false)), Failover::kNever);
  EXPECT_EQ(FailoverOf(OfClass(FailureClass::kSafety, false)), Failover::kNever);
  EXPECT_EQ(FailoverOf(AbortedFailure(Phase::kStream)), Failover::kNever);
}

TEST(FailoverTest, NeverAfterCommitNorPastTheTotalDeadline) {
  EXPECT_EQ(FailoverOf(OfClass(FailureClass::kProviderOverloaded, true, PartialOutput::kCommitted)),
            Failover::kNever);
  EXPECT_EQ(FailoverOf(TimeoutFailure(TimeoutKind::kTotal, milliseconds(1000))), Failover::kNever);
}

TEST(FailoverTest, NamesRoundTrip) {
  for (Failover value : {Failover::kNever, Failover::kSameModel, Failover::kCompatibleModel}) {
    EXPECT_EQ(ParseFailover(ToString(value)), value);
  }
  EXPECT_EQ(ToString(Failover::kCompatibleModel), "compatible-model");
  EXPECT_FALSE(ParseFailover("sometimes").has_value());
}

TEST(CircuitBreakerTest, TripsAtItsThresholdAndNotBefore) {
  CircuitBreaker breaker({.threshold = 3, .cooldown = milliseconds(1000), .half_open_probes = 1});
  const Time t0{};
  breaker.RecordFailure(t0);
  breaker.RecordFailure(t0);
  EXPECT_EQ(breaker.state(t0), CircuitBreaker::State::kClosed);
  EXPECT_TRUE(breaker.Allow(t0));
  breaker.RecordFailure(t0 + milliseconds(5));
  EXPECT_EQ(breaker.state(t0 + milliseconds(5)), CircuitBreaker::State::kOpen);
  EXPECT_EQ(breaker.reopens_at(), t0 + milliseconds(1005));
  EXPECT_FALSE(breaker.Allow(t0 + milliseconds(1004)));
}

TEST(CircuitBreakerTest, ASuccessBeforeTheThresholdStartsTheCountAgain) {
  CircuitBreaker breaker({.threshold = 2, .cooldown = milliseconds(10), .half_open_probes = 1});
  breaker.RecordFailure(Time{});
  breaker.RecordSuccess();
  breaker.RecordFailure(Time{});
  EXPECT_EQ(breaker.state(Time{}), CircuitBreaker::State::kClosed);
  EXPECT_EQ(breaker.consecutive_failures(), 1);
}

TEST(CircuitBreakerTest, HalfOpenLetsTheDeclaredProbesThroughAndAGoodOneCloses) {
  CircuitBreaker breaker({.threshold = 1, .cooldown = milliseconds(100), .half_open_probes = 2});
  const Time t0{};
  breaker.RecordFailure(t0);
  const Time later = t0 + milliseconds(100);
  EXPECT_EQ(breaker.state(later), CircuitBreaker::State::kHalfOpen);
  EXPECT_TRUE(breaker.Allow(later));
  EXPECT_TRUE(breaker.Allow(later));
  EXPECT_FALSE(breaker.Allow(later)) << "only the declared probes";
  breaker.RecordSuccess();
  EXPECT_EQ(breaker.state(later), CircuitBreaker::State::kClosed);
  EXPECT_TRUE(breaker.Allow(later));
}

TEST(CircuitBreakerTest, AFailedProbeOpensItForAnotherCooldown) {
  CircuitBreaker breaker({.threshold = 4, .cooldown = milliseconds(50), .half_open_probes = 1});
  const Time t0{};
  for (int i = 0; i < 4; ++i) breaker.RecordFailure(t0);
  const Time probe = t0 + milliseconds(60);
  ASSERT_TRUE(breaker.Allow(probe));
  breaker.RecordFailure(probe);  // one failure suffices while probing
  EXPECT_EQ(breaker.state(probe + milliseconds(49)), CircuitBreaker::State::kOpen);
  EXPECT_EQ(breaker.state(probe + milliseconds(50)), CircuitBreaker::State::kHalfOpen);
  EXPECT_EQ(ToString(breaker.state(probe)), "open");
}

}  // namespace
}  // namespace faultline::ref
