// `faultline run`, `validate` and `report` as a user runs them: files, exit codes, reports.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "harness/tests/cli_in_process.h"
#include "harness/tests/faultline_process.h"

namespace faultline::harness {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using Ran = cli::test_support::ProcessRun;
using cli::test_support::RunFaultline;

class RunCliTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = cli::test_support::FreshTestFolder("run-cli"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(std::string_view name) const { return (dir_ / name).string(); }
  void WriteFile(std::string_view name, std::string_view text) const {
    std::ofstream(dir_ / name) << text;
  }
  static std::string Read(const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }
  fs::path dir_;
};

constexpr std::string_view kFourHundred = R"(faultline: 1
name: cli/bad-expectation
description: A 400; the scenario wrongly expects a commit, so the run must fail.
dialect: openai-chat
responses:
  - status: 400
expect:
  outcome: committed
)";

TEST_F(RunCliTest, BuiltinCatalogueVirtualWritesEveryReport) {
  const Ran ran = RunFaultline({"run", "--filter", "demo/*", "--out", Path("out"), "--seed", "3"});
  EXPECT_EQ(ran.code, 0) << ran.err;
  EXPECT_NE(ran.out.find("passed 6, failed 0, errors 0"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("fingerprint "), std::string::npos);
  for (const char* file : {"result.json", "junit.xml", "summary.md", "report.html"}) {
    EXPECT_TRUE(fs::exists(dir_ / "out" / file)) << file;
  }
  const auto result = nlohmann::json::parse(Read(Path("out/result.json")));
  EXPECT_EQ(result["scenarios"].size(), 6u);
  EXPECT_EQ(result["seed"], 3);
  // The same seed again: the same fingerprint.
  const Ran again = RunFaultline({"run", "--filter", "demo/*", "--no-reports", "--seed", "3"});
  EXPECT_NE(again.out.find(result["fingerprint"].get<std::string>()), std::string::npos);
}

// Every run goes whole to runs.jsonl as it finishes; result.json, written from the slim runs and
// that stream, lists each of them exactly as the stream has it, in the plan's order, whatever
// order the runs finished in (--jobs 3, both worlds).
TEST_F(RunCliTest, EveryRunIsStreamedToRunsJsonlAndResultJsonListsTheSameRuns) {
  const Ran ran = RunFaultline({"run", "--filter", "demo/*,rate-limit/anthropic-429-*", "--time",
                                "both", "--repeat", "2", "--jobs", "3", "--out", Path("out")});
  ASSERT_EQ(ran.code, 0) << ran.err;
  const auto result = nlohmann::json::parse(Read(Path("out/result.json")));
  const nlohmann::json& runs = result["scenarios"];
  ASSERT_GT(runs.size(), 12u);
  std::istringstream stream(Read(Path("out/runs.jsonl")));
  std::set<std::size_t> places;
  for (std::string line; std::getline(stream, line);) {
    nlohmann::json run = nlohmann::json::parse(line);
    const std::size_t place = run["run"].get<std::size_t>();
    run.erase("run");
    ASSERT_LT(place, runs.size());
    EXPECT_EQ(run, runs[place]) << "run " << place;
    EXPECT_TRUE(run["trace"].is_object()) << "run " << place;
    places.insert(place);
  }
  EXPECT_EQ(places.size(), runs.size());
}

TEST_F(RunCliTest, LastFailedReRunsOnlyWhatFailedInTheLastResult) {
  fs::create_directories(dir_ / "sc");
  WriteFile("sc/bad.yaml", kFourHundred);
  WriteFile("sc/good.yaml", R"(faultline: 1
name: cli/good
description: A plain answer, which passes.
dialect: openai-chat
responses:
  - content: {text: "Hello"}
)");
  const Ran first = RunFaultline({"run", Path("sc"), "--out", Path("out")});
  ASSERT_EQ(first.code, 1) << first.err;  // cli/bad-expectation fails, cli/good passes
  EXPECT_NE(first.out.find("2 run(s)"), std::string::npos) << first.out;
  const Ran again = RunFaultline({"run", Path("sc"), "--last-failed", "--out", Path("out")});
  EXPECT_EQ(again.code, 1) << again.err;
  EXPECT_NE(again.err.find("re-running the 1 scenario(s) that failed"), std::string::npos)
      << again.err;
  EXPECT_NE(again.out.find("1 run(s)"), std::string::npos) << again.out;
  // The files keep the whole picture: the passing scenario's earlier run beside the re-run, so a
  // CI job that publishes --out after --last-failed does not lose what passed before.
  EXPECT_NE(again.err.find("the reports keep 1 earlier run(s)"), std::string::npos) << again.err;
  const auto kept = nlohmann::json::parse(Read(Path("out/result.json")));
  ASSERT_EQ(kept["scenarios"].size(), 2u) << kept.dump().substr(0, 400);
  EXPECT_EQ(kept["scenarios"][0]["name"], "cli/bad-expectation");
  EXPECT_EQ(kept["scenarios"][1]["name"], "cli/good");
  EXPECT_EQ(kept["scenarios"][1]["verdict"], "pass");
  EXPECT_NE(Read(Path("out/junit.xml")).find("cli/good"), std::string::npos);
  // Again: still one re-run, still two in the files (the earlier result was the merged one).
  const Ran third = RunFaultline({"run", Path("sc"), "--last-failed", "--out", Path("out")});
  EXPECT_NE(third.out.find("1 run(s)"), std::string::npos) << third.out;
  EXPECT_EQ(nlohmann::json::parse(Read(Path("out/result.json")))["scenarios"].size(), 2u);
  const Ran none = RunFaultline({"run", Path("sc"), "--last-failed", "--out", Path("empty")});
  EXPECT_EQ(none.code, 1) << none.err;  // no earlier result there: everything runs
  EXPECT_NE(none.err.find("no earlier result"), std::string::npos) << none.err;
  EXPECT_NE(none.out.find("2 run(s)"), std::string::npos) << none.out;
}

TEST_F(RunCliTest, AFailingCheckExitsOneAndNamesTheEvidence) {
  WriteFile("bad.yaml", kFourHundred);
  const Ran ran = RunFaultline({"run", Path("bad.yaml"), "--out", Path("out")});
  EXPECT_EQ(ran.code, 1);
  EXPECT_NE(ran.out.find("fail cli/bad-expectation [virtual] EXPECT-OUTCOME"), std::string::npos)
      << ran.out;
  // The failure ends with the one command that reproduces it, and that command does.
  const std::string reproduce = "reproduce: faultline run " + Path("bad.yaml") +
                                " --filter cli/bad-expectation --seed 0 --time virtual";
  EXPECT_NE(ran.out.find(reproduce), std::string::npos) << ran.out;
  EXPECT_NE(ran.err.find(reproduce), std::string::npos) << ran.err;
  const Ran again = RunFaultline({"run", Path("bad.yaml"), "--filter", "cli/bad-expectation",
                                  "--seed", "0", "--time", "virtual", "--no-reports"});
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.out.find("EXPECT-OUTCOME"), std::string::npos) << again.out;
  const std::string junit = Read(Path("out/junit.xml"));
  EXPECT_NE(junit.find("<failure"), std::string::npos);
  EXPECT_NE(junit.find("EXPECT-OUTCOME"), std::string::npos);
}

TEST_F(RunCliTest, RepetitionsAreNumberedFromOneWherePeopleReadThemAndFromZeroInJson) {
  WriteFile("bad.yaml", kFourHundred);
  const Ran ran = RunFaultline({"run", Path("bad.yaml"), "--repeat", "2", "--out", Path("out")});
  EXPECT_EQ(ran.code, 1);
  EXPECT_NE(ran.out.find("fail cli/bad-expectation [virtual #2] EXPECT-OUTCOME"), std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("--seed 0 --repeat 2 --time virtual"), std::string::npos) << ran.out;
  const auto result = nlohmann::json::parse(Read(Path("out/result.json")));
  ASSERT_EQ(result["scenarios"].size(), 2u);
  EXPECT_EQ(result["scenarios"][1]["repetition"], 1);
  EXPECT_NE(Read(Path("out/summary.md")).find("| cli/bad-expectation | virtual | 2 |"),
            std::string::npos);
  EXPECT_NE(Read(Path("out/junit.xml")).find("cli/bad-expectation [rep 2]"), std::string::npos);
  EXPECT_NE(Read(Path("out/report.html")).find("run-cli-bad-expectation-virtual-2"),
            std::string::npos);
}

TEST_F(RunCliTest, UsageAndInputErrorsExitTwo) {
  WriteFile("broken.yaml", "faultline: 1\nname: x/y\ndialect: klingon\n");
  EXPECT_EQ(RunFaultline({"run", Path("broken.yaml")}).code, 2);
  EXPECT_EQ(RunFaultline({"run", Path("missing.yaml")}).code, 2);
  EXPECT_EQ(RunFaultline({"run", "--filter", "no-such-scenario/*"}).code, 2);
  EXPECT_EQ(RunFaultline({"run", "--shard", "3/2"}).code, 2);
  const Ran no_jobs = RunFaultline({"run", "--jobs", "0", "--no-reports"});
  EXPECT_EQ(no_jobs.code, 2) << no_jobs.out;
  EXPECT_NE(no_jobs.err.find("--jobs"), std::string::npos) << no_jobs.err;
  const Ran no_timeout = RunFaultline({"run", "--timeout", "0", "--no-reports"});
  EXPECT_EQ(no_timeout.code, 2);
  EXPECT_NE(no_timeout.err.find("--timeout"), std::string::npos) << no_timeout.err;
  EXPECT_LT(no_timeout.err.size(), 200u) << "no 300-digit bound";
  const Ran virtual_adapter = RunFaultline({"run", "--adapter", "cat", "--time", "virtual"});
  EXPECT_EQ(virtual_adapter.code, 2);
  EXPECT_NE(virtual_adapter.err.find("real"), std::string::npos) << virtual_adapter.err;
}

TEST_F(RunCliTest, ValidateReportsFileLineAndColumn) {
  WriteFile("good.yaml", kFourHundred);
  WriteFile("bad.yaml",
            "faultline: 1\nname: x/y\ndescription: d\ndialect: openai-chat\n"
            "responses:\n  - status: abc\n");
  const Ran good = RunFaultline({"validate", Path("good.yaml")});
  EXPECT_EQ(good.code, 0) << good.err;
  EXPECT_NE(good.out.find("1 scenario(s) valid"), std::string::npos);
  const Ran bad = RunFaultline({"validate", Path("good.yaml"), Path("bad.yaml")});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("bad.yaml:6:"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("responses[0].status"), std::string::npos) << bad.err;
  EXPECT_EQ(RunFaultline({"validate", Path("nothing-here")}).code, 2);
}

TEST_F(RunCliTest, ValidateReportsEveryErrorOfAFile) {
  WriteFile("several.yaml",
            "faultline: 1\nname: x/several\ndescription: d\ndialect: openai-chat\n"
            "responses:\n  - status: abc\n  - status: 200\n    retry_after: {secnds: 1}\n"
            "expect:\n  thresholds: [\"ttft.p99<2x\"]\n");
  const Ran ran = RunFaultline({"validate", Path("several.yaml")});
  EXPECT_EQ(ran.code, 1);
  for (const char* where : {"several.yaml:6:13: at responses[0].status",
                            "several.yaml:8:19: at responses[1].retry_after.secnds",
                            "several.yaml:10:16: at expect.thresholds[0]: bad threshold"}) {
    EXPECT_NE(ran.err.find(where), std::string::npos) << where << "\n" << ran.err;
  }
  EXPECT_NE(ran.err.find("faultline validate: 3 error(s)"), std::string::npos) << ran.err;
}

// The guide's threshold example (docs/scenario-guide.md), as written, over repeated runs.
std::string GuideExample(std::string_view name) {
  std::ifstream in(std::string(FAULTLINE_SOURCE_DIR) + "/docs/scenario-guide.md");
  std::string line, block;
  bool open = false;
  while (std::getline(in, line)) {
    if (line == "```yaml") {
      open = true;
      block.clear();
    } else if (open && line == "```") {
      if (block.find("name: " + std::string(name) + "\n") != std::string::npos) return block;
      open = false;
    } else if (open) {
      block += line + "\n";
    }
  }
  return "";
}

TEST_F(RunCliTest, TheGuidesThresholdsHoldAndEveryReportListsThem) {
  const std::string example = GuideExample("guide/thresholds");
  ASSERT_FALSE(example.empty()) << "docs/scenario-guide.md lost its guide/thresholds example";
  WriteFile("thresholds.yaml", example);
  const Ran ran = RunFaultline({"run", Path("thresholds.yaml"), "--repeat", "10", "--out",
                                Path("out"), "--threshold", "attempts.count==10"});
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  EXPECT_NE(ran.out.find("thresholds: 0 of 5 crossed"), std::string::npos) << ran.out;
  const auto result = nlohmann::json::parse(Read(Path("out/result.json")));
  ASSERT_EQ(result["thresholds"].size(), 5u) << result["thresholds"].dump();
  for (const auto& threshold : result["thresholds"]) {
    EXPECT_EQ(threshold["status"], "pass") << threshold.dump();
    EXPECT_EQ(threshold["world"], "virtual");
  }
  EXPECT_EQ(result["thresholds"][0]["expression"], "ttft.p95 < 2s");
  EXPECT_EQ(result["thresholds"][0]["origin"], "expect");
  EXPECT_EQ(result["thresholds"][0]["samples"], 10);
  EXPECT_EQ(result["thresholds"][4]["origin"], "cli");
  EXPECT_EQ(result["thresholds"][4]["value"], 10);
  EXPECT_NE(Read(Path("out/summary.md")).find("### Thresholds"), std::string::npos);
  EXPECT_NE(Read(Path("out/junit.xml")).find("name=\"threshold ttft.p95 &lt; 2s\""),
            std::string::npos);
  EXPECT_NE(Read(Path("out/report.html")).find("class=\"thresholds\""), std::string::npos);
}

TEST_F(RunCliTest, ACrossedThresholdExitsNinetyNineWithTheCommandThatReJudgesIt) {
  const Ran ran = RunFaultline({"run", "--filter", "demo/rate-limit-retry-after", "--repeat", "3",
                                "--threshold", "ttft.p99<10ms", "--out", Path("out")});
  EXPECT_EQ(ran.code, 99) << ran.out << ran.err;
  EXPECT_NE(ran.out.find("thresholds: 1 of 1 crossed"), std::string::npos) << ran.out;
  const std::string reproduce =
      "reproduce: faultline run --filter demo/rate-limit-retry-after --seed 0 --repeat 3 --time "
      "virtual --threshold 'ttft.p99<10ms'";
  EXPECT_NE(ran.out.find(reproduce), std::string::npos) << ran.out;
  const auto result = nlohmann::json::parse(Read(Path("out/result.json")));
  ASSERT_EQ(result["thresholds"].size(), 1u);
  EXPECT_EQ(result["thresholds"][0]["status"], "fail");
  EXPECT_GE(result["thresholds"][0]["value"].get<double>(), 1000);  // a 1 s Retry-After
  EXPECT_NE(Read(Path("out/junit.xml")).find("type=\"threshold\""), std::string::npos);
  // A failed check outranks a crossed threshold: exit 1.
  WriteFile("bad.yaml", kFourHundred);
  EXPECT_EQ(
      RunFaultline({"run", Path("bad.yaml"), "--no-reports", "--threshold", "ttft.count>5"}).code,
      1);
}

TEST_F(RunCliTest, ABadThresholdIsAUsageErrorBeforeAnyRun) {
  const Ran ran = RunFaultline({"run", "--threshold", "ttft.p99<2x", "--out", Path("out")});
  EXPECT_EQ(ran.code, 2);
  EXPECT_NE(ran.err.find("--threshold 'ttft.p99<2x': bad bound '2x'"), std::string::npos)
      << ran.err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  // Repeatable, one expression per flag: the path after it stays a path.
  WriteFile("ok.yaml", GuideExample("guide/thresholds"));
  const Ran two = RunFaultline({"run", "--threshold", "ttft.p99<1m", "--threshold", "total.max<1m",
                                Path("ok.yaml"), "--no-reports"});
  EXPECT_EQ(two.code, 0) << two.err;
  EXPECT_NE(two.out.find("thresholds: 0 of 6 crossed"), std::string::npos) << two.out;
}

TEST_F(RunCliTest, SchemasArePrintedFromTheBinaryForEditors) {
  for (const auto& [which, path] : {std::pair{"scenario", "scenarios/schema/scenario.schema.json"},
                                    std::pair{"policy", "reference_impl/schema/policy.schema.json"},
                                    std::pair{"result", "reports/schema/run-result.schema.json"}}) {
    const Ran ran = RunFaultline({"schema", which});
    EXPECT_EQ(ran.code, 0) << which << ran.err;
    EXPECT_EQ(nlohmann::json::parse(ran.out, nullptr, false),
              nlohmann::json::parse(Read(std::string(FAULTLINE_SOURCE_DIR) + "/" + path)))
        << which << ": the embedded copy is the file";
  }
  EXPECT_EQ(RunFaultline({"schema", "nonsense"}).code, 2);
}

// --shard auto takes GitLab's parallel: variables (or another engine's, harness/shard.h) and
// records the shard it resolved, not "auto"; a shard the hash leaves empty writes an empty
// result and passes; what auto cannot read is a usage error before any run.
TEST_F(RunCliTest, ShardAutoReadsTheEnginesVariables) {
  int runs = 0;
  for (const char* index : {"1", "2", "3"}) {
    const cli::test_support::ShardVariables env({{"CI_NODE_INDEX", index}, {"CI_NODE_TOTAL", "3"}});
    const std::string out = Path(std::string("auto") + index);
    const Ran ran = RunFaultline(
        {"run", "--filter", "demo/*", "--shard", "auto", "--format", "json", "--out", out});
    EXPECT_EQ(ran.code, 0) << ran.err;
    const auto result = nlohmann::json::parse(Read(out + "/result.json"));
    EXPECT_EQ(result["shard"], std::string(index) + "/3");
    runs += static_cast<int>(result["scenarios"].size());
  }
  EXPECT_EQ(runs, 6) << "every demo scenario in exactly one shard";
  {
    const cli::test_support::ShardVariables env({{"CI_NODE_INDEX", "1"}, {"CI_NODE_TOTAL", "40"}});
    const Ran sparse = RunFaultline({"run", "--filter", "demo/hello-openai-chat", "--shard", "auto",
                                     "--format", "json", "--out", Path("sparse")});
    EXPECT_EQ(sparse.code, 0) << sparse.err;  // (1 scenario over 40 shards: most are empty)
  }
  const cli::test_support::ShardVariables none({});
  const Ran nothing = RunFaultline({"run", "--shard", "auto", "--no-reports"});
  EXPECT_EQ(nothing.code, 2);
  EXPECT_NE(nothing.err.find("--shard auto: found no shard in the environment"), std::string::npos)
      << nothing.err;
  const Ran count_without_auto =
      RunFaultline({"run", "--shard", "1/2", "--shard-count", "2", "--no-reports"});
  EXPECT_EQ(count_without_auto.code, 2);
  EXPECT_NE(count_without_auto.err.find("--shard-count"), std::string::npos)
      << count_without_auto.err;
}

TEST_F(RunCliTest, ShardsMergeBackIntoTheWholeRun) {
  for (const char* shard : {"1/2", "2/2"}) {
    const Ran ran = RunFaultline({"run", "--filter", "demo/*", "--shard", shard, "--format", "json",
                                  "--out", Path(std::string("shard") + shard[0])});
    EXPECT_EQ(ran.code, 0) << ran.err;
  }
  const Ran merged = RunFaultline({"report", "merge", Path("shard1/result.json"),
                                   Path("shard2/result.json"), "-o", Path("merged.json")});
  EXPECT_EQ(merged.code, 0) << merged.err;
  const auto result = nlohmann::json::parse(Read(Path("merged.json")));
  EXPECT_EQ(result["scenarios"].size(), 6u);
  EXPECT_EQ(result["shard"], "1/2+2/2");
  // Merging a shard with itself is refused: the same runs twice.
  EXPECT_EQ(
      RunFaultline({"report", "merge", Path("shard1/result.json"), Path("shard1/result.json")})
          .code,
      2);
  const Ran html = RunFaultline({"report", "render", Path("merged.json"), "-o", Path("r.html")});
  EXPECT_EQ(html.code, 0) << html.err;
  EXPECT_NE(Read(Path("r.html")).find("<svg"), std::string::npos);
  const Ran md = RunFaultline({"report", "render", Path("merged.json"), "--format", "md"});
  EXPECT_NE(md.out.find("demo/hello-openai-chat"), std::string::npos) << md.out;
  EXPECT_EQ(RunFaultline({"report", "render", Path("nothing.json")}).code, 2);
}

// Issue 30, item 6: an adapter that leaks its key everywhere it can (in its own command, inside
// a quoted word; on stderr, as providers and debug logs print it; in a failure's message; and as
// it crashes, so that the stderr tail becomes the subject error) leaves no trace of it in any of
// the four reports.
constexpr std::string_view kLeakyAdapter = R"(import json, sys
sys.stdin.readline()
def line(event):
    print(json.dumps(event), flush=True)
line({"type": "adapter/hello", "name": "leaky", "version": "1"})
sys.stderr.write("Incorrect API key provided: sk-live-LEAK0123456789abcdef\n"
                 "> Authorization: Bearer LEAKbearer0123456789\n"
                 "> X-Functions-Key: LEAKfunctions\n"
                 "GET https://user:LEAKpass@example.com/ hf_LEAK0123456789abcdef\n")
sys.stderr.flush()
if sys.argv[1] == "crash":
    sys.exit(3)
line({"type": "response/start", "response_id": "a1", "attempt": 1})
line({"type": "response/failed", "response_id": "a1", "attempt": 1,
      "failure": {"code": "AUTH", "class": "auth", "phase": "response-headers",
                  "retryable": False, "partial_output": "none",
                  "message": "401: Incorrect API key provided: sk-live-LEAK0123456789abcdef"},
      "give_up": "key=LEAKgiveup"})
)";

TEST_F(RunCliTest, SecretsTheAdapterLeaksReachNoReport) {
  WriteFile("leaky.py", kLeakyAdapter);
  for (std::string_view mode : {"fail", "crash"}) {
    SCOPED_TRACE(mode);
    const std::string out = Path(std::string("out-") + std::string(mode));
    const Ran ran =
        RunFaultline({"run", "--filter", "demo/hello-openai-chat", "--timeout", "20", "--adapter",
                      "python3 " + Path("leaky.py") + " " + std::string(mode) +
                          " 's/x/sk-live-LEAK0123456789abcdef/' --api-key LEAKflag",
                      "--out", out});
    EXPECT_NE(ran.code, 0) << ran.out << ran.err;
    EXPECT_EQ(ran.out.find("LEAK"), std::string::npos) << ran.out;
    EXPECT_EQ(ran.err.find("LEAK"), std::string::npos) << ran.err;
    for (const char* file : {"result.json", "junit.xml", "summary.md", "report.html"}) {
      const std::string text = Read(out + "/" + file);
      EXPECT_FALSE(text.empty()) << file;
      EXPECT_EQ(text.find("LEAK"), std::string::npos)
          << file << ": "
          << text.substr(text.find("LEAK") == std::string::npos
                             ? 0
                             : text.find("LEAK") - std::min<std::size_t>(text.find("LEAK"), 80),
                         160);
      EXPECT_NE(text.find("[redacted]"), std::string::npos) << file;
    }
    const std::string result = Read(out + "/result.json");
    EXPECT_NE(result.find("Incorrect API key provided: [redacted]"), std::string::npos) << result;
  }
}

// The outage scenario also guards the adapter's fork: an adapter that inherited the provider's
// listening socket kept it accepting through the outage (and hung the retry after it).
TEST_F(RunCliTest, TheReferenceAdapterRunsInTheRealWorld) {
  const Ran ran = RunFaultline(
      {"run", "--filter", "demo/hello-*,connection/openai-responses-outage-during-backoff",
       "--timeout", "30", "--adapter", std::string(FAULTLINE_BINARY) + " call --adapter",
       "--no-reports", "--verbose"});
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  EXPECT_NE(ran.out.find("world real"), std::string::npos) << ran.out;
  EXPECT_NE(ran.err.find("pass demo/hello-anthropic [real]"), std::string::npos) << ran.err;
}

// request.call_interval over real sockets: the adapter of call i starts i x 1.5 s after the
// first call's first line, each call is judged on its own (an adapter's calls share nothing),
// and a call's latency counts from its own first request.
TEST_F(RunCliTest, AnAdaptersCallsStartAtTheirInterval) {
  WriteFile("spaced.yaml", R"(faultline: 1
name: cli/spaced-calls
description: Three calls 1.5 s apart, each answered at once.
dialect: openai-chat
request: {calls: 3, call_interval: 1500ms}
responses:
  - content: {text: "Hello"}
expect:
  outcome: committed
)");
  const Ran ran =
      RunFaultline({"run", Path("spaced.yaml"), "--timeout", "30", "--adapter",
                    std::string(FAULTLINE_BINARY) + " call --adapter", "--out", Path("out")});
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  const auto result = nlohmann::json::parse(Read(Path("out/result.json")));
  const nlohmann::json& run = result["scenarios"][0];
  std::map<int, double> first_line;
  for (const auto& record : run["trace"]["client"]) {
    first_line.try_emplace(record["call"].get<int>(), record["t_ms"].get<double>());
  }
  ASSERT_EQ(first_line.size(), 3u);
  EXPECT_FALSE(run["trace"].contains("one_client"));
  for (int call = 1; call < 3; ++call) {
    const double apart = first_line[call] - first_line[0];
    EXPECT_GE(apart, 1500.0 * call - 50) << "call " << call;
    EXPECT_LE(apart, 1500.0 * call + 3000) << "call " << call;
  }
  for (const auto& call : run["metrics"]["calls"]) {
    EXPECT_LT(call["terminal_ms"].get<double>(), 1500) << call;  // from its own first request
  }
}

}  // namespace
}  // namespace faultline::harness

namespace faultline::harness {
namespace {

TEST(AdapterCheckCliTest, ExplainsEachMistakeAndPassesACorrectAdapter) {
  const Ran good = RunFaultline({"adapter", "check", "reference"});
  EXPECT_EQ(good.code, 0) << good.out << good.err;
  EXPECT_NE(good.out.find("ok   check/retry"), std::string::npos) << good.out;
  EXPECT_NE(good.out.find("no protocol mistake"), std::string::npos);
  const Ran bad = RunFaultline({"adapter", "check",
                                "echo '{\"type\":\"response/committed\","
                                "\"text\":\"Hello, world\"}'"});
  EXPECT_EQ(bad.code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("subject error no-hello"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("fix: write adapter/hello first"), std::string::npos) << bad.out;
}

// `adapter check` refuses each protocol mistake with the event and the field, and how to fix it.
TEST(AdapterCheckCliTest, NamesTheFieldOfEachProtocolMistake) {
  const std::string adapter =
      "python3 " FAULTLINE_SOURCE_DIR "/harness/tests/adapters/protocol_mistakes.py --mistake ";
  const std::pair<std::string, std::string> mistakes[] = {
      {"unknown-field", "response/start: unknown field \"zz\""},
      {"missing-commitment", "assistant/chunk: missing required field \"commitment\""},
      {"missing-response-id", "response/start: missing required field \"response_id\""},
      {"string-attempt",
       "response/committed: at attempt: expected an integer, got the string \"1\""},
      {"null-usage", "response/committed: at usage: expected an object, got null"},
      {"deep-field", "arrays and objects nest deeper than 64 levels"},
  };
  for (const auto& [mistake, message] : mistakes) {
    const Ran ran = RunFaultline({"adapter", "check", adapter + mistake});
    EXPECT_EQ(ran.code, 1) << mistake << "\n" << ran.out << ran.err;
    EXPECT_NE(ran.out.find("subject error not-protocol: call 0: " + message), std::string::npos)
        << mistake << "\n"
        << ran.out;
    EXPECT_NE(ran.out.find("fix: every line is an event of the protocol's schema"),
              std::string::npos)
        << ran.out;
    EXPECT_EQ(ran.out.find("no protocol mistake"), std::string::npos) << ran.out;
  }
  const Ran none = RunFaultline({"adapter", "check", adapter + "none"});
  EXPECT_EQ(none.out.find("subject error"), std::string::npos) << none.out;
}

TEST(RunCliSubjectErrorTest, ExitCodeThreeAndTheStderrOnTheConsole) {
  const Ran ran = RunFaultline({"run", "--adapter", "echo 'it broke' >&2; exit 3", "--filter",
                                "demo/hello-openai-chat", "--no-reports"});
  EXPECT_EQ(ran.code, 3) << ran.out << ran.err;
  EXPECT_NE(ran.out.find("subject error exited"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("exited with status 3"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("it broke"), std::string::npos) << ran.out;
  const Ran policy = RunFaultline({"run", "--adapter", "reference", "--policy", "x.json",
                                   "--filter", "demo/*", "--no-reports"});
  EXPECT_EQ(policy.code, 2) << "--policy configures only the in-process client";
}

}  // namespace
}  // namespace faultline::harness
