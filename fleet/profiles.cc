#include "fleet/profiles.h"

#include <array>
#include <fstream>
#include <sstream>

#include "fleet/finagle_budget.h"
#include "fmt/format.h"
#include "reference_impl/policy_json.h"

namespace faultline::fleet {
namespace {

// The four Node declarations are harness/adapters/policies.mjs's exports, verbatim as JSON
// (fleet/tests/profiles_test.cc checks that they still match when Node is installed); the
// citations of every value are the comments there.
constexpr std::string_view kOpenAiNode =
    R"({"routing":{"failover":false,"breaker":null},"mode":"standard","max_attempts":3,"retryable_classes":["auth","rate-limit","quota",
    "invalid-request","context-overflow","timeout","transport","provider-overloaded",
    "provider-unavailable"],"retry_phases":["connect","response-headers"],
    "statuses":{"retry":[408,409,429,"5xx"],"never":[]},"should_retry_header":true,
    "backoff":{"strategy":"exponential","base_ms":500,"cap_ms":8000,"multiplier":2,"jitter":0.25,
    "jitter_mode":"down"},"min_attempt_ms":0,"timeouts":{"connect_ms":10000,
    "response_headers_ms":301000,"idle_ms":301000,"heartbeats_reset_idle":true,"total_ms":null},
    "budget":null,"retry_after":{"honor":true,"mode":"replace","cap_ms":null,"jitter":0,
    "zero":"immediate","sources":["retry-after-ms","retry-after","retry-after-date"],
    "statuses":null}})";

constexpr std::string_view kAnthropicNode =
    R"({"routing":{"failover":false,"breaker":null},"mode":"standard","max_attempts":3,"retryable_classes":["auth","rate-limit","quota",
    "invalid-request","context-overflow","timeout","transport","provider-overloaded",
    "provider-unavailable"],"retry_phases":["connect","response-headers"],
    "statuses":{"retry":[408,409,429,"5xx"],"never":[]},"should_retry_header":true,
    "backoff":{"strategy":"exponential","base_ms":500,"cap_ms":8000,"multiplier":2,"jitter":0.25,
    "jitter_mode":"down"},"min_attempt_ms":0,"timeouts":{"connect_ms":10000,
    "response_headers_ms":301000,"idle_ms":301000,"heartbeats_reset_idle":true,"total_ms":null},
    "budget":null,"retry_after":{"honor":true,"mode":"replace","cap_ms":2147483647,
    "over_cap":"backoff","jitter":0,"zero":"backoff","sources":["retry-after-ms","retry-after",
    "retry-after-date"],"statuses":null}})";

constexpr std::string_view kVercelAi =
    R"({"routing":{"failover":false,"breaker":null},"mode":"standard","max_attempts":3,"retryable_classes":["rate-limit","timeout",
    "transport","provider-overloaded","provider-unavailable","invalid-request"],
    "statuses":{"retry":[408,409,429,"5xx"],"never":[]},"should_retry_header":false,
    "retry_phases":["connect","response-headers","stream"],"stream_retries":"before-output",
    "backoff":{"strategy":"exponential",
    "base_ms":2000,"cap_ms":2147483647,"multiplier":2,"jitter":0,"jitter_mode":"symmetric"},
    "retry_after":{"honor":true,"mode":"replace","cap_ms":59999,"over_cap":"backoff","jitter":0,
    "zero":"immediate","sources":["retry-after-ms","retry-after","retry-after-date"],
    "statuses":null},"min_attempt_ms":0,"timeouts":{"connect_ms":10000,
    "response_headers_ms":301000,"idle_ms":301000,"heartbeats_reset_idle":true,"total_ms":null},
    "budget":null})";

constexpr std::string_view kLangChainJs =
    R"({"routing":{"failover":false,"breaker":null},"mode":"standard","max_attempts":7,"statuses":{"retry":[408,410,411,412,414,415,416,417,
    418,419,420,421,422,423,424,425,426,427,428,430,431,432,433,434,435,436,437,438,439,440,441,
    442,443,444,445,446,447,448,449,450,451,452,453,454,455,456,457,458,459,460,461,462,463,464,
    465,466,467,468,469,470,471,472,473,474,475,476,477,478,479,480,481,482,483,484,485,486,487,
    488,489,490,491,492,493,494,495,496,497,498,499,"5xx"],"never":[400,401,402,403,404,405,406,
    407,409,413]},"retryable_classes":["rate-limit","timeout","transport","provider-overloaded",
    "provider-unavailable","protocol","truncated","empty","invalid-request"],
    "should_retry_header":false,"retry_phases":["connect","response-headers","stream","finish"],
    "stream_retries":"never","backoff":{"strategy":"exponential","base_ms":1000,"cap_ms":2147483647,"multiplier":2,
    "jitter":1,"jitter_mode":"up"},"retry_after":{"honor":true,"mode":"floor","cap_ms":60000,
    "over_cap":"give-up","missing":"give-up","jitter":0,"zero":"backoff","sources":["retry-after",
    "retry-after-date","body"],"statuses":[429]},"min_attempt_ms":0,"timeouts":{"connect_ms":10000,
    "response_headers_ms":301000,"idle_ms":301000,"heartbeats_reset_idle":true,"total_ms":null},
    "budget":null})";

// openai-python and anthropic-sdk-python share the Stainless core: 2 retries, min(0.5 s x 2^n,
// 8 s) x (1 - 0.25 random), a hint replaces the backoff only when 0 < hint <= 60 s, httpx
// Timeout(600, connect=5).
constexpr std::string_view kPythonSdk =
    R"({"max_attempts":3,"retryable_classes":["auth","rate-limit","quota","invalid-request",
    "context-overflow","timeout","transport","provider-overloaded","provider-unavailable"],
    "retry_phases":["connect","response-headers"],
    "statuses":{"retry":[408,409,429,"5xx"],"never":[]},"should_retry_header":true,
    "backoff":{"strategy":"exponential","base_ms":500,"cap_ms":8000,"multiplier":2,"jitter":0.25,
    "jitter_mode":"down"},"retry_after":{"honor":true,"mode":"replace","cap_ms":60000,
    "over_cap":"backoff","jitter":0,"zero":"backoff","sources":["retry-after-ms","retry-after",
    "retry-after-date"],"statuses":null},"min_attempt_ms":0,
    "timeouts":{"connect_ms":5000,"response_headers_ms":600000,"idle_ms":600000,
    "heartbeats_reset_idle":true,"total_ms":null},"budget":null})";

// AWS SDK standard mode: 3 attempts, full jitter min(20 s, base x 2^n) with the throttling base
// 500 ms (429 is a throttling error), a 500-token retry quota: 5 per retry, 1 back per success.
constexpr std::string_view kAwsStandard =
    R"({"max_attempts":3,"statuses":{"retry":[429,"5xx"],"never":[]},
    "backoff":{"strategy":"full-jitter","base_ms":500,"cap_ms":20000,"multiplier":2},
    "retry_after":{"honor":false},"min_attempt_ms":0,"timeouts":{"total_ms":null},
    "budget":{"capacity":500,"retry_cost":5,"success_refund":1}})";

// gRPC: the retryPolicy example of gRFC A6 (5 attempts, 100 ms..1 s x2, random(0, backoff)) and
// retry throttling {max_tokens: 10, token_ratio: 0.1}.
constexpr std::string_view kGrpc =
    R"({"max_attempts":5,"statuses":{"retry":[429,"5xx"],"never":[]},
    "backoff":{"strategy":"full-jitter","base_ms":100,"cap_ms":1000,"multiplier":2},
    "retry_after":{"honor":false},"min_attempt_ms":0,"timeouts":{"total_ms":null},
    "budget":{"capacity":10,"retry_cost":0,"success_refund":0.1,"failure_cost":1,
    "retry_threshold":5}})";

// Finagle's retries; its RetryBudget (ttl, per-request deposits, a reserve) is
// fleet/finagle_budget.h, run beside the policy.
constexpr std::string_view kFinagle =
    R"({"max_attempts":5,"statuses":{"retry":[429,"5xx"],"never":[]},
    "backoff":{"strategy":"full-jitter","base_ms":5,"cap_ms":320,"multiplier":2},
    "retry_after":{"honor":false},"min_attempt_ms":0,"timeouts":{"total_ms":null},
    "budget":null})";

constexpr std::string_view kSreAdaptive =
    R"({"max_attempts":3,"statuses":{"retry":[429,"5xx"],"never":[]},
    "backoff":{"strategy":"full-jitter","base_ms":100,"cap_ms":10000,"multiplier":2},
    "retry_after":{"honor":false},"min_attempt_ms":0,"timeouts":{"total_ms":null}})";

// Brooker's simulator: base 5, cap 2000 (ms), retrying until success.
#define FAULTLINE_BROOKER(strategy)                                                      \
  R"({"max_attempts":"unbounded","statuses":{"retry":[409,429,"5xx"],"never":[]},)"      \
  R"("backoff":{"strategy":")" strategy R"(","base_ms":5,"cap_ms":2000,"multiplier":2,)" \
  R"("jitter":0},"retry_after":{"honor":false},"min_attempt_ms":0,"timeouts":{"total_ms":null}})"

constexpr std::string_view kNoRetry =
    R"({"max_attempts":1,"retry_after":{"honor":false},"min_attempt_ms":0,
    "timeouts":{"total_ms":null}})";

// What a hand-written loop often does: 5 attempts, a fixed 10 ms pause, hints ignored.
constexpr std::string_view kNaive =
    R"({"max_attempts":5,"statuses":{"retry":[429,"5xx"],"never":[]},
    "backoff":{"strategy":"exponential","base_ms":10,"cap_ms":10,"multiplier":1,"jitter":0},
    "retry_after":{"honor":false},"min_attempt_ms":0,"timeouts":{"total_ms":null}})";

// The naive loop plus the reference client's default token bucket (reference_impl/budget.h).
constexpr std::string_view kTokenBucket =
    R"({"max_attempts":5,"statuses":{"retry":[429,"5xx"],"never":[]},
    "backoff":{"strategy":"exponential","base_ms":10,"cap_ms":10,"multiplier":1,"jitter":0},
    "retry_after":{"honor":false},"min_attempt_ms":0,"timeouts":{"total_ms":null},
    "budget":{"capacity":10,"retry_cost":1,"success_refund":0.1}})";

const std::array<Profile, 18> kProfiles{{
    {"openai-node", "openai 6.30.1 (Node), default client",
     "harness/adapters/policies.mjs OPENAI_NODE_POLICY (openai src/client.ts:423, 824-899)",
     kOpenAiNode, std::nullopt},
    {"anthropic-node", "@anthropic-ai/sdk 1.14.0 (Node), default client",
     "harness/adapters/policies.mjs ANTHROPIC_NODE_POLICY (@anthropic-ai/sdk "
     "src/client.ts:1119, 1977-2071)",
     kAnthropicNode, std::nullopt},
    {"openai-python", "openai-python, default client",
     "openai-python src/openai/_constants.py:9-14 (DEFAULT_TIMEOUT, DEFAULT_MAX_RETRIES, "
     "INITIAL_RETRY_DELAY, MAX_RETRY_DELAY); src/openai/_base_client.py "
     "_calculate_retry_timeout (0 < retry_after <= 60)",
     kPythonSdk, std::nullopt},
    {"anthropic-python", "anthropic-sdk-python, default client",
     "anthropic-sdk-python src/anthropic/_constants.py:9-14; src/anthropic/_base_client.py "
     "_calculate_retry_timeout (0 < retry_after <= 60)",
     kPythonSdk, std::nullopt},
    {"vercel-ai", "Vercel AI SDK 6 (ai), streamText/generateText",
     "harness/adapters/policies.mjs VERCEL_AI_POLICY (ai src/util/"
     "retry-with-exponential-backoff.ts:10-131, prepare-retries.ts:41)",
     kVercelAi, std::nullopt},
    {"langchain-js", "LangChain JS AsyncCaller (p-retry), 7 attempts",
     "harness/adapters/policies.mjs LANGCHAIN_POLICY (@langchain/core "
     "dist/utils/async_caller.js:100-198, p-retry/index.js:29-95)",
     kLangChainJs, std::nullopt},
    {"aws-standard", "AWS SDK retry mode 'standard'",
     "smithy-typescript packages/util-retry/src/constants.ts:5-39 (DEFAULT_RETRY_DELAY_BASE, "
     "MAXIMUM_RETRY_DELAY, THROTTLING_RETRY_DELAY_BASE, INITIAL_RETRY_TOKENS, RETRY_COST, "
     "NO_RETRY_INCREMENT)",
     kAwsStandard, std::nullopt},
    {"aws-adaptive", "AWS SDK retry mode 'adaptive': standard + a CUBIC client-side rate limiter",
     "botocore botocore/retries/adaptive.py:35-73 ClientRateLimiter (limiter on after the first "
     "throttle, fill rate capped at 2x measured), :76-107 RateClocker (0.5 s steps, smoothing "
     "0.8); throttling.py:6-38 CubicCalculator (C 0.4, beta 0.7); bucket.py:19-121 TokenBucket "
     "(min rate 0.5/s); retries as aws-standard",
     kAwsStandard, std::nullopt, true},
    {"grpc-throttling", "gRPC retryPolicy with retry throttling",
     "grpc/proposal A6-client-retries.md, 'Retry Policy' and 'Throttling Retry Attempts and "
     "Hedged RPCs' (max_tokens 10, token_ratio 0.1)",
     kGrpc, std::nullopt},
    {"finagle-budget", "Finagle RetryBudget defaults: 20% of the last 10 s of requests + 10/s",
     "finagle-core com/twitter/finagle/service/RetryBudget.scala apply() and TokenRetryBudget "
     "(ScaleFactor 1000; DefaultTtl 10 s, minRetriesPerSec "
     "10, percentCanRetry 0.2); util-core com/twitter/util/TokenBucket.scala newLeakyBucket, "
     "WindowedAdder.scala (10 slices of ttl/10)",
     kFinagle, std::nullopt, false, true},
    {"sre-adaptive", "client-side adaptive throttling, K = 2",
     "Site Reliability Engineering (O'Reilly 2016) ch. 21 'Handling Overload', eq. 21-1: "
     "max(0, (requests - K x accepts) / (requests + 1))",
     kSreAdaptive, 2.0},
    {"brooker-none", "capped exponential backoff, no jitter",
     "Brooker 2015 'Exponential Backoff And Jitter'; aws-samples/aws-arch-backoff-simulator "
     "src/backoff_simulator.py ExpoBackoff (base 5, cap 2000)",
     FAULTLINE_BROOKER("exponential"), std::nullopt},
    {"brooker-full", "full jitter: random(0, min(cap, base x 2^n))",
     "Brooker 2015; backoff_simulator.py ExpoBackoffFullJitter", FAULTLINE_BROOKER("full-jitter"),
     std::nullopt},
    {"brooker-equal", "equal jitter: d/2 + random(0, d/2)",
     "Brooker 2015; backoff_simulator.py ExpoBackoffEqualJitter", FAULTLINE_BROOKER("equal-jitter"),
     std::nullopt},
    {"brooker-decorrelated", "decorrelated jitter: min(cap, random(base, 3 x previous))",
     "Brooker 2015; backoff_simulator.py ExpoBackoffDecorr",
     FAULTLINE_BROOKER("decorrelated-jitter"), std::nullopt},
    {"no-retry", "one attempt per call (the baseline)", "faultline", kNoRetry, std::nullopt},
    {"naive", "5 attempts, fixed 10 ms pause, hints ignored", "faultline", kNaive, std::nullopt},
    {"token-bucket", "naive + the reference client's token bucket (10, 1 per retry, +0.1)",
     "reference_impl/budget.h", kTokenBucket, std::nullopt},
}};

#undef FAULTLINE_BROOKER

// Edit distance with adjacent transpositions, for "did you mean".
std::size_t Distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::string NearestProfile(std::string_view name) {
  std::string_view best;
  std::size_t best_distance = 4;  // farther than 3 edits is no suggestion
  for (const Profile& profile : kProfiles) {
    const std::size_t distance = Distance(name, profile.name);
    const bool prefix = name.size() >= 3 && profile.name.starts_with(name);
    if (prefix || distance < best_distance) {
      best = profile.name;
      best_distance = prefix ? 0 : distance;
    }
  }
  return std::string(best);
}

std::expected<NamedPolicy, std::string> LoadPolicyFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return std::unexpected(fmt::format("{}: cannot read the policy file", file.string()));
  auto policy = ref::LoadPolicy(text.str());
  if (!policy)
    return std::unexpected(fmt::format("{}: {}", file.string(), policy.error().ToString()));
  return NamedPolicy{file.stem().string(), std::move(*policy), std::nullopt, file.string()};
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

std::span<const Profile> BuiltinProfiles() { return kProfiles; }

std::expected<NamedPolicy, std::string> ResolvePolicy(std::string_view name) {
  for (const Profile& profile : kProfiles) {
    if (profile.name != name) continue;
    auto policy = ref::LoadPolicy(profile.policy_json);
    if (!policy) {
      return std::unexpected(
          fmt::format("built-in profile '{}' does not load: {}", name, policy.error().ToString()));
    }
    return NamedPolicy{std::string(name),           std::move(*policy),
                       profile.adaptive_k,          std::string(profile.source),
                       profile.client_rate_limiter, profile.finagle_budget};
  }
  std::error_code error;
  if (std::filesystem::is_regular_file(std::filesystem::path(name), error)) {
    return LoadPolicyFile(std::filesystem::path(name));
  }
  const std::string nearest = NearestProfile(name);
  std::string message = fmt::format("unknown policy '{}'", name);
  if (!nearest.empty()) message += fmt::format("; did you mean '{}'?", nearest);
  return std::unexpected(message +
                         " (faultline simulate --list-policies shows them; a policy file path "
                         "works too)");
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
