// The answers an attempt can get in a fleet run, each as the reference client classifies it:
// success, the provider's overload answer (429/503/529 through ClassifyHttpError), the client's
// own per-attempt timeout, a local rejection (adaptive throttling), and the faults of the
// scenario's `chaos` section drawn by probability. Each failure is held as a ready DecisionInput
// so that the hot path only fills in the attempt, the time and the hint. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fleet/event_queue.h"
#include "reference_impl/backoff.h"
#include "reference_impl/policy.h"
#include "scenarios/scenario.h"

namespace faultline::fleet {

struct Outcome {
  bool success = false;
  // A throttling answer (rate-limit or provider-overloaded class), which slows AWS's adaptive
  // client-side rate limiter.
  bool throttling = false;
  std::uint16_t index = 0;  // into the DecisionInputs (failures only)
};

class Outcomes {
 public:
  Outcomes(const ref::RetryPolicy& policy, const scenario::Chaos* chaos, int overload_status,
           std::optional<Micros> attempt_timeout);

  const Outcome& overload() const { return overload_; }
  // The 429 of the scenario's `rate_limit:` window (whatever the overload status).
  const Outcome& rate_limited() const { return rate_limited_; }
  const Outcome& timeout() const { return timeout_; }
  const Outcome& local_rejection() const { return overload_; }
  // A served request's answer: success, or a chaos fault.
  const Outcome& Sample(ref::RetryRng& rng) const;
  ref::DecisionInput& Input(const Outcome& outcome) { return inputs_[outcome.index]; }

 private:
  Outcome Add(ref::Failure failure, std::vector<ref::RetryHint> hints = {});
  Outcome FromResponse(const scenario::ResponseSpec& response, const ref::RetryPolicy& policy);

  std::vector<ref::DecisionInput> inputs_;
  std::vector<std::pair<double, Outcome>> chaos_;  // cumulative probability, answer
  Outcome otherwise_{true, false, 0};
  Outcome overload_;
  Outcome rate_limited_;
  Outcome timeout_;
};

}  // namespace faultline::fleet
