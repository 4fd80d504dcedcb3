// The policy a subject declares in `adapter/hello` (docs/adapter-protocol.md): the oracle it is
// judged against.
//
// The runner judges retries and timeouts against what the subject says it does, not against the
// reference client's defaults. The declaration is in the reference client's own policy format
// (reference_impl/policy_json.h, docs/policy.md) and is read as strictly as `faultline call
// --policy`: an unknown key or a bad value is a subject error naming the key (with a
// did-you-mean), never a silently ignored field; `null` says "none" for a timeout or a cap. A
// hello without any `policy` object is "no declaration": the checks that need one are n/a.
//
// A declaration that extends a preset (`"extends": "openai-node"`) or states every key of the
// format is whole. One that leaves keys out without `extends` is PARTIAL, and is judged only on
// what it states (docs/policy.md, "Partial declarations"): its omitted keys are not filled in
// with the reference client's defaults for judging, except that its routing is one endpoint
// (failover off, no breaker) unless it states one; a check that needs an omitted key is n/a
// (judge_internal.h, UnlessDeclared), and no policy twin is run for it (the twin runs a whole
// policy). `faultline call --policy` and a scenario's `policy:` configure the reference client
// instead, where every omitted key keeps its default.
//
// Values only. Thread-safety: values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/trace/trace.h"
#include "nlohmann/json.hpp"
#include "reference_impl/policy.h"
#include "scenarios/scenario.h"

namespace faultline::harness {

struct DeclaredPolicy {
  bool present = false;              // a hello with a policy object was seen
  std::optional<std::string> error;  // present but invalid ("at backoff.cap_ms: ...")
  // Valid when present && !error. For a partial declaration, the keys it leaves out hold the
  // reference defaults (routing: one endpoint) only so that the value is whole: the checks ask
  // States() before they read one.
  ref::RetryPolicy policy;
  bool partial = false;
  // What a partial declaration states: "max_attempts", "backoff.base_ms", "budget", ... (the
  // keys of the objects statuses, backoff, retry_after and timeouts one by one).
  std::vector<std::string> stated;

  bool usable() const { return present && !error; }
  // Whether the declaration states `key` ("timeouts.idle_ms"; "backoff" wants every key of
  // backoff): always when it is whole, and for the routing, which is one endpoint unless stated.
  bool States(std::string_view key) const;
  // The keys a partial declaration leaves out, a wholly omitted object by its own name
  // ("backoff", "timeouts.total_ms"); empty when it is whole.
  std::vector<std::string> Unstated() const;
  // Shorthands for the checks (only meaningful when usable()).
  std::optional<double> idle_ms() const { return OptionalMs(policy.timeouts.idle); }
  std::optional<double> response_headers_ms() const {
    return OptionalMs(policy.timeouts.response_headers);
  }
  std::optional<double> total_ms() const { return OptionalMs(policy.timeouts.total); }
  std::optional<double> retry_after_cap_ms() const { return OptionalMs(policy.retry_after.cap); }

 private:
  static std::optional<double> OptionalMs(std::optional<std::chrono::milliseconds> value) {
    if (!value) return std::nullopt;
    return static_cast<double>(value->count());
  }
};

// The subject declares exactly the policy the scenario's `expect:` block is written for (the
// scenario's `policy:`, else the reference defaults), so that block applies as written and no
// twin is needed.
bool DeclaresScenarioPolicy(const DeclaredPolicy& declared, const scenario::Scenario& scenario);

// Reads the `policy` of the first adapter/hello in `trace` (call 0).
DeclaredPolicy ReadDeclaredPolicy(const Trace& trace);
DeclaredPolicy ParseDeclaredPolicy(const nlohmann::json& policy);

// The closed interval [lower, upper] in ms that the declared backoff allows before retry number
// `retry_index` (0-based): reference_impl/backoff.h's own bounds. Decorrelated jitter depends on
// the previous sleep, which the runner does not see, so its widest range [base, cap] is used.
struct DelayBounds {
  double lower_ms = 0;
  double upper_ms = 0;
};
DelayBounds BackoffBounds(const ref::BackoffConfig& backoff, int retry_index);

}  // namespace faultline::harness
