#include "harness/request_body.h"

#include "reference_impl/route_json.h"
#include "scenarios/route_scenario.h"

namespace faultline::harness {
namespace {

using nlohmann::json;

json WeatherParameters() {
  return {{"type", "object"},
          {"properties", {{"city", {{"type", "string"}}}}},
          {"required", json::array({"city"})}};
}

json Tools(scenario::Dialect dialect) {
  switch (dialect) {
    case scenario::Dialect::kOpenAiChat:
      return json::array({{{"type", "function"},
                           {"function",
                            {{"name", "get_weather"},
                             {"description", "Current weather for a city"},
                             {"parameters", WeatherParameters()}}}}});
    case scenario::Dialect::kAnthropicMessages:
      return json::array({{{"name", "get_weather"},
                           {"description", "Current weather for a city"},
                           {"input_schema", WeatherParameters()}}});
    case scenario::Dialect::kOpenAiResponses:
      return json::array({{{"type", "function"},
                           {"name", "get_weather"},
                           {"description", "Current weather for a city"},
                           {"parameters", WeatherParameters()}}});
  }
  return json::array();
}

}  // namespace

std::string DefaultModel(scenario::Dialect dialect) {
  switch (dialect) {
    case scenario::Dialect::kOpenAiChat:
    case scenario::Dialect::kOpenAiResponses:
      return "gpt-4o-mini";
    case scenario::Dialect::kAnthropicMessages:
      return "claude-sonnet-4-20250514";
  }
  return "model";
}

json RequestBody(scenario::Dialect dialect, const scenario::RequestSpec& request) {
  const std::string model = request.model.empty() ? DefaultModel(dialect) : request.model;
  json body;
  if (dialect == scenario::Dialect::kOpenAiResponses) {
    body = {{"model", model}, {"input", request.message}, {"stream", request.stream}};
    body["max_output_tokens"] = request.max_tokens;
  } else {
    body = {{"model", model},
            {"messages", json::array({{{"role", "user"}, {"content", request.message}}})},
            {"stream", request.stream},
            {"max_tokens", request.max_tokens}};
  }
  if (request.tools) body["tools"] = Tools(dialect);
  return body;
}

std::string WireModel(const scenario::Scenario& scenario, const scenario::Route& route) {
  if (!route.model.empty()) return route.model;
  return scenario.request.model.empty() ? DefaultModel(route.dialect) : scenario.request.model;
}

std::vector<protocol::RouteLine> RouteLines(
    const scenario::Scenario& scenario,
    const std::function<std::string(std::string_view)>& base_url_of) {
  std::vector<protocol::RouteLine> lines;
  for (const scenario::Route& route : scenario.routes) {
    scenario::RequestSpec request = scenario.request;
    request.model = WireModel(scenario, route);
    const json body = RequestBody(route.dialect, request);
    const scenario::Capabilities& caps = route.capabilities;
    lines.push_back(
        {.id = route.id,
         .base_url = base_url_of(route.id),
         .dialect = std::string(scenario::ToString(route.dialect)),
         .model = request.model,
         .request = body,
         .capabilities = ref::CapabilitiesToJson({.tools = caps.tools,
                                                  .reasoning = caps.reasoning,
                                                  .images = caps.images,
                                                  .strict_tools = caps.strict_tools,
                                                  .stop_sequences = caps.stop_sequences,
                                                  .prefill = caps.prefill,
                                                  .context_window = caps.context_window}),
         .priority = route.priority,
         .weight = route.weight,
         .group = route.group});
  }
  return lines;
}

std::expected<std::vector<ref::CallRoute>, std::string> ReferenceRoutes(
    const std::vector<protocol::RouteLine>& lines) {
  if (lines.empty()) return std::vector<ref::CallRoute>{};
  json routes = json::array();
  for (const protocol::RouteLine& line : lines) routes.push_back(protocol::ToJson(line));
  return ref::RoutesFromJson(routes);
}

CallTarget PrimaryTarget(const scenario::Scenario& scenario) {
  if (scenario.routes.empty()) {
    return {scenario.dialect, RequestBody(scenario.dialect, scenario.request), ""};
  }
  const scenario::Route& route = scenario::PrimaryRoute(scenario);
  scenario::RequestSpec request = scenario.request;
  if (!route.model.empty()) request.model = route.model;
  return {route.dialect, RequestBody(route.dialect, request), route.id};
}

}  // namespace faultline::harness
