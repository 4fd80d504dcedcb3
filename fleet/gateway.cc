#include "fleet/gateway.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>
#include <vector>

namespace faultline::fleet {
namespace {

using std::chrono::milliseconds;

ref::BackoffConfig BackoffOf(const scenario::FleetGateway& spec) {
  ref::BackoffConfig backoff;
  backoff.base = std::chrono::duration_cast<milliseconds>(spec.backoff_base);
  backoff.cap = std::chrono::duration_cast<milliseconds>(spec.backoff_cap);
  backoff.multiplier = 2.0;
  switch (spec.jitter) {
    case scenario::FleetJitter::kNone:
      backoff.strategy = ref::BackoffStrategy::kExponential;
      backoff.jitter = 0;
      break;
    case scenario::FleetJitter::kFull:
      backoff.strategy = ref::BackoffStrategy::kFullJitter;
      break;
    case scenario::FleetJitter::kEqual:
      backoff.strategy = ref::BackoffStrategy::kEqualJitter;
      break;
    case scenario::FleetJitter::kDecorrelated:
      backoff.strategy = ref::BackoffStrategy::kDecorrelatedJitter;
      break;
  }
  return backoff;
}

std::optional<std::chrono::microseconds> PerTryTimeout(const scenario::FleetGateway& spec) {
  if (!spec.per_try_timeout) return std::nullopt;
  return *spec.per_try_timeout;
}

}  // namespace

ref::RetryPolicy GatewayPolicy(const scenario::FleetGateway& spec) {
  ref::RetryPolicy policy;
  policy.max_attempts = spec.max_attempts;
  policy.backoff = BackoffOf(spec);
  policy.retry_after.honor = spec.honor_retry_after;
  policy.retry_after.mode = ref::HintMode::kFloor;
  policy.retry_after.cap = std::nullopt;  // a gateway that honours the hint waits it out
  policy.retry_after.jitter = 0;
  policy.min_attempt_time = milliseconds(0);
  policy.timeouts.total = std::nullopt;  // the layer above's timeout bounds the whole request
  policy.timeouts.response_headers = std::nullopt;
  policy.budget = std::nullopt;
  return policy;
}

GatewayLayer::GatewayLayer(const scenario::FleetGateway& spec, const scenario::Chaos* chaos,
                           int overload_status, std::uint64_t seed)
    : spec_(spec),
      policy_(GatewayPolicy(spec)),
      outcomes_(policy_, chaos, overload_status,
                PerTryTimeout(spec).transform([](auto t) { return Micros{t.count()}; })),
      rng_(seed) {}

GatewayVerdict GatewayLayer::OnAnswer(GatewaySession& session, Micros now, const Outcome& below,
                                      std::optional<Micros> hint) {
  session.in_flight = false;
  const std::optional<Micros> passed = spec_.pass_retry_after ? hint : std::nullopt;
  Outcome handed = outcomes_.Relay(below);
  if (!spec_.pass_retry_after) handed.header_hints = false;
  if (below.success) return {std::nullopt, handed, std::nullopt};

  ref::DecisionInput& input = outcomes_.Input(below);
  input.failure.retry_after = std::nullopt;
  if (hint) input.failure.retry_after = milliseconds((*hint + 999) / 1000);
  input.attempt = session.attempt;
  input.now = ref::PolicyClock::time_point(std::chrono::microseconds(now));
  input.deadline = std::nullopt;
  input.previous_delay = std::nullopt;
  if (session.previous_delay_ms >= 0)
    input.previous_delay = milliseconds(session.previous_delay_ms);
  // Hints read from a chaos response's headers count only when every layer below passed them.
  std::vector<ref::RetryHint> dropped;
  if (!below.header_hints) std::swap(dropped, input.hints);
  const ref::Decision decision = ref::Decide(policy_, input, rng_);
  if (!below.header_hints) std::swap(dropped, input.hints);
  if (!decision.retry()) return {std::nullopt, handed, passed};
  session.previous_delay_ms = static_cast<std::int32_t>(
      std::min<std::int64_t>(decision.delay.count(), std::numeric_limits<std::int32_t>::max()));
  return {decision.delay.count() * 1000, handed, passed};
}

}  // namespace faultline::fleet
