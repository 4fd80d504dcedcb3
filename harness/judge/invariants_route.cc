// ROUTE-*, ADV-006, ADV-007 and ADV-009: routing and failover (docs/routes.md), judged from the
// journal (which route got each request and what it sent back) and the subject's own events (the
// route_id of every attempt). ROUTE-004 is in invariants_retry.cc, beside the Retry-After rules it
// shares; ROUTE-005 (the breaker replayed) in invariants_route_breaker.cc, ROUTE-010 (where the
// calls of one client start) in invariants_route_sticky.cc. A check whose evidence
// is missing (no routes, no route_id, no declared policy) is n/a, never a pass.
#include <array>
#include <map>
#include <set>

#include "fake_provider/admission.h"
#include "harness/judge/judge_internal.h"
#include "harness/judge/route_helpers.h"
#include "harness/worlds/request_body.h"
#include "reference_impl/circuit_breaker.h"
#include "reference_impl/failover.h"
#include "reference_impl/route_registry.h"
#include "scenarios/parse_limits.h"
#include "scenarios/route_scenario.h"

namespace faultline::harness::judge_internal {

using nlohmann::json;

const scenario::Route* RouteNamed(const View& view, std::string_view id) {
  const auto found = std::ranges::find(view.scenario.routes, id, &scenario::Route::id);
  return found == view.scenario.routes.end() ? nullptr : &*found;
}

std::string OnRoute(const provider::JournalEntry& entry) {
  return fmt::format("attempt {} on route {} (arrived {:.1f} ms, {})", entry.attempt,
                     Quote(entry.route), ArrivedMs(entry), entry.plan_summary);
}

std::string_view Lacks(const View& view, const scenario::Route& route) {
  return ref::MissingCapability(RouteCapabilitiesOf(route.capabilities),
                                ref::NeedsOf(RouteRequestBody(view.scenario, route).dump()));
}

namespace {

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

}  // namespace

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
  if (auto unreported = UnlessTextReported(view)) return *unreported;
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

// The model a request asked for: its body's `model`, or the path's for the dialects that name it
// there and not in the body: Gemini (`.../v1beta/models/{model}:streamGenerateContent?alt=sse`)
// and Bedrock (`.../model/{modelId}/converse-stream`, the id URL-encoded as the AWS SDKs send it).
std::string RequestedModel(const provider::JournalEntry& entry, scenario::Dialect dialect,
                           const json& body) {
  const auto segment_after = [&](std::string_view prefix, std::string_view ends) -> std::string {
    const std::string_view target = entry.target;
    const std::size_t at = target.rfind(prefix);
    if (at == std::string_view::npos) return {};
    const std::string_view rest = target.substr(at + prefix.size());
    return provider::PercentDecode(rest.substr(0, rest.find_first_of(ends)));
  };
  switch (dialect) {
    case scenario::Dialect::kGemini:
      return segment_after("/models/", ":?");
    case scenario::Dialect::kBedrockConverse:
      return segment_after("/model/", "/?");
    default:
      return Str(body, "model");
  }
}

// What is wrong with the body `entry` sent to `route`, given the bodies before it; "".
std::string BodyFault(const View& view, const provider::JournalEntry& entry,
                      const scenario::Route& route, BodiesSeen& seen) {
  // The subject wrote this body: no deeper than any outside JSON, or comparing it would recurse
  // as deep as it nests.
  json body = scenario::NestsDeeperThan(entry.body, scenario::kMaxJsonDepth)
                  ? json()
                  : json::parse(entry.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) {
    return fmt::format("{} sent a body that is not a JSON object", OnRoute(entry));
  }
  const std::string model = WireModel(view.scenario, route);
  if (const std::string asked = RequestedModel(entry, route.dialect, body); asked != model) {
    return fmt::format("{} asked for model {}; the route's wire model is {}", OnRoute(entry),
                       Quote(asked), Quote(model));
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
  if (view.trace.own_request) {
    return NotApplicable(
        "the subject sends a request of its own choosing (an app), not the "
        "routes' bodies: no route's wire model was its to follow");
  }
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
