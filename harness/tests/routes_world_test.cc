// A scenario with routes in both worlds: each route is its own endpoint, the subject is handed
// the primary route, and the journal names the route of every request.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "harness/judge/judge.h"
#include "harness/judge/scenario_policy.h"
#include "harness/trace/trace.h"
#include "harness/worlds/real_world.h"
#include "harness/worlds/request_body.h"
#include "harness/worlds/virtual_world.h"
#include "reference_impl/policy_json.h"
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

// A policy file for `faultline call --adapter --policy`: a breaker that opens at one failure,
// probes after 3 s with one attempt (kSpacedCalls' calls come 2 s apart).
std::string BreakerPolicyFile(std::string_view name) {
  const std::string path = ::testing::TempDir() + "/" + std::string(name);
  std::ofstream(path) << R"({"routing": {"breaker": {"threshold": 1, "cooldown_ms": 3000,
                                                    "half_open_probes": 1}}})";
  return path;
}

// The same calls against an adapter process: in session mode (`faultline call --adapter
// --session`: one process, one client for every call) its breaker serves them all, as the
// in-process client's does; one process per call keeps one breaker per call, each trying the
// primary first. The judge holds the session to ROUTE-005 across calls.
TEST(RoutesWorldTest, TheCallsOfASessionModeAdapterShareItsBreaker) {
  auto scenario = scenario::ParseScenario(kSpacedCalls, "spaced.yaml");
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  const std::string policy = BreakerPolicyFile("threshold-one.json");
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
  const std::string policy = BreakerPolicyFile("threshold-one-reset.json");
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

// An adapter whose output reaches the runner late (a wrapper relaying it, a buffered stdout):
// started 1 s after the session opened, its first request arrives before the runner has read
// its hello. Scripted time is armed before the launch, so that request is the first attempt
// and meets the primary's outage (503 until 500 ms), as the policy's twin does, rather than a
// primary already recovered at 1 s of the session's own time.
constexpr std::string_view kRecoveringPrimary = R"(faultline: 1
name: routes/late-hello
description: The primary answers 503 until 500 ms, then the text.
dialect: openai-chat
routes:
  - id: primary
    health: {recover_at: 500ms}
    responses:
      - content: {text: "recovered"}
)";

TEST(RoutesWorldTest, AnAttemptBeforeTheHelloReachesTheRunnerStartsScriptedTime) {
  auto scenario = scenario::ParseScenario(kRecoveringPrimary, "late-hello.yaml");
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  auto world = RealWorld::Start();
  ASSERT_TRUE(world) << world.error();
  // The pipe holds every line of the adapter's for 1 s while the adapter goes on calling.
  const std::string adapter = "sleep 1; " + std::string(FAULTLINE_BINARY) +
                              " call --adapter --policy one-endpoint | { sleep 1; cat; }";
  RealRunOptions options;
  options.timeout = std::chrono::seconds(60);
  auto trace = (*world)->RunAdapterSubject(*scenario, adapter, options);
  ASSERT_TRUE(trace) << trace.error();
  ASSERT_FALSE(trace->subject_fault) << trace->subject_fault->message << trace->subject_stderr;
  ASSERT_FALSE(trace->journal.empty());
  EXPECT_EQ(trace->journal.front().status, 503) << "the first attempt meets the outage";
  EXPECT_EQ(trace->journal.back().status, 200);
  ASSERT_FALSE(trace->client.empty());
  EXPECT_EQ(trace->client.back().event.kind, EventKind::kCommitted);
  for (const report::CheckResult& check : Judge(*scenario, *trace, RealTolerance())) {
    EXPECT_NE(check.status, report::CheckStatus::kFail) << check.id << ": " << check.evidence;
  }
}

// The catalogue's sticky scenario in virtual time: the primary answers 503 until 3 s, four calls
// 5 s apart. A client sticky for 6 s (the scenario's policy) starts call 1 where call 0's
// failover left it and is back on the primary for calls 2 and 3; a client that is not sticky
// starts every call on the primary; both pass ROUTE-010. One that stays on the secondary fails
// it, whether it declares a reset it overstays or declares no stickiness at all.
TEST(RoutesWorldTest, AStickyClientIsJudgedByTheResetItDeclares) {
  auto catalogue = scenario::LoadBuiltinCatalog();
  ASSERT_TRUE(catalogue.has_value());
  const auto found =
      std::ranges::find(*catalogue, "routes/openai-chat-sticky-fallback-returns-to-primary",
                        &scenario::Scenario::name);
  ASSERT_NE(found, catalogue->end());
  const scenario::Scenario& scenario = *found;
  const auto sticky = ScenarioPolicy(scenario);
  ASSERT_TRUE(sticky.has_value()) << sticky.error();
  ASSERT_EQ(sticky->routing.sticky, ref::StickyConfig{.reset = std::chrono::seconds(6)});
  const auto route010 = [&](const Trace& trace) {
    for (const report::CheckResult& check : Judge(scenario, trace, VirtualTolerance())) {
      if (check.id == "ROUTE-010") return check;
    }
    return report::CheckResult{};
  };

  auto kept = RunVirtual(scenario, {.policy = *sticky});
  ASSERT_TRUE(kept) << kept.error();
  EXPECT_EQ(RoutesOf(FirstAttempts(*kept)),
            (std::vector<std::string>{"primary", "secondary", "primary", "primary"}));
  for (const report::CheckResult& check : Judge(scenario, *kept, VirtualTolerance())) {
    EXPECT_NE(check.status, report::CheckStatus::kFail) << check.id << ": " << check.evidence;
  }
  EXPECT_EQ(route010(*kept).status, report::CheckStatus::kPass) << route010(*kept).evidence;

  auto afresh = RunVirtual(scenario, {.policy = ref::RetryPolicy{}});
  ASSERT_TRUE(afresh) << afresh.error();
  EXPECT_EQ(RoutesOf(FirstAttempts(*afresh)),
            (std::vector<std::string>{"primary", "primary", "primary", "primary"}));
  EXPECT_EQ(route010(*afresh).status, report::CheckStatus::kPass) << route010(*afresh).evidence;

  // Sticky for the whole run, declaring the scenario's 6 s, then declaring no stickiness.
  ref::RetryPolicy forever = *sticky;
  forever.routing.sticky->reset = std::chrono::hours(24);
  auto stays = RunVirtual(scenario, {.policy = forever});
  ASSERT_TRUE(stays) << stays.error();
  EXPECT_EQ(RoutesOf(FirstAttempts(*stays)),
            (std::vector<std::string>{"primary", "secondary", "secondary", "secondary"}));
  // Declaring 6 s, it overstays from call 2 (10 s); declaring none, call 1 is already wrong.
  for (const auto& [declared, wrong] : {std::pair{*sticky,
                                                  "call 2: the first attempt went to "
                                                  "route \"secondary\" at 10000.0 ms"},
                                        std::pair{ref::RetryPolicy{},
                                                  "call 1: the first attempt went to route "
                                                  "\"secondary\" at 5000.0 ms"}}) {
    Trace trace = *stays;
    ASSERT_EQ(trace.client.front().event.kind, EventKind::kHello);
    trace.client.front().event.policy = ref::PolicyToHelloJson(declared);
    const report::CheckResult check = route010(trace);
    EXPECT_EQ(check.status, report::CheckStatus::kFail);
    EXPECT_NE(check.evidence.find(wrong), std::string::npos) << check.evidence;
  }
}

}  // namespace
}  // namespace faultline::harness
