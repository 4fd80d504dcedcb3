#include "scenarios/route_scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace faultline::scenario {
namespace {

constexpr std::size_t kMaxFlapWindows = 100'000;

Duration Stretch(Duration value, double factor) {
  return Duration(static_cast<Duration::rep>(static_cast<double>(value.count()) * factor));
}

void StretchWait(Wait& wait, double factor) {
  if (!wait.forever) wait.duration = Stretch(wait.duration, factor);
}

// A brownout's latency: every delay the answer has, `factor` times as long.
void StretchDelays(ResponseSpec& response, double factor) {
  response.headers_delay = Stretch(response.headers_delay, factor);
  if (response.headers_stall) StretchWait(*response.headers_stall, factor);
  Content& content = response.content;
  content.chunk_delay = Stretch(content.chunk_delay, factor);
  content.drip_every = Stretch(content.drip_every, factor);
  for (EventFault& fault : content.faults) StretchWait(fault.wait, factor);
  StretchWait(content.end.wait, factor);
}

// Refusal is a listener that is not there: the route's down time as listener outages.
std::vector<ListenerOutage> RefusalWindows(const Health& health) {
  std::vector<ListenerOutage> out;
  for (const TimeWindow& window : health.down) {
    out.push_back({window.from, window.length.value_or(kRouteHorizon)});
  }
  if (health.flap_up && health.flap_down) {
    const Duration cycle = *health.flap_up + *health.flap_down;
    for (Duration start = *health.flap_up; start < kRouteHorizon && out.size() < kMaxFlapWindows;
         start += cycle) {
      out.push_back({start, *health.flap_down});
    }
  }
  return out;
}

}  // namespace

bool DownAt(const Health& health, Duration at) {
  if (std::any_of(health.down.begin(), health.down.end(),
                  [at](const TimeWindow& window) { return window.Contains(at); })) {
    return true;
  }
  if (!health.flap_up || !health.flap_down || at.count() < 0) return false;
  const Duration cycle = *health.flap_up + *health.flap_down;
  return at % cycle >= *health.flap_up;
}

Scenario RouteScenario(const Scenario& scenario, const Route& route) {
  Scenario out = scenario;
  out.name = fmt::format("{}#{}", scenario.name, route.id);
  out.dialect = route.dialect;
  if (!route.model.empty()) out.request.model = route.model;
  out.routes.clear();
  out.group_outages.clear();
  out.route_id = route.id;
  out.responses = route.responses;
  out.health = route.health;
  if (out.health) {
    for (const GroupOutage& outage : scenario.group_outages) {
      if (outage.group == route.group) out.health->down.push_back(outage.window);
    }
  }
  const Header id{std::string(kRouteHeader), route.id};
  for (ResponseSpec& response : out.responses) {
    if (out.health) StretchDelays(response, out.health->latency_multiplier);
    response.headers.push_back(id);
  }
  if (out.health) {
    out.health->failure_response.headers.push_back(id);
    if (out.health->failure == Health::Failure::kRefused) {
      out.listener_outages = RefusalWindows(*out.health);
    }
  }
  return out;
}

const Route& PrimaryRoute(const Scenario& scenario) {
  return *std::ranges::min_element(scenario.routes, {}, &Route::priority);
}

std::string RouteSessionId(std::string_view session_id, std::string_view route_id) {
  return fmt::format("{}/route/{}", session_id, route_id);
}

}  // namespace faultline::scenario
