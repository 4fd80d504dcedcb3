// The `fleet:` section: what it reads, and its errors with line, column and JSON path.
#include <gtest/gtest.h>

#include <string>

#include "scenarios/fleet_bounds.h"
#include "scenarios/loader.h"

namespace faultline::scenario {
namespace {

using namespace std::chrono_literals;

// Lines 1-5 are the scenario's identity; the fleet section's body starts on line 6.
std::string Fleet(std::string_view body) {
  return "faultline: 1\nname: fleet/x\ndescription: d\ndialect: openai-chat\nfleet:\n" +
         std::string(body);
}

TEST(FleetSectionTest, ReadsEveryPart) {
  auto scenario = ParseScenario(Fleet(R"(  clients: 5000
  horizon: 90s
  seed: 7
  arrivals: {process: poisson, rate: [{at: 0s, rate: 5}, {at: 10s, rate: 20}]}
  provider:
    concurrency: 4
    rate: 100
    queue: 50
    service: {distribution: lognormal, mean: 200ms, sigma: 0.8}
    overload: {status: 503, retry_after: 2s}
    brownouts: [{from: 5s, for: 10s, capacity: 0.25}]
  timeout: 500ms
  policies: [openai-node, grpc-throttling]
)"),
                                "f.yaml");
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  const FleetSpec& fleet = *scenario->fleet;
  EXPECT_EQ(fleet.clients, 5000u);
  EXPECT_EQ(fleet.horizon, 90s);
  EXPECT_EQ(fleet.seed, 7u);
  ASSERT_EQ(fleet.workload.rate.size(), 2u);
  EXPECT_EQ(fleet.workload.rate[1].at, 10s);
  EXPECT_EQ(fleet.workload.rate[1].value, 20);
  EXPECT_EQ(fleet.provider.concurrency, 4);
  EXPECT_EQ(fleet.provider.service, FleetProvider::Service::kLognormal);
  EXPECT_EQ(fleet.provider.overload.status, 503);
  EXPECT_EQ(fleet.provider.overload.hint, FleetOverload::Hint::kConstant);
  EXPECT_EQ(fleet.provider.overload.constant, 2s);
  ASSERT_EQ(fleet.provider.brownouts.size(), 1u);
  EXPECT_EQ(fleet.provider.brownouts[0].capacity, 0.25);
  EXPECT_EQ(fleet.timeout, 500ms);
  ASSERT_EQ(fleet.policies.size(), 2u);
  EXPECT_EQ(fleet.policies[1].text, "grpc-throttling");
  EXPECT_EQ(fleet.policies[1].line, 18);
  EXPECT_EQ(fleet.policies[1].column, 27);
}

TEST(FleetSectionTest, ReadsGatewayLayersAndTokenCosts) {
  auto scenario = ParseScenario(Fleet(R"(  provider: {tokens_per_minute: 90000}
  tokens_per_call: {distribution: lognormal, mean: 800, sigma: 1}
  gateway:
    - retry: {max_attempts: 4, backoff: {base: 10ms, cap: 1s, jitter: equal},
              honor_retry_after: true, pass_retry_after: false, per_try_timeout: 30s}
    - {name: router}
  policies: [naive]
)"),
                                "f.yaml");
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  const FleetSpec& fleet = *scenario->fleet;
  EXPECT_EQ(fleet.provider.tokens_per_minute, 90000);
  EXPECT_EQ(fleet.tokens_per_call, 800);
  EXPECT_EQ(fleet.tokens_distribution, FleetDistribution::kLognormal);
  EXPECT_EQ(fleet.tokens_sigma, 1.0);
  ASSERT_EQ(fleet.gateways.size(), 2u);
  const FleetGateway& first = fleet.gateways[0];
  EXPECT_EQ(first.name, "gateway");
  EXPECT_EQ(first.max_attempts, 4);
  EXPECT_EQ(first.backoff_base, 10ms);
  EXPECT_EQ(first.backoff_cap, 1s);
  EXPECT_EQ(first.jitter, FleetJitter::kEqual);
  EXPECT_TRUE(first.honor_retry_after);
  EXPECT_FALSE(first.pass_retry_after);
  EXPECT_EQ(first.per_try_timeout, 30s);
  // Envoy's defaults: one retry, full jitter from 25 ms to 250 ms, the answer proxied as it came.
  const FleetGateway& second = fleet.gateways[1];
  EXPECT_EQ(second.name, "router");
  EXPECT_EQ(second.max_attempts, 2);
  EXPECT_EQ(second.backoff_base, 25ms);
  EXPECT_EQ(second.backoff_cap, 250ms);
  EXPECT_EQ(second.jitter, FleetJitter::kFull);
  EXPECT_FALSE(second.honor_retry_after);
  EXPECT_TRUE(second.pass_retry_after);
  EXPECT_EQ(second.per_try_timeout, std::nullopt);
  EXPECT_EQ(CheckFleetSpec(fleet), std::nullopt);
}

TEST(FleetSectionTest, OneGatewayIsAMap) {
  auto scenario = ParseScenario(
      Fleet("  gateway: {retry: {max_attempts: 1}}\n  policies: [naive]\n"), "f.yaml");
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  ASSERT_EQ(scenario->fleet->gateways.size(), 1u);
  EXPECT_EQ(scenario->fleet->gateways[0].max_attempts, 1);
  EXPECT_EQ(scenario->fleet->tokens_per_call, 500);
}

struct FleetError {
  std::string_view what;
  std::string body;
  int line;
  int column;
  std::string_view path;
  std::string_view message;
};

TEST(FleetSectionTest, ErrorsNameLineColumnAndPath) {
  const FleetError cases[] = {
      {"unknown key", "  clinets: 5\n  policies: [naive]\n", 6, 3, "fleet.clinets",
       "did you mean 'clients'?"},
      {"no policies", "  clients: 5\n", 6, 3, "fleet", "missing required key 'policies'"},
      {"overload status", "  provider: {overload: {status: 500}}\n  policies: [naive]\n", 6, 33,
       "fleet.provider.overload.status", "expected 429, 503 or 529"},
      {"retry_after word", "  provider: {overload: {retry_after: later}}\n  policies: [naive]\n", 6,
       38, "fleet.provider.overload.retry_after", "expected 'honest', 'none' or a duration"},
      {"steps out of order",
       "  arrivals: {rate: [{at: 0s, rate: 1}, {at: 0s, rate: 2}]}\n  policies: [naive]\n", 6, 45,
       "fleet.arrivals.rate[1].at", "increasing order"},
      {"closed with a rate", "  arrivals: {process: closed, rate: 5}\n  policies: [naive]\n", 6, 31,
       "fleet.arrivals.rate", "a closed population has no arrival rate"},
      {"too many clients", "  clients: 2000000\n  policies: [naive]\n", 6, 12, "fleet.clients",
       "1000000"},
      // Issue 30: a horizon past the microsecond clock's range was accepted (and overflowed).
      {"horizon past the range", "  horizon: 9000000000000s\n  policies: [naive]\n", 6, 12,
       "fleet.horizon", "expected a duration from 1us to 720h, got 9000000000000s"},
      {"negative horizon", "  horizon: -10s\n  policies: [naive]\n", 6, 12, "fleet.horizon",
       "expected a duration from 1us to 720h, got -10s"},
      {"zero bucket", "  bucket: 0s\n  policies: [naive]\n", 6, 11, "fleet.bucket",
       "expected a duration from 1us to 720h, got 0s"},
      {"drain past the range", "  drain: 1000h\n  policies: [naive]\n", 6, 10, "fleet.drain",
       "expected a duration from 0s to 720h"},
      {"service time zero", "  provider: {service: {mean: 0ms}}\n  policies: [naive]\n", 6, 30,
       "fleet.provider.service.mean", "expected a duration from 1us to 720h, got 0s"},
      {"arrival rate", "  arrivals: {rate: 1e12}\n  policies: [naive]\n", 6, 20,
       "fleet.arrivals.rate", "expected a number from 0 to 10000000"},
      {"gateway key", "  gateway: {retry: {max_atempts: 3}}\n  policies: [naive]\n", 6, 21,
       "fleet.gateway.retry.max_atempts", "did you mean 'max_attempts'?"},
      {"gateway attempts", "  gateway: {retry: {max_attempts: 0}}\n  policies: [naive]\n", 6, 35,
       "fleet.gateway.retry.max_attempts", "expected an integer from 1 to 1000"},
      {"gateway jitter", "  gateway: {retry: {backoff: {jitter: some}}}\n  policies: [naive]\n", 6,
       39, "fleet.gateway.retry.backoff.jitter", "full"},
      {"gateway cap below base",
       "  gateway: {retry: {backoff: {base: 2s, cap: 1s}}}\n  policies: [naive]\n", 6, 46,
       "fleet.gateway.retry.backoff.cap", "expected cap >= base (2s), got 1s"},
      {"gateway backoff below a millisecond",
       "  gateway: {retry: {backoff: {base: 1500us}}}\n  policies: [naive]\n", 6, 37,
       "fleet.gateway.retry.backoff.base", "expected whole milliseconds, got 1500us"},
      {"no gateway layers", "  gateway: []\n  policies: [naive]\n", 6, 12, "fleet.gateway",
       "expected 1 to 8 gateway layers, got 0"},
      {"pass_retry_after not a bool",
       "  gateway: {retry: {pass_retry_after: maybe}}\n  policies: [naive]\n", 6, 39,
       "fleet.gateway.retry.pass_retry_after", "expected"},
      {"tokens without a mean",
       "  tokens_per_call: {distribution: exponential}\n  policies: [naive]\n", 6, 20,
       "fleet.tokens_per_call", "missing required key 'mean'"},
      {"negative tokens per minute", "  provider: {tokens_per_minute: -1}\n  policies: [naive]\n",
       6, 33, "fleet.provider.tokens_per_minute", "expected a number from 0 to 1000000000000"},
  };
  for (const FleetError& expected : cases) {
    SCOPED_TRACE(expected.what);
    auto scenario = ParseScenario(Fleet(expected.body), "bad.yaml");
    ASSERT_FALSE(scenario.has_value());
    const LoadError& error = scenario.error();
    EXPECT_EQ(error.line, expected.line) << error.ToString();
    EXPECT_EQ(error.column, expected.column) << error.ToString();
    EXPECT_EQ(error.path, expected.path) << error.ToString();
    EXPECT_NE(error.message.find(expected.message), std::string::npos) << error.ToString();
  }
}

TEST(FleetSectionTest, ResponsesAndFleetDoNotMix) {
  auto scenario = ParseScenario(Fleet("  policies: [naive]\nresponses: [{}]\n"), "bad.yaml");
  ASSERT_FALSE(scenario.has_value());
  EXPECT_EQ(scenario.error().line, 7);
  EXPECT_NE(scenario.error().message.find("'responses' scripts one call"), std::string::npos);
}

TEST(FleetSectionTest, TheShippedExperimentsLoad) {
  for (const char* name :
       {"rate-limit-storm.yaml", "metastable-spike.yaml", "gateway-retry-storm.yaml"}) {
    auto scenario =
        LoadScenarioFile(std::string(FAULTLINE_SOURCE_DIR) + "/scenarios/fleet/" + name);
    ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
    EXPECT_TRUE(scenario->fleet.has_value()) << name;
  }
}

TEST(FleetSectionTest, WhatTheLoaderAcceptsIsWithinTheBounds) {
  auto scenario = ParseScenario(Fleet(R"(  clients: 1000000
  horizon: 720h
  drain: 0s
  bucket: 1us
  arrivals: {rate: [{at: 0s, rate: 10000000}, {at: 720h, rate: 0}]}
  provider: {concurrency: 2147483647, burst: 1, brownouts: [{from: 0s, for: 720h, capacity: 1}]}
  timeout: 1us
  policies: [naive]
)"),
                                "max.yaml");
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  EXPECT_EQ(CheckFleetSpec(*scenario->fleet), std::nullopt);
}

TEST(FleetSectionTest, CheckFleetSpecNamesTheKeyAndItsRange) {
  FleetSpec spec;
  EXPECT_EQ(CheckFleetSpec(spec), std::nullopt) << "the defaults are in range";
  spec.provider.brownouts.push_back({Duration{0}, Duration{0}, -1});
  EXPECT_EQ(CheckFleetSpec(spec),
            "fleet.provider.brownouts[].capacity: expected a number from 0 to 1, got -1");
  spec = FleetSpec{};
  spec.clients = 0;
  EXPECT_EQ(CheckFleetSpec(spec),
            "fleet.clients: expected a whole number from 1 to 1000000, got 0");
  spec = FleetSpec{};
  spec.timeout = -5s;
  EXPECT_EQ(CheckFleetSpec(spec), "fleet.timeout: expected a duration from 1us to 720h, got -5s");
  EXPECT_EQ(DurationText(90s), "90s");
  EXPECT_EQ(DurationText(1500us), "1500us");
  EXPECT_EQ(DurationText(720h), "720h");
}

}  // namespace
}  // namespace faultline::scenario
