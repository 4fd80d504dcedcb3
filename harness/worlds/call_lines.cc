#include "harness/worlds/call_lines.h"

#include "fake_provider/admission.h"
#include "harness/worlds/request_body.h"

namespace faultline::harness {

std::vector<protocol::RouteLine> RoutesOfCall(std::vector<protocol::RouteLine> routes, int call,
                                              int calls) {
  for (protocol::RouteLine& route : routes) {
    route.base_url = provider::CallBaseUrl(route.base_url, call, calls);
  }
  return routes;
}

protocol::CallLine CallLineOf(const scenario::Scenario& scenario, const std::string& base_url,
                              const std::vector<protocol::RouteLine>& routes) {
  const CallTarget target = PrimaryTarget(scenario);
  protocol::CallLine call{.call = std::nullopt,
                          .base_url = base_url,
                          .api_key = std::string(kTestApiKey),
                          .dialect = std::string(scenario::ToString(target.dialect)),
                          .request = target.body,
                          .scenario = scenario.name,
                          .seed = std::nullopt,
                          .policy = std::nullopt,
                          .limits = std::nullopt,
                          .routes = routes};
  if (scenario.policy) call.policy = nlohmann::json::parse(scenario.policy->json);
  call.limits = protocol::CallLimits(scenario);
  return call;
}

std::vector<protocol::CallLine> CallLines(const protocol::CallLine& common, int calls,
                                          std::uint64_t seed) {
  std::vector<protocol::CallLine> lines;
  for (int i = 0; i < calls; ++i) {
    protocol::CallLine call = common;
    call.seed = seed + i;
    call.base_url = provider::CallBaseUrl(common.base_url, i, calls);
    call.routes = RoutesOfCall(common.routes, i, calls);
    lines.push_back(std::move(call));
  }
  return lines;
}

std::string LineText(const protocol::CallLine& call) {
  return protocol::ToJson(call).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace faultline::harness
