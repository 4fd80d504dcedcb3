// Route helpers shared by the ROUTE-* checks (invariants_route.cc, invariants_route_breaker.cc).
// Internal to the judge; pure functions of the view.
#pragma once

#include <string>
#include <string_view>

#include "harness/judge/judge_internal.h"

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

}  // namespace faultline::harness::judge_internal
