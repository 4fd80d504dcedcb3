// The `routes:` section: what a valid one means, and every error with its position and path.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "scenarios/loader.h"
#include "scenarios/tests/load_error_cases.h"

namespace faultline::scenario {
namespace {

using std::chrono::seconds;

// Lines 1-5; the routes given to Doc() start on line 6.
std::string Doc(std::string_view routes) {
  return "faultline: 1\nname: routes/x\ndescription: d\ndialect: openai-chat\nroutes:\n" +
         std::string(routes);
}

Scenario Load(std::string_view text) {
  auto scenario = ParseScenario(text, "ok.yaml");
  EXPECT_TRUE(scenario.has_value()) << (scenario ? "" : scenario.error().ToString());
  return scenario.value_or(Scenario{});
}

TEST(LoaderRoutesTest, ReadsEveryFieldOfARoute) {
  const Scenario scenario = Load(Doc(R"(  - id: primary
    model: gpt-4o
    capabilities: {tools: false, reasoning: true, images: true, strict_tools: true,
                   stop_sequences: false, prefill: true, context_window: 8000}
    priority: 1
    weight: 3
    group: openai
    responses:
      - status: 503
      - {}
  - id: backup
    dialect: anthropic-messages
group_outages:
  - {group: openai, from: 2s, for: 5s}
)"));
  ASSERT_EQ(scenario.routes.size(), 2u);
  const Route& primary = scenario.routes[0];
  EXPECT_EQ(primary.id, "primary");
  EXPECT_EQ(primary.dialect, Dialect::kOpenAiChat);
  EXPECT_EQ(primary.model, "gpt-4o");
  EXPECT_EQ(primary.capabilities, (Capabilities{false, true, true, true, false, true, 8000}));
  EXPECT_EQ(primary.priority, 1);
  EXPECT_EQ(primary.weight, 3);
  EXPECT_EQ(primary.group, "openai");
  ASSERT_EQ(primary.responses.size(), 2u);
  EXPECT_EQ(primary.responses[0].status, 503);
  // In a group that has an outage, the route gets a health (a 503 when down) of its own.
  ASSERT_TRUE(primary.health.has_value());
  EXPECT_EQ(primary.health->failure_response.status, 503);
  const Route& backup = scenario.routes[1];
  EXPECT_EQ(backup.dialect, Dialect::kAnthropicMessages);
  EXPECT_EQ(backup.capabilities, Capabilities{});
  ASSERT_EQ(backup.responses.size(), 1u);  // a plain answer by default
  EXPECT_EQ(backup.responses[0].status, 200);
  EXPECT_FALSE(backup.health.has_value());
  ASSERT_EQ(scenario.group_outages.size(), 1u);
  EXPECT_EQ(scenario.group_outages[0].group, "openai");
  EXPECT_EQ(scenario.group_outages[0].window, (TimeWindow{seconds(2), seconds(5)}));
  EXPECT_TRUE(scenario.responses.empty());
}

TEST(LoaderRoutesTest, ReadsHealthProcesses) {
  const Scenario scenario = Load(Doc(R"(  - id: down
    health: {down: always, fail: refused}
  - id: recovers
    health: {recover_at: 10s, fail: {status: 429, error: rate_limit, retry_after: {seconds: 3}}}
  - id: flaps
    health: {flapping: {up: 2s, down: 1s}, fail: {connection: reset_before_headers}}
  - id: brown
    health:
      brownout: {error_probability: 0.3, latency_multiplier: 2.5, seed: 7}
      fail: {error: quota, headers_delay: 4s}
  - id: windows
    health: {down: [{from: 1s, for: 2s}, {from: 30s}]}
)"));
  ASSERT_EQ(scenario.routes.size(), 5u);
  const Health& down = *scenario.routes[0].health;
  EXPECT_EQ(down.failure, Health::Failure::kRefused);
  EXPECT_EQ(down.down, std::vector<TimeWindow>{TimeWindow{}});
  const Health& recovers = *scenario.routes[1].health;
  EXPECT_EQ(recovers.down, (std::vector<TimeWindow>{{seconds(0), seconds(10)}}));
  EXPECT_EQ(recovers.failure_response.status, 429);
  ASSERT_TRUE(recovers.failure_response.retry_after.has_value());
  EXPECT_EQ(recovers.failure_response.retry_after->text, "3");
  const Health& flaps = *scenario.routes[2].health;
  EXPECT_EQ(flaps.flap_up, seconds(2));
  EXPECT_EQ(flaps.flap_down, seconds(1));
  EXPECT_EQ(flaps.failure_response.connection, ConnectionFault::kResetBeforeHeaders);
  const Health& brown = *scenario.routes[3].health;
  EXPECT_DOUBLE_EQ(brown.error_probability, 0.3);
  EXPECT_DOUBLE_EQ(brown.latency_multiplier, 2.5);
  EXPECT_EQ(brown.seed, 7u);
  EXPECT_EQ(brown.failure_response.status, 429);  // quota's own status
  EXPECT_EQ(brown.failure_response.headers_delay, seconds(4));
  const Health& windows = *scenario.routes[4].health;
  EXPECT_EQ(windows.down, (std::vector<TimeWindow>{{seconds(1), seconds(2)}, {seconds(30), {}}}));
  EXPECT_EQ(windows.failure_response.status, 503);  // the default failure
  EXPECT_TRUE(windows.down[1].Contains(std::chrono::hours(10)));
  EXPECT_FALSE(windows.down[0].Contains(seconds(3)));
}

TEST(LoaderRoutesTest, ErrorsNameThePlace) {
  const std::vector<ErrorCase> cases = {
      {"duplicate id", Doc("  - id: a\n  - id: a\n"), 7, 5, "routes[1]",
       "route id 'a' is given twice"},
      {"bad id", Doc("  - id: A/b\n"), 6, 9, "routes[0].id",
       "expected a route id of at most 64 characters made of a-z, 0-9 and . _ - (starting with "
       "a letter or digit), got the string \"A/b\""},
      {"missing id", Doc("  - model: m\n"), 6, 5, "routes[0]", "missing required key 'id'"},
      {"unknown capability", Doc("  - id: a\n    capabilities: {tool: true}\n"), 7, 20,
       "routes[0].capabilities.tool", "unknown key 'tool'; did you mean 'tools'?"},
      {"weight 0", Doc("  - id: a\n    weight: 0\n"), 7, 13, "routes[0].weight",
       "expected an integer from 1 to 1000000, got the number 0"},
      {"probability above 1", Doc("  - id: a\n    health: {brownout: {error_probability: 1.5}}\n"),
       7, 44, "routes[0].health.brownout.error_probability",
       "expected a number from 0 to 1, got the number 1.5"},
      {"empty brownout", Doc("  - id: a\n    health: {brownout: {}}\n"), 7, 24,
       "routes[0].health.brownout",
       "a brownout needs 'error_probability' and/or 'latency_multiplier'"},
      {"failure with 200", Doc("  - id: a\n    health: {fail: {status: 200}}\n"), 7, 20,
       "routes[0].health.fail",
       "a down route answers with an error status (4xx/5xx) or a connection fault, got status "
       "200"},
      {"fail word", Doc("  - id: a\n    health: {fail: gone}\n"), 7, 20, "routes[0].health.fail",
       "expected 'refused' or a response entry ({status: 503, ...}), got the string \"gone\""},
      {"repeat in a failure", Doc("  - id: a\n    health: {fail: {status: 503, repeat: 2}}\n"), 7,
       34, "routes[0].health.fail.repeat",
       "'repeat' has no meaning in a health failure: it answers whenever the route is down"},
      {"flapping without down", Doc("  - id: a\n    health: {flapping: {up: 1s}}\n"), 7, 24,
       "routes[0].health.flapping", "missing required key 'down'"},
      {"recover_at and down", Doc("  - id: a\n    health: {down: always, recover_at: 2s}\n"), 7, 28,
       "routes[0].health.recover_at",
       "'recover_at: T' is short for 'down: [{from: 0s, for: T}]'; give one of them"},
      {"responses beside routes", Doc("  - id: a\nresponses:\n  - {}\n"), 7, 1, "responses",
       "with 'routes', each route scripts its own answers; 'responses' belongs inside a route "
       "(responses) or its health"},
      {"outage of an unknown group", Doc("  - id: a\ngroup_outages:\n  - {group: b}\n"), 8, 13,
       "group_outages[0].group", "no route is in group 'b'"},
      {"group_outages without routes",
       "faultline: 1\nname: t/x\ndescription: d\ndialect: openai-chat\nresponses:\n  - {}\n"
       "group_outages: []\n",
       7, 1, "group_outages", "'group_outages' needs 'routes'"},
      {"no routes", Doc("  []\n"), 6, 3, "routes", "expected 1 to 64 routes, got 0"},
  };
  ExpectErrors(cases);
}

}  // namespace
}  // namespace faultline::scenario
