#include "fleet/profiles.h"

#include <algorithm>
#include <array>
#include <vector>

#include "fleet/finagle_budget.h"
#include "fleet/policy_file.h"
#include "fmt/format.h"
#include "reference_impl/presets.h"

namespace faultline::fleet {
namespace {

// What makes these profiles more than their preset: a mechanism of the fleet beside the policy.
struct FleetMechanism {
  std::string_view name;
  std::string_view preset;
  std::string_view summary;
  std::string_view source;
  std::optional<double> adaptive_k;
  bool client_rate_limiter = false;
  bool finagle_budget = false;
};

constexpr std::array<FleetMechanism, 3> kMechanisms{{
    {"aws-adaptive", "aws-standard",
     "AWS SDK retry mode 'adaptive': standard + a CUBIC client-side rate limiter",
     "botocore botocore/retries/adaptive.py:35-73 ClientRateLimiter (limiter on after the first "
     "throttle, fill rate capped at 2x measured), :76-107 RateClocker (0.5 s steps, smoothing "
     "0.8); throttling.py:6-38 CubicCalculator (C 0.4, beta 0.7); bucket.py:19-121 TokenBucket "
     "(min rate 0.5/s); retries as aws-standard",
     std::nullopt, true},
    {"finagle-budget", "finagle",
     "Finagle RetryBudget defaults: 20% of the last 10 s of requests + 10/s",
     "finagle-core com/twitter/finagle/service/RetryBudget.scala apply() and TokenRetryBudget "
     "(ScaleFactor 1000; DefaultTtl 10 s, minRetriesPerSec 10, percentCanRetry 0.2); util-core "
     "com/twitter/util/TokenBucket.scala newLeakyBucket, WindowedAdder.scala (10 slices of "
     "ttl/10)",
     std::nullopt, false, true},
    {"sre-adaptive", "sre-adaptive", "client-side adaptive throttling, K = 2",
     "Site Reliability Engineering (O'Reilly 2016) ch. 21 'Handling Overload', eq. 21-1: "
     "max(0, (requests - K x accepts) / (requests + 1))",
     2.0},
}};

std::vector<Profile> AllProfiles() {
  std::vector<Profile> profiles;
  for (const ref::Preset& preset : ref::Presets()) {
    profiles.push_back(
        {preset.name, preset.name, preset.summary, preset.source, std::nullopt, false, false});
  }
  for (const FleetMechanism& mechanism : kMechanisms) {
    auto same = std::ranges::find(profiles, mechanism.name, &Profile::name);
    Profile& profile = same != profiles.end() ? *same : profiles.emplace_back();
    profile = {std::string(mechanism.name),    std::string(mechanism.preset),
               std::string(mechanism.summary), std::string(mechanism.source),
               mechanism.adaptive_k,           mechanism.client_rate_limiter,
               mechanism.finagle_budget};
  }
  std::ranges::sort(profiles, {}, &Profile::name);
  return profiles;
}

std::string Ms(std::chrono::milliseconds ms) {
  if (ms.count() >= 2'000'000'000) return "none";
  if (ms.count() % 1000 == 0) return fmt::format("{} s", ms.count() / 1000);
  return fmt::format("{} ms", ms.count());
}

std::string DescribeBackoff(const ref::BackoffConfig& backoff) {
  std::string text = fmt::format("{} {}..{} x{}", ref::ToString(backoff.strategy), Ms(backoff.base),
                                 Ms(backoff.cap), backoff.multiplier);
  if (backoff.strategy == ref::BackoffStrategy::kExponential) {
    text += backoff.jitter == 0
                ? ", no jitter"
                : fmt::format(", jitter {} {}", backoff.jitter, ref::ToString(backoff.jitter_mode));
  }
  return text;
}

}  // namespace

std::span<const Profile> BuiltinProfiles() {
  static const std::vector<Profile> profiles = AllProfiles();
  return profiles;
}

std::expected<NamedPolicy, std::string> ResolvePolicy(std::string_view name) {
  const auto profiles = BuiltinProfiles();
  const auto profile = std::ranges::find(profiles, name, &Profile::name);
  std::vector<std::string_view> names;
  for (const Profile& known : profiles) names.push_back(known.name);
  auto loaded = LoadNamedPolicy(profile != profiles.end() ? profile->preset : name, names);
  if (!loaded) return std::unexpected(std::move(loaded.error()));
  if (profile == profiles.end()) {
    return NamedPolicy{std::move(loaded->name), std::move(loaded->policy), std::nullopt,
                       std::move(loaded->source)};
  }
  return NamedPolicy{profile->name,   std::move(loaded->policy),    profile->adaptive_k,
                     profile->source, profile->client_rate_limiter, profile->finagle_budget};
}

std::string DescribePolicy(const NamedPolicy& named) {
  const ref::RetryPolicy& policy = named.policy;
  std::string text = policy.max_attempts ? fmt::format("{} attempt{}", *policy.max_attempts,
                                                       *policy.max_attempts == 1 ? "" : "s")
                                         : std::string("unbounded attempts");
  if (policy.max_attempts != 1) text += "; " + DescribeBackoff(policy.backoff);
  const ref::RetryAfterConfig& hint = policy.retry_after;
  text += hint.honor ? fmt::format("; Retry-After {}, cap {}", ref::ToString(hint.mode),
                                   hint.cap ? Ms(*hint.cap) : std::string("none"))
                     : std::string("; Retry-After ignored");
  if (const auto& budget = policy.budget) {
    text += fmt::format("; budget {} tokens, {}/retry, +{}/success", budget->capacity,
                        budget->retry_cost, budget->success_refund);
    if (budget->failure_cost > 0) {
      text += fmt::format(", -{}/failure, none at <= {}", budget->failure_cost,
                          budget->retry_threshold);
    }
  }
  if (named.adaptive_k) text += fmt::format("; adaptive throttling K={}", *named.adaptive_k);
  if (named.client_rate_limiter) text += "; client-side rate limiter (CUBIC, beta 0.7)";
  if (named.finagle_budget) {
    const FinagleBudgetConfig budget;
    text += fmt::format("; retry budget {}% of requests over {} s + {} retries/s",
                        budget.percent_can_retry * 100, budget.ttl / 1'000'000,
                        budget.min_retries_per_sec);
  }
  return text;
}

}  // namespace faultline::fleet
