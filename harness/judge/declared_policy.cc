#include "harness/judge/declared_policy.h"

#include "harness/judge/scenario_policy.h"
#include "harness/trace/protocol.h"
#include "reference_impl/policy_json.h"

namespace faultline::harness {

DeclaredPolicy ParseDeclaredPolicy(const nlohmann::json& policy) {
  DeclaredPolicy out;
  if (policy.is_null()) return out;
  out.present = true;
  auto parsed = ref::PolicyFromJson(policy);
  if (!parsed) {
    out.error = parsed.error().ToString();
    return out;
  }
  out.policy = std::move(*parsed);
  return out;
}

DeclaredPolicy ReadDeclaredPolicy(const Trace& trace) {
  for (const ClientRecord& record : trace.client) {
    if (record.call != 0 || record.event.kind != EventKind::kHello) continue;
    return ParseDeclaredPolicy(record.event.policy.value_or(nlohmann::json()));
  }
  return {};
}

DelayBounds BackoffBounds(const ref::BackoffConfig& backoff, int retry_index) {
  if (backoff.strategy == ref::BackoffStrategy::kDecorrelatedJitter) {
    const auto widest = ref::Bounds(backoff, retry_index, backoff.cap);
    return {static_cast<double>(std::min(backoff.base, backoff.cap).count()),
            static_cast<double>(widest.upper.count())};
  }
  const ref::BackoffBounds bounds = ref::Bounds(backoff, retry_index);
  return {static_cast<double>(bounds.lower.count()), static_cast<double>(bounds.upper.count())};
}

bool DeclaresScenarioPolicy(const DeclaredPolicy& declared, const scenario::Scenario& scenario) {
  if (!declared.usable()) return false;
  const auto expected = ScenarioPolicy(scenario);
  return expected && declared.policy == *expected;
}

}  // namespace faultline::harness
