// Named retry policies of real clients ("profiles") for `faultline simulate`.
//
// Every preset (reference_impl/presets.h: the shipped subjects' declarations, the common shapes,
// AWS, gRPC, Brooker's strategies...) is a profile, run by the reference client's own policy
// code (reference_impl/policy.h: Decide, backoff, Retry-After rules, the shared budget). A few
// profiles add to a preset one fleet-level mechanism that is not a per-call retry rule: the SRE
// book's client-side adaptive throttling, which rejects even first attempts locally
// (adaptive_throttle.h), AWS's adaptive-mode rate limiter, which delays them
// (client_rate_limiter.h), or Finagle's retry budget, whose deposits expire (finagle_budget.h).
// Each names the source it was read from. `faultline simulate --list-policies` prints them with
// their parameters (DescribePolicy).
//
// Pure data and pure functions; thread-safe.
#pragma once

#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "reference_impl/policy.h"

namespace faultline::fleet {

struct Profile {
  std::string name;                  // "openai-node", "aws-adaptive", ...
  std::string preset;                // the policy it runs (reference_impl/presets/<preset>.json)
  std::string summary;               // one line: who behaves like this
  std::string source;                // where the parameters come from
  std::optional<double> adaptive_k;  // SRE client-side throttling multiplier, when it has one
  bool client_rate_limiter = false;  // AWS adaptive mode's limiter (client_rate_limiter.h)
  bool finagle_budget = false;       // Finagle's RetryBudget, defaults (finagle_budget.h)
};

// Every profile, sorted by name.
std::span<const Profile> BuiltinProfiles();

// A policy ready to simulate: a profile, or a policy file.
struct NamedPolicy {
  std::string name;
  ref::RetryPolicy policy;
  std::optional<double> adaptive_k;
  std::string source;
  bool client_rate_limiter = false;
  bool finagle_budget = false;
};

// The profile called `name`; otherwise the policy file at that path (YAML or JSON, loaded
// strictly: policy_file.h, its name the file's stem). Errors say what was wrong, with "did you
// mean" for a near profile name.
std::expected<NamedPolicy, std::string> ResolvePolicy(std::string_view name);

// "3 attempts; exponential 500 ms..8 s x2, jitter 0.25 down; Retry-After: replace, cap none;
// budget 10/1/0.1" — the parameters that matter under load, for --list-policies and reports.
std::string DescribePolicy(const NamedPolicy& policy);

}  // namespace faultline::fleet
