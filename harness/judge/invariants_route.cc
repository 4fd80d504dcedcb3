// ROUTE-*, ADV-006, ADV-007 and ADV-009: routing and failover (docs/routes.md), judged from the
// journal (which route got each request and what it sent back) and the subject's own events (the
// route_id of every attempt). ROUTE-004 is in invariants_retry.cc, beside the Retry-After rules it
// shares. A check whose evidence is missing (no routes, no route_id, no declared policy) is n/a,
// never a pass.
#include <array>
#include <map>
#include <set>

#include "harness/judge/judge_internal.h"
#include "harness/worlds/request_body.h"
#include "reference_impl/circuit_breaker.h"
#include "reference_impl/failover.h"
#include "reference_impl/route_registry.h"
#include "scenarios/route_scenario.h"

namespace faultline::harness::judge_internal {
namespace {

using nlohmann::json;

constexpr std::string_view kNoRoutes = "the scenario has no routes";

// What replaying a route's breaker reads (ROUTE-005): the retry rules and the waits.
constexpr std::array<std::string_view, 9> kBreakerReplayKeys{
    "mode",     "retryable_classes",   "retry_phases", "stream_retries", "stream_retry_on",
    "statuses", "should_retry_header", "backoff",      "retry_after"};

const scenario::Route* RouteNamed(const View& view, std::string_view id) {
  const auto found = std::ranges::find(view.scenario.routes, id, &scenario::Route::id);
  return found == view.scenario.routes.end() ? nullptr : &*found;
}

std::string OnRoute(const provider::JournalEntry& entry) {
  return fmt::format("attempt {} on route {} (arrived {:.1f} ms, {})", entry.attempt,
                     Quote(entry.route), ArrivedMs(entry), entry.plan_summary);
}

// The capability the scenario's request needs that `route` lacks, or "": the client's own
// oracle, on the very body the route would get.
std::string_view Lacks(const View& view, const scenario::Route& route) {
  return ref::MissingCapability(RouteCapabilitiesOf(route.capabilities),
                                ref::NeedsOf(RouteRequestBody(view.scenario, route).dump()));
}

// The route's answer went out whole: its plan ran to the end (a reset or close after the
// terminator included), so a correct client committed it.
bool DeliveredWhole(const provider::JournalEntry& entry) {
  return entry.truth.answer && (entry.end == provider::EndKind::kCompleted ||
                                entry.end == provider::EndKind::kClosedByServer ||
                                entry.end == provider::EndKind::kResetByServer);
}

bool Cancelled(const View& view, const ClientRecord& terminal) {
  return view.trace.cancel_at || FailureOf(terminal.event).code == "ABORTED";
}

// The failover verdict for the journal truth of `entry` (failover.h), under the rule the subject
// declares (the taxonomy's unless it falls back on any failure).
ref::Failover VerdictOf(const View& view, const provider::JournalEntry& entry) {
  const std::optional<ref::Failure> failure = TruthFailure(view, entry);
  if (!failure) return ref::Failover::kNever;
  return ref::FailoverOf(*failure, view.has_policy() ? view.policy().routing.failover_on
                                                     : ref::FailoverRule::kTaxonomy);
}

bool MayGo(const View& view, const provider::JournalEntry& from, const scenario::Route& to) {
  const scenario::Route* origin = RouteNamed(view, from.route);
  if (origin == nullptr || origin->id == to.id || !Lacks(view, to).empty()) return false;
  switch (VerdictOf(view, from)) {
    case ref::Failover::kCompatibleModel:
      return true;
    case ref::Failover::kSameModel:
      return WireModel(view.scenario, *origin) == WireModel(view.scenario, to);
    case ref::Failover::kNever:
      return false;
  }
  return false;
}

}  // namespace

Verdict RouteNoFailoverAfterCommit(const View& view) {
  if (!view.has_routes()) return NotApplicable(std::string(kNoRoutes));
  if (!view.single_call()) return NotApplicable("several concurrent calls share the routes");
  bool judged = false;
  for (const ClientRecord* record : view.calls[0].records) {
    if (record->event.kind != EventKind::kInterrupted) continue;
    if (FailureOf(record->event).partial_output != "committed") continue;
    return Fail(fmt::format(
        "{} at {:.1f} ms reports a failure after commit on route {}, and "
        "the call went on{}",
        record->event.kind, Ms(record->at), Quote(std::string(record->event.route())),
        !record->event.next_route_id.empty() ? " to route " + Quote(record->event.next_route_id)
                                             : std::string()));
  }
  for (std::size_t k = 0; k < view.attempts.size(); ++k) {
    if (!DeliveredWhole(*view.attempts[k])) continue;
    judged = true;
    if (k + 1 == view.attempts.size()) continue;
    return Fail(fmt::format("{} delivered a whole answer, yet {} followed",
                            OnRoute(*view.attempts[k]), OnRoute(*view.attempts[k + 1])));
  }
  if (!judged) return NotApplicable("no route delivered a whole answer");
  return Pass();
}

Verdict RouteNoSplice(const View& view) {
  if (!view.has_routes()) return NotApplicable(std::string(kNoRoutes));
  if (!view.single_call()) return NotApplicable("several concurrent calls share the routes");
  const ClientRecord* terminal = view.calls[0].terminal;
  if (terminal == nullptr || terminal->event.kind != EventKind::kCommitted) {
    return NotApplicable("nothing was committed");
  }
  const std::string route = std::string(terminal->event.route());
  if (route.empty()) return NotApplicable("the subject's response/committed names no route_id");
  const provider::JournalEntry* last = nullptr;
  for (const provider::JournalEntry* entry : view.attempts) {
    if (entry->arrived <= terminal->at) last = entry;
  }
  if (last == nullptr || last->route != route) {
    return Fail(fmt::format(
        "committed naming route {} at {:.1f} ms, but the last request "
        "before it went to {}",
        Quote(route), Ms(terminal->at), last ? OnRoute(*last) : std::string("no route")));
  }
  const std::string text = terminal->event.text.value_or("");
  if (last->truth.answer && *last->truth.answer != text) {
    return Fail(
        fmt::format("committed {} from route {}, whose attempt sent {}: text from "
                    "more than one attempt",
                    Quote(text), Quote(route), Quote(*last->truth.answer)));
  }
  return Pass();
}

namespace {

// The evidence that a request, or a response/start, went to `route`, which lacks `lacks`; "".
std::string ReachedLackingRoute(const View& view, const scenario::Route& route,
                                std::string_view lacks) {
  for (const provider::JournalEntry* entry : view.attempts) {
    if (entry->route != route.id) continue;
    return fmt::format("{} reached route {}, which lacks {} the request needs", OnRoute(*entry),
                       Quote(route.id), lacks);
  }
  for (const CallView& call : view.calls) {
    for (const ClientRecord* record : call.records) {
      if (record->event.kind != EventKind::kStart || std::string(record->event.route()) != route.id)
        continue;
      return fmt::format(
          "response/start at {:.1f} ms went to route {}, which lacks "
          "{} the request needs",
          Ms(record->at), Quote(route.id), lacks);
    }
  }
  return {};
}

}  // namespace

Verdict RouteCapabilitiesFit(const View& view) {
  if (!view.has_routes()) return NotApplicable(std::string(kNoRoutes));
  if (view.has_policy() && !view.policy().routing.failover) {
    return NotApplicable(
        "the subject declares one endpoint (routing.failover false): every "
        "attempt goes to the route it was given, which it cannot choose");
  }
  bool judged = false;
  for (const scenario::Route& route : view.scenario.routes) {
    const std::string_view lacks = Lacks(view, route);
    if (lacks.empty()) continue;
    judged = true;
    if (std::string reached = ReachedLackingRoute(view, route, lacks); !reached.empty()) {
      return Fail(std::move(reached));
    }
  }
  if (!judged) return NotApplicable("every route has what the request needs");
  return Pass();
}

namespace {

ref::CircuitBreaker::Time BreakerTime(Duration d, double extra_ms = 0) {
  return ref::CircuitBreaker::Time{} + std::chrono::duration_cast<std::chrono::nanoseconds>(d) +
         std::chrono::microseconds(static_cast<long long>(extra_ms * 1000));
}

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

// The route a call's first attempt goes to when every breaker is closed: the one route of the
// lowest priority that has what the request needs; nullopt when several share it (a weighted
// draw) or the subject declares one endpoint.
std::optional<std::string> PreferredRoute(const View& view) {
  if (!view.policy().routing.failover) return std::nullopt;
  const scenario::Route* best = nullptr;
  bool tie = false;
  for (const scenario::Route& route : view.scenario.routes) {
    if (!Lacks(view, route).empty()) continue;
    if (best == nullptr || route.priority < best->priority) {
      best = &route;
      tie = false;
    } else if (route.priority == best->priority) {
      tie = true;
    }
  }
  if (best == nullptr || tie) return std::nullopt;
  return best->id;
}

// The subject's attempts and their endings in the order its breakers saw them: per call, or,
// for one client whose calls share its breakers (Trace::one_client), all calls merged in time.
std::vector<std::vector<const ClientRecord*>> BreakerHistories(const View& view) {
  std::vector<std::vector<const ClientRecord*>> histories;
  for (const CallView& call : view.calls) histories.push_back(call.records);
  if (!view.trace.one_client || histories.size() < 2) return histories;
  std::vector<const ClientRecord*> merged;
  for (const auto& history : histories) merged.insert(merged.end(), history.begin(), history.end());
  std::ranges::stable_sort(merged, {}, &ClientRecord::at);
  return {std::move(merged)};
}

// One history's breakers replayed from the subject's own events (OpenBreakerUsed).
struct EventReplay {
  EventReplay(const View& view, const std::optional<std::string>& preferred, bool* opened)
      : view(view), config(*view.policy().routing.breaker), preferred(preferred), opened(opened) {}

  ref::CircuitBreaker& Of(const std::string& route) {
    return breakers.try_emplace(route, config).first->second;
  }

  const View& view;
  const ref::BreakerConfig& config;
  const std::optional<std::string>& preferred;  // PreferredRoute
  bool* opened;                                 // set when some breaker left the closed state
  std::map<std::string, ref::CircuitBreaker> breakers;
  std::map<std::string, double> reclosed_at;  // route -> when a good probe closed it again
  std::set<int> started;                      // calls whose first attempt was seen
};

// "Re-closes after a good probe": the evidence when a call's first attempt went to `route`
// although a good probe had closed the preferred route's breaker again, else "".
std::string ReclosedRouteSkipped(EventReplay& replay, const ClientRecord& record,
                                 const std::string& route, ref::CircuitBreaker::Time now,
                                 std::string_view call) {
  const bool first = replay.started.insert(record.call).second;
  const std::optional<std::string>& preferred = replay.preferred;
  if (!first || !replay.view.trace.one_client || !preferred || route == *preferred ||
      !replay.reclosed_at.contains(*preferred) ||
      replay.Of(*preferred).state(now) != ref::CircuitBreaker::State::kClosed) {
    return {};
  }
  return fmt::format(
      "{}the first attempt went to route {} at {:.1f} ms, though route {}'s breaker had "
      "closed again after a good probe at {:.1f} ms: a closed breaker sends the route its "
      "traffic",
      call, Quote(route), Ms(record.at), Quote(*preferred), replay.reclosed_at[*preferred]);
}

// A response/start on `route`: the evidence when its breaker did not let it through, else "".
std::string StartRefusedByBreaker(EventReplay& replay, const ClientRecord& record,
                                  const std::string& route) {
  const View& view = replay.view;
  const std::string call =
      view.calls.size() > 1 ? fmt::format("call {}: ", record.call) : std::string();
  ref::CircuitBreaker& breaker = replay.Of(route);
  const auto now = BreakerTime(record.at, view.tolerance.early_ms);
  const auto state = breaker.state(now);
  if (state != ref::CircuitBreaker::State::kClosed) *replay.opened = true;
  std::string skipped = ReclosedRouteSkipped(replay, record, route, now, call);
  if (!skipped.empty()) return skipped;
  if (breaker.Allow(now)) return {};
  const ref::BreakerConfig& config = replay.config;
  return fmt::format(
      "{}response/start on route {} at {:.1f} ms while its breaker "
      "was {} ({} consecutive failures, threshold {}, cooldown {} ms, {} "
      "probe(s))",
      call, Quote(route), Ms(record.at), ref::ToString(state), breaker.consecutive_failures(),
      config.threshold, config.cooldown.count(), config.half_open_probes);
}

// An attempt's ending on `route`, fed to its breaker: a failure counts (and may open it), a
// commit closes it (noting when a good probe closed it again).
void RecordEnding(EventReplay& replay, const ClientRecord& record, const std::string& route) {
  ref::CircuitBreaker& breaker = replay.Of(route);
  const EventKind type = record.event.kind;
  if (type == EventKind::kInterrupted || type == EventKind::kFailed) {
    if (!record.event.attempt.has_value()) return;
    breaker.RecordFailure(BreakerTime(record.at));
    if (breaker.state(BreakerTime(record.at)) != ref::CircuitBreaker::State::kClosed) {
      *replay.opened = true;
    }
  } else if (type == EventKind::kCommitted) {
    if (breaker.state(BreakerTime(record.at)) != ref::CircuitBreaker::State::kClosed) {
      replay.reclosed_at[route] = Ms(record.at);
    }
    breaker.RecordSuccess();
  }
}

// "No traffic while open", from the subject's own attempts: each route's breaker replayed from
// response/start and the failure or commit of each attempt (their route_id), per call or across
// the calls of one client; an attempt while it is open, or more than the declared probes while
// half-open, is a violation. Across calls it also judges "re-closes after a good probe": once a
// probe's answer closed the preferred route's breaker again, a later call's first attempt goes
// there, not to a fallback. `opened` is set when some breaker left the closed state.
std::string OpenBreakerUsed(const View& view, bool* opened) {
  const std::optional<std::string> preferred = PreferredRoute(view);
  for (const auto& history : BreakerHistories(view)) {
    EventReplay replay(view, preferred, opened);
    for (const ClientRecord* record : history) {
      const std::string route = std::string(record->event.route());
      if (route.empty()) continue;
      if (record->event.kind != EventKind::kStart) {
        RecordEnding(replay, *record, route);
        continue;
      }
      if (std::string used = StartRefusedByBreaker(replay, *record, route); !used.empty()) {
        return used;
      }
    }
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

namespace {

// A route the call may fail over to from `last` and never tried, or null.
const scenario::Route* UntriedFailover(const View& view, const provider::JournalEntry& last) {
  for (const scenario::Route& route : view.scenario.routes) {
    if (!MayGo(view, last, route)) continue;
    const bool tried = std::ranges::any_of(
        view.attempts, [&](const provider::JournalEntry* e) { return e->route == route.id; });
    if (!tried) return &route;
  }
  return nullptr;
}

// Whether the subject's attempt broke inside a 200 stream.
bool BrokeMidStream(const provider::JournalEntry* e) {
  return e->status >= 200 && e->status < 300 && !e->truth.answer && !e->truth.failure_class.empty();
}

// The first attempt after which every route was out: it lacks what the request needs, or its
// last answer was a failure the declared policy never retries; nullopt when never.
std::optional<std::size_t> AllRoutesOutAt(const View& view) {
  std::map<std::string, bool> out;
  for (const scenario::Route& route : view.scenario.routes)
    out[route.id] = !Lacks(view, route).empty();
  for (std::size_t k = 0; k < view.attempts.size(); ++k) {
    const provider::JournalEntry& entry = *view.attempts[k];
    out[entry.route] = TruthFailure(view, entry) && PolicyForbids(view, entry).has_value();
    if (std::ranges::all_of(out, [](const auto& r) { return r.second; })) return k;
  }
  return std::nullopt;
}

// With every route out after attempt `all_out_at`, nothing may be sent and the call ends at once.
Verdict EndsOnceEveryRouteIsOut(const View& view, std::size_t all_out_at) {
  const provider::JournalEntry& last = *view.attempts[all_out_at];
  if (all_out_at + 1 < view.attempts.size()) {
    return Fail(
        fmt::format("every route was out after {}, yet {} followed: cycling through "
                    "routes that cannot answer",
                    OnRoute(last), OnRoute(*view.attempts[all_out_at + 1])));
  }
  const ClientRecord* terminal = view.calls[0].terminal;
  if (terminal == nullptr) return NotApplicable("the call never ended (LIFE-001)");
  const double late = Ms(terminal->at) - EndedMs(last);
  if (late > view.tolerance.late_ms + 50) {
    return Fail(
        fmt::format("every route was out after {}, which ended at {:.1f} ms; the call "
                    "ended {:.1f} ms later instead of at once",
                    OnRoute(last), EndedMs(last), late));
  }
  return Pass();
}

}  // namespace

// An attempt that broke after its 200 (an in-stream error event, a cut, a truncation) is a
// failure of its route like any other: the call must move on from it while it may.
Verdict RouteStreamErrorsFailOver(const View& view) {
  if (!view.has_routes()) return NotApplicable(std::string(kNoRoutes));
  if (!view.single_call()) return NotApplicable("several concurrent calls share the routes");
  const ClientRecord* terminal = view.calls[0].terminal;
  if (std::ranges::none_of(view.attempts, BrokeMidStream)) {
    return NotApplicable("no attempt broke inside its stream");
  }
  const provider::JournalEntry& last = *view.attempts.back();
  const bool gave_up_on_it = BrokeMidStream(&last) && terminal != nullptr &&
                             terminal->event.kind == EventKind::kFailed &&
                             !Cancelled(view, *terminal);
  if (!gave_up_on_it) return Pass();  // the call moved on from every broken stream
  if (view.has_policy() && !view.policy().routing.failover) {
    return NotApplicable("the subject declares routing.failover false");
  }
  if (auto unstated = UnlessDeclared(view, {"max_attempts"})) return *unstated;
  if (view.has_policy() && view.policy().max_attempts &&
      static_cast<int>(view.attempts.size()) >= *view.policy().max_attempts) {
    return Pass();  // the budget was spent
  }
  if (const scenario::Route* untried = UntriedFailover(view, last)) {
    return Fail(
        fmt::format("{} broke mid-stream ({}), and the call gave up at {:.1f} ms "
                    "without trying route {}, which that failure may go to",
                    OnRoute(last), last.truth.failure_class, Ms(terminal->at), Quote(untried->id)));
  }
  return Pass();
}

Verdict RouteBudgetAndFastFailure(const View& view) {
  if (!view.has_routes()) return NotApplicable(std::string(kNoRoutes));
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  if (auto unstated = UnlessDeclared(view, {"max_attempts"})) return *unstated;
  const ref::RetryPolicy& policy = view.policy();
  if (policy.max_attempts && view.single_call() &&
      static_cast<int>(view.attempts.size()) > *policy.max_attempts) {
    return Fail(
        fmt::format("{} requests reached the routes; the declared budget is {} "
                    "attempt(s) across all routes",
                    view.attempts.size(), *policy.max_attempts));
  }
  if (!view.single_call() || view.attempts.empty() || view.refusals()) {
    return policy.max_attempts ? Pass() : NotApplicable("no attempt budget declared");
  }
  // Every route out (AllRoutesOutAt): from then on nothing may be sent.
  if (auto unstated = UnlessDeclared(view, kRetryRuleKeys)) return *unstated;
  const std::optional<std::size_t> all_out_at = AllRoutesOutAt(view);
  if (!all_out_at) {
    return policy.max_attempts ? Pass() : NotApplicable("no attempt budget declared");
  }
  return EndsOnceEveryRouteIsOut(view, *all_out_at);
}

namespace {

// The request bodies seen so far (RouteBodiesDifferOnlyInModel): the first per route, and the
// first per dialect without its model.
struct BodiesSeen {
  std::map<std::string, std::pair<const provider::JournalEntry*, json>> by_dialect;
  std::map<std::string, const provider::JournalEntry*> by_route;
};

// What is wrong with the body `entry` sent to `route`, given the bodies before it; "".
std::string BodyFault(const View& view, const provider::JournalEntry& entry,
                      const scenario::Route& route, BodiesSeen& seen) {
  json body = json::parse(entry.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) {
    return fmt::format("{} sent a body that is not a JSON object", OnRoute(entry));
  }
  const std::string model = WireModel(view.scenario, route);
  if (Str(body, "model") != model) {
    return fmt::format("{} asked for model {}; the route's wire model is {}", OnRoute(entry),
                       Quote(Str(body, "model")), Quote(model));
  }
  const auto [same, first_here] = seen.by_route.try_emplace(entry.route, &entry);
  if (!first_here && same->second->body != entry.body) {
    return fmt::format("{} sent a different body from the route's earlier {}", OnRoute(entry),
                       OnRoute(*same->second));
  }
  body.erase("model");
  const std::string dialect(scenario::ToString(route.dialect));
  const auto [other, first_of_dialect] = seen.by_dialect.try_emplace(dialect, &entry, body);
  if (!first_of_dialect && other->second.second != body) {
    return fmt::format(
        "{} and {} (both {}) sent bodies that differ in more than the "
        "wire model",
        OnRoute(*other->second.first), OnRoute(entry), dialect);
  }
  return {};
}

}  // namespace

Verdict RouteBodiesDifferOnlyInModel(const View& view) {
  if (!view.has_routes()) return NotApplicable(std::string(kNoRoutes));
  if (view.attempts.empty()) return NotApplicable("no request reached a route");
  BodiesSeen seen;
  for (const provider::JournalEntry* entry : view.attempts) {
    const scenario::Route* route = RouteNamed(view, entry->route);
    if (route == nullptr) continue;
    if (std::string fault = BodyFault(view, *entry, *route, seen); !fault.empty()) {
      return Fail(std::move(fault));
    }
  }
  return Pass();
}

Verdict RouteConnectionsClosed(const View& view) {
  if (!view.has_routes()) return NotApplicable(std::string(kNoRoutes));
  if (view.trace.journal.empty()) return NotApplicable("no request reached a route");
  for (const provider::JournalEntry& entry : view.trace.journal) {
    if (entry.end != provider::EndKind::kInProgress) continue;
    return Fail(fmt::format("{} was still open at the end of the run ({:.1f} ms)", OnRoute(entry),
                            Ms(view.trace.ended)));
  }
  return Pass();
}

Verdict AdviseSharedFateFailover(const View& view) {
  if (view.scenario.group_outages.empty()) return NotApplicable("no shared-fate outage");
  if (!view.single_call()) return NotApplicable("several concurrent calls share the routes");
  bool judged = false;
  for (std::size_t k = 0; k + 1 < view.attempts.size(); ++k) {
    const provider::JournalEntry& entry = *view.attempts[k];
    const scenario::Route* route = RouteNamed(view, entry.route);
    if (route == nullptr || route->group.empty() || entry.truth.answer) continue;
    for (const scenario::GroupOutage& outage : view.scenario.group_outages) {
      const Duration end = outage.window.length ? outage.window.from + *outage.window.length
                                                : scenario::kRouteHorizon;
      if (outage.group != route->group || entry.arrived < outage.window.from ||
          entry.arrived >= end) {
        continue;
      }
      judged = true;
      const provider::JournalEntry& next = *view.attempts[k + 1];
      const scenario::Route* to = RouteNamed(view, next.route);
      if (to == nullptr || to->id == route->id || to->group != route->group || next.arrived >= end)
        continue;
      return Fail(
          fmt::format("{} failed in group {}'s outage, and the call failed over to {} "
                      "of the same group",
                      OnRoute(entry), Quote(route->group), OnRoute(next)));
    }
  }
  if (!judged) return NotApplicable("no attempt failed inside a shared-fate outage");
  return Pass();
}

namespace {

// Where the call went after attempt `k` failed with a failure the taxonomy keeps on its route
// (or its wire model), if it broke that: the evidence, else "". `judged` is set for such a failure.
std::string LeftAgainstTaxonomy(const View& view, std::size_t k, bool* judged) {
  const provider::JournalEntry& entry = *view.attempts[k];
  const scenario::Route* from = RouteNamed(view, entry.route);
  const std::optional<ref::Failure> failure = TruthFailure(view, entry);
  if (from == nullptr || !failure || DeliveredWhole(entry)) return {};  // after commit: ROUTE-001
  const ref::Failover verdict = ref::FailoverOf(*failure);
  if (verdict == ref::Failover::kCompatibleModel) return {};
  *judged = true;
  if (k + 1 == view.attempts.size()) return {};
  const provider::JournalEntry& next = *view.attempts[k + 1];
  const scenario::Route* to = RouteNamed(view, next.route);
  if (to == nullptr || to->id == from->id) return {};
  const std::string from_model = WireModel(view.scenario, *from);
  const std::string to_model = WireModel(view.scenario, *to);
  if (verdict == ref::Failover::kSameModel && from_model == to_model) return {};
  return fmt::format(
      "{} failed with {} (failover: {}), and the next request went to "
      "{}{}",
      OnRoute(entry), ref::ToString(failure->failure_class), ref::ToString(verdict), OnRoute(next),
      verdict == ref::Failover::kSameModel
          ? fmt::format(", model {} instead of {}", Quote(to_model), Quote(from_model))
          : std::string());
}

}  // namespace

// The taxonomy's table, whatever the subject declares (a router declaring failover_on:
// any-failure is judged by it through its twin, and advised here): a failure the request itself
// causes stays on its route, a broken stream goes only to a route of the same wire model.
Verdict AdviseFailoverAsTheTaxonomySays(const View& view) {
  if (!view.has_routes()) return NotApplicable(std::string(kNoRoutes));
  if (!view.single_call()) return NotApplicable("several concurrent calls share the routes");
  if (view.has_policy() && !view.policy().routing.failover) {
    return NotApplicable("the subject declares one endpoint (routing.failover false)");
  }
  bool judged = false;
  for (std::size_t k = 0; k < view.attempts.size(); ++k) {
    if (std::string left = LeftAgainstTaxonomy(view, k, &judged); !left.empty()) {
      return Fail(std::move(left));
    }
  }
  if (!judged) {
    return NotApplicable("no attempt failed in a way that keeps it on its route or model");
  }
  return Pass();
}

namespace {

struct RouteAttempt {
  std::string route;
  double start_ms = 0, end_ms = 0;
  bool failed = true;
};

// The call's attempts as the subject's own events tell them; nullopt when some response/start
// names no route or attempt (or the subject is a black box).
std::optional<std::vector<RouteAttempt>> AttemptsFromEvents(const View& view) {
  if (view.black_box) return std::nullopt;
  std::vector<RouteAttempt> out;
  std::map<int, std::size_t> open;  // attempt number -> index in out
  for (const ClientRecord* record : view.calls[0].records) {
    const EventKind type = record->event.kind;
    const std::optional<int> attempt = record->event.attempt;
    if (type == EventKind::kStart) {
      const std::string route = std::string(record->event.route());
      if (route.empty() || !attempt) return std::nullopt;
      open[*attempt] = out.size();
      out.push_back({route, Ms(record->at), Ms(record->at), true});
    } else if (attempt && (type == EventKind::kInterrupted || type == EventKind::kCommitted ||
                           type == EventKind::kFailed)) {
      const auto found = open.find(*attempt);
      if (found == open.end()) continue;
      out[found->second].end_ms = Ms(record->at);
      out[found->second].failed = type != EventKind::kCommitted;
      open.erase(found);
    }
  }
  return out;
}

// The call's attempts with their routes and times: from the subject's own events when every
// response/start names its route (refused connections included), else from the journal when it
// holds every attempt; nullopt when neither.
std::optional<std::vector<RouteAttempt>> AttemptsByRoute(const View& view) {
  std::optional<std::vector<RouteAttempt>> named = AttemptsFromEvents(view);
  if (named && !named->empty()) return named;
  if (view.refusals()) return std::nullopt;
  std::vector<RouteAttempt> out;
  for (const provider::JournalEntry* entry : view.attempts) {
    out.push_back({entry->route, ArrivedMs(*entry), EndedMs(*entry), !entry->truth.answer});
  }
  return out;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::ranges::nth_element(values, middle);
  return *middle;
}

// One route's part in a call's attempts halved in order (AdviseFastFailingRouteShare).
struct RouteShare {
  std::vector<double> own, others;    // how long its attempts and the other routes' took, ms
  std::size_t first = 0, second = 0;  // its attempts in the first and in the second half
  bool all_failed = true;
};

RouteShare ShareOf(const std::vector<RouteAttempt>& attempts, const std::string& route,
                   std::size_t half) {
  RouteShare share;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const RouteAttempt& attempt = attempts[i];
    const double took = attempt.end_ms - attempt.start_ms;
    if (attempt.route != route) {
      share.others.push_back(took);
      continue;
    }
    share.own.push_back(took);
    share.all_failed = share.all_failed && attempt.failed;
    ++(i < half ? share.first : share.second);
  }
  return share;
}

constexpr std::size_t kMinAttemptsForShare = 12;
constexpr std::size_t kMinInSecondHalf = 6;

// The evidence when `route`, failing every attempt fast, took a much larger share of the second
// half of `total` attempts than of the first (`half`); "". `judged` is set for a fast route.
std::string FastRouteShareGrew(const std::string& route, const RouteShare& share, std::size_t half,
                               std::size_t total, bool* judged) {
  if (share.own.empty() || share.others.empty() || !share.all_failed) return {};
  const double slowest_own = std::ranges::max(share.own);
  const double others_median = Median(share.others);
  if (others_median < 50 || slowest_own * 4 > others_median) return {};
  *judged = true;
  const double share_first = static_cast<double>(share.first) / static_cast<double>(half);
  const double share_second = static_cast<double>(share.second) / static_cast<double>(total - half);
  if (share.second < kMinInSecondHalf || share_second < 0.75 || share_second < share_first + 0.25) {
    return {};
  }
  return fmt::format(
      "route {} failed every attempt fast (at most {:.1f} ms, the other "
      "routes' attempts took {:.1f} ms in the median), yet its share "
      "of the call's attempts grew from {} of the first {} to {} of "
      "the last {}",
      Quote(route), slowest_own, others_median, share.first, half, share.second, total - half);
}

}  // namespace

// A route that fails fast looks ready again soonest, and a router that picks by readiness or
// latency alone soaks up its retries there. The call's attempts are halved in order; a route
// whose every attempt failed in at most a quarter of the other routes' median attempt time
// must not take a much larger share of the second half than of the first. Thresholds keep a
// correct client quiet: the second half must hold at least six of its attempts (more than a
// breaker's default threshold of five lets through) and three quarters of the half, a quarter
// more than the first half held.
Verdict AdviseFastFailingRouteShare(const View& view) {
  if (!view.has_routes()) return NotApplicable(std::string(kNoRoutes));
  if (!view.single_call()) return NotApplicable("several concurrent calls share the routes");
  const std::optional<std::vector<RouteAttempt>> attempts = AttemptsByRoute(view);
  if (!attempts) {
    return NotApplicable(
        "refused connections never reach the journal and the subject "
        "names no route on its attempts");
  }
  if (attempts->size() < kMinAttemptsForShare) {
    return NotApplicable(fmt::format("{} attempt(s); a share is judged from {}", attempts->size(),
                                     kMinAttemptsForShare));
  }
  const std::size_t half = attempts->size() / 2;
  bool judged = false;
  for (const scenario::Route& route : view.scenario.routes) {
    const std::string grew = FastRouteShareGrew(route.id, ShareOf(*attempts, route.id, half), half,
                                                attempts->size(), &judged);
    if (!grew.empty()) return Fail(grew);
  }
  if (!judged) return NotApplicable("no route failed fast beside slower ones");
  return Pass();
}

}  // namespace faultline::harness::judge_internal
