// The routing pieces of the reference client's core: the failover rule of the failure taxonomy,
// the per-route circuit breaker, the client's board of them and the route registry's choice, in
// virtual time.
#include <gtest/gtest.h>

#include "reference_impl/breaker_board.h"
#include "reference_impl/circuit_breaker.h"
#include "reference_impl/classify.h"
#include "reference_impl/failover.h"
#include "reference_impl/route_registry.h"

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

TEST(FailoverTest, AnyFailureFailoverStillStopsAtCommitCancelAndDeadline) {
  constexpr FailoverRule kAny = FailoverRule::kAnyFailure;
  EXPECT_EQ(FailoverOf(OfClass(FailureClass::kInvalidRequest, false), kAny),
            Failover::kCompatibleModel);
  EXPECT_EQ(FailoverOf(OfClass(FailureClass::kTruncated), kAny), Failover::kCompatibleModel);
  EXPECT_EQ(FailoverOf(OfClass(FailureClass::kSafety, false), kAny), Failover::kCompatibleModel);
  EXPECT_EQ(FailoverOf(AbortedFailure(Phase::kStream), kAny), Failover::kNever);
  EXPECT_EQ(FailoverOf(OfClass(FailureClass::kRateLimit, true, PartialOutput::kCommitted), kAny),
            Failover::kNever);
  EXPECT_EQ(FailoverOf(TimeoutFailure(TimeoutKind::kTotal, milliseconds(1000)), kAny),
            Failover::kNever);
  EXPECT_EQ(ParseFailoverRule("any-failure"), kAny);
  EXPECT_EQ(ToString(FailoverRule::kTaxonomy), "taxonomy");
  EXPECT_FALSE(ParseFailoverRule("always").has_value());
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

TEST(CircuitBreakerTest, WithoutABreakerNothingEverStopsTheRoute) {
  CircuitBreaker breaker(std::optional<BreakerConfig>{});
  for (int i = 0; i < 2000; ++i) breaker.RecordFailure(Time{});
  EXPECT_EQ(breaker.state(Time{}), CircuitBreaker::State::kClosed);
  EXPECT_TRUE(breaker.Allow(Time{}));
  EXPECT_FALSE(breaker.reopens_at().has_value());
  EXPECT_EQ(breaker.consecutive_failures(), 2000);
}

TEST(BreakerBoardTest, OneBreakerPerRouteWhoseProbeSlotsEveryCallShares) {
  BreakerBoard board(
      BreakerConfig{.threshold = 1, .cooldown = milliseconds(1000), .half_open_probes = 1});
  const Time t0{};
  board.RecordFailure("a", t0);
  EXPECT_EQ(board.state("a", t0), CircuitBreaker::State::kOpen);
  EXPECT_EQ(board.state("b", t0), CircuitBreaker::State::kClosed) << "each route its own";
  EXPECT_FALSE(board.Admits("a", t0 + milliseconds(999)));
  EXPECT_EQ(board.ReadyAt("a", t0 + milliseconds(10)), t0 + milliseconds(1000));
  const Time half_open = t0 + milliseconds(1000);
  EXPECT_TRUE(board.Admits("a", half_open));
  ASSERT_TRUE(board.Begin("a", half_open));  // one call's probe
  EXPECT_FALSE(board.Admits("a", half_open)) << "the only slot is taken";
  EXPECT_FALSE(board.Begin("a", half_open));
  EXPECT_EQ(board.ReadyAt("a", half_open), half_open + milliseconds(1000));
  board.Release("a");  // that probe's call was cancelled
  EXPECT_TRUE(board.Admits("a", half_open));
  ASSERT_TRUE(board.Begin("a", half_open));
  board.RecordSuccess("a");
  EXPECT_EQ(board.state("a", half_open), CircuitBreaker::State::kClosed);
  EXPECT_EQ(board.consecutive_failures("a"), 0);
}

TEST(BreakerBoardTest, WithoutABreakerEveryRouteIsAlwaysAdmitted) {
  BreakerBoard board(std::nullopt);
  for (int i = 0; i < 100; ++i) board.RecordFailure("a", Time{});
  EXPECT_TRUE(board.Admits("a", Time{}));
  EXPECT_EQ(board.ReadyAt("a", Time{}), Time{});
  EXPECT_EQ(board.consecutive_failures("a"), 100);
}

RouteTraits Route(std::string id, int priority) {
  RouteTraits traits;
  traits.id = std::move(id);
  traits.model = "m";
  traits.priority = priority;
  return traits;
}

TEST(RouteRegistryTest, AFallbackChainSpendsEachRoutesShareBeforeMovingOn) {
  RoutingConfig config;
  config.route_attempts = 3;
  RouteRegistry registry({Route("primary", 0), Route("secondary", 1)}, RequestNeeds{}, config, 1);
  const Time t0{};
  auto choice = registry.First(t0);
  ASSERT_TRUE(choice);
  ASSERT_EQ(choice->route, 0u);
  std::vector<std::size_t> routes;
  for (int attempt = 0; attempt < 4; ++attempt) {
    registry.Begin(choice->route, t0);
    registry.RecordFailure(choice->route, t0);
    // The route's own retry is due in a second; the other route is ready at once.
    choice = registry.Next(choice->route, Failover::kCompatibleModel, t0 + milliseconds(1000), t0);
    ASSERT_TRUE(choice);
    routes.push_back(choice->route);
  }
  EXPECT_EQ(routes, (std::vector<std::size_t>{0, 0, 1, 1}))
      << "the primary takes its three attempts, waiting its own retry, then the secondary";
  EXPECT_FALSE(registry.usable(0)) << "a route whose share is spent is out for the call";
}

TEST(RouteRegistryTest, WithoutAChainAFailedAttemptMovesToTheRouteReadySoonest) {
  RouteRegistry registry({Route("primary", 0), Route("secondary", 1)}, RequestNeeds{},
                         RoutingConfig{}, 1);
  const Time t0{};
  registry.Begin(0, t0);
  registry.RecordFailure(0, t0);
  const auto next = registry.Next(0, Failover::kCompatibleModel, t0 + milliseconds(1000), t0);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->route, 1u);
  EXPECT_EQ(next->at, t0);
}

// routes/openai-responses-slow-fail-primary at --seed 291: a 0 ms full-jitter draw made the failed
// primary ready as soon as the secondary, and its priority won the tie, so the call waited out
// another slow failure there before failing over (3 attempts instead of 2).
TEST(RouteRegistryTest, ATieAfterAFailureGoesToARouteThatDidNotJustFail) {
  // The primary fails and its own retry is due at once: both routes are ready as soon.
  const auto chosen_after_primary = [](RoutingConfig config) {
    RouteRegistry routes({Route("primary", 0), Route("secondary", 1)}, RequestNeeds{}, config, 1);
    routes.Begin(0, Time{});
    routes.RecordFailure(0, Time{});
    const auto next = routes.Next(0, Failover::kCompatibleModel, Time{}, Time{});
    const auto again = routes.Reselect(Time{});  // a reselection keeps the same preference
    return std::vector<std::size_t>{next ? next->route : 9, again ? again->route : 9};
  };
  EXPECT_EQ(chosen_after_primary(RoutingConfig{}), (std::vector<std::size_t>{1, 1}));
  RoutingConfig in_order;  // a router that knows only its route order tries the primary again
  in_order.avoid_failed_group = false;
  EXPECT_EQ(chosen_after_primary(in_order), (std::vector<std::size_t>{0, 0}));
}

TEST(RouteRegistryTest, AFailedRoutesGroupGoesLastUnlessThePolicySaysGroupsPlayNoPart) {
  auto in_group = [](RouteTraits traits, std::string group) {
    traits.group = std::move(group);
    return traits;
  };
  const std::vector<RouteTraits> routes{in_group(Route("primary", 0), "acme"),
                                        in_group(Route("same-group", 1), "acme"),
                                        in_group(Route("other-provider", 2), "other")};
  const auto next_after_primary = [&](RoutingConfig config) {
    RouteRegistry registry(routes, RequestNeeds{}, config, 1);
    registry.Begin(0, Time{});
    registry.RecordFailure(0, Time{});
    return registry.Next(0, Failover::kCompatibleModel, Time{} + milliseconds(1000), Time{});
  };
  const auto avoiding = next_after_primary(RoutingConfig{});
  ASSERT_TRUE(avoiding);
  EXPECT_EQ(avoiding->route, 2u) << "ready as soon: the route outside the failed one's group";
  RoutingConfig in_order;
  in_order.avoid_failed_group = false;
  const auto ordered = next_after_primary(in_order);
  ASSERT_TRUE(ordered);
  EXPECT_EQ(ordered->route, 1u) << "groups play no part: the next priority, in the same group";
}

TEST(RouteRegistryTest, AChainStillMovesOnWhenItsRouteRefusesTheRetry) {
  RoutingConfig config;
  config.route_attempts = 5;
  RouteRegistry registry({Route("primary", 0), Route("secondary", 1)}, RequestNeeds{}, config, 1);
  registry.Begin(0, Time{});
  registry.RecordFailure(0, Time{});
  const auto next = registry.Next(0, Failover::kCompatibleModel, std::nullopt, Time{});
  ASSERT_TRUE(next);
  EXPECT_EQ(next->route, 1u);
}

TEST(RouteRegistryTest, OneEndpointSendsEveryAttemptToThePrimaryWhateverItLacks) {
  RoutingConfig config;
  config.failover = false;
  RouteTraits primary = Route("primary", 0);
  primary.capabilities.tools = false;
  RequestNeeds needs;
  needs.tools = true;
  RouteRegistry registry({Route("secondary", 1), primary}, needs, config, 1);
  const auto first = registry.First(Time{});
  ASSERT_TRUE(first);
  EXPECT_EQ(first->route, 1u) << "the lowest priority, though it lacks tools";
  registry.Begin(1, Time{});
  registry.RecordFailure(1, Time{});
  const auto next = registry.Next(1, Failover::kNever, Time{} + milliseconds(500), Time{});
  ASSERT_TRUE(next);
  EXPECT_EQ(next->route, 1u);
  EXPECT_TRUE(registry.usable(1));
  // A router picks the route that fits.
  RouteRegistry router({Route("secondary", 1), primary}, needs, RoutingConfig{}, 1);
  EXPECT_EQ(router.First(Time{})->route, 0u);
}

}  // namespace
}  // namespace faultline::ref
