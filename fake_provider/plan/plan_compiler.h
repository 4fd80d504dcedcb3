// The plan compiler: scenario response entries -> response plans (timed bytes).
//
// CompiledScenario is built once per session from a validated Scenario. It renders every response
// entry's bodies and SSE events ahead of time with placeholder ids; Plan() then copies those bytes,
// writes in the per-request ids, dates and Retry-After values, applies framing and the fault
// schedule (delays, stalls, heartbeats, injected events, drips, split writes, termination), and
// wraps the body in chunked transfer coding that it controls byte for byte.
//
// Sans-I/O: `now` is passed in. Immutable after construction; Plan() is const and thread-safe.
#pragma once

#include <cstdint>
#include <memory>

#include "fake_provider/plan/plan.h"
#include "fake_provider/wire/dialect.h"
#include "scenarios/scenario.h"

namespace faultline::provider {

struct PlanRequest {
  int attempt = 1;         // 1-based; feeds the ids
  bool stream = true;      // the request asked for SSE
  std::uint64_t seed = 0;  // the session's seed; feeds the ids
  WallTime now;            // the request's arrival; feeds Date, Retry-After dates, `created`
  int input_tokens = 0;    // estimated from the request body, for default usage
};

class CompiledScenario {
 public:
  explicit CompiledScenario(scenario::Scenario scenario);
  // Same, with another writer than WriterFor(scenario.dialect) (null: that one). For tests.
  CompiledScenario(scenario::Scenario scenario, const DialectWriter* writer);
  ~CompiledScenario();

  const scenario::Scenario& scenario() const { return scenario_; }
  const DialectWriter& writer() const { return *writer_; }

  // The plan that answers `request` with `response` (an entry of this scenario's responses or
  // chaos choices).
  ResponsePlan Plan(const scenario::ResponseSpec& response, const PlanRequest& request) const;

  // A plan for a request the scenario does not script (wrong path 404, wrong method 405, 429 from
  // the stateful rate limit with its honest Retry-After), in the dialect's error shape.
  ResponsePlan ErrorPlan(int status, scenario::ErrorKind kind, std::string message,
                         std::optional<Duration> retry_after, const PlanRequest& request) const;

 private:
  struct Rendered;  // pre-rendered bytes, per response entry
  scenario::Scenario scenario_;
  const DialectWriter* writer_;
  std::unique_ptr<Rendered> rendered_;
};

}  // namespace faultline::provider
