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

// Every Outcomes of a run (the client's, each gateway layer's) is built from the same answers in
// the same order, so an Outcome means the same answer in each; only its classification follows
// each layer's policy (should_retry_header).
struct Outcome {
  bool success = false;
  // A throttling answer (rate-limit or provider-overloaded class), which slows AWS's adaptive
  // client-side rate limiter.
  bool throttling = false;
  // false: a gateway between dropped the answer's Retry-After headers (pass_retry_after: false),
  // so the hints read from a chaos response's headers do not count.
  bool header_hints = true;
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
  // What a gateway answers the layer above when its own per-try timeout ended its last try: 504,
  // as Envoy answers "upstream request timeout".
  const Outcome& gateway_timeout() const { return gateway_timeout_; }
  // The answer a gateway hands up for `below` (an answer from the layer below it): the same
  // answer, except that its own per-try timeout becomes gateway_timeout().
  Outcome Relay(const Outcome& below) const;
  // A served request's answer: success, or a chaos fault.
  const Outcome& Sample(ref::RetryRng& rng) const;
  ref::DecisionInput& Input(const Outcome& outcome) { return inputs_[outcome.index]; }

 private:
  Outcome Add(ref::Failure failure, std::vector<ref::RetryHint> hints = {});
  Outcome FromResponse(const scenario::ResponseSpec& response, const ref::RetryPolicy& policy);

  std::vector<ref::DecisionInput> inputs_;
  std::vector<std::pair<double, Outcome>> chaos_;  // cumulative probability, answer
  Outcome otherwise_{true, false, true, 0};
  Outcome overload_;
  Outcome rate_limited_;
  Outcome timeout_;
  Outcome gateway_timeout_;
};

}  // namespace faultline::fleet
