// Named retry policies of real clients ("profiles"), in the reference client's policy format.
//
// Each profile is a policy document (docs/policy.md) run by the reference client's own policy
// code (reference_impl/policy.h: Decide, backoff, Retry-After rules, the shared budget), plus at
// most one fleet-level mechanism that is not a per-call retry rule: the SRE book's client-side
// adaptive throttling, which rejects even first attempts locally (adaptive_throttle.h), or AWS's
// adaptive-mode rate limiter, which delays them (client_rate_limiter.h), or Finagle's retry
// budget, whose deposits expire (finagle_budget.h). Each
// names the source file and line it was read from. `faultline simulate --list-policies` prints
// them with their parameters (DescribePolicy).
//
// Pure data and pure functions; thread-safe.
#pragma once

#include <expected>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "reference_impl/policy.h"

namespace faultline::fleet {

struct Profile {
  std::string_view name;             // "openai-node", "grpc-throttling", ...
  std::string_view summary;          // one line: who behaves like this
  std::string_view source;           // file:line (and version) the parameters come from
  std::string_view policy_json;      // the policy, in the reference client's format
  std::optional<double> adaptive_k;  // SRE client-side throttling multiplier, when it has one
  bool client_rate_limiter = false;  // AWS adaptive mode's limiter (client_rate_limiter.h)
  bool finagle_budget = false;       // Finagle's RetryBudget, defaults (finagle_budget.h)
};

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

// The profile called `name`; otherwise, when `name` names an existing file, that policy file
// (loaded strictly, its name the file's stem). Errors say what was wrong, with "did you mean" for
// a near profile name.
std::expected<NamedPolicy, std::string> ResolvePolicy(std::string_view name);

// "3 attempts; exponential 500 ms..8 s x2, jitter 0.25 down; Retry-After: replace, cap none;
// budget 10/1/0.1" — the parameters that matter under load, for --list-policies and reports.
std::string DescribePolicy(const NamedPolicy& policy);

}  // namespace faultline::fleet
