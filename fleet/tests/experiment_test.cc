// Experiments: compare, sweep, shards merged back, result.json round trip, and the errors a user
// meets (an unknown policy in the fleet section names its file, line and column).
#include "fleet/experiment.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "fleet/report.h"
#include "fleet/tests/test_support.h"

namespace faultline::fleet {
namespace {

scenario::Scenario Load(std::string_view policies) {
  return fleet_test::LoadFleet("{rate: 30, overload: {status: 429, retry_after: honest}}",
                               policies);
}

TEST(ExperimentTest, UnknownPolicyInTheFileNamesItsPosition) {
  ExperimentInput input;
  input.scenario = Load("[openai-node, grpc-throtling]");
  auto experiment = RunExperiment(input);
  ASSERT_FALSE(experiment.has_value());
  EXPECT_NE(experiment.error().find("exp.yaml:10:27: at fleet.policies: unknown policy "
                                    "'grpc-throtling'; did you mean 'grpc-throttling'?"),
            std::string::npos)
      << experiment.error();
}

TEST(ExperimentTest, ShardsMergeIntoTheUnshardedResult) {
  ExperimentInput input;
  input.scenario = Load("[no-retry, openai-node, aws-standard]");
  input.sweep = *ParseSweep("provider.rate=20..40:10");
  auto whole = RunExperiment(input);
  ASSERT_TRUE(whole.has_value()) << whole.error();
  ASSERT_EQ(whole->results.size(), 9u);
  std::vector<Experiment> shards;
  for (int i = 1; i <= 2; ++i) {
    input.shard_index = i;
    input.shard_count = 2;
    auto shard = RunExperiment(input);
    ASSERT_TRUE(shard.has_value());
    // Through result.json, as a CI matrix would pass it on.
    auto reread = ExperimentFromJson(ToJson(*shard));
    ASSERT_TRUE(reread.has_value()) << reread.error();
    shards.push_back(std::move(*reread));
  }
  auto merged = MergeShards(shards);
  ASSERT_TRUE(merged.has_value()) << merged.error();
  EXPECT_EQ(ToJson(*merged), ToJson(*whole));
  shards.pop_back();
  EXPECT_FALSE(MergeShards(shards).has_value()) << "a missing shard is an error";
}

// Each job's shard: (policy, sweep value) -> shard index, over every shard of `count`.
std::map<std::pair<std::string, double>, int> ShardOfEachJob(ExperimentInput input, int count) {
  std::map<std::pair<std::string, double>, int> shard_of;
  for (int i = 1; i <= count; ++i) {
    input.shard_index = i;
    input.shard_count = count;
    auto shard = RunExperiment(input);
    EXPECT_TRUE(shard.has_value()) << shard.error();
    if (!shard) continue;
    for (const JobResult& job : shard->results) {
      shard_of[{job.measures.policy, job.sweep_value.value_or(0)}] = i;
    }
  }
  return shard_of;
}

// Shards are assigned by each job's policy and sweep value, not by its position: a policy added
// to the comparison and a sweep widened (which renumber every job) move no job between shards.
TEST(ExperimentTest, APolicyAddedOrASweepWidenedMovesNoOtherJob) {
  ExperimentInput before;
  before.scenario = Load("[no-retry, openai-node]");
  before.sweep = *ParseSweep("provider.rate=20..40:10");
  ExperimentInput after;
  after.scenario = Load("[aws-standard, no-retry, openai-node]");
  after.sweep = *ParseSweep("provider.rate=10..50:10");
  for (const int count : {2, 3}) {
    const auto earlier = ShardOfEachJob(before, count);
    const auto later = ShardOfEachJob(after, count);
    ASSERT_EQ(earlier.size(), 6u);
    ASSERT_EQ(later.size(), 15u);
    for (const auto& [job, shard] : earlier) {
      ASSERT_TRUE(later.contains(job)) << job.first << " at " << job.second;
      EXPECT_EQ(later.at(job), shard) << job.first << " at " << job.second << " moved";
    }
  }
}

TEST(ExperimentTest, SweepErrorsSayWhatIsExpected) {
  EXPECT_FALSE(ParseSweep("provider.rate=5").has_value());
  EXPECT_FALSE(ParseSweep("provider.rate=50..5:5").has_value());
  auto unknown = ParseSweep("provider.speed=1..2");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().find("unknown key 'provider.speed'"), std::string::npos);
  ExperimentInput input;
  input.scenario = Load("[openai-node]");
  input.sweep = *ParseSweep("policy.max_attempts=0..1");
  auto bad = RunExperiment(input);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().find("at max_attempts: must be from 1"), std::string::npos) << bad.error();
}

TEST(ExperimentTest, ReportsNameEveryPolicy) {
  ExperimentInput input;
  input.scenario = Load("[no-retry, brooker-full]");
  auto experiment = RunExperiment(input);
  ASSERT_TRUE(experiment.has_value());
  for (auto writer : {WriteTable, WriteCsv, WriteMarkdown, WriteHtml}) {
    std::ostringstream out;
    writer(*experiment, out);
    EXPECT_NE(out.str().find("no-retry"), std::string::npos);
    EXPECT_NE(out.str().find("brooker-full"), std::string::npos);
  }
  std::ostringstream html;
  WriteHtml(*experiment, html);
  EXPECT_NE(html.str().find("<svg"), std::string::npos);
  EXPECT_EQ(html.str().find("<script src"), std::string::npos) << "self-contained";
}

std::set<std::string> Keys(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

// fleet/schema/simulate-result.schema.json describes exactly what ToJson writes.
TEST(ExperimentTest, TheResultSchemaMatchesWhatIsWritten) {
  std::ifstream file(std::string(FAULTLINE_SOURCE_DIR) +
                     "/fleet/schema/simulate-result.schema.json");
  const nlohmann::json schema = nlohmann::json::parse(file, nullptr, false);
  ASSERT_TRUE(schema.is_object());
  ExperimentInput input;
  // With a gateway, so that the optional `layers` is written too.
  input.scenario = fleet_test::LoadFleet("{rate: 40}", "[no-retry]", "exp.yaml",
                                         "  gateway: {retry: {max_attempts: 2}}\n");
  input.sweep = *ParseSweep("provider.rate=10..20:10");
  const nlohmann::json written = ToJson(*RunExperiment(input));
  EXPECT_EQ(Keys(written), Keys(schema["properties"]));
  EXPECT_EQ(Keys(written["sweep"]), Keys(schema["properties"]["sweep"]["properties"]));
  const nlohmann::json& job = schema["$defs"]["job"]["properties"];
  const nlohmann::json& first = written["results"][0];
  EXPECT_EQ(Keys(first), Keys(job));
  for (const char* nested : {"latency_ms", "series", "counters"}) {
    EXPECT_EQ(Keys(first[nested]), Keys(job[nested]["properties"])) << nested;
  }
  ASSERT_EQ(first["layers"].size(), 1u);
  EXPECT_EQ(Keys(first["layers"][0]), Keys(job["layers"]["items"]["properties"]));
}

// The capacity line of the report: the tightest limit, reduced over a brownout, kept in
// result.json.
TEST(ExperimentTest, TheProviderCapacityIsKeptPerJob) {
  using Steps = std::vector<std::pair<double, double>>;
  ExperimentInput input;
  input.scenario = fleet_test::LoadFleet(
      "{rate: 30, concurrency: 2, service: {distribution: constant, mean: 100ms}, "
      "brownouts: [{from: 5s, for: 5s, capacity: 0.5}]}",
      "[no-retry]");
  auto experiment = RunExperiment(input);
  ASSERT_TRUE(experiment.has_value()) << experiment.error();
  // 2 slots / 100 ms = 20/s under the rate of 30/s; in the brownout 1 slot: 10/s.
  EXPECT_EQ(experiment->results[0].measures.capacity_steps, (Steps{{0, 20}, {5, 10}, {10, 20}}));
  auto reread = ExperimentFromJson(ToJson(*experiment));
  ASSERT_TRUE(reread.has_value()) << reread.error();
  EXPECT_EQ(reread->results[0].measures.capacity_steps,
            experiment->results[0].measures.capacity_steps);
  nlohmann::json older = ToJson(*experiment);  // written before the capacity was kept
  older["results"][0].erase("capacity_per_s");
  auto old_result = ExperimentFromJson(older);
  ASSERT_TRUE(old_result.has_value()) << old_result.error();
  EXPECT_TRUE(old_result->results[0].measures.capacity_steps.empty());
  input.scenario = fleet_test::LoadFleet("{concurrency: 0}", "[no-retry]");
  EXPECT_TRUE(RunExperiment(input)->results[0].measures.capacity_steps.empty()) << "unlimited";
}

}  // namespace
}  // namespace faultline::fleet
