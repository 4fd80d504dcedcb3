// The gateway layer's mechanics (per-try timeouts, what a client's timeout cancels, the policy a
// layer retries by) and the provider's tokens-per-minute bucket. All in virtual time.
#include "fleet/gateway.h"

#include <gtest/gtest.h>

#include "fleet/simulation.h"
#include "fleet/tests/gateway_fixtures.h"
#include "fmt/format.h"
#include "reference_impl/policy_json.h"

namespace faultline::fleet {
namespace {

using namespace std::chrono_literals;

NamedPolicy FromJson(std::string_view json) {
  auto policy = ref::LoadPolicy(json);
  EXPECT_TRUE(policy.has_value()) << (policy ? "" : policy.error().ToString());
  return NamedPolicy{"test", *policy, std::nullopt, "test"};
}

// One attempt, its timeout `timeout`.
NamedPolicy OneAttempt() {
  return FromJson(R"({"max_attempts": 1, "min_attempt_ms": 0, "timeouts": {"total_ms": null}})");
}

// 10 calls/s for 10 s, evenly spaced, against an unlimited provider that takes `service`.
scenario::FleetSpec SlowProvider(scenario::Duration service) {
  scenario::FleetSpec spec;
  spec.clients = 1000;
  spec.horizon = 10s;
  spec.workload.kind = scenario::FleetWorkload::Kind::kUniform;
  spec.workload.rate = {{0s, 10}};
  spec.provider.service = scenario::FleetDistribution::kConstant;
  spec.provider.service_mean = service;
  return spec;
}

scenario::FleetGateway Gateway(int attempts, std::optional<scenario::Duration> per_try) {
  scenario::FleetGateway gateway = testing::FixedGateway(attempts);
  gateway.per_try_timeout = per_try;
  return gateway;
}

TEST(GatewayPolicyTest, IsAValidReferencePolicyAtTheEndsOfItsRanges) {
  for (int attempts : {1, 1000}) {
    scenario::FleetGateway gateway = Gateway(attempts, 1us);
    gateway.backoff_base = 1ms;
    gateway.backoff_cap = 720h;
    for (scenario::FleetJitter jitter :
         {scenario::FleetJitter::kNone, scenario::FleetJitter::kFull, scenario::FleetJitter::kEqual,
          scenario::FleetJitter::kDecorrelated}) {
      gateway.jitter = jitter;
      const auto valid = ref::Validate(GatewayPolicy(gateway));
      EXPECT_TRUE(valid.has_value()) << (valid ? "" : valid.error().ToString());
    }
  }
}

// A provider that takes 1 s and a gateway that gives each try 300 ms: three tries time out, all
// three served to nobody, and the client gets the gateway's 504 after about 900 ms.
TEST(GatewayTimeoutTest, PerTryTimeoutsEndInAGatewayTimeout) {
  scenario::FleetSpec spec = SlowProvider(1s);
  spec.timeout = 10s;
  spec.gateways = {Gateway(3, 300ms)};
  const NamedPolicy client = OneAttempt();
  const PolicyMeasures m = Simulate(RunInput{&spec, nullptr, &client, 1, {}});
  ASSERT_GE(m.calls, 99u);
  EXPECT_EQ(m.provider_requests, 3 * m.calls);
  EXPECT_EQ(m.layers[0].timeouts, 3 * m.calls);
  EXPECT_EQ(m.wasted_requests, m.served);
  EXPECT_EQ(m.failed, m.calls);
  EXPECT_EQ(m.timeouts, 0u);                // the client's own timeout never fired
  EXPECT_NEAR(m.p50_ms, 902, 902 * 0.035);  // 3 x 300 ms + 2 backoffs of 1 ms
}

// The client gives up after 500 ms: the gateway, between its second and third try, stops there
// (as Envoy resets the upstream request when the downstream one goes away).
TEST(GatewayTimeoutTest, AClientTimeoutCancelsTheGatewaysRetries) {
  scenario::FleetSpec spec = SlowProvider(1s);
  spec.timeout = 500ms;
  spec.gateways = {Gateway(3, 300ms)};
  const NamedPolicy client = OneAttempt();
  const PolicyMeasures m = Simulate(RunInput{&spec, nullptr, &client, 1, {}});
  EXPECT_EQ(m.provider_requests, 2 * m.calls);  // at 0 and 301 ms; the third would be at 602 ms
  EXPECT_EQ(m.timeouts, m.calls);
  EXPECT_EQ(m.layers[0].timeouts, m.calls);
}

// A fleet that succeeds at once through a gateway: one request per attempt at every layer.
TEST(GatewayTest, SuccessPassesStraightThrough) {
  scenario::FleetSpec spec = SlowProvider(10ms);
  spec.gateways = {Gateway(5, std::nullopt), Gateway(5, 1s)};
  const NamedPolicy client = OneAttempt();
  const PolicyMeasures m = Simulate(RunInput{&spec, nullptr, &client, 1, {}});
  EXPECT_EQ(m.succeeded, m.calls);
  EXPECT_EQ(m.provider_requests, m.calls);
  EXPECT_EQ(m.layers[1].amplification, 1.0);
  EXPECT_EQ(m.wasted_requests, 0u);
}

// ---- Tokens per minute ----

// 2 calls/s of 1,000 tokens against 60,000 tokens a minute (1,000 a second, a bucket that starts
// full): for 100 s the provider admits the bucket's 60 calls and then one a second.
TEST(TokensPerMinuteTest, AdmitsTheBucketAndItsRefill) {
  scenario::FleetSpec spec = SlowProvider(10ms);
  spec.horizon = 100s;
  spec.workload.rate = {{0s, 2}};
  spec.provider.tokens_per_minute = 60'000;
  spec.tokens_per_call = 1000;
  const NamedPolicy once = OneAttempt();
  const PolicyMeasures m = Simulate(RunInput{&spec, nullptr, &once, 1, {}});
  EXPECT_NEAR(static_cast<double>(m.succeeded), 160, 2);
  EXPECT_EQ(m.overloaded, m.failed);  // each refusal a 429
  EXPECT_EQ(m.capacity_steps, (std::vector<std::pair<double, double>>{{0, 1.0}}));
}

// The honest Retry-After is the time until the bucket holds the request's tokens again: a client
// that waits it out gets every call through, with few refusals.
TEST(TokensPerMinuteTest, TheHonestRetryAfterIsTheRefillTime) {
  scenario::FleetSpec spec = SlowProvider(10ms);
  spec.horizon = 100s;
  spec.drain = 600s;
  spec.workload.rate = {{0s, 1.5}};
  spec.provider.tokens_per_minute = 60'000;
  spec.tokens_per_call = 1000;
  const NamedPolicy client = FromJson(
      R"({"max_attempts": 50, "backoff": {"strategy": "exponential", "base_ms": 1, "cap_ms": 1,
          "multiplier": 1, "jitter": 0}, "min_attempt_ms": 0, "timeouts": {"total_ms": null},
          "retry_after": {"honor": true, "mode": "replace", "cap_ms": null, "jitter": 0}})");
  const PolicyMeasures m = Simulate(RunInput{&spec, nullptr, &client, 1, {}});
  EXPECT_EQ(m.succeeded, m.calls);
  // Each refused attempt waits until its tokens are back; competing calls take some first.
  EXPECT_LT(m.amplification, 3.0);
}

// Costs drawn per call around their mean: 600,000 tokens a minute at a mean of 1,000 a call is
// about 10 calls/s after the full bucket's 600 calls: 1,600 in 100 s at a constant cost.
TEST(TokensPerMinuteTest, ADistributionOfCostsKeepsItsMean) {
  for (auto distribution :
       {scenario::FleetDistribution::kExponential, scenario::FleetDistribution::kLognormal}) {
    scenario::FleetSpec spec = SlowProvider(10ms);
    spec.horizon = 100s;
    spec.workload.rate = {{0s, 20}};
    spec.provider.tokens_per_minute = 600'000;
    spec.tokens_per_call = 1000;
    spec.tokens_distribution = distribution;
    const NamedPolicy once = OneAttempt();
    const PolicyMeasures m = Simulate(RunInput{&spec, nullptr, &once, 1, {}});
    // Small calls slip in where a large one is refused, so a spread admits more calls (not more
    // tokens): 1,827 calls with exponential costs.
    EXPECT_GT(m.succeeded, 1600u) << static_cast<int>(distribution);
    EXPECT_LT(m.succeeded, 1900u) << static_cast<int>(distribution);
  }
}

}  // namespace
}  // namespace faultline::fleet
