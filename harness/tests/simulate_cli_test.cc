// `faultline simulate` as a user runs it (in process, through cli::Run): exit codes, the table,
// the reports, and the errors for a bad fleet section or policy name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fmt/format.h"
#include "harness/cli/cli.h"
#include "harness/tests/cli_in_process.h"

namespace faultline::cli {
namespace {

namespace fs = std::filesystem;

using test_support::Faultline;
using test_support::Ran;

Ran Simulate(std::vector<std::string> args) {
  args.insert(args.begin(), "simulate");
  return Faultline(std::move(args));
}

// `faultline simulate ARGS --out DIR EXTRA...`: one shard (or the whole) of an experiment.
Ran SimulateInto(const fs::path& dir, std::vector<std::string> args,
                 const std::vector<std::string>& extra) {
  args.insert(args.end(), {"--out", dir.string()});
  args.insert(args.end(), extra.begin(), extra.end());
  return Simulate(std::move(args));
}

nlohmann::json ReadJson(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

std::string Example(std::string_view name) {
  return std::string(FAULTLINE_SOURCE_DIR) + "/scenarios/fleet/" + std::string(name);
}

TEST(SimulateCliTest, ListPoliciesShowsParametersAndSources) {
  const Ran ran = Simulate({"--list-policies"});
  EXPECT_EQ(ran.code, ExitCode::kSuccess);
  EXPECT_NE(ran.out.find("grpc-throttling"), std::string::npos);
  EXPECT_NE(ran.out.find("budget 10 tokens"), std::string::npos);
  EXPECT_NE(ran.out.find("source: openai src/client.ts:423"), std::string::npos) << "its preset's";
  EXPECT_NE(ran.out.find("one-endpoint"), std::string::npos) << "every preset is a profile";
}

TEST(SimulateCliTest, TheMetastableExampleWritesEveryReport) {
  const fs::path out = fs::temp_directory_path() / "faultline-simulate-cli-test";
  fs::remove_all(out);
  const Ran ran = Simulate({Example("metastable-spike.yaml"), "--compare", "no-retry,naive",
                            "--out", out.string(), "--quiet"});
  ASSERT_EQ(ran.code, ExitCode::kSuccess) << ran.err;
  EXPECT_NE(ran.out.find("did not recover"), std::string::npos) << ran.out;
  for (const char* file : {"result.json", "result.csv", "summary.md", "report.html"}) {
    EXPECT_TRUE(fs::exists(out / file)) << file;
  }
  fs::remove_all(out);
}

// A CI matrix runs shards; `faultline report merge` (like `simulate --merge`) joins them into
// the result one unsharded run gives.
TEST(SimulateCliTest, ReportMergeJoinsFleetShards) {
  const fs::path out = fs::temp_directory_path() / "faultline-simulate-merge-test";
  fs::remove_all(out);
  const std::vector<std::string> run = {Example("metastable-spike.yaml"),
                                        "--compare",
                                        "no-retry,naive,token-bucket",
                                        "--format",
                                        "json",
                                        "--quiet"};
  const auto sharded = [&](const std::string& dir, const std::vector<std::string>& extra) {
    return SimulateInto(out / dir, run, extra).code;
  };
  ASSERT_EQ(sharded("whole", {}), ExitCode::kSuccess);
  ASSERT_EQ(sharded("a", {"--shard", "1/2"}), ExitCode::kSuccess);
  ASSERT_EQ(sharded("b", {"--shard", "2/2"}), ExitCode::kSuccess);
  const std::string a = (out / "a" / "result.json").string();
  const std::string b = (out / "b" / "result.json").string();
  const nlohmann::json whole = ReadJson(out / "whole" / "result.json");
  ASSERT_FALSE(whole.is_discarded());

  const Ran merged = Faultline({"report", "merge", a, b, "-o", (out / "merged.json").string()});
  ASSERT_EQ(merged.code, ExitCode::kSuccess) << merged.err;
  EXPECT_EQ(ReadJson(out / "merged.json"), whole);
  const Ran markdown = Faultline({"report", "merge", a, b, "--format", "md"});
  ASSERT_EQ(markdown.code, ExitCode::kSuccess) << markdown.err;
  EXPECT_NE(markdown.out.find("token-bucket"), std::string::npos) << markdown.out;
  ASSERT_EQ(sharded("joined", {"--merge", a + "," + b}), ExitCode::kSuccess);
  EXPECT_EQ(ReadJson(out / "joined" / "result.json"), whole);

  // A shard alone lacks the other's jobs. With three jobs over two shards the hash may leave one
  // shard empty, so the one with fewer jobs stands for the shard missing.
  const std::string fewer = ReadJson(a)["results"].size() < ReadJson(b)["results"].size() ? a : b;
  const Ran missing = Faultline({"report", "merge", fewer});
  EXPECT_EQ(missing.code, ExitCode::kUsageError);
  EXPECT_NE(missing.err.find("faultline report merge: "), std::string::npos) << missing.err;
  EXPECT_EQ(Faultline({"report", "merge", a, b, "--format", "junit"}).code, ExitCode::kUsageError);
  fs::remove_all(out);
}

// --shard auto reads the shard from the environment (the CI engine's), as `run` does; the
// shards merged are the unsharded result, and auto with nothing to read is a usage error that
// names the variables.
TEST(SimulateCliTest, ShardAutoReadsTheEnvironment) {
  const fs::path out = fs::temp_directory_path() / "faultline-simulate-auto-test";
  fs::remove_all(out);
  const std::vector<std::string> run = {Example("metastable-spike.yaml"),
                                        "--compare",
                                        "no-retry,naive,token-bucket,aws-standard",
                                        "--format",
                                        "json",
                                        "--quiet"};
  const auto simulate = [&](const std::string& dir, const std::vector<std::string>& extra) {
    return SimulateInto(out / dir, run, extra);
  };
  ASSERT_EQ(simulate("whole", {}).code, ExitCode::kSuccess);
  std::vector<std::string> parts;
  for (int index = 0; index < 3; ++index) {  // a Kubernetes Indexed Job of 3 completions
    const test_support::ShardVariables env({{"JOB_COMPLETION_INDEX", std::to_string(index)}});
    const std::string dir = "k8s-" + std::to_string(index);
    const Ran ran = simulate(dir, {"--shard", "auto", "--shard-count", "3"});
    ASSERT_EQ(ran.code, ExitCode::kSuccess) << ran.err;
    parts.push_back((out / dir / "result.json").string());
  }
  std::vector<std::string> merge = {"report", "merge"};
  merge.insert(merge.end(), parts.begin(), parts.end());
  merge.insert(merge.end(), {"-o", (out / "merged.json").string()});
  const Ran merged = Faultline(merge);
  ASSERT_EQ(merged.code, ExitCode::kSuccess) << merged.err;
  EXPECT_EQ(ReadJson(out / "merged.json"), ReadJson(out / "whole" / "result.json"));

  const test_support::ShardVariables none({});
  const Ran nothing = simulate("none", {"--shard", "auto"});
  EXPECT_EQ(nothing.code, ExitCode::kUsageError);
  EXPECT_NE(nothing.err.find("--shard auto: found no shard in the environment"), std::string::npos)
      << nothing.err;
  EXPECT_NE(nothing.err.find("JOB_COMPLETION_INDEX"), std::string::npos) << nothing.err;
  fs::remove_all(out);
}

TEST(SimulateCliTest, BadInputExitsTwoWithAPreciseMessage) {
  const Ran unknown =
      Simulate({Example("metastable-spike.yaml"), "--compare", "opneai-node", "--no-reports"});
  EXPECT_EQ(unknown.code, ExitCode::kUsageError);
  EXPECT_NE(unknown.err.find("did you mean 'openai-node'?"), std::string::npos) << unknown.err;

  const fs::path bad = fs::temp_directory_path() / "faultline-simulate-bad.yaml";
  std::ofstream(bad) << "faultline: 1\nname: fleet/bad\ndescription: d\ndialect: openai-chat\n"
                        "fleet:\n  clients: 10\n  provider: {queu: 5}\n  policies: [naive]\n";
  const Ran section = Simulate({bad.string(), "--no-reports"});
  EXPECT_EQ(section.code, ExitCode::kUsageError);
  EXPECT_NE(section.err.find(bad.string() + ":7:14: at fleet.provider.queu"), std::string::npos)
      << section.err;
  EXPECT_NE(section.err.find("did you mean 'queue'?"), std::string::npos) << section.err;
  fs::remove(bad);

  EXPECT_EQ(Simulate({}).code, ExitCode::kUsageError);
  EXPECT_EQ(Simulate({"--sweep", "nope", "--compare", "naive"}).code, ExitCode::kUsageError);
}

// Issue 30: hostile fleet files and sweep values end with a message and an exit code, never an
// uncaught exception (which aborted with 134 before).
fs::path WriteFleet(std::string_view name, std::string_view fleet_body) {
  const fs::path path = fs::temp_directory_path() / name;
  std::ofstream(path) << "faultline: 1\nname: fleet/hostile\ndescription: d\n"
                         "dialect: openai-chat\nfleet:\n"
                      << fleet_body;
  return path;
}

TEST(SimulateCliTest, HostileFleetsAreRefusedWithTheKeyAndItsRange) {
  const fs::path huge = WriteFleet("faultline-simulate-huge.yaml",
                                   "  horizon: 9000000000000s\n  policies: [naive]\n");
  const Ran ran = Simulate({huge.string(), "--no-reports"});
  EXPECT_EQ(ran.code, ExitCode::kUsageError);
  EXPECT_NE(ran.err.find(":6:12: at fleet.horizon: expected a duration from 1us to 720h"),
            std::string::npos)
      << ran.err;
  fs::remove(huge);

  const fs::path small = WriteFleet("faultline-simulate-small.yaml",
                                    "  horizon: 2s\n  arrivals: {rate: 5}\n  policies: [naive]\n");
  for (const char* sweep :
       {"horizon_s=-10..-10", "horizon_s=1e9..1e9", "arrivals.rate=1e12..1e12", "clients=-5..-5",
        "provider.service_ms=-5..-5", "timeout_s=-5..-5", "clients=1..1000000:1"}) {
    SCOPED_TRACE(sweep);
    const Ran swept = Simulate({small.string(), "--sweep", sweep, "--no-reports", "-q"});
    EXPECT_EQ(swept.code, ExitCode::kUsageError);
    const std::string_view key =
        std::string_view(sweep).substr(0, std::string_view(sweep).find('='));
    EXPECT_NE(swept.err.find(fmt::format("faultline simulate: --sweep {}=", key)),
              std::string::npos)
        << swept.err;
    EXPECT_EQ(swept.out, "") << "nothing ran";
  }
  fs::remove(small);
}

TEST(SimulateCliTest, AFleetFromFlagsMeetsTheSameRanges) {
  const Ran ran = Simulate({"--compare", "naive", "--concurrency", "-5", "--no-reports"});
  EXPECT_EQ(ran.code, ExitCode::kUsageError);
  EXPECT_NE(ran.err.find("--concurrency: expected a whole number from 0 to 2147483647, got -5"),
            std::string::npos)
      << ran.err;
  EXPECT_NE(Simulate({"--compare", "naive", "--rate", "1e12", "--no-reports"})
                .err.find("--rate: expected a number from 0 to 10000000"),
            std::string::npos);
}

TEST(SimulateCliTest, ARunOverTheBoundsIsRefusedAndLargeRunLiftsThem) {
  const fs::path big = WriteFleet("faultline-simulate-big.yaml",
                                  "  horizon: 1000000s\n  bucket: 1ms\n  arrivals: {rate: 1}\n"
                                  "  policies: [naive]\n");
  const Ran refused = Simulate({big.string(), "--no-reports"});
  EXPECT_EQ(refused.code, ExitCode::kUsageError);
  EXPECT_NE(refused.err.find("the time series would take about 224 GiB"), std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("--large-run"), std::string::npos) << refused.err;
  fs::remove(big);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // Lifted, a series of about 600 TB (beyond any address space, so no overcommit setting lets it
  // be touched) cannot be allocated: a message and exit 6, not an abort. The sanitizers' own
  // allocators stop the process on such a request instead: this part runs without them.
  const fs::path huge = WriteFleet("faultline-simulate-huge.yaml",
                                   "  horizon: 720h\n  bucket: 1us\n  arrivals: {rate: 1}\n"
                                   "  policies: [naive]\n");
  const Ran lifted = Simulate({huge.string(), "--no-reports", "--large-run", "-q"});
  EXPECT_EQ(lifted.code, ExitCode::kOutOfResources);
  EXPECT_NE(lifted.err.find("faultline simulate: out of memory"), std::string::npos) << lifted.err;
  fs::remove(huge);
#endif
  EXPECT_NE(Simulate({"--help"}).out.find("--large-run"), std::string::npos);
}

TEST(SimulateCliTest, ARunStatesItsEstimateBeforeItStarts) {
  const Ran ran =
      Simulate({Example("metastable-spike.yaml"), "--compare", "naive", "--no-reports"});
  EXPECT_EQ(ran.code, ExitCode::kSuccess) << ran.err;
  EXPECT_NE(ran.err.find("simulate: 1 job(s), about 950 calls and up to about"), std::string::npos)
      << ran.err;
}

}  // namespace
}  // namespace faultline::cli
