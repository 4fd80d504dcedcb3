// RouteScenario: what one route's endpoint serves, and when a health process is down.
#include "scenarios/route_scenario.h"

#include <gtest/gtest.h>

#include <chrono>

#include "scenarios/loader.h"

namespace faultline::scenario {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

Scenario Load(std::string_view routes) {
  const std::string text =
      "faultline: 1\nname: routes/x\ndescription: d\ndialect: openai-chat\nrequest: {model: "
      "logical}\nroutes:\n" +
      std::string(routes);
  auto scenario = ParseScenario(text, "t.yaml");
  EXPECT_TRUE(scenario.has_value()) << (scenario ? "" : scenario.error().ToString());
  return scenario.value_or(Scenario{});
}

TEST(RouteHealthTest, DownInWindowsAndInTheDownHalfOfEachFlap) {
  Health health;
  health.down = {{seconds(1), seconds(2)}, {seconds(10), std::nullopt}};
  EXPECT_FALSE(DownAt(health, milliseconds(999)));
  EXPECT_TRUE(DownAt(health, seconds(1)));
  EXPECT_TRUE(DownAt(health, milliseconds(2999)));
  EXPECT_FALSE(DownAt(health, seconds(3)));
  EXPECT_TRUE(DownAt(health, std::chrono::hours(100)));
  Health flapping;
  flapping.flap_up = seconds(2);
  flapping.flap_down = seconds(1);
  EXPECT_FALSE(DownAt(flapping, seconds(0)));
  EXPECT_FALSE(DownAt(flapping, milliseconds(1999)));
  EXPECT_TRUE(DownAt(flapping, seconds(2)));
  EXPECT_FALSE(DownAt(flapping, seconds(3)));
  EXPECT_TRUE(DownAt(flapping, milliseconds(5500)));
  EXPECT_FALSE(DownAt(Health{}, seconds(5)));
}

TEST(RouteScenarioTest, TakesTheRoutesDialectModelAndAnswersAndNamesTheRoute) {
  const Scenario scenario = Load(R"(  - id: primary
    responses: [{status: 503}, {}]
  - id: backup
    dialect: anthropic-messages
    model: claude-x
)");
  const Scenario primary = RouteScenario(scenario, scenario.routes[0]);
  EXPECT_EQ(primary.route_id, "primary");
  EXPECT_EQ(primary.name, "routes/x#primary");
  EXPECT_EQ(primary.request.model, "logical");  // no wire model of its own
  EXPECT_TRUE(primary.routes.empty());
  ASSERT_EQ(primary.responses.size(), 2u);
  EXPECT_EQ(primary.responses[0].status, 503);
  for (const ResponseSpec& response : primary.responses) {
    EXPECT_EQ(response.headers.back(), (Header{std::string(kRouteHeader), "primary"}));
  }
  const Scenario backup = RouteScenario(scenario, scenario.routes[1]);
  EXPECT_EQ(backup.dialect, Dialect::kAnthropicMessages);
  EXPECT_EQ(backup.request.model, "claude-x");
  EXPECT_FALSE(backup.health.has_value());
  EXPECT_EQ(&PrimaryRoute(scenario), &scenario.routes[0]);
}

TEST(RouteScenarioTest, RefusalBecomesListenerOutagesAndGroupOutagesFoldIn) {
  const Scenario scenario = Load(R"(  - id: gone
    group: a
    health: {down: [{from: 1s, for: 2s}], fail: refused}
  - id: flaps
    priority: 0
    health: {flapping: {up: 1h, down: 1h}, fail: refused}
  - id: peer
    group: a
    priority: 5
group_outages:
  - {group: a, from: 30s, for: 10s}
)");
  const Scenario gone = RouteScenario(scenario, scenario.routes[0]);
  ASSERT_EQ(gone.listener_outages.size(), 2u);
  EXPECT_EQ(gone.listener_outages[0], (ListenerOutage{seconds(1), seconds(2)}));
  EXPECT_EQ(gone.listener_outages[1], (ListenerOutage{seconds(30), seconds(10)}));
  const Scenario flaps = RouteScenario(scenario, scenario.routes[1]);
  // Cycles are spelled out up to the horizon: down from 1h to 2h, 3h to 4h, ...
  ASSERT_EQ(flaps.listener_outages.size(), 12u);
  EXPECT_EQ(flaps.listener_outages[1],
            (ListenerOutage{std::chrono::hours(3), std::chrono::hours(1)}));
  const Scenario peer = RouteScenario(scenario, scenario.routes[2]);
  ASSERT_TRUE(peer.health.has_value());  // a 503 while its group is down
  EXPECT_TRUE(DownAt(*peer.health, seconds(35)));
  EXPECT_FALSE(DownAt(*peer.health, seconds(41)));
  EXPECT_EQ(peer.health->failure_response.status, 503);
  EXPECT_EQ(peer.health->failure_response.headers.back().value, "peer");
  EXPECT_TRUE(peer.listener_outages.empty());
  EXPECT_EQ(PrimaryRoute(scenario).id, "gone");  // priority ties go to scenario order
}

TEST(RouteScenarioTest, ABrownoutStretchesEveryDelay) {
  const Scenario scenario = Load(R"(  - id: slow
    health: {brownout: {latency_multiplier: 3}}
    responses:
      - headers_delay: 100ms
        content: {chunk_delay: 10ms, faults: [{after_event: 1, delay: 1s}]}
)");
  const Scenario slow = RouteScenario(scenario, scenario.routes[0]);
  const ResponseSpec& response = slow.responses[0];
  EXPECT_EQ(response.headers_delay, milliseconds(300));
  EXPECT_EQ(response.content.chunk_delay, milliseconds(30));
  EXPECT_EQ(response.content.faults[0].wait.duration, seconds(3));
}

TEST(RouteScenarioTest, RouteSessionIdsNestUnderTheSession) {
  EXPECT_EQ(RouteSessionId("run1/routes/x", "primary"), "run1/routes/x/route/primary");
}

}  // namespace
}  // namespace faultline::scenario
