// A scenario with routes in both worlds: each route is its own endpoint, the subject is handed
// the primary route, and the journal names the route of every request.
#include <gtest/gtest.h>

#include "harness/real_world.h"
#include "harness/request_body.h"
#include "harness/trace.h"
#include "harness/virtual_world.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

constexpr std::string_view kScenario = R"(faultline: 1
name: routes/world
description: The primary answers after one 503; the backup is never needed.
dialect: openai-chat
routes:
  - id: backup
    priority: 1
    dialect: anthropic-messages
    health: {down: always, fail: refused}
  - id: primary
    model: wire-model
    responses:
      - status: 503
      - content: {text: "from the primary"}
)";

scenario::Scenario Load() {
  auto scenario = scenario::ParseScenario(kScenario, "routes.yaml");
  EXPECT_TRUE(scenario.has_value()) << (scenario ? "" : scenario.error().ToString());
  return scenario.value_or(scenario::Scenario{});
}

void ExpectPrimaryAnswered(const Trace& trace) {
  ASSERT_EQ(trace.journal.size(), 2u);
  for (const provider::JournalEntry& entry : trace.journal) {
    EXPECT_EQ(entry.route, "primary");
    EXPECT_NE(entry.target.find("/route/primary/v1/chat/completions"), std::string::npos)
        << entry.target;
    EXPECT_NE(entry.body.find("\"wire-model\""), std::string::npos) << entry.body;
  }
  EXPECT_EQ(trace.journal[0].status, 503);
  EXPECT_EQ(trace.journal[1].status, 200);
  EXPECT_EQ(trace.journal[1].attempt, 2);  // the route's own count
  ASSERT_FALSE(trace.client.empty());
  EXPECT_EQ(EventType(trace.client.back()), "response/committed");
}

TEST(RoutesWorldTest, TheSubjectCallsThePrimaryRoute) {
  const scenario::Scenario scenario = Load();
  const CallTarget target = PrimaryTarget(scenario);
  EXPECT_EQ(target.route_id, "primary");
  EXPECT_EQ(target.dialect, scenario::Dialect::kOpenAiChat);
  EXPECT_EQ(target.body["model"], "wire-model");
}

TEST(RoutesWorldTest, VirtualJournalNamesTheRoute) {
  const scenario::Scenario scenario = Load();
  auto trace = RunVirtual(scenario, VirtualRunOptions{});
  ASSERT_TRUE(trace) << trace.error();
  ExpectPrimaryAnswered(*trace);
  EXPECT_EQ(TraceToJson(*trace)["journal"][0]["route"], "primary");
  auto again = RunVirtual(scenario, VirtualRunOptions{});
  ASSERT_TRUE(again);
  EXPECT_EQ(Fingerprint(*trace), Fingerprint(*again));
}

TEST(RoutesWorldTest, RealJournalNamesTheRoute) {
  auto world = RealWorld::Start();
  ASSERT_TRUE(world) << world.error();
  auto trace = (*world)->RunReference(Load(), ref::RetryPolicy{}, RealRunOptions{});
  ASSERT_TRUE(trace) << trace.error();
  ExpectPrimaryAnswered(*trace);
}

}  // namespace
}  // namespace faultline::harness
