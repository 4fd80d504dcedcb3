// The `fleet:` section: what it reads, and its errors with line, column and JSON path.
#include <gtest/gtest.h>

#include <string>

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
  for (const char* name : {"rate-limit-storm.yaml", "metastable-spike.yaml"}) {
    auto scenario =
        LoadScenarioFile(std::string(FAULTLINE_SOURCE_DIR) + "/scenarios/fleet/" + name);
    ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
    EXPECT_TRUE(scenario->fleet.has_value()) << name;
  }
}

}  // namespace
}  // namespace faultline::scenario
