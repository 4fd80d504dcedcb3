// The scenario one route serves: how a scenario with `routes:` becomes one endpoint per route.
//
// The fake provider serves each route as a session of its own (its own base URL, attempt
// counter and, where it refuses connections, its own port), compiled from RouteScenario(): the
// parent's request and expectations with the route's dialect, wire model and answers, its
// health (group outages folded in; refusal windows turned into listener outages), every delay
// stretched by a brownout's latency multiplier, and the route id on every response.
//
// Values only: pure functions, no I/O, no clocks.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "scenarios/scenario.h"

namespace faultline::scenario {

// The response header that names the route that answered.
inline constexpr std::string_view kRouteHeader = "x-faultline-route";

// The longest span of refusal windows a route scenario spells out (a flapping route's cycles
// repeat up to here) and the length that stands for "never ends".
inline constexpr Duration kRouteHorizon = std::chrono::hours(24);

// Whether the route is down at scenario time `at` (a hard-down window or the down half of a
// flapping cycle).
bool DownAt(const Health& health, Duration at);

// The scenario the endpoint of `route` (a route of `scenario`) serves.
Scenario RouteScenario(const Scenario& scenario, const Route& route);

// The route a client tries first: the lowest priority, the first of those in scenario order.
// Requires routes.
const Route& PrimaryRoute(const Scenario& scenario);

// The session id of a route under its scenario's session: "<session>/route/<route id>". Session
// ids never contain the path segment "route" otherwise, so the two cannot be confused.
std::string RouteSessionId(std::string_view session_id, std::string_view route_id);

}  // namespace faultline::scenario
