// A route's session on the provider core: its health answers instead of its script while it is
// down and for a brownout's share of the attempts; the admission step journals its route.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "fake_provider/admission.h"
#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/provider_core.h"
#include "fake_provider/tests/plan_test_util.h"
#include "scenarios/loader.h"
#include "scenarios/route_scenario.h"

namespace faultline::provider {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kBody = R"({"model":"m","stream":true,"messages":[]})";

scenario::Scenario Routes(std::string_view routes) {
  auto scenario = scenario::ParseScenario(
      "faultline: 1\nname: routes/core\ndescription: d\ndialect: openai-chat\nroutes:\n" +
          std::string(routes),
      "t.yaml");
  EXPECT_TRUE(scenario.has_value()) << (scenario ? "" : scenario.error().ToString());
  return scenario.value_or(scenario::Scenario{});
}

ProviderSession RouteSession(const scenario::Scenario& scenario, std::size_t route, WallTime start,
                             std::uint64_t seed = 1) {
  return ProviderSession(std::make_shared<const CompiledScenario>(
                             scenario::RouteScenario(scenario, scenario.routes[route])),
                         seed, start);
}

int StatusAt(ProviderSession& session, WallTime at) {
  return session.Respond({"POST", "/v1/chat/completions", kBody}, at).status;
}

TEST(ProviderRoutesTest, DownUntilRecoveryThenTheScript) {
  const auto scenario = Routes(R"(  - id: a
    health: {recover_at: 2s, fail: {status: 429, error: rate_limit, retry_after: {seconds: 3}}}
)");
  const WallTime start = testing::TestNow();
  ProviderSession session = RouteSession(scenario, 0, start);
  const ResponsePlan down = session.Respond({"POST", "/v1/chat/completions", kBody}, start + 1s);
  EXPECT_EQ(down.status, 429);
  EXPECT_EQ(down.attempt, 1);
  const auto retry_after =
      std::ranges::find(down.truth.hint_fields, "retry-after", &HintField::name);
  ASSERT_NE(retry_after, down.truth.hint_fields.end());
  EXPECT_EQ(retry_after->value, "3");
  EXPECT_EQ(StatusAt(session, start + 2s), 200);
  EXPECT_EQ(session.attempts(), 2);
}

TEST(ProviderRoutesTest, ABrownoutFailsItsShareDeterministically) {
  const auto scenario = Routes(R"(  - id: a
    health: {brownout: {error_probability: 0.3, seed: 5}}
)");
  const WallTime start = testing::TestNow();
  ProviderSession session = RouteSession(scenario, 0, start);
  ProviderSession again = RouteSession(scenario, 0, start);
  int failed = 0;
  for (int i = 0; i < 1000; ++i) {
    const int status = StatusAt(session, start + std::chrono::milliseconds(i));
    EXPECT_EQ(StatusAt(again, start), status) << "attempt " << i + 1;
    failed += status == 503 ? 1 : 0;
  }
  EXPECT_GT(failed, 240);
  EXPECT_LT(failed, 360);
}

TEST(ProviderRoutesTest, RefusalIsTheListenerAndTheSessionOfRoutesServesNone) {
  const auto scenario = Routes(R"(  - id: a
    health: {down: [{from: 1s, for: 1s}], fail: refused}
  - id: b
)");
  const WallTime start = testing::TestNow();
  ProviderSession refusing = RouteSession(scenario, 0, start);
  EXPECT_TRUE(refusing.HasListenerOutages());
  EXPECT_FALSE(refusing.ListenerDown(start));
  EXPECT_TRUE(refusing.ListenerDown(start + 1500ms));
  EXPECT_EQ(refusing.NextListenerChange(start + 1500ms), start + 2s);
  ProviderSession parent(std::make_shared<const CompiledScenario>(scenario), 1, start);
  const ResponsePlan plan = parent.Respond({"POST", "/v1/chat/completions", kBody}, start);
  EXPECT_EQ(plan.status, 404);
  EXPECT_EQ(plan.attempt, 0);
}

TEST(ProviderRoutesTest, TheAdmissionStepJournalsTheRoute) {
  const auto scenario = Routes("  - id: primary\n");
  const WallTime start = testing::TestNow();
  ProviderSession session = RouteSession(scenario, 0, start);
  Journal journal;
  HttpRequest request;
  request.method = "POST";
  request.target = "/s/x/route/primary/v1/chat/completions";
  request.body = std::string(kBody);
  request.headers = {{"Authorization", "Bearer sk-a-long-secret-key"}};
  const Destination destination = ResolveTarget(request.target);
  ASSERT_EQ(destination.kind, Destination::Kind::kSession);
  EXPECT_EQ(destination.session_id, scenario::RouteSessionId("x", "primary"));
  const Admitted admitted = Admit(session, journal,
                                  {.request = request,
                                   .path = destination.path,
                                   .connection = 7,
                                   .now = start + 5ms,
                                   .session_start = start});
  EXPECT_EQ(admitted.plan.status, 200);
  const auto entries = journal.Snapshot();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].route, "primary");
  EXPECT_EQ(entries[0].connection, 7u);
  EXPECT_EQ(entries[0].arrived, 5ms);
  EXPECT_EQ(entries[0].attempt, 1);
  EXPECT_EQ(entries[0].headers[0].value, RedactedSecret("Bearer sk-a-long-secret-key"));
}

}  // namespace
}  // namespace faultline::provider
