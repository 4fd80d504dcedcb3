// The retry policy a scenario runs the reference client with (`policy:` in the scenario file).
//
// A scenario may declare the policy its `expect:` block is written for: a total deadline that
// must include the backoff sleeps, a budget, an idle timeout. The scenario library keeps that
// policy as JSON text with the position of every value (scenario.h, PolicySpec); this is where
// it is parsed, with the reference client's strict loader (docs/policy.md), and where a bad key
// is reported at its file, line and column. Without `policy:` a scenario runs with the
// reference defaults.
//
// Pure functions; thread-safety: reentrant.
#pragma once

#include <expected>
#include <span>
#include <string>
#include <vector>

#include "reference_impl/policy.h"
#include "scenarios/scenario.h"

namespace faultline::harness {

// The scenario's policy, or the reference defaults when it declares none. The error reads
// "file:line:column: at policy.backoff.cap_ms: ..." like every other scenario error.
std::expected<ref::RetryPolicy, std::string> ScenarioPolicy(const scenario::Scenario& scenario);

// One error line per scenario whose policy does not load (empty when all do).
std::vector<std::string> ScenarioPolicyErrors(std::span<const scenario::Scenario> scenarios);

}  // namespace faultline::harness
