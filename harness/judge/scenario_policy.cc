#include "harness/judge/scenario_policy.h"

#include <fmt/format.h>

#include "reference_impl/policy_json.h"

namespace faultline::harness {

std::expected<ref::RetryPolicy, std::string> ScenarioPolicy(const scenario::Scenario& scenario) {
  if (!scenario.policy) return ref::RetryPolicy{};
  auto policy = ref::LoadPolicy(scenario.policy->json);
  if (policy) return *policy;
  const ref::PolicyError& error = policy.error();
  return std::unexpected(
      scenario.policy->ErrorAt(scenario.source, "policy", error.path, error.message).ToString());
}

std::vector<std::string> ScenarioPolicyErrors(std::span<const scenario::Scenario> scenarios) {
  std::vector<std::string> errors;
  for (const scenario::Scenario& scenario : scenarios) {
    if (auto policy = ScenarioPolicy(scenario); !policy) errors.push_back(policy.error());
  }
  return errors;
}

}  // namespace faultline::harness
