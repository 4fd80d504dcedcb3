// The policy file format (policy_json.h): defaults, round trips through PolicyToJson and the
// hello's form, and every loader error naming its path. Decide() itself is policy_test.cc.
#include "reference_impl/policy_json.h"

#include <gtest/gtest.h>

#include <string>

#include "reference_impl/policy.h"

namespace faultline::ref {
namespace {

using std::chrono::milliseconds;

TEST(PolicyJsonTest, NewKeysRoundTrip) {
  const char* text = R"({"mode": "standard", "max_retries": 6,
    "retry_phases": ["connect", "response-headers"], "stream_retries": "before-output",
    "statuses": {"retry": [408, "5xx"], "never": [400]}, "should_retry_header": false,
    "backoff": {"strategy": "exponential", "jitter": 1, "jitter_mode": "up"},
    "retry_after": {"mode": "replace", "cap_ms": null, "zero": "immediate",
                    "sources": ["retry-after-ms", "retry-after"], "statuses": [429]}})";
  auto policy = LoadPolicy(text);
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  EXPECT_EQ(policy->max_attempts, 7);
  EXPECT_TRUE(policy->statuses.retry.Contains(503));
  EXPECT_FALSE(policy->statuses.retry.Contains(429));
  EXPECT_FALSE(policy->retry_after.cap.has_value());
  EXPECT_EQ(policy->stream_retries, StreamRetries::kBeforeOutput);
  EXPECT_EQ(LoadPolicy(PolicyToJson(*policy).dump()), policy);
  EXPECT_EQ(LoadPolicy(PolicyToHelloJson(*policy).dump()), policy) << "max_retries agrees";
}

TEST(PolicyJsonTest, EmptyDocumentGivesTheDefaults) {
  auto policy = LoadPolicy("{}");
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_EQ(*policy, RetryPolicy{});
  EXPECT_TRUE(Validate(RetryPolicy{}));
}

TEST(PolicyJsonTest, FullDocument) {
  auto policy = LoadPolicy(R"({
    "max_attempts": "unbounded",
    "retryable_classes": ["rate-limit", "provider-overloaded"],
    "backoff": {"strategy": "decorrelated-jitter", "base_ms": 100, "cap_ms": 20000,
                "multiplier": 3, "jitter": 0},
    "retry_after": {"honor": true, "cap_ms": 120000, "jitter": 0.2, "over_cap": "backoff"},
    "min_attempt_ms": 250,
    "timeouts": {"connect_ms": 2000, "response_headers_ms": null, "idle_ms": 15000,
                 "heartbeats_reset_idle": true, "total_ms": 300000},
    "budget": {"capacity": 50, "retry_cost": 2, "success_refund": 0.5}
  })");
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_EQ(policy->max_attempts, std::nullopt);
  EXPECT_EQ(policy->retryable_classes,
            (std::vector{FailureClass::kRateLimit, FailureClass::kProviderOverloaded}));
  EXPECT_EQ(policy->backoff.strategy, BackoffStrategy::kDecorrelatedJitter);
  EXPECT_EQ(policy->backoff.base, milliseconds(100));
  EXPECT_EQ(policy->backoff.cap, milliseconds(20'000));
  EXPECT_EQ(policy->backoff.multiplier, 3.0);
  EXPECT_EQ(policy->retry_after.cap, milliseconds(120'000));
  EXPECT_EQ(policy->retry_after.over_cap, OverCapMode::kBackoff);
  EXPECT_EQ(policy->min_attempt_time, milliseconds(250));
  EXPECT_EQ(policy->timeouts.response_headers, std::nullopt);
  EXPECT_TRUE(policy->timeouts.heartbeats_reset_idle);
  EXPECT_EQ(policy->timeouts.total, milliseconds(300'000));
  ASSERT_TRUE(policy->budget);
  EXPECT_EQ(policy->budget->retry_cost, 2.0);
}

TEST(PolicyJsonTest, RoundTrip) {
  RetryPolicy policy;
  policy.max_attempts.reset();
  policy.retryable_classes = {FailureClass::kTimeout, FailureClass::kTransport};
  policy.backoff = {BackoffStrategy::kEqualJitter, milliseconds(250), milliseconds(4000), 1.5, 0};
  policy.retry_after.honor = false;
  policy.retry_after.cap = milliseconds(30'000);
  policy.retry_after.jitter = 0.3;
  policy.retry_after.over_cap = OverCapMode::kBackoff;
  policy.timeouts.idle.reset();
  policy.timeouts.total.reset();
  policy.budget = BudgetConfig{20, 1, 0.2};
  auto loaded = LoadPolicy(PolicyToJson(policy).dump());
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_EQ(*loaded, policy);
  auto defaults = LoadPolicy(PolicyToJson(RetryPolicy{}).dump());
  ASSERT_TRUE(defaults);
  EXPECT_EQ(*defaults, RetryPolicy{});
}

TEST(PolicyJsonTest, HelloPolicyDeclaresWhatTheRunnerJudges) {
  const nlohmann::json hello = PolicyToHelloJson(RetryPolicy{});
  EXPECT_EQ(hello["max_retries"], 2);
  EXPECT_EQ(hello["max_attempts"], 3);
  EXPECT_EQ(hello["retryable_classes"][0], "rate-limit");
  EXPECT_EQ(hello["backoff"]["strategy"], "full-jitter");
  EXPECT_EQ(hello["backoff"]["base_ms"], 500);
  EXPECT_EQ(hello["backoff"]["cap_ms"], 8000);
  EXPECT_EQ(hello["backoff"]["jitter"], 0.25);
  EXPECT_EQ(hello["retry_after"]["honor"], true);
  EXPECT_EQ(hello["retry_after"]["cap_ms"], 60'000);
  EXPECT_EQ(hello["retry_after"]["over_cap"], "give-up");
  EXPECT_EQ(hello["timeouts"]["idle_ms"], 30'000);
  EXPECT_EQ(hello["timeouts"]["response_headers_ms"], 60'000);
  EXPECT_EQ(hello["timeouts"]["total_ms"], 600'000);
  EXPECT_EQ(hello["timeouts"]["heartbeats_reset_idle"], false);
  EXPECT_TRUE(hello["budget"].is_null());
  RetryPolicy unbounded;
  unbounded.max_attempts.reset();
  EXPECT_TRUE(PolicyToHelloJson(unbounded)["max_retries"].is_null());
  EXPECT_EQ(PolicyToHelloJson(unbounded)["max_attempts"], "unbounded");
}

struct BadPolicy {
  std::string json;
  std::string path;
  std::string message;  // a substring of the error message
  friend void PrintTo(const BadPolicy& bad, std::ostream* out) { *out << bad.json; }
};

class PolicyJsonErrorTest : public testing::TestWithParam<BadPolicy> {};

TEST_P(PolicyJsonErrorTest, NamesThePathAndTheProblem) {
  const BadPolicy& bad = GetParam();
  auto policy = LoadPolicy(bad.json);
  ASSERT_FALSE(policy) << bad.json;
  EXPECT_EQ(policy.error().path, bad.path) << policy.error().ToString();
  EXPECT_NE(policy.error().message.find(bad.message), std::string::npos)
      << policy.error().ToString();
}

INSTANTIATE_TEST_SUITE_P(
    PolicyJsonErrors, PolicyJsonErrorTest,
    testing::Values(
        BadPolicy{"{", "", "not valid JSON"}, BadPolicy{"[]", "", "expected an object, got array"},
        BadPolicy{R"({"max_atempts": 3})", "max_atempts",
                  "unknown key 'max_atempts'; did you mean 'max_attempts'?"},
        BadPolicy{R"({"zzz": 3})", "zzz", "unknown key 'zzz'"},
        BadPolicy{R"({"max_attempts": 0})", "max_attempts", "must be from 1 to 1000, got 0"},
        BadPolicy{R"({"max_attempts": 1001})", "max_attempts", "must be from 1 to 1000"},
        BadPolicy{R"({"max_attempts": "forever"})", "max_attempts",
                  "expected an integer from 1 to 1000 or \"unbounded\""},
        BadPolicy{R"({"max_attempts": 2.5})", "max_attempts", "expected an integer"},
        BadPolicy{R"({"mode": "sometimes"})", "mode", "expected one of 'standard', 'always'"},
        BadPolicy{R"({"max_attempts": 3, "max_retries": 3})", "max_retries",
                  "disagrees with max_attempts 3"},
        BadPolicy{R"({"max_retries": -1})", "max_retries", "expected an integer from 0"},
        BadPolicy{R"({"retry_phases": ["headers"]})", "retry_phases[0]", "unknown value 'headers'"},
        BadPolicy{R"({"stream_retries": "before_output"})", "stream_retries",
                  "did you mean 'before-output'?"},
        BadPolicy{R"({"statuses": {"retry": [429, "5x"]}})", "statuses.retry[1]",
                  "expected an HTTP status from 100 to 599"},
        BadPolicy{R"({"statuses": {"retry": [99]}})", "statuses.retry[0]", "HTTP status"},
        BadPolicy{R"({"statuses": {"always": [429]}})", "statuses.always", "unknown key 'always'"},
        BadPolicy{R"({"should_retry_header": "no"})", "should_retry_header",
                  "expected true or false"},
        BadPolicy{R"({"backoff": {"jitter_mode": "downward"}})", "backoff.jitter_mode",
                  "did you mean 'down'?"},
        BadPolicy{R"({"retry_after": {"mode": "max"}})", "retry_after.mode",
                  "expected one of 'floor', 'replace'"},
        BadPolicy{R"({"retry_after": {"zero": "now"}})", "retry_after.zero", "expected one of"},
        BadPolicy{R"({"retry_after": {"sources": ["retry_after"]}})", "retry_after.sources[0]",
                  "did you mean 'retry-after'?"},
        BadPolicy{R"({"retry_after": {"statuses": ["5xx"]}})", "retry_after.statuses",
                  "single statuses only"},
        BadPolicy{R"({"retryable_classes": "rate-limit"})", "retryable_classes",
                  "expected an array"},
        BadPolicy{R"({"retryable_classes": ["rate_limit"]})", "retryable_classes[0]",
                  "unknown value 'rate_limit'; did you mean 'rate-limit'?"},
        BadPolicy{R"({"retryable_classes": ["timeout", 5]})", "retryable_classes[1]",
                  "expected one of"},
        BadPolicy{R"({"retryable_classes": ["timeout", "timeout"]})", "retryable_classes[1]",
                  "listed twice"},
        BadPolicy{R"({"backoff": 5})", "backoff", "expected an object, got number"},
        BadPolicy{R"({"backoff": {"cap": 100}})", "backoff.cap",
                  "unknown key 'cap'; did you mean 'cap_ms'?"},
        BadPolicy{R"({"backoff": {"base_ms": "500"}})", "backoff.base_ms",
                  "expected an integer, got string \"500\""},
        BadPolicy{R"({"backoff": {"base_ms": 1.5}})", "backoff.base_ms", "expected an integer"},
        BadPolicy{R"({"backoff": {"base_ms": 1e30}})", "backoff.base_ms", "expected an integer"},
        BadPolicy{R"({"backoff": {"base_ms": 0}})", "backoff.base_ms", "must be > 0"},
        BadPolicy{R"({"backoff": {"base_ms": 1000, "cap_ms": 500}})", "backoff.cap_ms",
                  "must be >= base_ms (1000), got 500"},
        BadPolicy{R"({"backoff": {"jitter": 1.5}})", "backoff.jitter", "must be from 0 to 1"},
        BadPolicy{R"({"backoff": {"jitter": -0.1}})", "backoff.jitter", "must be from 0 to 1"},
        BadPolicy{R"({"backoff": {"multiplier": 0.5}})", "backoff.multiplier", "must be >= 1"},
        BadPolicy{R"({"backoff": {"strategy": "full_jitter"}})", "backoff.strategy",
                  "did you mean 'full-jitter'?"},
        BadPolicy{R"({"backoff": {"strategy": 1}})", "backoff.strategy", "expected one of"},
        BadPolicy{R"({"retry_after": {"over_cap": "giveup"}})", "retry_after.over_cap",
                  "did you mean 'give-up'?"},
        BadPolicy{R"({"retry_after": {"honor": "yes"}})", "retry_after.honor",
                  "expected true or false"},
        BadPolicy{R"({"retry_after": {"cap_ms": -1}})", "retry_after.cap_ms", "must be >= 0"},
        BadPolicy{R"({"retry_after": {"jitter": 2}})", "retry_after.jitter", "from 0 to 1"},
        BadPolicy{R"({"timeouts": {"idle_ms": 0}})", "timeouts.idle_ms", "must be > 0"},
        BadPolicy{R"({"timeouts": {"heartbeat_reset_idle": true}})",
                  "timeouts.heartbeat_reset_idle", "did you mean 'heartbeats_reset_idle'?"},
        BadPolicy{R"({"timeouts": {"total_ms": 500}})", "min_attempt_ms",
                  "must be <= timeouts.total_ms (500)"},
        BadPolicy{R"({"min_attempt_ms": -5})", "min_attempt_ms", "must be >= 0"},
        BadPolicy{R"({"budget": {"capacity": 0}})", "budget.capacity", "must be > 0"},
        BadPolicy{R"({"budget": {"retry_cost": 20}})", "budget.retry_cost",
                  "must be >= 0 and <= capacity (10)"},
        BadPolicy{R"({"budget": {"retry_cost": 0}})", "budget.retry_cost",
                  "must be > 0 when failure_cost is 0"},
        BadPolicy{R"({"budget": {"retry_threshold": 10}})", "budget.retry_threshold",
                  "must be >= 0 and < capacity (10)"},
        BadPolicy{R"({"budget": {"failure_cost": -1}})", "budget.failure_cost",
                  "must be >= 0 and <= capacity (10)"},
        BadPolicy{R"({"budget": {"refund": 1}})", "budget.refund",
                  "did you mean 'success_refund'?"},
        BadPolicy{R"({"budget": {"success_refund": -1}})", "budget.success_refund", "must be >= 0"},
        BadPolicy{R"({"routing": {"breaker": {"treshold": 2}}})", "routing.breaker.treshold",
                  "did you mean 'threshold'?"},
        BadPolicy{R"({"routing": {"failver": false}})", "routing.failver",
                  "did you mean 'failover'?"},
        BadPolicy{R"({"routing": {"breaker": {"threshold": 0}}})", "routing.breaker.threshold",
                  "must be from 1 to 1000, got 0"},
        BadPolicy{R"({"routing": {"breaker": {"cooldown_ms": -1}}})", "routing.breaker.cooldown_ms",
                  "must be from 0 to 86400000"},
        BadPolicy{R"({"routing": {"breaker": {"half_open_probes": 0}}})",
                  "routing.breaker.half_open_probes", "must be from 1 to 100"},
        BadPolicy{R"({"routing": {"failover": 1}})", "routing.failover", "expected true or false"},
        BadPolicy{R"({"routing": {"route_attempts": 0}})", "routing.route_attempts",
                  "must be from 1 to 1000, got 0"},
        BadPolicy{R"({"routing": {"route_attempts": "all"}})", "routing.route_attempts",
                  "expected an integer"},
        BadPolicy{R"({"routing": {"breaker": false}})", "routing.breaker", "expected an object"},
        BadPolicy{R"({"routing": {"sticky": true}})", "routing.sticky", "expected an object"},
        BadPolicy{R"({"routing": {"sticky": {"reset": 1000}}})", "routing.sticky.reset",
                  "did you mean 'reset_ms'?"},
        BadPolicy{R"({"routing": {"sticky": {"reset_ms": 0}}})", "routing.sticky.reset_ms",
                  "must be from 1 to 86400000 (24 h), got 0"},
        BadPolicy{R"({"routing": {"sticky": {"reset_ms": 90000000}}})", "routing.sticky.reset_ms",
                  "must be from 1 to 86400000"},
        BadPolicy{R"({"routing": {"sticky": {"reset_ms": 1.5}}})", "routing.sticky.reset_ms",
                  "expected an integer"}));

TEST(PolicyJsonTest, RoutingRoundTripsAndReachesTheHello) {
  auto policy = LoadPolicy(
      R"({"routing": {"failover": false, "breaker": {"threshold": 2, "cooldown_ms": 1500,
                                                     "half_open_probes": 3}}})");
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_FALSE(policy->routing.failover);
  EXPECT_EQ(policy->routing.breaker,
            (BreakerConfig{.threshold = 2, .cooldown = milliseconds(1500), .half_open_probes = 3}));
  EXPECT_EQ(LoadPolicy(PolicyToJson(*policy).dump()), *policy);
  EXPECT_EQ(PolicyToHelloJson(*policy)["routing"]["breaker"]["cooldown_ms"], 1500);
}

TEST(PolicyJsonTest, NoBreakerAndAFallbackChainRoundTrip) {
  auto policy = LoadPolicy(R"({"routing": {"breaker": null, "route_attempts": 7}})");
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_FALSE(policy->routing.breaker.has_value());
  EXPECT_EQ(policy->routing.route_attempts, 7);
  EXPECT_TRUE(PolicyToJson(*policy)["routing"]["breaker"].is_null());
  EXPECT_EQ(LoadPolicy(PolicyToJson(*policy).dump()), *policy);
  EXPECT_EQ(LoadPolicy("{}")->routing.breaker, BreakerConfig{}) << "the default has a breaker";
  EXPECT_FALSE(LoadPolicy("{}")->routing.route_attempts.has_value());
}

TEST(PolicyJsonTest, StickinessIsDeclaredRoundTripsAndIsWrittenOnlyWhenSet) {
  EXPECT_FALSE(LoadPolicy("{}")->routing.sticky.has_value()) << "not sticky by default";
  EXPECT_FALSE(PolicyToJson(RetryPolicy{})["routing"].contains("sticky"))
      << "every other client's hello stays what it was";
  auto policy = LoadPolicy(R"({"routing": {"sticky": {"reset_ms": 8000}}})");
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_EQ(policy->routing.sticky, StickyConfig{.reset = milliseconds(8000)});
  EXPECT_EQ(PolicyToHelloJson(*policy)["routing"]["sticky"]["reset_ms"], 8000);
  EXPECT_EQ(LoadPolicy(PolicyToJson(*policy).dump()), *policy);
  // ai-fallback's modelResetInterval by default; null says "not sticky" over a preset's.
  EXPECT_EQ(LoadPolicy(R"({"routing": {"sticky": {}}})")->routing.sticky->reset,
            milliseconds(180'000));
  EXPECT_FALSE(LoadPolicy(R"({"routing": {"sticky": null}})")->routing.sticky.has_value());
}

TEST(PolicyJsonTest, GroupAvoidanceAndTheFailoverRuleAreDeclaredAndRoundTrip) {
  EXPECT_TRUE(LoadPolicy("{}")->routing.avoid_failed_group) << "the reference client's default";
  auto policy = LoadPolicy(R"({"routing": {"avoid_failed_group": false}})");
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_FALSE(policy->routing.avoid_failed_group);
  EXPECT_EQ(PolicyToHelloJson(*policy)["routing"]["avoid_failed_group"], false);
  EXPECT_EQ(LoadPolicy(PolicyToJson(*policy).dump()), *policy);
  EXPECT_EQ(LoadPolicy("{}")->routing.failover_on, FailoverRule::kTaxonomy);
  auto any = LoadPolicy(R"({"routing": {"failover_on": "any-failure"}})");
  ASSERT_TRUE(any) << any.error().ToString();
  EXPECT_EQ(any->routing.failover_on, FailoverRule::kAnyFailure);
  EXPECT_EQ(PolicyToHelloJson(*any)["routing"]["failover_on"], "any-failure");
  EXPECT_EQ(LoadPolicy(PolicyToJson(*any).dump()), *any);
  auto unknown_rule = LoadPolicy(R"({"routing": {"failover_on": "always"}})");
  ASSERT_FALSE(unknown_rule);
  EXPECT_EQ(unknown_rule.error().path, "routing.failover_on");
  auto wrong = LoadPolicy(R"({"routing": {"avoid_failed_group": "yes"}})");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().path, "routing.avoid_failed_group");
}

TEST(PolicyJsonTest, ErrorToStringNamesThePath) {
  auto policy = LoadPolicy(R"({"backoff": {"base_ms": 0}})");
  ASSERT_FALSE(policy);
  EXPECT_EQ(policy.error().ToString(), "at backoff.base_ms: must be > 0, got 0");
}

TEST(PolicyJsonTest, NullDisablesOptionalParts) {
  auto policy = LoadPolicy(R"({"budget": null, "timeouts": {"total_ms": null}})");
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_FALSE(policy->budget);
  EXPECT_FALSE(policy->timeouts.total);
  EXPECT_FALSE(LoadPolicy(R"({"backoff": {"base_ms": null}})"));  // not optional
}

}  // namespace
}  // namespace faultline::ref
