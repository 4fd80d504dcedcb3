// The runner end to end in the virtual world (fast, deterministic) and a small real-world slice.
#include "harness/runner.h"

#include <gtest/gtest.h>

#include "harness/virtual_world.h"
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

TEST(RunnerTest, FilterAndShard) {
  const auto catalog = Catalog();
  const auto rate = SelectScenarios(catalog, "rate-limit/*", std::nullopt);
  ASSERT_FALSE(rate.empty());
  for (const auto& s : rate) EXPECT_TRUE(s.name.starts_with("rate-limit/")) << s.name;
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

}  // namespace
}  // namespace faultline::harness
