// The policy a subject declares in `adapter/hello` (DESIGN §5), read leniently.
//
// The runner judges retries and timeouts against what the subject says it does, not against the
// reference client's defaults. Third-party adapters describe their SDK's policy in the same keys
// as the reference client's policy JSON (policy_json.h) but may leave any of them out; a missing
// field makes the checks that need it "not applicable" rather than guessed.
//
// Values only. Thread-safety: values.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "harness/trace.h"
#include "nlohmann/json.hpp"

namespace faultline::harness {

struct DeclaredBackoff {
  std::string strategy = "exponential";  // exponential | full-jitter | equal-jitter |
                                         // decorrelated-jitter
  double base_ms = 0;
  double cap_ms = 0;
  double multiplier = 2;
  double jitter = 0;  // symmetric ratio (exponential only)
};

struct DeclaredPolicy {
  bool present = false;             // a hello with a policy object was seen
  std::optional<int> max_attempts;  // nullopt with `unbounded` set: no limit
  bool unbounded = false;
  std::optional<std::set<std::string>> retryable_classes;
  std::optional<DeclaredBackoff> backoff;
  bool retry_after_honored = true;
  std::optional<double> retry_after_cap_ms;
  std::string over_cap = "give-up";  // give-up | backoff
  std::optional<double> connect_ms, response_headers_ms, idle_ms, total_ms;
  bool heartbeats_reset_idle = false;
};

// Reads the `policy` of the first adapter/hello in `trace` (call 0).
DeclaredPolicy ReadDeclaredPolicy(const Trace& trace);
DeclaredPolicy ParseDeclaredPolicy(const nlohmann::json& policy);

// The closed interval [lower, upper] in ms that a declared backoff allows before retry number
// `retry_index` (0-based), following the strategy definitions in reference_impl/backoff.h.
struct DelayBounds {
  double lower_ms = 0;
  double upper_ms = 0;
};
DelayBounds BackoffBounds(const DeclaredBackoff& backoff, int retry_index);

}  // namespace faultline::harness
