// Route helpers shared by the ROUTE-* checks (invariants_route.cc, invariants_route_breaker.cc,
// invariants_route_sticky.cc). Internal to the judge; pure functions of the view, but for the
// breaker replay, a value its check owns.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/judge/judge_internal.h"
#include "reference_impl/circuit_breaker.h"

namespace faultline::harness::judge_internal {

inline constexpr std::string_view kNoRoutes = "the scenario has no routes";

// The scenario's route named `id`, or null.
const scenario::Route* RouteNamed(const View& view, std::string_view id);
// "attempt N on route "x" (arrived T ms, plan)", for evidence.
std::string OnRoute(const provider::JournalEntry& entry);
// The capability the scenario's request needs that `route` lacks, or "": the client's own
// oracle, on the very body the route would get.
std::string_view Lacks(const View& view, const scenario::Route& route);
// Whether a failed `from` may move to `to` (the declared failover rule, capabilities, wire model).
bool MayGo(const View& view, const provider::JournalEntry& from, const scenario::Route& to);

// A trace time as the breaker's clock reads it, `extra_ms` later.
ref::CircuitBreaker::Time BreakerTime(Duration d, double extra_ms = 0);

// The subject's attempts and their endings in the order its breakers saw them: per call, or,
// for one client whose calls share its breakers (Trace::one_client), all calls merged in time.
std::vector<std::vector<const ClientRecord*>> BreakerHistories(const View& view);

// The declared breakers replayed from the subject's own events (ROUTE-005, ROUTE-010): one
// ref::CircuitBreaker per route, fed each attempt's start (Allow, by the check) and ending.
class EventBreakers {
 public:
  explicit EventBreakers(const ref::BreakerConfig& config) : config_(config) {}

  ref::CircuitBreaker& Of(const std::string& route);
  // An attempt's ending on `route`, fed to its breaker: a failure counts (and may open it), a
  // commit closes it (noting when a good probe closed it again).
  void RecordEnding(const ClientRecord& record, const std::string& route);

  const ref::BreakerConfig& config() const { return config_; }
  bool opened() const { return opened_; }  // some breaker left the closed state
  // When a good probe last closed `route`'s breaker again, in trace ms.
  std::optional<double> reclosed_at(const std::string& route) const;

 private:
  ref::BreakerConfig config_;
  std::map<std::string, ref::CircuitBreaker> breakers_;
  std::map<std::string, double> reclosed_at_;
  bool opened_ = false;
};

}  // namespace faultline::harness::judge_internal
