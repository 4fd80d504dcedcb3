// A scenario with routes in both worlds: each route is its own endpoint, the subject is handed
// the primary route, and the journal names the route of every request.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "harness/judge/judge.h"
#include "harness/trace/trace.h"
#include "harness/worlds/real_world.h"
#include "harness/worlds/request_body.h"
#include "harness/worlds/virtual_world.h"
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
  EXPECT_EQ(trace.client.back().event.kind, EventKind::kCommitted);
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

// Three calls 2 s apart; the primary is down until 3 s and the breaker (threshold 1) cools down
// for 3 s: call 0's failure opens it, call 1 (2 s) finds it open, call 2 (4 s) probes the
// recovered primary.
constexpr std::string_view kSpacedCalls = R"(faultline: 1
name: routes/spaced-calls
description: Three calls of one client, 2 s apart, and a primary down until 3 s.
dialect: openai-chat
request: {calls: 3, call_interval: 2s}
routes:
  - {id: primary, priority: 0, health: {recover_at: 3s}}
  - {id: secondary, priority: 1}
)";

ref::RetryPolicy ThresholdOne() {
  ref::RetryPolicy policy;
  policy.routing.breaker = ref::BreakerConfig{
      .threshold = 1, .cooldown = std::chrono::seconds(3), .half_open_probes = 1};
  return policy;
}

// Each call's first response/start: its time and route.
std::vector<std::pair<double, std::string>> FirstAttempts(const Trace& trace) {
  std::vector<std::pair<double, std::string>> first(static_cast<std::size_t>(trace.calls));
  for (const ClientRecord& record : trace.client) {
    auto& slot = first[static_cast<std::size_t>(record.call)];
    if (record.event.kind != EventKind::kStart || !slot.second.empty()) continue;
    slot = {Ms(record.at), record.event.route_id};
  }
  return first;
}

std::vector<std::string> RoutesOf(const std::vector<std::pair<double, std::string>>& attempts) {
  std::vector<std::string> routes;
  for (const auto& [at, route] : attempts) routes.push_back(route);
  return routes;
}

TEST(RoutesWorldTest, TheCallsOfOneClientShareItsBreakersInVirtualTime) {
  auto scenario = scenario::ParseScenario(kSpacedCalls, "spaced.yaml");
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  auto shared = RunVirtual(*scenario, {.policy = ThresholdOne()});
  ASSERT_TRUE(shared) << shared.error();
  EXPECT_TRUE(shared->one_client);
  const auto first = FirstAttempts(*shared);
  EXPECT_EQ(RoutesOf(first), (std::vector<std::string>{"primary", "secondary", "primary"}));
  EXPECT_EQ(first[1].first, 2000.0);
  EXPECT_EQ(first[2].first, 4000.0);
  // Calls that share nothing (an adapter's processes) each try the primary first.
  auto apart = RunVirtual(*scenario, {.policy = ThresholdOne(), .one_client = false});
  ASSERT_TRUE(apart) << apart.error();
  EXPECT_FALSE(apart->one_client);
  EXPECT_EQ(RoutesOf(FirstAttempts(*apart)),
            (std::vector<std::string>{"primary", "primary", "primary"}));
}

TEST(RoutesWorldTest, TheCallsOfOneClientShareItsBreakersOverSockets) {
  auto scenario = scenario::ParseScenario(kSpacedCalls, "spaced.yaml");
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  auto world = RealWorld::Start();
  ASSERT_TRUE(world) << world.error();
  auto trace = (*world)->RunReference(*scenario, ThresholdOne(), RealRunOptions{});
  ASSERT_TRUE(trace) << trace.error();
  EXPECT_TRUE(trace->one_client);
  const auto first = FirstAttempts(*trace);
  EXPECT_EQ(RoutesOf(first), (std::vector<std::string>{"primary", "secondary", "primary"}));
  // Times count from the first request (trace.h); call i starts i x 2 s after call 0 (whose
  // response/start came a fraction of a millisecond after the session's start).
  const double apart1 = first[1].first - first[0].first;
  EXPECT_GE(apart1, 1990.0);
  EXPECT_LT(apart1, 2900.0);  // before the cooldown ends: a loaded machine's slack
  EXPECT_GE(first[2].first - first[0].first, 3990.0);
  ASSERT_EQ(std::ranges::count_if(trace->client, IsTerminal), 3);
}

// The same calls against an adapter process: in session mode (`faultline call --adapter
// --session`: one process, one client for every call) its breaker serves them all, as the
// in-process client's does; one process per call keeps one breaker per call, each trying the
// primary first. The judge holds the session to ROUTE-005 across calls.
TEST(RoutesWorldTest, TheCallsOfASessionModeAdapterShareItsBreaker) {
  auto scenario = scenario::ParseScenario(kSpacedCalls, "spaced.yaml");
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  const std::string policy = ::testing::TempDir() + "/threshold-one.json";
  std::ofstream(policy) << R"({"routing": {"breaker": {"threshold": 1, "cooldown_ms": 3000,
                                                      "half_open_probes": 1}}})";
  auto world = RealWorld::Start();
  ASSERT_TRUE(world) << world.error();
  const std::string adapter = std::string(FAULTLINE_BINARY) + " call --adapter --policy " + policy;
  RealRunOptions options;
  options.timeout = std::chrono::seconds(60);
  auto session = (*world)->RunAdapterSubject(*scenario, adapter + " --session", options);
  ASSERT_TRUE(session) << session.error();
  ASSERT_FALSE(session->subject_fault)
      << session->subject_fault->message << session->subject_stderr;
  EXPECT_TRUE(session->one_client);
  EXPECT_EQ(RoutesOf(FirstAttempts(*session)),
            (std::vector<std::string>{"primary", "secondary", "primary"}));
  ASSERT_EQ(std::ranges::count_if(session->client, IsTerminal), 3);
  for (const report::CheckResult& check : Judge(*scenario, *session, RealTolerance())) {
    EXPECT_NE(check.status, report::CheckStatus::kFail) << check.id << ": " << check.evidence;
    if (check.id == "ROUTE-005") {
      EXPECT_EQ(check.status, report::CheckStatus::kPass) << check.evidence;
    }
  }

  auto apart = (*world)->RunAdapterSubject(*scenario, adapter, options);
  ASSERT_TRUE(apart) << apart.error();
  EXPECT_FALSE(apart->one_client);
  EXPECT_EQ(RoutesOf(FirstAttempts(*apart)),
            (std::vector<std::string>{"primary", "primary", "primary"}));
}

// Session mode with reset: the next run of the same command is served by the same process, and
// its breaker does not carry over: the reset dropped it, so the next run meets the primary first
// again and opens the breaker anew, as a new process would.
TEST(RoutesWorldTest, AResetSessionAdapterServesTheNextRunWithoutItsBreaker) {
  auto scenario = scenario::ParseScenario(kSpacedCalls, "spaced.yaml");
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  const std::string policy = ::testing::TempDir() + "/threshold-one-reset.json";
  std::ofstream(policy) << R"({"routing": {"breaker": {"threshold": 1, "cooldown_ms": 3000,
                                                      "half_open_probes": 1}}})";
  const std::string starts = ::testing::TempDir() + "/reset-starts.txt";
  std::remove(starts.c_str());
  auto world = RealWorld::Start();
  ASSERT_TRUE(world) << world.error();
  const std::string adapter = "echo started >> " + starts + "; exec " +
                              std::string(FAULTLINE_BINARY) +
                              " call --adapter --session --policy " + policy;
  RealRunOptions options;
  options.timeout = std::chrono::seconds(60);
  for (int run = 0; run < 2; ++run) {
    auto trace = (*world)->RunAdapterSubject(*scenario, adapter, options);
    ASSERT_TRUE(trace) << trace.error();
    ASSERT_FALSE(trace->subject_fault) << trace->subject_fault->message << trace->subject_stderr;
    EXPECT_EQ(trace->client.front().event.kind, EventKind::kHello) << "run " << run;
    EXPECT_TRUE(trace->client.front().event.reset);
    EXPECT_EQ(RoutesOf(FirstAttempts(*trace)),
              (std::vector<std::string>{"primary", "secondary", "primary"}))
        << "run " << run;
    EXPECT_TRUE(trace->subject_endings.empty()) << trace->subject_endings.front();
  }
  std::ifstream started(starts);
  const auto lines =
      std::count(std::istreambuf_iterator<char>(started), std::istreambuf_iterator<char>(), '\n');
  EXPECT_EQ(lines, 1) << "one process served both runs";
}

}  // namespace
}  // namespace faultline::harness
