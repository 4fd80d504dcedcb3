// The runner end to end in the virtual world (fast, deterministic) and a small real-world slice.
#include "harness/runner.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "harness/judge/judge.h"
#include "harness/worlds/real_world.h"
#include "harness/worlds/virtual_world.h"
#include "reference_impl/policy_json.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

std::vector<scenario::Scenario> Catalog() {
  auto catalog = scenario::LoadBuiltinCatalog();
  EXPECT_TRUE(catalog.has_value());
  return catalog ? *catalog : std::vector<scenario::Scenario>{};
}

const scenario::Scenario& Named(const std::vector<scenario::Scenario>& all, std::string_view name) {
  for (const scenario::Scenario& s : all) {
    if (s.name == name) return s;
  }
  ADD_FAILURE() << "no scenario " << name;
  return all.front();
}

std::string Failures(const report::RunResult& result) {
  std::string out;
  for (const report::ScenarioResult& s : result.scenarios) {
    if (s.verdict == report::Verdict::kPass) continue;
    out += s.name + " [" + s.world + " seed " + std::to_string(s.seed) + "]: " + s.error;
    for (const report::CheckResult& check : s.checks) {
      if (check.status == report::CheckStatus::kFail) out += " " + check.id + ": " + check.evidence;
    }
    out += "\n";
  }
  return out;
}

TEST(VirtualWorldTest, SameSeedSameTraceFingerprint) {
  for (const scenario::Scenario& scenario : Catalog()) {
    VirtualRunOptions options;
    options.seed = 7;
    options.provider_seed = 3;
    auto first = RunVirtual(scenario, options);
    auto second = RunVirtual(scenario, options);
    ASSERT_TRUE(first && second) << scenario.name;
    EXPECT_EQ(Fingerprint(*first), Fingerprint(*second)) << scenario.name;
  }
}

TEST(VirtualWorldTest, OtherSeedsDrawOtherChaos) {
  const auto catalog = Catalog();
  const scenario::Scenario& chaos = Named(catalog, "chaos/openai-chat-low-rate");
  std::set<std::string> prints;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    VirtualRunOptions options;
    options.provider_seed = seed;
    auto trace = RunVirtual(chaos, options);
    ASSERT_TRUE(trace);
    prints.insert(Fingerprint(*trace));
  }
  EXPECT_GT(prints.size(), 3u);
}

TEST(VirtualWorldTest, LongWaitsCostNoWallTime) {
  // A stall that only the 30 s idle timeout ends, three times over: 90 s of virtual time.
  const auto catalog = Catalog();
  auto trace = RunVirtual(Named(catalog, "stall/anthropic-stall-every-attempt"), {});
  ASSERT_TRUE(trace);
  EXPECT_GE(trace->ended, std::chrono::seconds(90));
  EXPECT_EQ(trace->journal.size(), 3u);
}

TEST(RunnerTest, ReferencePassesTheCatalogueInVirtualTimeOverManySeeds) {
  RunnerOptions options;
  options.world = WorldChoice::kVirtual;
  options.jobs = 2;
  options.repeat = 1;
  for (std::uint64_t seed : {0ULL, 1ULL, 2ULL, 17ULL, 4242ULL}) {
    options.seed = seed;
    const auto catalog = Catalog();
    auto result = RunAll(catalog, options, {});
    ASSERT_TRUE(result);
    EXPECT_EQ(result->passed(), static_cast<int>(result->scenarios.size()))
        << "seed " << seed << "\n"
        << Failures(*result);
  }
}

// The oracle is the declared policy: the reference engine run with a policy unlike its defaults
// (so its expect: blocks do not apply as written, and its twin judges it) follows that policy
// exactly, so nothing may fail. Advisories may: they flag legal but harmful choices.
TEST(RunnerTest, AClientConsistentWithItsDeclaredPolicyPasses) {
  const char* policies[] = {
      // LangChain-like budget and status rules, with an idle timeout (else stalls hang it).
      R"({"max_attempts": 7, "retry_phases": ["connect", "response-headers"],
          "statuses": {"retry": ["4xx", "5xx"], "never": [400, 401, 402, 403, 404, 409]},
          "backoff": {"strategy": "exponential", "base_ms": 1000, "cap_ms": 60000,
                      "jitter": 1, "jitter_mode": "up"},
          "retry_after": {"honor": false}, "timeouts": {"total_ms": null}})",
      // The SDKs' backoff and hint handling, with the reference's timeouts.
      R"({"retry_phases": ["connect", "response-headers"],
          "statuses": {"retry": [408, 409, 429, "5xx"]},
          "backoff": {"strategy": "exponential", "base_ms": 500, "cap_ms": 8000,
                      "jitter": 0.25, "jitter_mode": "down"},
          "retry_after": {"mode": "replace", "cap_ms": null, "jitter": 0}})",
      R"({"mode": "always", "timeouts": {"total_ms": 30000}})",
      R"({"max_attempts": 5, "backoff": {"strategy": "decorrelated-jitter", "base_ms": 100,
          "cap_ms": 3000}, "retry_after": {"cap_ms": 5000, "over_cap": "backoff",
          "zero": "immediate", "mode": "replace"},
          "timeouts": {"idle_ms": 2000, "response_headers_ms": 3000, "total_ms": 20000}})",
  };
  const std::vector<scenario::Scenario> catalog = Catalog();
  for (const char* text : policies) {
    auto policy = ref::LoadPolicy(text);
    ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
    for (std::uint64_t seed : {0, 7}) {
      RunnerOptions options;
      options.policy = *policy;
      options.seed = seed;
      options.jobs = 2;
      auto result = RunAll(catalog, options, {});
      ASSERT_TRUE(result.has_value());
      EXPECT_EQ(result->passed(), static_cast<int>(catalog.size()))
          << text << " seed " << seed << "\n"
          << Failures(*result);
    }
  }
}

TEST(RunnerTest, RepeatedRunsGetPercentilesAndEqualSeedsEqualFingerprints) {
  RunnerOptions options;
  options.repeat = 5;
  const auto catalog = Catalog();
  const std::vector<scenario::Scenario> one{Named(catalog, "demo/rate-limit-retry-after")};
  auto first = RunAll(one, options, {});
  auto second = RunAll(one, options, {});
  ASSERT_TRUE(first && second);
  ASSERT_EQ(first->scenarios.size(), 5u);
  EXPECT_EQ(first->fingerprint, second->fingerprint);
  ASSERT_EQ(first->latency.size(), 1u);
  EXPECT_EQ(first->latency[0].runs, 5);
  ASSERT_TRUE(first->latency[0].terminal_ms);
  EXPECT_GE(first->latency[0].terminal_ms->p50, 1000.0);  // the 1 s Retry-After is a floor
}

// dialect:NAME keeps the scenarios of one wire format, whatever their names and tags say (the
// demo files of every dialect among them), and a dialect that does not exist is refused, not an
// empty selection.
TEST(RunnerTest, FilterByDialect) {
  const auto catalog = Catalog();
  for (const scenario::Dialect dialect : scenario::AllDialects()) {
    const std::string filter = "dialect:" + std::string(scenario::ToString(dialect));
    const auto kept = SelectScenarios(catalog, filter, std::nullopt);
    const auto expected = std::ranges::count_if(
        catalog, [&](const scenario::Scenario& s) { return s.dialect == dialect; });
    EXPECT_EQ(static_cast<std::ptrdiff_t>(kept.size()), expected) << filter;
    EXPECT_GT(expected, 0) << filter;
    EXPECT_FALSE(FilterProblem(filter)) << filter;
  }
  const auto demo_chat = SelectScenarios(catalog, "demo/*+dialect:openai-chat", std::nullopt);
  ASSERT_FALSE(demo_chat.empty());
  for (const auto& s : demo_chat) EXPECT_EQ(s.dialect, scenario::Dialect::kOpenAiChat) << s.name;
  // Every dialect is offered, the last one added too.
  EXPECT_EQ(FilterProblem("rate-limit/*,!dialect:openai"),
            "--filter: no dialect 'openai' (openai-chat, anthropic-messages, openai-responses, "
            "gemini, ollama, bedrock-converse)");
  EXPECT_FALSE(FilterProblem("tag:stall+dialect:anthropic-messages,demo/*"));
}

TEST(RunnerTest, FilterAndShard) {
  const auto catalog = Catalog();
  const auto rate = SelectScenarios(catalog, "rate-limit/*", std::nullopt);
  ASSERT_FALSE(rate.empty());
  for (const auto& s : rate) EXPECT_TRUE(s.name.starts_with("rate-limit/")) << s.name;
  // '+' joins conditions that must all hold; ',' keeps a scenario when any term does.
  const auto both = SelectScenarios(catalog, "tag:stall+tag:anthropic-messages", std::nullopt);
  ASSERT_FALSE(both.empty());
  for (const auto& s : both) {
    EXPECT_TRUE(std::ranges::count(s.tags, "stall") == 1 &&
                std::ranges::count(s.tags, "anthropic-messages") == 1)
        << s.name;
  }
  EXPECT_LT(both.size(), SelectScenarios(catalog, "tag:stall", std::nullopt).size());
  EXPECT_TRUE(SelectScenarios(catalog, "stall/*+tag:no-such-tag", std::nullopt).empty());
  const auto tagged = SelectScenarios(catalog, "tag:demo,!demo/stall*", std::nullopt);
  for (const auto& s : tagged) EXPECT_NE(s.name, "demo/stall-forever");
  EXPECT_FALSE(tagged.empty());
  std::size_t total = 0;
  std::set<std::string> seen;
  for (int i = 1; i <= 3; ++i) {
    for (const auto& s : SelectScenarios(catalog, "", Shard{i, 3})) {
      EXPECT_TRUE(seen.insert(s.name).second) << s.name << " in two shards";
      ++total;
    }
  }
  EXPECT_EQ(total, catalog.size());
  EXPECT_FALSE(ParseShard("0/3"));
  EXPECT_FALSE(ParseShard("4/3"));
  EXPECT_FALSE(ParseShard("x"));
  EXPECT_TRUE(ParseShard("3/3"));
}

// Each scenario's shard of `count`, by name.
std::map<std::string, int> ShardOfEachScenario(const std::vector<scenario::Scenario>& catalog,
                                               int count) {
  std::map<std::string, int> shard_of;
  for (int i = 1; i <= count; ++i) {
    for (const auto& s : SelectScenarios(catalog, "", Shard{i, count})) {
      EXPECT_TRUE(shard_of.emplace(s.name, i).second) << s.name << " in two shards";
    }
  }
  EXPECT_EQ(shard_of.size(), catalog.size()) << "every scenario in exactly one shard";
  return shard_of;
}

// A CI matrix keeps its split when the catalogue changes: a scenario added (here one that sorts
// first, which shifted every other one under assignment by position) or removed moves no other
// scenario between shards.
TEST(RunnerTest, AddingOrRemovingAScenarioMovesNoOther) {
  const auto catalog = Catalog();
  ASSERT_GT(catalog.size(), 20u);
  auto grown = catalog;
  grown.push_back(catalog.front());
  grown.back().name = "aaa/a-new-scenario";
  auto shrunk = catalog;
  shrunk.erase(shrunk.begin() + static_cast<std::ptrdiff_t>(catalog.size() / 2));
  for (const int count : {2, 3, 7}) {
    const auto before = ShardOfEachScenario(catalog, count);
    for (const auto& changed : {grown, shrunk}) {
      for (const auto& [name, shard] : ShardOfEachScenario(changed, count)) {
        if (before.contains(name)) {
          EXPECT_EQ(shard, before.at(name)) << name << " moved (count " << count << ")";
        }
      }
    }
    // And no shard is left idle by the hash: each holds some of a catalogue this size.
    std::set<int> used;
    for (const auto& [name, shard] : before) used.insert(shard);
    EXPECT_EQ(used.size(), static_cast<std::size_t>(count));
  }
}

// Fingerprints cover what the seed determines: the same seed gives the same run fingerprint run
// after run in both worlds (real time: the provider's plans and the verdicts, no wall-clock
// time), and shards merged give exactly the unsharded fingerprint.
// Quick in real time (under ~2 s each), with retries, a Retry-After floor, seeded chaos and a
// truncation among them, so plans and verdicts vary between scenarios.
constexpr std::string_view kRealSlice =
    "demo/*,!demo/stall*,chaos/openai-chat-low-rate,rate-limit/openai-chat-429-then-success";

report::RunResult RunOrDie(const std::vector<scenario::Scenario>& scenarios,
                           const RunnerOptions& options) {
  auto result = RunAll(scenarios, options, {});
  EXPECT_TRUE(result.has_value()) << result.error();
  return result ? *result : report::RunResult{};
}

std::string PerScenario(const report::RunResult& result) {
  std::string out;
  for (const report::ScenarioResult& s : result.scenarios) {
    out += fmt::format("{} [{}] {}\n", s.name, s.world, s.fingerprint);
  }
  return out;
}

TEST(FingerprintTest, EqualSeedsGiveEqualFingerprintsInBothWorlds) {
  const auto slice = SelectScenarios(Catalog(), kRealSlice, std::nullopt);
  ASSERT_GE(slice.size(), 5u);
  RunnerOptions options;
  options.world = WorldChoice::kBoth;
  options.jobs = 16;
  options.seed = 11;
  const report::RunResult first = RunOrDie(slice, options);
  const report::RunResult second = RunOrDie(slice, options);
  ASSERT_EQ(first.scenarios.size(), 2 * slice.size());
  EXPECT_EQ(PerScenario(first), PerScenario(second));
  EXPECT_EQ(first.fingerprint, second.fingerprint);
  // Not a constant: another seed draws other chaos.
  options.seed = 12;
  EXPECT_NE(RunOrDie(slice, options).fingerprint, first.fingerprint);
}

TEST(FingerprintTest, ShardsMergedGiveTheUnshardedFingerprint) {
  const auto catalog = Catalog();
  RunnerOptions options;
  options.seed = 5;
  options.jobs = 2;
  const report::RunResult whole = RunOrDie(SelectScenarios(catalog, "", std::nullopt), options);
  std::vector<report::RunResult> parts;
  for (int i = 1; i <= 3; ++i) {
    parts.push_back(RunOrDie(SelectScenarios(catalog, "", Shard{i, 3}), options));
    parts.back().shard = fmt::format("{}/3", i);
  }
  std::swap(parts[0], parts[2]);  // merged in any order
  auto merged = report::Merge(parts);
  ASSERT_TRUE(merged.has_value()) << merged.error();
  EXPECT_EQ(merged->fingerprint, whole.fingerprint);
  ASSERT_EQ(merged->scenarios.size(), whole.scenarios.size());
  for (std::size_t i = 0; i < whole.scenarios.size(); ++i) {
    EXPECT_EQ(merged->scenarios[i].name, whole.scenarios[i].name) << "at " << i;
  }
}

TEST(FingerprintTest, ShardsOfBothWorldsMergedGiveTheUnshardedFingerprint) {
  const auto catalog = Catalog();
  RunnerOptions options;
  options.world = WorldChoice::kBoth;
  options.jobs = 16;
  options.repeat = 2;
  const report::RunResult whole =
      RunOrDie(SelectScenarios(catalog, kRealSlice, std::nullopt), options);
  auto merged =
      report::Merge({RunOrDie(SelectScenarios(catalog, kRealSlice, Shard{2, 2}), options),
                     RunOrDie(SelectScenarios(catalog, kRealSlice, Shard{1, 2}), options)});
  ASSERT_TRUE(merged.has_value()) << merged.error();
  EXPECT_EQ(PerScenario(*merged), PerScenario(whole));
  EXPECT_EQ(merged->fingerprint, whole.fingerprint);
}

TEST(FingerprintTest, AStopRequestBeforeTheStartRunsNothingAndSaysSo) {
  const auto slice = SelectScenarios(Catalog(), "demo/*", std::nullopt);
  std::stop_source stop;
  stop.request_stop();
  RunnerOptions options;
  options.stop = stop.get_token();
  options.repeat = 2;
  const report::RunResult result = RunOrDie(slice, options);
  EXPECT_TRUE(result.scenarios.empty());
  ASSERT_TRUE(result.interrupted.has_value());
  EXPECT_EQ(result.interrupted->planned_runs, static_cast<int>(2 * slice.size()));
}

TEST(RunnerTest, ReferencePassesInTheRealWorld) {
  RunnerOptions options;
  options.world = WorldChoice::kReal;
  options.jobs = 8;
  const auto catalog = Catalog();
  const auto quick = SelectScenarios(
      catalog, "demo/hello-*,demo/rate-limit-retry-after,demo/truncated-no-done", std::nullopt);
  ASSERT_GE(quick.size(), 4u);
  auto result = RunAll(quick, options, {});
  ASSERT_TRUE(result);
  EXPECT_EQ(result->passed(), static_cast<int>(result->scenarios.size())) << Failures(*result);
}

// The scripted cancel counts from the call's first attempt in both worlds. Here nothing listens
// for the first 800 ms: the first attempt is refused at once, so the cancel comes 300 ms after
// its response/start, into the outage, as at t = 300 ms in virtual time, and no request ever
// reaches the provider. (It used to wait for the first request to arrive, 300 ms after the
// outage, which the virtual world never does.)
TEST(RealWorldTest, TheInProcessCancelCountsFromTheFirstAttempt) {
  auto scenario = scenario::ParseScenario(R"(
faultline: 1
name: cancel/anchored-at-first-attempt
description: The listener is down for 800 ms; the call is cancelled 300 ms after its first attempt.
dialect: openai-chat
listener_outages: [{from: 0s, for: 800ms}]
cancel_at: 300ms
responses:
  - headers_delay: 5s
)",
                                          "test");
  ASSERT_TRUE(scenario) << scenario.error().ToString();
  auto world = RealWorld::Start();
  ASSERT_TRUE(world) << world.error();
  ref::RetryPolicy policy;  // retry the refused connections every 200 ms
  policy.max_attempts = 10;
  policy.backoff.strategy = ref::BackoffStrategy::kExponential;
  policy.backoff.base = std::chrono::milliseconds(200);
  policy.backoff.multiplier = 1;
  policy.backoff.jitter = 0;
  auto trace = (*world)->RunReference(*scenario, policy, RealRunOptions{});
  ASSERT_TRUE(trace) << trace.error();
  ASSERT_TRUE(trace->cancel_at.has_value());
  const auto start = std::ranges::find(trace->client, EventKind::kStart,
                                       [](const ClientRecord& r) { return r.event.kind; });
  ASSERT_NE(start, trace->client.end());
  const double cancel_ms = Ms(*trace->cancel_at) - Ms(start->at);
  EXPECT_GE(cancel_ms, 300 - 25);
  EXPECT_LE(cancel_ms, 300 + RealTolerance().late_ms);
  EXPECT_TRUE(trace->journal.empty()) << "a request arrived after the outage";
  ASSERT_FALSE(trace->client.empty());
  ASSERT_TRUE(trace->client.back().event.failure.has_value());
  EXPECT_EQ(trace->client.back().event.failure->code, "ABORTED");
}

// Issue 26: nothing listens for the whole run and cancel_at is 0 s. The virtual world cancelled
// at 0 ms (ABORTED); the real one waited for a request that never came, cancelled 5 s after the
// subject's first line, and the reference had given up by then (TRANSPORT). Both end ABORTED
// now, and every check passes in both.
TEST(RealWorldTest, ACancelAtZeroAgainstARefusedListenerAbortsInBothWorlds) {
  auto scenario = scenario::ParseScenario(R"(
faultline: 1
name: cancel/at-zero-nothing-listening
description: Nothing listens for the whole run; the caller cancels at once.
dialect: openai-chat
listener_outages: [{from: 0s, for: 1h}]
cancel_at: 0s
responses:
  - content: {text: "never"}
expect: {outcome: failed, failure_class: aborted, failure_code: ABORTED}
)",
                                          "test");
  ASSERT_TRUE(scenario) << scenario.error().ToString();
  auto world = RealWorld::Start();
  ASSERT_TRUE(world) << world.error();
  auto real = (*world)->RunReference(*scenario, ref::RetryPolicy{}, RealRunOptions{});
  ASSERT_TRUE(real) << real.error();
  auto virtual_trace = RunVirtual(*scenario, {});
  ASSERT_TRUE(virtual_trace) << virtual_trace.error();
  for (const auto& [world_name, trace, tolerance] :
       {std::tuple{"real", &*real, RealTolerance()},
        std::tuple{"virtual", &*virtual_trace, VirtualTolerance()}}) {
    for (const report::CheckResult& check : Judge(*scenario, *trace, tolerance)) {
      EXPECT_NE(check.status, report::CheckStatus::kFail)
          << world_name << " " << check.id << ": " << check.evidence;
    }
  }
}

}  // namespace
}  // namespace faultline::harness

namespace faultline::harness {
namespace {

// Issue 30, item 6: the label (and so every report) shows the command with its keys redacted,
// a key inside a quoted word included (scenario::RedactSecrets has the rules).
TEST(SubjectLabelTest, KeysInAnAdapterCommandNeverReachTheReports) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"OPENAI_API_KEY=sk-live-abcdefghijkl node a.mjs --api-key s3cr3t -v",
       "OPENAI_API_KEY=[redacted] node a.mjs --api-key [redacted] -v"},
      {"python3 a.py --token=abc 'sk-ant-0123456789ab'",
       "python3 a.py --token=[redacted] '[redacted]'"},
      {"curl -H Authorization: Bearer xyz", "curl -H Authorization: Bearer [redacted]"},
      {"sed -u 's/x/sk-live-0123456789abcdef/' | node a.mjs",
       "sed -u 's/x/[redacted]/' | node a.mjs"},
      {"HF_TOKEN=hf_0123456789abcdef python3 a.py -k k3y https://u:p@h/",
       "HF_TOKEN=[redacted] python3 a.py -k [redacted] https://[redacted]@h/"},
      {"node harness/adapters/openai-node.mjs --helper",
       "node harness/adapters/openai-node.mjs --helper"},
  };
  for (const auto& [command, shown] : cases) {
    RunnerOptions adapter;
    adapter.adapter = std::string(command);
    EXPECT_EQ(SubjectLabel(adapter), shown);
    RunnerOptions app;
    app.exec = std::string(command);
    EXPECT_EQ(SubjectLabel(app), shown);
  }
}

}  // namespace
}  // namespace faultline::harness
