// Golden tests: the fleet simulator, running the reference client's policy code, reproduces the
// published models it is meant to reproduce. All in virtual time.
#include <gtest/gtest.h>

#include <cmath>

#include "fleet/bench/storm_spec.h"
#include "fleet/contention.h"
#include "fleet/simulation.h"
#include "fleet/tests/gateway_fixtures.h"
#include "fmt/format.h"
#include "reference_impl/policy_json.h"

namespace faultline::fleet {
namespace {

using namespace std::chrono_literals;

NamedPolicy Policy(std::string_view name) {
  auto policy = ResolvePolicy(name);
  EXPECT_TRUE(policy.has_value()) << name;
  return *policy;
}

NamedPolicy FromJson(std::string_view json) {
  auto policy = ref::LoadPolicy(json);
  EXPECT_TRUE(policy.has_value()) << (policy ? "" : policy.error().ToString());
  return NamedPolicy{"test", *policy, std::nullopt, "test"};
}

// Independent failures: an unlimited provider that answers 500 with probability p.
scenario::Chaos FailWith(double p) {
  scenario::Chaos chaos;
  scenario::ResponseSpec failure;
  failure.status = 500;
  chaos.faults.push_back({p, failure});
  return chaos;
}

scenario::FleetSpec Uniform(double rate, std::chrono::seconds horizon) {
  scenario::FleetSpec spec;
  spec.clients = 100'000;
  spec.horizon = horizon;
  spec.workload.kind = scenario::FleetWorkload::Kind::kUniform;
  spec.workload.rate = {{0s, rate}};
  spec.provider.service = scenario::FleetProvider::Service::kConstant;
  spec.provider.service_mean = 10ms;
  return spec;
}

// ---- Brooker 2015: N clients contending for one row ----

TEST(BrookerTest, JitterStrategiesRankAsPublished) {
  for (int clients : {50, 100, 150}) {
    const ContentionResult none = RunContention(Policy("brooker-none"), clients, 20, 1);
    const ContentionResult full = RunContention(Policy("brooker-full"), clients, 20, 1);
    const ContentionResult equal = RunContention(Policy("brooker-equal"), clients, 20, 1);
    const ContentionResult decorrelated =
        RunContention(Policy("brooker-decorrelated"), clients, 20, 1);
    std::cout << fmt::format(
        "N={:3}  vs full jitter: time none {:.2f} equal {:.2f} decorrelated {:.2f}; calls none "
        "{:.2f} equal {:.2f} decorrelated {:.2f} (full: {:.0f} ms, {:.0f} calls)\n",
        clients, none.completion_ms / full.completion_ms, equal.completion_ms / full.completion_ms,
        decorrelated.completion_ms / full.completion_ms, none.calls / full.calls,
        equal.calls / full.calls, decorrelated.calls / full.calls, full.completion_ms, full.calls);
    // No jitter is far worst in both time and calls.
    EXPECT_GT(none.completion_ms, 2 * full.completion_ms) << clients;
    EXPECT_GT(none.calls, 1.5 * full.calls) << clients;
    // Full and equal jitter: about the same calls; equal jitter somewhat longer.
    EXPECT_NEAR(equal.calls / full.calls, 1.0, 0.25) << clients;
    EXPECT_GT(equal.completion_ms, full.completion_ms) << clients;
    // Decorrelated: about as fast as full jitter, with more calls.
    EXPECT_NEAR(decorrelated.completion_ms / full.completion_ms, 1.0, 0.35) << clients;
    EXPECT_GT(decorrelated.calls, full.calls) << clients;
  }
}

// ---- Amplification with R retries and independent failures ----

TEST(AmplificationTest, MatchesTheGeometricSeriesToThreeDecimals) {
  for (int retries : {1, 3}) {
    for (double p : {0.1, 0.3, 0.5}) {
      const NamedPolicy policy = FromJson(fmt::format(
          R"({{"max_attempts": {}, "backoff": {{"strategy": "exponential", "base_ms": 1,
              "cap_ms": 1, "multiplier": 1, "jitter": 0}}, "min_attempt_ms": 0,
              "timeouts": {{"total_ms": null}}}})",
          retries + 1));
      const scenario::FleetSpec spec = Uniform(20'000, 100s);
      const scenario::Chaos chaos = FailWith(p);
      const PolicyMeasures m = Simulate(RunInput{&spec, &chaos, &policy, 7, {}});
      const double expected = (1 - std::pow(p, retries + 1)) / (1 - p);
      EXPECT_NEAR(m.amplification, expected, 0.001) << "R=" << retries << " p=" << p;
      EXPECT_GE(m.calls, 1'999'999u);  // evenly spaced: the last one falls on the horizon
    }
  }
}

// ---- A token bucket (+0.1 per success, -1 per retry) bounds amplification at 1.1 ----

TEST(TokenBucketTest, KeepsAmplificationAtMostOnePointOne) {
  const NamedPolicy policy = FromJson(
      R"({"max_attempts": 10, "backoff": {"strategy": "exponential", "base_ms": 1, "cap_ms": 1,
          "multiplier": 1, "jitter": 0}, "min_attempt_ms": 0, "timeouts": {"total_ms": null},
          "budget": {"capacity": 10, "retry_cost": 1, "success_refund": 0.1}})");
  for (int tenth = 0; tenth <= 10; ++tenth) {
    const double p = tenth / 10.0;
    const scenario::FleetSpec spec = Uniform(2'000, 50s);
    const scenario::Chaos chaos = FailWith(p);
    const PolicyMeasures m = Simulate(RunInput{&spec, &chaos, &policy, 3, {}});
    // The initial 10 tokens may add 10 retries in all.
    EXPECT_LE(m.amplification, 1.1 + 10.0 / static_cast<double>(m.calls)) << "p=" << p;
  }
}

// ---- gRPC retry throttling stops retrying above a failure rate of about 1/11 ----

TEST(GrpcThrottlingTest, StopsRetryingAboveOneInEleven) {
  const NamedPolicy policy = Policy("grpc-throttling");
  auto retries_per_call = [&](double p) {
    const scenario::FleetSpec spec = Uniform(2'000, 50s);
    const scenario::Chaos chaos = FailWith(p);
    const PolicyMeasures m = Simulate(RunInput{&spec, &chaos, &policy, 5, {}});
    return static_cast<double>(m.retries) / static_cast<double>(m.calls);
  };
  // Below the threshold every failure is retried: p + p^2 + ... retries per call.
  for (double p : {0.02, 0.06}) EXPECT_GT(retries_per_call(p), 0.95 * p) << p;
  // Above it, retrying stops (only the rare moment the bucket climbs back over half).
  for (double p : {0.12, 0.2, 0.5, 0.9}) EXPECT_LT(retries_per_call(p), 0.05 * p) << p;
}

// ---- Metastability: a spike tips naive retries into a collapse that outlives it ----

scenario::FleetSpec Metastable() {
  scenario::FleetSpec spec;
  spec.clients = 100'000;
  spec.horizon = 150s;
  spec.drain = 30s;
  spec.timeout = 500ms;  // client timeout per attempt
  // 10 calls/s of capacity: one slot, 100 ms per request, a long queue.
  spec.provider.concurrency = 1;
  spec.provider.queue = 1000;
  spec.provider.service = scenario::FleetProvider::Service::kConstant;
  spec.provider.service_mean = 100ms;
  // 20/s for 20 s, then stepped down to 3/s.
  spec.workload.rate = {{0s, 5}, {10s, 20}, {30s, 8}, {50s, 5}, {70s, 3}};
  return spec;
}

TEST(MetastabilityTest, NaiveRetriesStayCollapsedBudgetsRecover) {
  const scenario::FleetSpec spec = Metastable();
  auto run = [&](std::string_view name) {
    const NamedPolicy policy = Policy(name);
    return Simulate(RunInput{&spec, nullptr, &policy, 11, {}});
  };
  const PolicyMeasures no_retry = run("no-retry");
  const PolicyMeasures naive = run("naive");
  const PolicyMeasures bucket = run("token-bucket");
  const PolicyMeasures grpc = run("grpc-throttling");
  ASSERT_TRUE(no_retry.recovery_seconds.has_value());
  EXPECT_FALSE(naive.recovery_seconds.has_value())
      << "naive recovered after " << *naive.recovery_seconds << " s";
  for (const PolicyMeasures* m : {&bucket, &grpc}) {
    ASSERT_TRUE(m->recovery_seconds.has_value()) << m->policy;
    EXPECT_LE(*m->recovery_seconds, *no_retry.recovery_seconds + 10) << m->policy;
  }
  // Collapsed: at 3/s offered, the naive fleet still gets almost nothing through.
  std::uint64_t late_ok = 0, late_offered = 0;
  for (std::size_t s = 120; s < 150; ++s) {
    late_ok += naive.series[s].succeeded;
    late_offered += naive.series[s].offered;
  }
  EXPECT_LT(static_cast<double>(late_ok), 0.2 * static_cast<double>(late_offered));
}

// ---- Determinism ----

// ---- AWS adaptive retry mode under a 429 storm ----

// Twice the provider's rate limit for a minute, 429 without Retry-After: the limiter, slowed by
// the throttles to about what the provider admits, holds sends back instead of sending them to
// be refused (botocore's design), so fewer attempts per call than standard mode, at the cost of
// waiting in line.
TEST(AwsAdaptiveTest, TheRateLimiterCutsAmplificationUnderA429Storm) {
  const scenario::FleetSpec spec = StormSpec();  // the speed benchmark's storm
  const NamedPolicy standard_policy = Policy("aws-standard");
  const NamedPolicy adaptive_policy = Policy("aws-adaptive");
  const PolicyMeasures standard = Simulate(RunInput{&spec, nullptr, &standard_policy, 1, {}});
  const PolicyMeasures adaptive = Simulate(RunInput{&spec, nullptr, &adaptive_policy, 1, {}});
  std::cout << fmt::format(
      "429 storm: attempts/call standard {:.3f} adaptive {:.3f}; 429s {} vs {}; success {:.3f} "
      "vs {:.3f}; p50 {:.0f} ms vs {:.0f} ms\n",
      standard.amplification, adaptive.amplification, standard.overloaded, adaptive.overloaded,
      standard.success_rate, adaptive.success_rate, standard.p50_ms, adaptive.p50_ms);
  EXPECT_LT(adaptive.amplification, standard.amplification);
  EXPECT_LT(adaptive.overloaded * 10, standard.overloaded);
  EXPECT_GT(adaptive.success_rate, standard.success_rate);
  EXPECT_GT(adaptive.p50_ms, standard.p50_ms);  // the price: calls wait for their tokens
}

// ---- The catalogue's stateful rate limit, fleet-wide ----

// 100 calls/s against `rate_limit: {requests: 50, window: 1s}`: the provider admits at most 50
// requests in any second (the fake provider's sliding window) and answers the rest 429 with the
// time until the window frees, which openai-node waits out.
TEST(RateLimitWindowTest, AdmitsAtMostTheBudgetOfAnyWindow) {
  const scenario::FleetSpec spec = Uniform(100, 20s);
  const scenario::RateLimit limit{50, 0, 1s};
  const NamedPolicy once_policy = Policy("no-retry");
  const NamedPolicy sdk_policy = Policy("openai-node");
  const PolicyMeasures once = Simulate(RunInput{&spec, nullptr, &once_policy, 1, {}, &limit});
  const PolicyMeasures sdk = Simulate(RunInput{&spec, nullptr, &sdk_policy, 1, {}, &limit});
  EXPECT_NEAR(once.success_rate, 0.5, 0.02);
  EXPECT_GT(sdk.success_rate, once.success_rate);
  EXPECT_GT(sdk.amplification, 1.0);
  for (const PolicyMeasures* m : {&once, &sdk}) {
    EXPECT_GT(m->overloaded, 0u) << m->policy;
    for (const Bucket& bucket : m->series) {
      EXPECT_LE(bucket.attempts - bucket.overloaded, 50u) << m->policy;  // admitted in 1 s
    }
  }
}

// ---- Layered retries: each layer's attempts multiply ----

// A provider that answers every request 429 at once (no slot, no queue, for the whole run), with
// `retry_after` as its hint (none by default): 10 calls/s for 10 s, evenly spaced.
scenario::FleetSpec Persistent429() {
  scenario::FleetSpec spec = Uniform(10, 10s);
  spec.provider.concurrency = 1;
  spec.provider.queue = 0;
  spec.provider.brownouts = {{0s, 720h, 0.0}};
  spec.provider.overload = {429, scenario::FleetOverload::Hint::kNone, 0s};
  return spec;
}

// A client of `attempts` attempts 1 ms apart that honours Retry-After as a floor up to 60 s (no
// jitter on the hint) and gives up on a longer one.
NamedPolicy ClientOf(int attempts) {
  return FromJson(fmt::format(
      R"({{"max_attempts": {}, "backoff": {{"strategy": "exponential", "base_ms": 1, "cap_ms": 1,
          "multiplier": 1, "jitter": 0}}, "min_attempt_ms": 0, "timeouts": {{"total_ms": null}},
          "retry_after": {{"honor": true, "mode": "floor", "cap_ms": 60000, "jitter": 0}}}})",
      attempts));
}

// A gateway of `attempts` tries 1 ms apart, Retry-After neither honoured nor passed unless set.
scenario::FleetGateway GatewayOf(int attempts) {
  scenario::FleetGateway gateway = testing::FixedGateway(attempts);
  gateway.pass_retry_after = false;
  return gateway;
}

TEST(LayeredRetryTest, ThreeClientAttemptsThroughFourGatewayAttemptsAreTwelveRequests) {
  scenario::FleetSpec spec = Persistent429();
  spec.gateways = {GatewayOf(4)};
  const NamedPolicy client = ClientOf(3);
  const PolicyMeasures m = Simulate(RunInput{&spec, nullptr, &client, 1, {}});
  ASSERT_GE(m.calls, 99u);
  EXPECT_EQ(m.attempts, 3 * m.calls);
  ASSERT_EQ(m.layers.size(), 1u);
  EXPECT_EQ(m.layers[0].received, 3 * m.calls);
  EXPECT_EQ(m.layers[0].sent, 12 * m.calls);
  EXPECT_EQ(m.layers[0].retries, 9 * m.calls);
  EXPECT_EQ(m.provider_requests, 12 * m.calls);  // exactly 3 x 4 per call
  EXPECT_EQ(m.amplification, 3.0);
  EXPECT_EQ(m.layers[0].amplification, 4.0);
  EXPECT_EQ(m.load_amplification, 12.0);
  EXPECT_EQ(m.failed, m.calls);
  EXPECT_EQ(m.give_up_reasons,
            (std::map<std::string, std::uint64_t>{{"attempts-exhausted", m.calls}}));
}

TEST(LayeredRetryTest, GatewayRetriesZeroToThreeMultiplyTheClientsThree) {
  const NamedPolicy client = ClientOf(3);
  for (int gateway_attempts = 1; gateway_attempts <= 4; ++gateway_attempts) {
    scenario::FleetSpec spec = Persistent429();
    spec.gateways = {GatewayOf(gateway_attempts)};
    const PolicyMeasures m = Simulate(RunInput{&spec, nullptr, &client, 1, {}});
    EXPECT_EQ(m.provider_requests, 3u * gateway_attempts * m.calls)
        << gateway_attempts - 1 << " gateway retries";
  }
  // Without a gateway block, the client's own 3.
  const scenario::FleetSpec direct = Persistent429();
  const PolicyMeasures m = Simulate(RunInput{&direct, nullptr, &client, 1, {}});
  EXPECT_EQ(m.provider_requests, 3 * m.calls);
  EXPECT_TRUE(m.layers.empty());
}

// The provider says "Retry-After: 2". A gateway that passes it on makes the client wait 2 s
// between its attempts (same 12 requests, calls 4 s longer); one that drops it leaves the client
// its 1 ms backoff; one that also honours it waits 2 s between its own tries.
TEST(LayeredRetryTest, APassedRetryAfterReachesTheClient) {
  const NamedPolicy client = ClientOf(3);
  auto run = [&](bool honor, bool pass, scenario::Duration hint) {
    scenario::FleetSpec spec = Persistent429();
    spec.provider.overload = {429, scenario::FleetOverload::Hint::kConstant, hint};
    spec.gateways = {GatewayOf(4)};
    spec.gateways[0].honor_retry_after = honor;
    spec.gateways[0].pass_retry_after = pass;
    return Simulate(RunInput{&spec, nullptr, &client, 1, {}});
  };
  const PolicyMeasures passed = run(false, true, 2s);
  const PolicyMeasures dropped = run(false, false, 2s);
  const PolicyMeasures honoured = run(true, true, 2s);
  for (const PolicyMeasures* m : {&passed, &dropped, &honoured}) {
    EXPECT_EQ(m->provider_requests, 12 * m->calls);
  }
  // Latency percentiles are the upper edges of buckets about 3 % wide.
  // Passed: 3 x (3 gateway backoffs of 1 ms) + 2 client waits of 2 s.
  EXPECT_NEAR(passed.p50_ms, 4009, 4009 * 0.035);
  // Dropped: 9 gateway backoffs and 2 client backoffs of 1 ms.
  EXPECT_NEAR(dropped.p50_ms, 11, 1);
  // Honoured and passed: 3 x (3 gateway waits of 2 s) + 2 client waits of 2 s.
  EXPECT_NEAR(honoured.p50_ms, 22000, 22000 * 0.035);

  // Retry-After: 120 is over the client's 60 s cap: passed on, the client gives up after its
  // first attempt (4 requests a call); dropped, it never learns and makes all 12.
  const PolicyMeasures over_cap_passed = run(false, true, 120s);
  const PolicyMeasures over_cap_dropped = run(false, false, 120s);
  EXPECT_EQ(over_cap_passed.provider_requests, 4 * over_cap_passed.calls);
  EXPECT_EQ(over_cap_passed.give_up_reasons.at("retry-after-over-cap"), over_cap_passed.calls);
  EXPECT_EQ(over_cap_dropped.provider_requests, 12 * over_cap_dropped.calls);
}

// ---- Google SRE book: retries at three layers, "64 attempts (4^3)" ----

// Beyer et al., "Site Reliability Engineering" (O'Reilly, 2016), ch. 22 "Addressing Cascading
// Failures", Retries: "If the database can't service requests because it's overloaded, and the
// backend, frontend, and JavaScript layers all issue 3 retries (4 attempts), then a single user
// action may create 64 attempts (4^3) on the database." The JavaScript layer is the client, the
// frontend and the backend two gateway layers, the database the provider.
TEST(SreBookTest, ThreeLayersOfFourAttemptsMake64AttemptsOnTheDatabase) {
  scenario::FleetSpec spec = Persistent429();
  spec.gateways = {GatewayOf(4), GatewayOf(4)};
  spec.gateways[0].name = "frontend";
  spec.gateways[1].name = "backend";
  const NamedPolicy javascript = ClientOf(4);
  const PolicyMeasures m = Simulate(RunInput{&spec, nullptr, &javascript, 1, {}});
  std::cout << fmt::format("SRE book: {} database attempts for {} user actions: {:.0f} each\n",
                           m.provider_requests, m.calls, m.load_amplification);
  EXPECT_EQ(m.provider_requests, 64 * m.calls);
  EXPECT_EQ(m.load_amplification, 64.0);
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.layers[0].name, "frontend");
  EXPECT_EQ(m.layers[0].sent, 16 * m.calls);
  EXPECT_EQ(m.layers[1].received, 16 * m.calls);
  EXPECT_EQ(m.layers[1].sent, 64 * m.calls);
}

TEST(DeterminismTest, SameSeedSameMeasures) {
  const scenario::FleetSpec spec = Metastable();
  const NamedPolicy policy = Policy("openai-node");
  const PolicyMeasures a = Simulate(RunInput{&spec, nullptr, &policy, 42, {}});
  const PolicyMeasures b = Simulate(RunInput{&spec, nullptr, &policy, 42, {}});
  const PolicyMeasures c = Simulate(RunInput{&spec, nullptr, &policy, 43, {}});
  EXPECT_EQ(a.attempts, b.attempts);
  EXPECT_EQ(a.latency.Occupied(), b.latency.Occupied());
  EXPECT_EQ(a.events, b.events);
  EXPECT_NE(a.latency.Occupied(), c.latency.Occupied());
}

}  // namespace
}  // namespace faultline::fleet
