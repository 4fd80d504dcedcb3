// The ROUTE-* invariants, ADV-006, ADV-007 and ADV-009, each on a hand-built trace that keeps it
// and one that breaks it.
#include <gtest/gtest.h>

#include "fmt/format.h"
#include "harness/judge/judge.h"
#include "harness/tests/judge_test_support.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

using namespace testing;  // NOLINT: the trace builder is this file's vocabulary
using report::CheckStatus;

scenario::Scenario Parse(const std::string& yaml) {
  auto scenario = scenario::ParseScenario(yaml, "judge.yaml");
  EXPECT_TRUE(scenario.has_value()) << (scenario ? "" : scenario.error().ToString());
  return scenario.value_or(scenario::Scenario{});
}

// Two routes of one wire model (a third, when asked, of another group); the request offers a
// tool the secondary cannot take when `tools`.
scenario::Scenario Routes(bool tools = false, bool group_outage = false) {
  std::string yaml = R"(faultline: 1
name: routes/judge
description: routes for the judge's tests
dialect: openai-chat
)";
  yaml += tools ? "request: {tools: true}\n" : "";
  yaml += group_outage ? "group_outages: [{group: acme, from: 0s, for: 60s}]\n" : "";
  yaml += R"(routes:
  - {id: primary, model: m, priority: 0, group: acme}
  - {id: secondary, model: m, priority: 1, group: acme, capabilities: {tools: false}}
  - {id: tertiary, model: m, priority: 2, group: other}
)";
  return Parse(yaml);
}

constexpr std::string_view kBody =
    R"({"max_tokens":256,"messages":[{"content":"Say hello.","role":"user"}],"model":"m","stream":true})";

json OnRoute(json event, std::string_view route) {
  event["route_id"] = route;
  return event;
}

provider::JournalEntry& On(provider::JournalEntry& entry, std::string route) {
  entry.route = std::move(route);
  entry.body = std::string(kBody);
  return entry;
}

// The test policy with six attempts and a breaker of `threshold` and `cooldown_ms`.
json BreakerPolicy(int threshold, int cooldown_ms) {
  json policy = TestPolicy();
  policy["max_attempts"] = 6;
  policy["routing"] = {{"breaker", {{"threshold", threshold}, {"cooldown_ms", cooldown_ms}}}};
  return policy;
}

CheckStatus StatusOf(const Trace& trace, std::string_view id, const scenario::Scenario& scenario) {
  return CheckOf(trace, id, scenario).status;
}

// Expects check `id` of `trace` (over Routes()) to fail, its evidence saying `needle`.
void ExpectFails(const Trace& trace, std::string_view id, std::string_view needle) {
  const auto check = CheckOf(trace, id, Routes());
  EXPECT_EQ(check.status, CheckStatus::kFail) << id;
  EXPECT_NE(check.evidence.find(needle), std::string::npos) << check.evidence;
}

TEST(JudgeRouteTest, ChecksWithoutRoutesAreNotApplicable) {
  TraceBuilder builder;
  builder.Answer(0, 10, "hi");
  builder.Committed(11, 1, "hi");
  for (const char* id : {"ROUTE-001", "ROUTE-002", "ROUTE-003", "ROUTE-004", "ROUTE-006",
                         "ROUTE-008", "ROUTE-009"}) {
    EXPECT_EQ(StatusOf(builder.Build(), id, {}), CheckStatus::kNotApplicable) << id;
  }
}

TEST(JudgeRouteTest, Route001NoFailoverAfterCommit) {
  TraceBuilder keeps;
  On(keeps.Error(0, 10, "provider-unavailable", true), "primary").status = 503;
  On(keeps.Answer(10, 20, "hi"), "secondary");
  keeps.Event(21, OnRoute({{"type", "response/committed"}, {"text", "hi"}}, "secondary"));
  EXPECT_EQ(StatusOf(keeps.Build(), "ROUTE-001", Routes()), CheckStatus::kPass);

  TraceBuilder breaks;
  On(breaks.Answer(0, 10, "hi"), "primary");
  On(breaks.Answer(12, 20, "hello"), "secondary");
  const auto check = CheckOf(breaks.Build(), "ROUTE-001", Routes());
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("delivered a whole answer"), std::string::npos) << check.evidence;
}

TEST(JudgeRouteTest, Route002CommittedFromOneAttemptOnTheRouteItNames) {
  const auto build = [](std::string_view named, std::string text) {
    TraceBuilder builder;
    On(builder.Error(0, 10, "transport", true), "primary").status = 200;
    On(builder.Answer(10, 20, "Greetings"), "secondary");
    builder.Event(21, OnRoute({{"type", "response/committed"}, {"text", std::move(text)}}, named));
    return builder.Build();
  };
  EXPECT_EQ(StatusOf(build("secondary", "Greetings"), "ROUTE-002", Routes()), CheckStatus::kPass);
  EXPECT_EQ(StatusOf(build("primary", "Greetings"), "ROUTE-002", Routes()), CheckStatus::kFail);
  EXPECT_EQ(StatusOf(build("secondary", "HelloGreetings"), "ROUTE-002", Routes()),
            CheckStatus::kFail);
  TraceBuilder unnamed;
  On(unnamed.Answer(0, 10, "hi"), "primary");
  unnamed.Committed(11, 1, "hi");
  EXPECT_EQ(StatusOf(unnamed.Build(), "ROUTE-002", Routes()), CheckStatus::kNotApplicable);
}

// The primary answers 503, then `to` answers.
Trace FailoverTo(std::string route) {
  TraceBuilder builder;
  On(builder.Error(0, 10, "provider-unavailable", true), "primary").status = 503;
  On(builder.Answer(10, 20, "hi"), std::move(route));
  return builder.Build();
}

TEST(JudgeRouteTest, Route003NoRequestToARouteLackingACapability) {
  EXPECT_EQ(StatusOf(FailoverTo("tertiary"), "ROUTE-003", Routes(true)), CheckStatus::kPass);
  EXPECT_EQ(StatusOf(FailoverTo("tertiary"), "ROUTE-003", Routes(false)),
            CheckStatus::kNotApplicable);

  const auto check = CheckOf(FailoverTo("secondary"), "ROUTE-003", Routes(true));
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("lacks tools"), std::string::npos) << check.evidence;
}

// A request needing one capability: the primary and the tertiary have it (`fit`), the
// secondary lacks it (`lack`); with `tertiary_lacks` the tertiary lacks it too.
struct NeedCase {
  std::string_view capability;  // as ROUTE-003 names it
  std::string_view request;
  std::string_view fit;
  std::string_view lack;
};

constexpr NeedCase kNeedCases[] = {
    {"reasoning", "{reasoning: true, max_tokens: 4000}", "{reasoning: true}", "{}"},
    {"images", "{image: true}", "{images: true}", "{images: false}"},
    {"context_window", "{max_tokens: 50000}", "{}", "{context_window: 16000}"},
    {"stop_sequences", "{stop: [END]}", "{}", "{stop_sequences: false}"},
    {"prefill", "{prefill: Sure}", "{prefill: true}", "{}"},
    {"strict_tools", "{strict_tools: true}", "{strict_tools: true}", "{}"},
};

scenario::Scenario NeedRoutes(const NeedCase& need, bool tertiary_lacks = false) {
  const std::string yaml = fmt::format(R"(faultline: 1
name: routes/judge-needs
description: a request needing {0}, and a secondary lacking it
dialect: anthropic-messages
request: {1}
routes:
  - {{id: primary, model: m, priority: 0, capabilities: {2}}}
  - {{id: secondary, model: m, priority: 1, capabilities: {3}}}
  - {{id: tertiary, model: m, priority: 2, capabilities: {4}}}
)",
                                       need.capability, need.request, need.fit, need.lack,
                                       tertiary_lacks ? need.lack : need.fit);
  return Parse(yaml);
}

TEST(JudgeRouteTest, Route003KnowsEveryCapabilityTheRequestNeeds) {
  for (const NeedCase& need : kNeedCases) {
    SCOPED_TRACE(need.capability);
    EXPECT_EQ(StatusOf(FailoverTo("tertiary"), "ROUTE-003", NeedRoutes(need)), CheckStatus::kPass);
    const auto check = CheckOf(FailoverTo("secondary"), "ROUTE-003", NeedRoutes(need));
    EXPECT_EQ(check.status, CheckStatus::kFail);
    EXPECT_NE(check.evidence.find(fmt::format("lacks {} the request needs", need.capability)),
              std::string::npos)
        << check.evidence;
  }
}

// Giving up after a broken stream is right when every other route lacks what the request needs
// (MayGo asks the same oracle), wrong while one that has it is untried.
TEST(JudgeRouteTest, Route006NeedsDecideWhereABrokenStreamMayGo) {
  for (const NeedCase& need : kNeedCases) {
    SCOPED_TRACE(need.capability);
    TraceBuilder builder;
    On(builder.Error(0, 10, "truncated", true), "primary").status = 200;
    builder.Failed(11, 1, "truncated", "STREAM_TRUNCATED");
    EXPECT_EQ(StatusOf(builder.Build(), "ROUTE-006", NeedRoutes(need, true)), CheckStatus::kPass);
    const auto check = CheckOf(builder.Build(), "ROUTE-006", NeedRoutes(need));
    EXPECT_EQ(check.status, CheckStatus::kFail);
    EXPECT_NE(check.evidence.find("without trying route \"tertiary\""), std::string::npos)
        << check.evidence;
  }
}

TEST(JudgeRouteTest, Route004EachRoutesOwnRetryAfter) {
  const auto build = [](double back_on_primary) {
    TraceBuilder builder;
    auto& limited = On(builder.Error(0, 10, "rate-limit", true), "primary");
    limited.status = 429;
    testing::WithHint(limited, "retry-after", "1");
    On(builder.Error(11, 20, "provider-unavailable", true), "secondary").status = 503;
    On(builder.Answer(back_on_primary, back_on_primary + 10, "hi"), "primary");
    return builder.Build();
  };
  // The secondary at once is fine; the primary only after its own second.
  EXPECT_EQ(StatusOf(build(1100), "ROUTE-004", Routes()), CheckStatus::kPass);
  EXPECT_EQ(StatusOf(build(500), "ROUTE-004", Routes()), CheckStatus::kFail);
  EXPECT_EQ(StatusOf(build(500), "RETRY-004", Routes()), CheckStatus::kNotApplicable);
}

TEST(JudgeRouteTest, Route005NoAttemptWhileTheBreakerIsOpen) {
  json policy = BreakerPolicy(2, 1000);
  const auto build = [&](double probe_at) {
    TraceBuilder builder(policy);
    const auto attempt = [&](double at, int n, std::string route) {
      builder.Event(at, OnRoute({{"type", "response/start"},
                                 {"attempt", n},
                                 {"response_id", "r" + std::to_string(n)}},
                                route));
      builder.Event(
          at + 5,
          OnRoute({{"type", "response/interrupted"},
                   {"attempt", n},
                   {"response_id", "r" + std::to_string(n)},
                   {"failure", {{"class", "provider-unavailable"}, {"code", "UNAVAILABLE"}}}},
                  route));
    };
    attempt(0, 1, "primary");
    attempt(10, 2, "primary");  // the second failure opens it until 1015
    builder.Event(
        probe_at,
        OnRoute({{"type", "response/start"}, {"attempt", 3}, {"response_id", "r3"}}, "primary"));
    builder.Event(
        probe_at + 5,
        OnRoute(
            {{"type", "response/committed"}, {"attempt", 3}, {"response_id", "r3"}, {"text", "hi"}},
            "primary"));
    return builder.Build();
  };
  EXPECT_EQ(StatusOf(build(1020), "ROUTE-005", Routes()), CheckStatus::kPass);
  const auto check = CheckOf(build(500), "ROUTE-005", Routes());
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("while its breaker was open"), std::string::npos) << check.evidence;

  // A subject that declares no breaker is not held to the format's default one (LangChain's
  // single model retried its primary seven times and failed the default threshold of five).
  policy["routing"]["breaker"] = nullptr;
  const auto none = CheckOf(build(500), "ROUTE-005", Routes());
  EXPECT_EQ(none.status, CheckStatus::kNotApplicable);
  EXPECT_NE(none.evidence.find("declares no breaker"), std::string::npos) << none.evidence;
}

// A breaker that behaves as open before its threshold: after one failure (threshold 3) the
// subject leaves the primary alone for the whole cooldown, though its backoff allows a retry
// within 1 s. Judged from the journal alone: this subject reports no attempts (black-box).
TEST(JudgeRouteTest, Route005TheBreakerDoesNotTripBeforeItsThreshold) {
  json policy = BreakerPolicy(3, 5000);
  const auto build = [&](double retry_at) {
    TraceBuilder builder(policy);
    auto& first = On(builder.Error(0, 5, "provider-unavailable", true), "primary");
    first.status = 503;
    On(builder.Answer(retry_at, retry_at + 10, "hi"), "primary");
    return builder.Build();
  };
  EXPECT_EQ(StatusOf(build(600), "ROUTE-005", Routes()), CheckStatus::kPass);
  const auto check = CheckOf(build(5100), "ROUTE-005", Routes());
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("before its threshold"), std::string::npos) << check.evidence;
  // A gap past the backoff but short of the cooldown is a late retry, not an early trip.
  EXPECT_EQ(StatusOf(build(3000), "ROUTE-005", Routes()), CheckStatus::kPass);
  // Past the threshold the cooldown is what the declared breaker asks for: nothing is left to
  // judge (the subject reports no attempts to replay).
  policy["routing"]["breaker"]["threshold"] = 1;
  EXPECT_EQ(StatusOf(build(5100), "ROUTE-005", Routes()), CheckStatus::kNotApplicable);
}

// The same across routes: the primary fails, the call fails over, the secondary fails too; both
// breakers are still closed (threshold 2), yet the subject waits out the primary's cooldown.
TEST(JudgeRouteTest, Route005AFailoverDoesNotHideABreakerThatTrippedEarly) {
  json policy = BreakerPolicy(2, 2000);
  const auto build = [&](double back_at) {
    TraceBuilder builder(policy);
    On(builder.Error(0, 5, "provider-unavailable", true), "primary").status = 503;
    On(builder.Error(10, 15, "provider-unavailable", true), "tertiary").status = 503;
    On(builder.Answer(back_at, back_at + 10, "hi"), "primary");
    return builder.Build();
  };
  EXPECT_EQ(StatusOf(build(150), "ROUTE-005", Routes()), CheckStatus::kPass);
  EXPECT_EQ(StatusOf(build(900), "ROUTE-005", Routes()), CheckStatus::kPass);  // late, no trip
  const auto check = CheckOf(build(2100), "ROUTE-005", Routes());
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("route \"primary\"'s breaker closed"), std::string::npos)
      << check.evidence;
}

// Calls of one client share its breakers (threshold 2, cooldown 1 s): calls 0 and 1 each fail
// once on the primary and fail over, which opens the primary's breaker until 1105 ms; `third`
// is where call 2's first attempt goes at `third_at`, and, when given, `fourth` where call 3's
// goes at 1300 ms after call 2's answer.
Trace SharedBreakerCalls(std::string third, double third_at, bool one_client,
                         std::string fourth = "") {
  TraceBuilder builder(BreakerPolicy(2, 1000));
  builder.Calls(fourth.empty() ? 3 : 4);
  if (one_client) builder.OneClient();
  const auto attempt = [&](int call, double at, int n, const std::string& route, bool good) {
    const std::string id = fmt::format("c{}-{}", call, n);
    builder.Event(at,
                  OnRoute({{"type", "response/start"}, {"attempt", n}, {"response_id", id}}, route),
                  call);
    json end = {{"attempt", n}, {"response_id", id}};
    if (good) {
      end.update({{"type", "response/committed"}, {"text", "hi"}});
    } else {
      end.update({{"type", "response/interrupted"},
                  {"failure", {{"class", "provider-unavailable"}, {"code", "UNAVAILABLE"}}}});
    }
    builder.Event(at + 5, OnRoute(std::move(end), route), call);
  };
  for (int call = 0; call < 2; ++call) {
    attempt(call, 100.0 * call, 1, "primary", false);
    attempt(call, 100.0 * call + 6, 2, "secondary", true);
  }
  attempt(2, third_at, 1, third, true);
  if (!fourth.empty()) attempt(3, 1300, 1, fourth, true);
  return builder.Build();
}

TEST(JudgeRouteTest, Route005TheBreakersOfOneClientHoldAcrossItsCalls) {
  EXPECT_EQ(StatusOf(SharedBreakerCalls("secondary", 200, true), "ROUTE-005", Routes()),
            CheckStatus::kPass);
  const auto open = CheckOf(SharedBreakerCalls("primary", 200, true), "ROUTE-005", Routes());
  EXPECT_EQ(open.status, CheckStatus::kFail);
  EXPECT_NE(open.evidence.find("call 2: response/start on route \"primary\" at 200.0 ms while "
                               "its breaker was open"),
            std::string::npos)
      << open.evidence;
  // An adapter runs each call in a process of its own: each call is judged on its own breakers,
  // and none of them opened.
  EXPECT_EQ(StatusOf(SharedBreakerCalls("primary", 200, false), "ROUTE-005", Routes()),
            CheckStatus::kNotApplicable);
}

// Where a later call starts once a good probe closed the breaker again is ROUTE-010's (where
// every call of one client starts); ROUTE-005 judges only the traffic a breaker lets through.
TEST(JudgeRouteTest, ABreakerClosedAgainByAGoodProbeSendsTheRouteItsTraffic) {
  // Call 2 probes the primary after the cooldown and gets its answer: the breaker is closed.
  for (const char* id : {"ROUTE-005", "ROUTE-010"}) {
    EXPECT_EQ(StatusOf(SharedBreakerCalls("primary", 1200, true, "primary"), id, Routes()),
              CheckStatus::kPass)
        << id;
  }
  const Trace kept_open = SharedBreakerCalls("primary", 1200, true, "secondary");
  EXPECT_EQ(StatusOf(kept_open, "ROUTE-005", Routes()), CheckStatus::kPass);
  ExpectFails(kept_open, "ROUTE-010",
              "call 3: the first attempt went to route \"secondary\" at 1300.0 ms, not to the "
              "primary \"primary\" (its breaker closed again after a good probe at 1205.0 ms)");
  // Without a re-close (the probe never came), preferring the secondary is the breaker's doing.
  for (const char* id : {"ROUTE-005", "ROUTE-010"}) {
    EXPECT_EQ(StatusOf(SharedBreakerCalls("secondary", 1200, true, "secondary"), id, Routes()),
              CheckStatus::kPass)
        << id;
  }
}

// ROUTE-010 over the calls of one client: `calls` lists, for each call, when it starts and the
// routes of its attempts in order; every attempt but the last fails (503), the last commits
// unless `last_fails`. Attempts are 10 ms apart and take 5 ms.
struct CallPlan {
  double at = 0;
  std::vector<std::string> routes;
  bool last_fails = false;
};
Trace CallsOfOneClient(json policy, const std::vector<CallPlan>& calls, bool one_client = true) {
  TraceBuilder builder(std::move(policy));
  builder.Calls(static_cast<int>(calls.size()));
  if (one_client) builder.OneClient();
  for (std::size_t call = 0; call < calls.size(); ++call) {
    const CallPlan& plan = calls[call];
    for (std::size_t k = 0; k < plan.routes.size(); ++k) {
      const int n = static_cast<int>(k) + 1;
      const std::string id = fmt::format("c{}-{}", call, n);
      const std::string& route = plan.routes[k];
      const double at = plan.at + 10.0 * static_cast<double>(k);
      builder.Event(
          at, OnRoute({{"type", "response/start"}, {"attempt", n}, {"response_id", id}}, route),
          static_cast<int>(call));
      json end = {{"attempt", n}, {"response_id", id}};
      const bool last = k + 1 == plan.routes.size();
      if (last && !plan.last_fails) {
        end.update({{"type", "response/committed"}, {"text", "hi"}});
      } else {
        end.update({{"type", last ? "response/failed" : "response/interrupted"},
                    {"failure", {{"class", "provider-unavailable"}, {"code", "UNAVAILABLE"}}}});
      }
      builder.Event(at + 5, OnRoute(std::move(end), route), static_cast<int>(call));
    }
  }
  return builder.Build();
}

// The test policy without a breaker, sticky for `reset_ms` when given.
json StickyPolicy(std::optional<int> reset_ms) {
  json policy = TestPolicy();
  policy["max_attempts"] = 6;
  policy["routing"] = {{"breaker", nullptr}};
  if (reset_ms) policy["routing"]["sticky"] = {{"reset_ms", *reset_ms}};
  return policy;
}

// Call 0 fails over from the primary to the secondary at 10 ms; the later calls start at `at`
// on the routes given.
Trace AfterAFailover(std::optional<int> reset_ms, std::vector<CallPlan> later) {
  std::vector<CallPlan> calls{{0, {"primary", "secondary"}}};
  calls.insert(calls.end(), later.begin(), later.end());
  return CallsOfOneClient(StickyPolicy(reset_ms), calls);
}

TEST(JudgeRouteTest, Route010AClientThatDeclaresNoStickinessStartsEveryCallOnThePrimary) {
  EXPECT_EQ(StatusOf(AfterAFailover(std::nullopt, {{500, {"primary"}}}), "ROUTE-010", Routes()),
            CheckStatus::kPass);
  ExpectFails(AfterAFailover(std::nullopt, {{500, {"secondary"}}}), "ROUTE-010",
              "call 1: the first attempt went to route \"secondary\" at 500.0 ms, not to the "
              "primary \"primary\": the subject declares no stickiness (routing.sticky)");
}

TEST(JudgeRouteTest, Route010AStickyClientReturnsToThePrimaryByItsDeclaredReset) {
  // Sticky for 1 s: on the secondary while the failover (10 ms) is recent, then the primary.
  EXPECT_EQ(StatusOf(AfterAFailover(
                         1000, {{500, {"secondary"}}, {1009, {"secondary"}}, {1500, {"primary"}}}),
                     "ROUTE-010", Routes()),
            CheckStatus::kPass);
  // Back on the primary before the reset (ai-fallback counts from its last reset): right too.
  EXPECT_EQ(StatusOf(AfterAFailover(1000, {{500, {"primary"}}}), "ROUTE-010", Routes()),
            CheckStatus::kPass);
  // Sticky forever: still on the secondary past the reset.
  ExpectFails(AfterAFailover(1000, {{500, {"secondary"}}, {1500, {"secondary"}}}), "ROUTE-010",
              "call 2: the first attempt went to route \"secondary\" at 1500.0 ms, not to the "
              "primary \"primary\", though the declared routing.sticky.reset_ms (1000 ms) had "
              "passed since the client's last failover to it, at 10.0 ms");
  // A route no failover moved the client to is no place to start either.
  ExpectFails(AfterAFailover(1000, {{500, {"tertiary"}}}), "ROUTE-010",
              "no failover of the client had moved to \"tertiary\"");
}

// Any failover of the client within the reset may be the one it went by: calls overlap, and
// ai-fallback moves on after a call's last failure without another attempt (its index wraps
// round to where the call began).
TEST(JudgeRouteTest, Route010AnyRecentFailoverMayBeTheOneAStickyClientWentBy) {
  // Call 1 starts while call 0 is still failing over.
  EXPECT_EQ(StatusOf(AfterAFailover(1000, {{10, {"secondary"}}}), "ROUTE-010", Routes()),
            CheckStatus::kPass);
  // Call 1 starts on the secondary and fails on every route; call 2 is back on the secondary.
  EXPECT_EQ(StatusOf(AfterAFailover(1000, {{300, {"secondary", "tertiary", "primary"}, true},
                                           {800, {"secondary"}}}),
                     "ROUTE-010", Routes()),
            CheckStatus::kPass);
}

TEST(JudgeRouteTest, Route010TheBreakerHoldingThePrimaryIsRoute005s) {
  json policy = BreakerPolicy(1, 1000);
  const std::vector<CallPlan> calls{{0, {"primary", "secondary"}}, {500, {"secondary"}}};
  EXPECT_EQ(StatusOf(CallsOfOneClient(policy, calls), "ROUTE-010", Routes()), CheckStatus::kPass);
  // With a threshold of 2 the primary's breaker stayed closed: the secondary was a choice.
  EXPECT_EQ(StatusOf(CallsOfOneClient(BreakerPolicy(2, 1000), calls), "ROUTE-010", Routes()),
            CheckStatus::kFail);
}

TEST(JudgeRouteTest, Route010IsNotApplicableWithoutCallsOfOneClientThatCarrySomething) {
  const auto status = [](const Trace& trace, const scenario::Scenario& scenario = Routes()) {
    return StatusOf(trace, "ROUTE-010", scenario);
  };
  const std::vector<CallPlan> sticky{{0, {"primary", "secondary"}}, {500, {"secondary"}}};
  // Each call in a process of its own: nothing carries over.
  EXPECT_EQ(status(CallsOfOneClient(StickyPolicy(std::nullopt), sticky, /*one_client=*/false)),
            CheckStatus::kNotApplicable);
  EXPECT_EQ(status(CallsOfOneClient(StickyPolicy(std::nullopt), {sticky[0]})),
            CheckStatus::kNotApplicable);
  EXPECT_EQ(status(CallsOfOneClient(StickyPolicy(std::nullopt), sticky), scenario::Scenario{}),
            CheckStatus::kNotApplicable);
  EXPECT_EQ(status(CallsOfOneClient(nullptr, sticky)), CheckStatus::kNotApplicable);
  json one_endpoint = StickyPolicy(std::nullopt);
  one_endpoint["routing"]["failover"] = false;
  EXPECT_EQ(status(CallsOfOneClient(one_endpoint, sticky)), CheckStatus::kNotApplicable);
  // No call started after a failover: nothing to carry.
  EXPECT_EQ(status(CallsOfOneClient(StickyPolicy(1000), {{0, {"primary"}}, {500, {"primary"}}})),
            CheckStatus::kNotApplicable);
  // A black box seen only in the journal, where refused connections would be missing.
  TraceBuilder black_box(StickyPolicy(std::nullopt));
  black_box.Calls(2).OneClient();
  On(black_box.Error(0, 5, "provider-unavailable", true), "primary").call = 0;
  On(black_box.Answer(10, 15, "hi"), "secondary").call = 0;
  On(black_box.Answer(500, 505, "hi"), "secondary").call = 1;
  black_box.Event(16, {{"type", "response/committed"}, {"text", "hi"}}, 0);
  black_box.Event(506, {{"type", "response/committed"}, {"text", "hi"}}, 1);
  EXPECT_EQ(status(black_box.Build()), CheckStatus::kFail) << "judged from the journal";
  scenario::Scenario refusing = Routes();
  refusing.routes[2].health.emplace().failure = scenario::Health::Failure::kRefused;
  EXPECT_EQ(status(black_box.Build(), refusing), CheckStatus::kNotApplicable);
}

TEST(JudgeRouteTest, Route006AMidStreamErrorIsARouteFailure) {
  const auto build = [](bool moved_on) {
    TraceBuilder builder;
    auto& cut = On(builder.Error(0, 10, "truncated", true), "primary");
    cut.status = 200;
    if (moved_on) {
      On(builder.Answer(11, 20, "hi"), "tertiary");
      builder.Committed(21, 2, "hi");
    } else {
      builder.Failed(11, 1, "truncated", "STREAM_TRUNCATED");
    }
    return builder.Build();
  };
  EXPECT_EQ(StatusOf(build(true), "ROUTE-006", Routes()), CheckStatus::kPass);
  const auto check = CheckOf(build(false), "ROUTE-006", Routes());
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("broke mid-stream"), std::string::npos) << check.evidence;
  TraceBuilder healthy;
  On(healthy.Answer(0, 10, "hi"), "primary");
  EXPECT_EQ(StatusOf(healthy.Build(), "ROUTE-006", Routes()), CheckStatus::kNotApplicable);
}

TEST(JudgeRouteTest, Route007OneBudgetAndAFastFailureWhenEveryRouteIsDown) {
  json policy = TestPolicy();
  policy["max_attempts"] = 5;
  const auto build = [&](double failed_at, bool third) {
    TraceBuilder builder(policy);
    for (const char* route : {"primary", "secondary", "tertiary"}) {
      const double at = route[0] == 'p' ? 0 : route[0] == 's' ? 20 : 40;
      On(builder.Error(at, at + 10, "quota", false), route).status = 429;
    }
    if (third) On(builder.Error(60, 70, "quota", false), "primary").status = 429;
    builder.Failed(failed_at, third ? 4 : 3, "quota", "QUOTA");
    return builder.Build();
  };
  EXPECT_EQ(StatusOf(build(51, false), "ROUTE-007", Routes()), CheckStatus::kPass);
  auto slow = CheckOf(build(2000, false), "ROUTE-007", Routes());
  EXPECT_EQ(slow.status, CheckStatus::kFail);
  EXPECT_NE(slow.evidence.find("instead of at once"), std::string::npos) << slow.evidence;
  auto cycling = CheckOf(build(71, true), "ROUTE-007", Routes());
  EXPECT_EQ(cycling.status, CheckStatus::kFail);
  EXPECT_NE(cycling.evidence.find("cycling"), std::string::npos) << cycling.evidence;

  json tight = TestPolicy();
  tight["max_attempts"] = 2;
  TraceBuilder over(tight);
  On(over.Error(0, 10, "provider-unavailable", true), "primary").status = 503;
  On(over.Error(10, 20, "provider-unavailable", true), "secondary").status = 503;
  On(over.Answer(20, 30, "hi"), "tertiary");
  EXPECT_EQ(StatusOf(over.Build(), "ROUTE-007", Routes()), CheckStatus::kFail);
}

TEST(JudgeRouteTest, Route008BodiesDifferOnlyInTheWireModel) {
  TraceBuilder keeps;
  On(keeps.Error(0, 10, "provider-unavailable", true), "primary").status = 503;
  On(keeps.Answer(10, 20, "hi"), "tertiary");
  EXPECT_EQ(StatusOf(keeps.Build(), "ROUTE-008", Routes()), CheckStatus::kPass);

  TraceBuilder other_text;
  On(other_text.Error(0, 10, "provider-unavailable", true), "primary").status = 503;
  On(other_text.Answer(10, 20, "hi"), "tertiary").body =
      R"({"max_tokens":256,"messages":[{"content":"Say bye.","role":"user"}],"model":"m","stream":true})";
  EXPECT_EQ(StatusOf(other_text.Build(), "ROUTE-008", Routes()), CheckStatus::kFail);

  TraceBuilder wrong_model;
  On(wrong_model.Answer(0, 10, "hi"), "primary").body = R"({"model":"gpt-4o","stream":true})";
  const auto check = CheckOf(wrong_model.Build(), "ROUTE-008", Routes());
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("wire model"), std::string::npos) << check.evidence;
}

// Gemini names the model in the path, not in the body: ROUTE-008 reads it there.
TEST(JudgeRouteTest, Route008ReadsGeminisWireModelFromThePath) {
  const scenario::Scenario gemini = Parse(R"(faultline: 1
name: routes/judge-gemini
description: two gemini routes of two wire models
dialect: gemini
routes:
  - {id: primary, model: m, priority: 0}
  - {id: secondary, model: n, priority: 1}
)");
  constexpr std::string_view kGeminiBody =
      R"({"contents":[{"parts":[{"text":"Say hello."}],"role":"user"}],"generationConfig":{"maxOutputTokens":256}})";
  const auto build = [&](std::string_view primary_model) {
    TraceBuilder builder;
    provider::JournalEntry& primary =
        On(builder.Error(0, 10, "provider-unavailable", true), "primary");
    primary.status = 503;
    primary.body = std::string(kGeminiBody);
    primary.target =
        fmt::format("/s/x/v1beta/models/{}:streamGenerateContent?alt=sse", primary_model);
    provider::JournalEntry& secondary = On(builder.Answer(10, 20, "hi"), "secondary");
    secondary.body = std::string(kGeminiBody);
    secondary.target = "/s/x/v1beta/models/n:streamGenerateContent?alt=sse";
    return builder.Build();
  };
  EXPECT_EQ(StatusOf(build("m"), "ROUTE-008", gemini), CheckStatus::kPass);
  const auto check = CheckOf(build("n"), "ROUTE-008", gemini);
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find(R"(asked for model "n"; the route's wire model is "m")"),
            std::string::npos)
      << check.evidence;
}

// So does Bedrock, URL-encoded as the AWS SDKs send it.
TEST(JudgeRouteTest, Route008ReadsBedrocksWireModelFromThePath) {
  const scenario::Scenario bedrock = Parse(R"(faultline: 1
name: routes/judge-bedrock
description: two bedrock routes of two wire models
dialect: bedrock-converse
routes:
  - {id: primary, model: "anthropic.claude-v2:1", priority: 0}
  - {id: secondary, model: n, priority: 1}
)");
  constexpr std::string_view kBedrockBody =
      R"({"inferenceConfig":{"maxTokens":256},"messages":[{"content":[{"text":"Say hello."}],"role":"user"}]})";
  const auto build = [&](std::string_view primary_path) {
    TraceBuilder builder;
    provider::JournalEntry& primary =
        On(builder.Error(0, 10, "provider-unavailable", true), "primary");
    primary.status = 503;
    primary.body = std::string(kBedrockBody);
    primary.target = fmt::format("/s/x/model/{}/converse-stream", primary_path);
    provider::JournalEntry& secondary = On(builder.Answer(10, 20, "hi"), "secondary");
    secondary.body = std::string(kBedrockBody);
    secondary.target = "/s/x/model/n/converse-stream";
    return builder.Build();
  };
  EXPECT_EQ(StatusOf(build("anthropic.claude-v2%3A1"), "ROUTE-008", bedrock), CheckStatus::kPass);
  EXPECT_EQ(StatusOf(build("anthropic.claude-v2:1"), "ROUTE-008", bedrock), CheckStatus::kPass);
  const auto check = CheckOf(build("n"), "ROUTE-008", bedrock);
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find(R"(asked for model "n")"), std::string::npos) << check.evidence;
}

TEST(JudgeRouteTest, Route009EveryRoutesConnectionsClosed) {
  TraceBuilder keeps;
  On(keeps.Answer(0, 10, "hi"), "primary");
  EXPECT_EQ(StatusOf(keeps.Build(), "ROUTE-009", Routes()), CheckStatus::kPass);
  TraceBuilder breaks;
  On(breaks.Entry(0, 10, provider::EndKind::kInProgress), "secondary");
  const auto check = CheckOf(breaks.Build(), "ROUTE-009", Routes());
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("secondary"), std::string::npos) << check.evidence;
}

TEST(JudgeRouteTest, Adv006NoFailoverInsideAGroupThatIsDown) {
  const auto build = [](std::string next) {
    TraceBuilder builder;
    On(builder.Error(0, 10, "provider-unavailable", true), "primary").status = 503;
    On(builder.Answer(10, 20, "hi"), std::move(next));
    return builder.Build();
  };
  const auto check = CheckOf(build("secondary"), "ADV-006", Routes(false, true));
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_EQ(check.severity, report::Severity::kAdvisory);
  EXPECT_EQ(StatusOf(build("tertiary"), "ADV-006", Routes(false, true)), CheckStatus::kPass);
  EXPECT_EQ(StatusOf(build("tertiary"), "ADV-006", Routes()), CheckStatus::kNotApplicable);
}

// ADV-009: an invalid request stays on its route; a truncated stream may move only to a route of
// the same wire model; a rate limit may go anywhere (nothing to advise).
TEST(JudgeRouteTest, Adv009AFailureMovesOnlyWhereTheTaxonomyAllows) {
  const scenario::Scenario scenario = Parse(R"(faultline: 1
name: routes/judge-models
description: two wire models
dialect: openai-chat
routes:
  - {id: primary, model: m, priority: 0}
  - {id: other-model, model: n, priority: 1}
  - {id: same-model, model: m, priority: 2}
)");
  const auto build = [](std::string failure_class, bool retryable, int status, std::string next) {
    TraceBuilder builder;
    On(builder.Error(0, 10, std::move(failure_class), retryable), "primary").status = status;
    On(builder.Answer(10, 20, "hi"), std::move(next));
    return builder.Build();
  };
  auto check = CheckOf(build("invalid-request", false, 400, "same-model"), "ADV-009", scenario);
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_EQ(check.severity, report::Severity::kAdvisory);
  EXPECT_NE(check.evidence.find("invalid-request (failover: never)"), std::string::npos)
      << check.evidence;
  EXPECT_EQ(StatusOf(build("invalid-request", false, 400, "primary"), "ADV-009", scenario),
            CheckStatus::kPass);
  EXPECT_EQ(StatusOf(build("truncated", true, 200, "same-model"), "ADV-009", scenario),
            CheckStatus::kPass);
  check = CheckOf(build("truncated", true, 200, "other-model"), "ADV-009", scenario);
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find(R"(model "n" instead of "m")"), std::string::npos)
      << check.evidence;
  EXPECT_EQ(StatusOf(build("rate-limit", true, 429, "other-model"), "ADV-009", scenario),
            CheckStatus::kNotApplicable);
}

// A dozen and more attempts over a primary that fails in 2 ms and a tertiary that fails in 500 ms:
// a router that keeps coming back to the fast failure gives it most of the second half.
TEST(JudgeRouteTest, Adv007AFastFailingRouteDoesNotSoakUpTheAttempts) {
  json policy = TestPolicy();
  policy["max_attempts"] = 20;
  const auto build = [&](std::string_view order) {
    TraceBuilder builder(policy);
    double at = 0;
    for (const char route : order) {
      const bool fast = route == 'p';
      On(builder.Error(at, at + (fast ? 2 : 500), "provider-unavailable", true),
         fast ? "primary" : "tertiary")
          .status = 503;
      at += fast ? 12 : 510;
    }
    return builder.Build();
  };
  EXPECT_EQ(StatusOf(build("ptptptptptptpt"), "ADV-007", Routes()), CheckStatus::kPass);
  const auto check = CheckOf(build("ptptpttpppppptt"), "ADV-007", Routes());
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("grew from 3 of the first 7 to 6 of the last 8"), std::string::npos)
      << check.evidence;
  EXPECT_EQ(CheckOf(build("ptptpt"), "ADV-007", Routes()).status, CheckStatus::kNotApplicable);
}

}  // namespace
}  // namespace faultline::harness
