// ROUTE-010: where each call of one client starts (docs/routes.md, "Sticky clients"). A client
// that declares no stickiness starts every call on the primary; a sticky one (`routing.sticky`)
// may start a call on a route that one of its failovers moved to, and starts on the primary
// again once reset_ms has passed since that failover.
//
// Judged across the calls of one client (Trace::one_client), from the subject's own attempts
// (each response/start and its route_id), or, for a black box that cannot have lost an attempt
// to a refused connection, from the journal. A failover is an attempt that begins on another
// route than its call's attempt before it (what ref::StickyRoute counts too). The rules are
// written so that no correct client fails them:
//   - any failover may be the one the client went by: calls run concurrently, and ai-fallback
//     moves on after a call's last failure without another attempt (so the route it keeps is
//     one an earlier failover moved to, within reset_ms of it: its reset counts from its last
//     reset, which came before all of them). A sticky call may start on a route any failover
//     moved to within reset_ms before it; the primary is always right.
//   - where the declared breaker held the primary (not closed) at the call's first attempt,
//     ROUTE-005 judges and this check does not; so too where it held the primary and the route
//     the call started on within one cooldown before it (a call that finds every route held
//     waits for the first to reopen, up to a cooldown, and starts there even if the primary's
//     probe meanwhile closed it); nor where the route the call started on lacks what the request
//     needs (ROUTE-003's).
//   - the times carry the run's tolerance both ways (a late-received failover counts).
#include <algorithm>
#include <cmath>
#include <expected>
#include <limits>
#include <map>

#include "harness/judge/judge_internal.h"
#include "harness/judge/route_helpers.h"

namespace faultline::harness::judge_internal {
namespace {

// An attempt as this check reads it: its call, when it began, where it went.
struct AttemptStart {
  int call = 0;
  double at_ms = 0;
  std::string route;
};

// A failover of the client: an attempt that began on `route` after its call's attempt before it
// went elsewhere.
struct Move {
  double at_ms = 0;
  std::string route;
};

// While a route's replayed breaker was not closed: [from, to); `to` is when a good probe closed
// it again.
struct Held {
  double from_ms = 0;
  double to_ms = std::numeric_limits<double>::infinity();
};

struct Starts {
  std::vector<AttemptStart> firsts;  // each call's first attempt, in time order
  std::vector<Move> moves;
  std::map<std::string, std::vector<Held>> held;  // by route, in time order
};

// The route a call's first attempt goes to when every breaker is closed: the one route of the
// lowest priority that has what the request needs; nullopt when several share it (a weighted
// draw) or none fits.
std::optional<std::string> PrimaryRoute(const View& view) {
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

// Notes `attempt`: the call's first, or a failover when its call's previous attempt went
// elsewhere.
void Note(Starts& starts, std::map<int, std::string>& last_route, AttemptStart attempt) {
  const auto [previous, first] = last_route.try_emplace(attempt.call, attempt.route);
  if (first) {
    starts.firsts.push_back(std::move(attempt));
    return;
  }
  if (previous->second != attempt.route) {
    previous->second = attempt.route;
    starts.moves.push_back({attempt.at_ms, std::move(attempt.route)});
  }
}

// `route`'s breaker after `record` on it: when it left or regained the closed state (only a
// recorded failure or success changes that; time alone moves open to half-open).
void TrackHeld(Starts& starts, EventBreakers& breakers, const std::string& route,
               const ClientRecord& record) {
  std::vector<Held>& held = starts.held[route];
  const bool closed =
      breakers.Of(route).state(BreakerTime(record.at)) == ref::CircuitBreaker::State::kClosed;
  const bool was_held = !held.empty() && std::isinf(held.back().to_ms);
  if (!closed && !was_held) held.push_back({Ms(record.at)});
  if (closed && was_held) held.back().to_ms = Ms(record.at);
}

// From the subject's own events: every attempt with its route_id, the client's calls merged in
// time, its declared breaker (if any) replayed over them as ROUTE-005 replays it.
std::expected<Starts, std::string> FromEvents(const View& view) {
  const std::optional<ref::BreakerConfig>& config = view.policy().routing.breaker;
  std::optional<EventBreakers> breakers;
  if (config) breakers.emplace(*config);
  Starts starts;
  std::map<int, std::string> last_route;
  for (const auto& history : BreakerHistories(view)) {
    for (const ClientRecord* record : history) {
      const std::string route(record->event.route());
      if (record->event.kind == EventKind::kStart) {
        if (route.empty()) return std::unexpected("a response/start names no route_id");
        Note(starts, last_route, {record->call, Ms(record->at), route});
        if (breakers) (void)breakers->Of(route).Allow(BreakerTime(record->at));
      } else if (breakers && !route.empty()) {
        breakers->RecordEnding(*record, route);
      }
      if (breakers && !route.empty()) TrackHeld(starts, *breakers, route, *record);
    }
  }
  return starts;
}

// From the journal, for a black box: every request that reached a route, by arrival.
std::expected<Starts, std::string> FromJournal(const View& view) {
  if (view.refusals()) {
    return std::unexpected(
        "black-box subject, and some connections may be refused, which never reach the "
        "journal: where each call started is unknown");
  }
  if (view.policy().routing.breaker) {
    return std::unexpected(
        "black-box subject declaring a breaker: its breakers cannot be replayed from its "
        "events (ROUTE-005 judges them from the journal)");
  }
  Starts starts;
  std::map<int, std::string> last_route;
  for (const provider::JournalEntry* entry : view.attempts) {
    if (entry->route.empty() || entry->call < 0) {
      return std::unexpected("the journal does not say which call sent each request");
    }
    Note(starts, last_route, {entry->call, ArrivedMs(*entry), entry->route});
  }
  return starts;
}

// Whether `route`'s breaker was not closed at some time in [from_ms, to_ms].
bool HeldWithin(const Starts& starts, const std::string& route, double from_ms, double to_ms) {
  const auto found = starts.held.find(route);
  if (found == starts.held.end()) return false;
  return std::ranges::any_of(found->second, [&](const Held& held) {
    return held.from_ms <= to_ms && held.to_ms > from_ms;
  });
}

// Whether the declared breakers explain a first attempt that went to neither the primary nor a
// sticky route (the file's header says how): ROUTE-005's to judge.
bool BreakerExplains(const View& view, const Starts& starts, const AttemptStart& first,
                     const std::string& primary) {
  if (!view.policy().routing.breaker) return false;
  const double late = view.tolerance.late_ms;
  const double to = first.at_ms + view.tolerance.early_ms;
  if (HeldWithin(starts, primary, first.at_ms - late, to)) return true;
  const double waited_from =
      first.at_ms - static_cast<double>(view.policy().routing.breaker->cooldown.count()) - late;
  return HeldWithin(starts, primary, waited_from, to) &&
         HeldWithin(starts, first.route, waited_from, to);
}

// When a good probe last closed `route`'s breaker again before `at_ms`, if ever.
std::optional<double> ReclosedBefore(const Starts& starts, const std::string& route, double at_ms) {
  std::optional<double> last;
  const auto found = starts.held.find(route);
  if (found == starts.held.end()) return last;
  for (const Held& held : found->second) {
    if (held.to_ms <= at_ms) last = held.to_ms;
  }
  return last;
}

// The last failover to `route` no later than `at_ms` (with the early room), or nullopt.
std::optional<double> LastMoveTo(const View& view, const Starts& starts, const std::string& route,
                                 double at_ms) {
  std::optional<double> last;
  for (const Move& move : starts.moves) {
    if (move.route == route && move.at_ms <= at_ms + view.tolerance.early_ms) {
      last = std::max(last.value_or(move.at_ms), move.at_ms);
    }
  }
  return last;
}

std::string WhyNotThere(const View& view, const Starts& starts, const AttemptStart& first,
                        const std::string& primary) {
  const std::optional<ref::StickyConfig>& sticky = view.policy().routing.sticky;
  const std::optional<double> moved = LastMoveTo(view, starts, first.route, first.at_ms);
  const std::string head =
      fmt::format("call {}: the first attempt went to route {} at {:.1f} ms, not to the primary {}",
                  first.call, Quote(first.route), first.at_ms, Quote(primary));
  std::string reclosed;
  if (const std::optional<double> at = ReclosedBefore(starts, primary, first.at_ms)) {
    reclosed = fmt::format(" (its breaker closed again after a good probe at {:.1f} ms)", *at);
  }
  if (!sticky) {
    return fmt::format(
        "{}{}: the subject declares no stickiness (routing.sticky), so every call starts on the "
        "primary{}",
        head, reclosed,
        moved ? fmt::format("; the client's failover to {} at {:.1f} ms carries over to no "
                            "later call",
                            Quote(first.route), *moved)
              : std::string());
  }
  if (!moved) {
    return fmt::format("{}{}, and no failover of the client had moved to {} before it", head,
                       reclosed, Quote(first.route));
  }
  return fmt::format(
      "{}{}, though the declared routing.sticky.reset_ms ({} ms) had passed since the client's "
      "last failover to it, at {:.1f} ms ({})",
      head, reclosed, sticky->reset.count(), *moved, LateRoom(view.tolerance));
}

// Whether `first` went where the declared policy lets a call start: the primary, or (sticky)
// a route a failover moved to within reset_ms before it.
bool MayStartThere(const View& view, const Starts& starts, const AttemptStart& first) {
  const std::optional<ref::StickyConfig>& sticky = view.policy().routing.sticky;
  if (!sticky) return false;
  const auto reset_ms = static_cast<double>(sticky->reset.count());
  return std::ranges::any_of(starts.moves, [&](const Move& move) {
    return move.route == first.route && move.at_ms <= first.at_ms + view.tolerance.early_ms &&
           move.at_ms + reset_ms + view.tolerance.late_ms > first.at_ms;
  });
}

}  // namespace

Verdict RouteStickyHonoured(const View& view) {
  if (!view.has_routes()) return NotApplicable(std::string(kNoRoutes));
  if (view.calls.size() < 2) return NotApplicable("one call: nothing carries over to another");
  if (!view.trace.one_client) {
    return NotApplicable("the calls share no client (one process a call): each starts afresh");
  }
  if (!view.has_policy()) return NotApplicable(NoPolicy(view));
  if (!view.policy().routing.failover) {
    return NotApplicable("the subject declares one endpoint (routing.failover false)");
  }
  const std::optional<std::string> primary = PrimaryRoute(view);
  if (!primary) {
    return NotApplicable(
        "no single route of the lowest priority has what the request needs: a call's first "
        "route is a weighted draw, or none fits");
  }
  auto starts = view.black_box ? FromJournal(view) : FromEvents(view);
  if (!starts && !view.black_box) starts = FromJournal(view);
  if (!starts) return NotApplicable(starts.error());
  if (starts->firsts.size() < 2) return NotApplicable("fewer than two calls made an attempt");
  bool carried = false;  // some call started after a failover of the client
  for (const AttemptStart& first : starts->firsts) {
    carried = carried || std::ranges::any_of(starts->moves, [&](const Move& move) {
                return move.at_ms <= first.at_ms + view.tolerance.early_ms;
              });
    if (first.route == *primary || MayStartThere(view, *starts, first)) continue;
    const scenario::Route* route = RouteNamed(view, first.route);
    if (route != nullptr && !Lacks(view, *route).empty()) continue;  // ROUTE-003's
    if (BreakerExplains(view, *starts, first, *primary)) continue;   // ROUTE-005's
    return Fail(WhyNotThere(view, *starts, first, *primary));
  }
  if (!carried) return NotApplicable("no call started after a failover of the client");
  return Pass();
}

}  // namespace faultline::harness::judge_internal
