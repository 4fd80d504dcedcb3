// ROUTE-005: the breaker a subject declares, replayed over the journal and its own events: it
// does not trip before its threshold, and sends nothing to a route while that route's breaker is
// open (docs/routes.md). The route helpers it shares with the other ROUTE-* checks (the event
// replay of the breakers with ROUTE-010) are in route_helpers.h.
#include <array>
#include <map>
#include <set>

#include "harness/judge/judge_internal.h"
#include "harness/judge/route_helpers.h"
#include "reference_impl/circuit_breaker.h"

namespace faultline::harness::judge_internal {

ref::CircuitBreaker::Time BreakerTime(Duration d, double extra_ms) {
  return ref::CircuitBreaker::Time{} + std::chrono::duration_cast<std::chrono::nanoseconds>(d) +
         std::chrono::microseconds(static_cast<long long>(extra_ms * 1000));
}

std::vector<std::vector<const ClientRecord*>> BreakerHistories(const View& view) {
  std::vector<std::vector<const ClientRecord*>> histories;
  for (const CallView& call : view.calls) histories.push_back(call.records);
  if (!view.trace.one_client || histories.size() < 2) return histories;
  std::vector<const ClientRecord*> merged;
  for (const auto& history : histories) merged.insert(merged.end(), history.begin(), history.end());
  std::ranges::stable_sort(merged, {}, &ClientRecord::at);
  return {std::move(merged)};
}

ref::CircuitBreaker& EventBreakers::Of(const std::string& route) {
  return breakers_.try_emplace(route, config_).first->second;
}

void EventBreakers::RecordEnding(const ClientRecord& record, const std::string& route) {
  ref::CircuitBreaker& breaker = Of(route);
  const EventKind type = record.event.kind;
  if (type == EventKind::kInterrupted || type == EventKind::kFailed) {
    if (!record.event.attempt.has_value()) return;
    breaker.RecordFailure(BreakerTime(record.at));
    if (breaker.state(BreakerTime(record.at)) != ref::CircuitBreaker::State::kClosed) {
      opened_ = true;
    }
  } else if (type == EventKind::kCommitted) {
    if (breaker.state(BreakerTime(record.at)) != ref::CircuitBreaker::State::kClosed) {
      reclosed_at_[route] = Ms(record.at);
    }
    breaker.RecordSuccess();
  }
}

std::optional<double> EventBreakers::reclosed_at(const std::string& route) const {
  const auto found = reclosed_at_.find(route);
  if (found == reclosed_at_.end()) return std::nullopt;
  return found->second;
}

namespace {

// What replaying a route's breaker reads (ROUTE-005): the retry rules and the waits.
constexpr std::array<std::string_view, 9> kBreakerReplayKeys{
    "mode",     "retryable_classes",   "retry_phases", "stream_retries", "stream_retry_on",
    "statuses", "should_retry_header", "backoff",      "retry_after"};

// One route's declared breaker replayed over the journal, with what EarlyTrip needs of it.
struct RouteReplay {
  explicit RouteReplay(const std::optional<ref::BreakerConfig>& config) : breaker(config) {}
  ref::CircuitBreaker breaker;
  std::optional<std::size_t> last_failure;  // index into view.attempts
  bool retired = false;                     // its last failure is one the policy never retries
};

// Whether the call, moving on from `entry`, could still go back to route `id` (`replay`):
// it failed with a failure the policy retries, the call may fail over to it, and its breaker
// stayed closed after that failure.
bool StillRetriable(const View& view, const provider::JournalEntry& entry, const std::string& id,
                    const RouteReplay& replay) {
  const scenario::Route* route = RouteNamed(view, id);
  if (route == nullptr || replay.retired || !replay.last_failure) return false;
  if (id != entry.route && !MayGo(view, entry, *route)) return false;
  const provider::JournalEntry& failed = *view.attempts[*replay.last_failure];
  return replay.breaker.state(BreakerTime(failed.ended)) == ref::CircuitBreaker::State::kClosed;
}

// The evidence that the subject stayed silent on retriable route `id` until its cooldown ran
// out, with `next` its next request; "". Judged (`judged` set) only where the cooldown is longer
// than the latest retry the policy allows, so the two cannot be confused.
std::string SilentPastCooldown(const View& view, const std::string& id, const RouteReplay& replay,
                               const provider::JournalEntry& next, bool* judged) {
  const ref::BreakerConfig& config = *view.policy().routing.breaker;
  const auto cooldown_ms = static_cast<double>(config.cooldown.count());
  const provider::JournalEntry& failed = *view.attempts[*replay.last_failure];
  double latest = 0;
  for (const Window& window : AllowedGaps(view, *replay.last_failure)) {
    latest = std::max(latest, window.upper_ms);
  }
  if (latest >= 1e299 || cooldown_ms <= latest + view.tolerance.late_ms) return {};
  *judged = true;
  const double silent = ArrivedMs(next) - EndedMs(failed);
  if (silent <= latest + view.tolerance.late_ms || silent + view.tolerance.early_ms < cooldown_ms) {
    return {};
  }
  return fmt::format(
      "{} left route {}'s breaker closed ({} consecutive failure(s), "
      "threshold {}), so the declared policy could retry it within {:.1f} ms; "
      "the next request, {}, came {:.1f} ms after it, past the {:.0f} ms "
      "cooldown, as if the breaker had opened before its threshold",
      OnRoute(failed), Quote(id), replay.breaker.consecutive_failures(), config.threshold, latest,
      OnRoute(next), silent, cooldown_ms);
}

// "Not before its threshold", from the journal: each route's declared breaker replayed over the
// requests it got. A route whose breaker is still closed may be retried as soon as the declared
// backoff (or its response's hint) allows after its last failure, so a call that has moved on
// from a failure that may go to that route sends its next attempt by then at the latest. A
// subject that stays silent past that, until the route's declared cooldown has run out,
// treated the breaker as open before its threshold. Judged only where that signature is
// unambiguous: one call, every attempt in the journal, and a cooldown longer than the latest
// retry the policy allows. Calls that share the routes are left alone: a subject may keep one
// breaker per route for all its calls, and another call's failures may have opened it. `judged`
// is set when some gap was judged so.
std::string EarlyTrip(const View& view, bool* judged) {
  if (!view.single_call() || view.scenario.request.calls > 1 || view.refusals()) return {};
  const ref::BreakerConfig& config = *view.policy().routing.breaker;
  std::map<std::string, RouteReplay> routes;
  for (std::size_t k = 0; k < view.attempts.size(); ++k) {
    const provider::JournalEntry& entry = *view.attempts[k];
    RouteReplay& replay = routes.try_emplace(entry.route, config).first->second;
    (void)replay.breaker.Allow(BreakerTime(entry.arrived));  // a half-open probe takes its slot
    if (entry.truth.answer) {
      replay.breaker.RecordSuccess();
      continue;
    }
    if (!TruthFailure(view, entry)) return {};  // the provider promises nothing: stop judging
    replay.breaker.RecordFailure(BreakerTime(entry.ended));
    replay.last_failure = k;
    replay.retired = PolicyForbids(view, entry).has_value();
    if (k + 1 == view.attempts.size()) break;
    for (const auto& [id, other] : routes) {
      if (!StillRetriable(view, entry, id, other)) continue;
      std::string early = SilentPastCooldown(view, id, other, *view.attempts[k + 1], judged);
      if (!early.empty()) return early;
    }
  }
  return {};
}

// "No traffic while open": the evidence when a response/start on `route` was not let through
// by its replayed breaker, else "". `opened` is set when the breaker had left the closed state.
std::string StartRefusedByBreaker(const View& view, EventBreakers& breakers,
                                  const ClientRecord& record, const std::string& route,
                                  bool* opened) {
  const std::string call =
      view.calls.size() > 1 ? fmt::format("call {}: ", record.call) : std::string();
  ref::CircuitBreaker& breaker = breakers.Of(route);
  const auto now = BreakerTime(record.at, view.tolerance.early_ms);
  const auto state = breaker.state(now);
  if (state != ref::CircuitBreaker::State::kClosed) *opened = true;
  if (breaker.Allow(now)) return {};
  const ref::BreakerConfig& config = breakers.config();
  return fmt::format(
      "{}response/start on route {} at {:.1f} ms while its breaker "
      "was {} ({} consecutive failures, threshold {}, cooldown {} ms, {} "
      "probe(s))",
      call, Quote(route), Ms(record.at), ref::ToString(state), breaker.consecutive_failures(),
      config.threshold, config.cooldown.count(), config.half_open_probes);
}

// "No traffic while open", from the subject's own attempts: each route's breaker replayed from
// response/start and the failure or commit of each attempt (their route_id), per call or across
// the calls of one client; an attempt while it is open, or more than the declared probes while
// half-open, is a violation. Where a later call's first attempt goes once a probe closed the
// breaker again is ROUTE-010's (where every call starts). `opened` is set when some breaker left
// the closed state.
std::string OpenBreakerUsed(const View& view, bool* opened) {
  for (const auto& history : BreakerHistories(view)) {
    EventBreakers breakers(*view.policy().routing.breaker);
    for (const ClientRecord* record : history) {
      const std::string route = std::string(record->event.route());
      if (route.empty()) continue;
      if (record->event.kind != EventKind::kStart) {
        breakers.RecordEnding(*record, route);
        continue;
      }
      std::string used = StartRefusedByBreaker(view, breakers, *record, route, opened);
      if (!used.empty()) return used;
    }
    if (breakers.opened()) *opened = true;
  }
  return {};
}

}  // namespace

// ROUTE-005: the declared breaker honoured both ways, not tripping early (from the journal) and
// sending nothing while open (from the subject's events).
Verdict RouteBreakerHonoured(const View& view) {
  if (!view.has_routes()) return NotApplicable(std::string(kNoRoutes));
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  if (!view.policy().routing.breaker) {
    return NotApplicable("the subject declares no breaker (routing.breaker null)");
  }
  // Replaying the breaker asks when the declared policy would have retried each route.
  if (auto unstated = UnlessDeclared(view, kBreakerReplayKeys)) return *unstated;
  bool closed_judged = false;
  if (std::string early = EarlyTrip(view, &closed_judged); !early.empty()) {
    return Fail(std::move(early));
  }
  if (view.black_box) {
    if (closed_judged) return Pass();
    return NotApplicable("black-box subject: no attempts to replay");
  }
  bool opened = false;
  if (std::string used = OpenBreakerUsed(view, &opened); !used.empty()) {
    return Fail(std::move(used));
  }
  if (!opened && !closed_judged) {
    return NotApplicable(fmt::format("no route's breaker opened (threshold {})",
                                     view.policy().routing.breaker->threshold));
  }
  return Pass();
}

}  // namespace faultline::harness::judge_internal
