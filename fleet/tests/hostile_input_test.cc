// Issue 30: fleet sections and --sweep values meant to break the simulator. Each is refused before
// anything runs, with the key and its range or the run's estimated cost; none crashes, none runs
// without end, and a sweep is never cut short.
#include <gtest/gtest.h>

#include <sstream>

#include "fleet/experiment.h"
#include "fleet/report.h"
#include "scenarios/loader.h"

namespace faultline::fleet {
namespace {

scenario::Scenario Load(std::string_view fleet_body) {
  const std::string text =
      "faultline: 1\nname: fleet/hostile\ndescription: d\ndialect: openai-chat\nfleet:\n" +
      std::string(fleet_body);
  auto scenario = scenario::ParseScenario(text, "hostile.yaml");
  EXPECT_TRUE(scenario.has_value()) << scenario.error().ToString();
  return scenario.value_or(scenario::Scenario{});
}

// A small experiment (a few hundred calls) to sweep over.
scenario::Scenario Small() {
  return Load(R"(  clients: 100
  horizon: 5s
  arrivals: {rate: 20}
  provider: {concurrency: 2, brownouts: [{from: 1s, for: 1s, capacity: 0.5}]}
  policies: [naive]
)");
}

// The error RunExperiment (or ParseSweep before it) answers for `sweep` on the small experiment.
std::string SweepError(std::string_view sweep) {
  auto parsed = ParseSweep(sweep);
  if (!parsed) return parsed.error();
  ExperimentInput input;
  input.scenario = Small();
  input.sweep = *parsed;
  auto experiment = RunExperiment(input);
  return experiment ? "ran " + std::to_string(experiment->results.size()) + " job(s)"
                    : experiment.error();
}

TEST(HostileInputTest, SweepValuesMeetTheFileRanges) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"horizon_s=-10..-10",
       "--sweep horizon_s=-10: out of range for fleet.horizon: expected a "
       "duration from 1us to 720h, got -10s"},
      {"horizon_s=1e9..1e9",
       "out of range for fleet.horizon: expected a duration from 1us to 720h"},
      {"arrivals.rate=1e12..1e12",
       "out of range for fleet.arrivals.rate: expected a number from 0 to 10000000"},
      {"clients=-5..-5",
       "out of range for fleet.clients: expected a whole number from 1 to 1000000, got -5"},
      {"clients=1.5..1.5", "expected a whole number from 1 to 1000000, got 1.5"},
      {"clients=1..2:0.5", "--sweep clients=1.5: out of range for fleet.clients"},
      {"provider.service_ms=-5..-5",
       "out of range for fleet.provider.service.mean: expected a duration from 1us to 720h, got "
       "-5ms"},
      {"provider.service_ms=0.0001..0.0001", "fleet.provider.service.mean"},
      {"timeout_s=-5..-5", "out of range for fleet.timeout"},
      {"brownout.capacity=-1..-1",
       "out of range for fleet.provider.brownouts[].capacity: expected a number from 0 to 1"},
      {"provider.concurrency=1e12..1e12", "out of range for fleet.provider.concurrency"},
      {"policy.a~2=1..1", "--sweep policy.a~2=1: not a policy key"},
  };
  for (const auto& [sweep, message] : cases) {
    SCOPED_TRACE(sweep);
    const std::string error = SweepError(sweep);
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }
}

TEST(HostileInputTest, ASweepOverTheCapIsRefusedNotCut) {
  const std::string error = SweepError("clients=1..1000000:1");
  EXPECT_NE(error.find("--sweep clients=1..1000000:1 has 1 million points, over the bound of "
                       "1000; use a larger STEP"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("--large-run"), std::string::npos) << error;
  // At the cap, every point runs and the result claims no more than it holds.
  auto parsed = ParseSweep("clients=1..1000:1");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(SweepPoints(*parsed), 1000);
  parsed = ParseSweep("provider.rate=1..3:0.1");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(SweepPoints(*parsed), 21) << "a step that is not exact in binary still reaches TO";
}

TEST(HostileInputTest, AnExperimentHoldsEveryJobItClaims) {
  ExperimentInput input;
  input.scenario = Small();
  input.sweep = *ParseSweep("provider.concurrency=1..5:2");
  auto experiment = RunExperiment(input);
  ASSERT_TRUE(experiment.has_value()) << experiment.error();
  EXPECT_EQ(experiment->total_jobs, 3u);
  ASSERT_EQ(experiment->results.size(), 3u);
  EXPECT_EQ(experiment->results.back().sweep_value, 5);
}

TEST(HostileInputTest, ATimeSeriesTooLargeForMemoryIsRefusedWithItsSize) {
  ExperimentInput input;
  input.scenario = Load(
      "  horizon: 1000000s\n  bucket: 1ms\n  arrivals: {rate: 1}\n"
      "  policies: [naive]\n");
  auto experiment = RunExperiment(input);
  ASSERT_FALSE(experiment.has_value());
  EXPECT_NE(experiment.error().find("the time series would take about 224 GiB of memory (1 "
                                    "billion steps"),
            std::string::npos)
      << experiment.error();
  EXPECT_NE(experiment.error().find("over the bound of 1 GiB"), std::string::npos);
  EXPECT_NE(experiment.error().find("--large-run"), std::string::npos);
}

TEST(HostileInputTest, ARunOfTooManyEventsIsRefusedWithAnEstimate) {
  ExperimentInput input;
  input.scenario = Load(
      "  clients: 1000000\n  horizon: 100000s\n  arrivals: {rate: 10000000}\n"
      "  policies: [naive]\n");
  bool estimated = false;
  input.estimate = [&](const RunCost&, std::size_t) { estimated = true; };
  auto experiment = RunExperiment(input);
  ASSERT_FALSE(experiment.has_value());
  EXPECT_NE(experiment.error().find("this run would simulate about 16 trillion events (1 trillion "
                                    "calls, 1 job(s); about"),
            std::string::npos)
      << experiment.error();
  EXPECT_NE(experiment.error().find("over the bound of 1 billion events"), std::string::npos);
  EXPECT_FALSE(estimated) << "a refused run reports no estimate to run by";
}

TEST(HostileInputTest, TheEstimateIsGivenBeforeARunWithinTheBounds) {
  ExperimentInput input;
  input.scenario = Small();
  std::optional<RunCost> cost;
  input.estimate = [&](const RunCost& c, std::size_t jobs) {
    cost = c;
    EXPECT_EQ(jobs, 1u);
  };
  auto experiment = RunExperiment(input);
  ASSERT_TRUE(experiment.has_value()) << experiment.error();
  ASSERT_TRUE(cost.has_value());
  EXPECT_DOUBLE_EQ(cost->calls, 100);  // 20/s over 5 s
  EXPECT_GE(cost->events, static_cast<double>(experiment->results[0].measures.events));
}

TEST(HostileInputTest, AFleetBuiltInCodeIsCheckedToo) {
  ExperimentInput input;
  input.scenario = Small();
  input.scenario.fleet->provider.queue = -5;
  auto experiment = RunExperiment(input);
  ASSERT_FALSE(experiment.has_value());
  EXPECT_NE(experiment.error().find("fleet.provider.queue: expected a whole number from 0"),
            std::string::npos)
      << experiment.error();
}

TEST(HostileInputTest, TheMarkdownSummaryEscapesNamesFromFiles) {
  Experiment experiment;
  experiment.scenario = "fleet/*x*";
  experiment.source = "a`b.yaml";
  JobResult result;
  result.measures.policy = "evil|name*`code`\n# heading";
  result.measures.description = "3 attempts | <b>";
  experiment.results.push_back(result);
  std::ostringstream out;
  WriteMarkdown(experiment, out);
  const std::string md = out.str();
  EXPECT_NE(md.find("# faultline simulate: fleet/\\*x\\*\n"), std::string::npos) << md;
  EXPECT_NE(md.find("Scenario a\\`b.yaml,"), std::string::npos) << md;
  EXPECT_NE(md.find("| evil\\|name\\*\\`code\\`<br># heading |"), std::string::npos) << md;
  EXPECT_NE(md.find("- **evil\\|name\\*\\`code\\`<br># heading**: 3 attempts \\| &lt;b&gt;"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("\n# heading"), std::string::npos) << md;
}

}  // namespace
}  // namespace faultline::fleet
