#include "harness/judge/scenario_policy.h"

#include <fmt/format.h>

#include "reference_impl/policy_json.h"

namespace faultline::harness {
namespace {

// The recorded position of `path` inside the policy, or of its nearest recorded parent (a
// missing key is reported at the object that lacks it).
const scenario::PolicySpec::Position* PositionOf(const scenario::PolicySpec& spec,
                                                 std::string path) {
  for (;;) {
    for (const scenario::PolicySpec::Position& position : spec.positions) {
      if (position.path == path) return &position;
    }
    if (path.empty()) return nullptr;
    const std::size_t cut = path.find_last_of(".[");
    path.resize(cut == std::string::npos ? 0 : cut);
  }
}

}  // namespace

std::expected<ref::RetryPolicy, std::string> ScenarioPolicy(const scenario::Scenario& scenario) {
  if (!scenario.policy) return ref::RetryPolicy{};
  auto policy = ref::LoadPolicy(scenario.policy->json);
  if (policy) return *policy;
  const ref::PolicyError& error = policy.error();
  const scenario::PolicySpec::Position* at = PositionOf(*scenario.policy, error.path);
  const std::string where = at != nullptr
                                ? fmt::format("{}:{}:{}", scenario.source, at->line, at->column)
                                : scenario.source;
  return std::unexpected(fmt::format("{}: at policy{}{}: {}", where, error.path.empty() ? "" : ".",
                                     error.path, error.message));
}

std::vector<std::string> ScenarioPolicyErrors(std::span<const scenario::Scenario> scenarios) {
  std::vector<std::string> errors;
  for (const scenario::Scenario& scenario : scenarios) {
    if (auto policy = ScenarioPolicy(scenario); !policy) errors.push_back(policy.error());
  }
  return errors;
}

}  // namespace faultline::harness
