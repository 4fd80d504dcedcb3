// The call engine's route decisions (Call in call.h): after a failed attempt, whether the next
// one stays on the failed route, waits for that route's breaker, moves to another route, or
// ends the call with every route down. Kept apart from call.cc's attempt and stream handling;
// like the rest of the engine it is sans-I/O, with `now` passed in.
#include <fmt/format.h>

#include <algorithm>
#include <ranges>

#include "reference_impl/call.h"

namespace faultline::ref {
namespace {

// Give-up reasons that end the call whatever route would come next.
bool EndsTheCall(GiveUpReason reason) {
  return reason == GiveUpReason::kCancelled || reason == GiveUpReason::kCommitted ||
         reason == GiveUpReason::kAttemptsExhausted || reason == GiveUpReason::kBudgetExhausted;
}

}  // namespace

// The failed route's own decision weighed against the other routes: the route ready soonest
// that the failure may move to takes the next attempt (route_ is set to it).
Decision Call::Reroute(const Failure& failure, const Decision& own, const DecisionInput& input,
                       Time now) {
  if (!own.retry() && EndsTheCall(own.reason)) return own;
  const Failover verdict = policy_.routing.failover
                               ? FailoverOf(failure, policy_.routing.failover_on)
                               : Failover::kNever;
  std::optional<Time> own_retry;
  if (own.retry()) own_retry = own.retry_at;
  const auto next = registry_.Next(route_, verdict, own_retry, now);
  if (!next) {
    const bool all_out = std::ranges::all_of(std::views::iota(std::size_t{0}, routes_.size()),
                                             [&](std::size_t i) { return !registry_.usable(i); });
    if (verdict == Failover::kNever || !all_out) return own;
    Decision down = own;
    down.kind = Decision::Kind::kGiveUp;
    down.reason = GiveUpReason::kAllRoutesDown;
    return down;
  }
  if (next->route == route_) return HeldByBreaker(own, input, next->at);
  Decision failover = DecideFailover(policy_, input, next->at, options_.budget, own.retry());
  if (failover.kind == Decision::Kind::kFailOver) route_ = next->route;
  return failover;
}

// A retry on the failed route itself: its own decision, unless the route's breaker opened and
// holds it past that retry time, so that the retry waits for the breaker's probe (within the
// same deadline and budget as any other attempt).
Decision Call::HeldByBreaker(const Decision& own, const DecisionInput& input, Time ready) {
  if (!own.retry() || ready <= own.retry_at) return own;
  Decision held = DecideFailover(policy_, input, ready, options_.budget, /*token_taken=*/true);
  if (held.kind != Decision::Kind::kFailOver) return held;
  held.kind = Decision::Kind::kRetry;
  held.delay_source = DelaySource::kBreaker;
  return held;
}

// The call's last failure, naming every route's own last one (response/failed's route_failures
// carries them whole).
Failure Call::AllRoutesDown(Failure last) const {
  std::string summary;
  for (std::size_t i = 0; i < routes_.size(); ++i) {
    const std::optional<Failure>& failure = last_failure_[i];
    summary += fmt::format(
        "{}{}: {}", summary.empty() ? "" : "; ", routes_[i].traits.id,
        failure
            ? fmt::format("{} ({})", ToString(failure->code), ToString(failure->failure_class))
            : std::string("lacks ") + std::string(MissingCapability(routes_[i].traits.capabilities,
                                                                    NeedsOf(routes_[i].body))));
  }
  last.message = fmt::format("every route is down: {}", summary);
  return last;
}

}  // namespace faultline::ref
