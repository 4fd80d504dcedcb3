#include "harness/cli/run_command.h"

#include <fmt/format.h>
#include <glob.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "fleet/policy_file.h"
#include "harness/cli/adapter_shortcuts.h"
#include "harness/cli/interrupt.h"
#include "harness/cli/progress.h"
#include "harness/cli/report_files.h"
#include "harness/cli/run_reports.h"
#include "harness/cli/shard_option.h"
#include "harness/gateways/gateway.h"
#include "harness/judge/scenario_policy.h"
#include "harness/runner.h"
#include "reference_impl/policy_json.h"
#include "reports/report.h"
#include "reports/run_spool.h"
#include "scenarios/loader.h"
#include "scenarios/redact.h"
#include "scenarios/threshold.h"

namespace faultline::cli {
namespace {

// The shipped gateways' names, for --help.
std::string GatewayNames() {
  std::string names;
  for (const std::string& name : harness::BuiltinGatewayNames()) {
    names += (names.empty() ? "" : ", ") + name;
  }
  return names;
}

namespace fs = std::filesystem;
using harness::WorldChoice;

// Paths as given, with quoted globs ("scenarios/catalog/rate-limit/*.yaml") expanded here.
std::vector<fs::path> ExpandPaths(const std::vector<std::string>& paths) {
  std::vector<fs::path> out;
  for (const std::string& path : paths) {
    const bool wildcard = path.find_first_of("*?[") != std::string::npos;
    glob_t matches{};
    if (wildcard && !fs::exists(path) && ::glob(path.c_str(), 0, nullptr, &matches) == 0) {
      for (std::size_t i = 0; i < matches.gl_pathc; ++i) out.emplace_back(matches.gl_pathv[i]);
    } else {
      out.emplace_back(path);
    }
    ::globfree(&matches);
  }
  return out;
}

std::expected<std::vector<scenario::Scenario>, std::string> LoadAll(
    const std::vector<std::string>& paths, bool gateway) {
  const std::vector<fs::path> files = ExpandPaths(paths);
  auto loaded = !files.empty() ? scenario::LoadScenarios(files)
                : gateway      ? scenario::LoadBuiltinGatewayCatalog()
                               : scenario::LoadBuiltinCatalog();
  std::string message;
  if (!loaded) {
    for (const auto& error : loaded.error()) message += error.ToString() + "\n";
    return std::unexpected(message);
  }
  for (const std::string& error : harness::ScenarioPolicyErrors(*loaded)) message += error + "\n";
  if (!message.empty()) return std::unexpected(message);
  return std::move(*loaded);
}

// --last-failed: the result the last run wrote to --out and the names of its scenarios that did
// not pass; nullopt when there is none or nothing failed there (then everything runs, as
// pytest's --last-failed does). `note` says which.
struct LastFailedRuns {
  report::RunResult earlier;  // kept whole: the new reports hold it beside the re-runs
  std::set<std::string> names;
};

std::expected<std::optional<LastFailedRuns>, std::string> LastFailed(const std::string& out_dir,
                                                                     std::string& note) {
  const fs::path file = fs::path(out_dir) / "result.json";
  if (!fs::exists(file)) {
    note = fmt::format("no earlier result in {}; running everything", file.string());
    return std::nullopt;
  }
  const auto json = ReadJsonFile(file);
  if (!json) return std::unexpected(json.error());
  auto result = report::RunResultFromJson(*json);
  if (!result) return std::unexpected(fmt::format("{}: {}", file.string(), result.error()));
  std::set<std::string> failed;
  for (const report::ScenarioResult& run : result->scenarios) {
    if (run.verdict != report::Verdict::kPass) failed.insert(run.name);
  }
  for (const report::ThresholdResult& threshold : result->thresholds) {  // crossed fails too
    if (threshold.status == report::CheckStatus::kFail) failed.insert(threshold.name);
  }
  if (failed.empty()) {
    note = fmt::format("nothing failed in {}; running everything", file.string());
    return std::nullopt;
  }
  note =
      fmt::format("re-running the {} scenario(s) that failed in {}", failed.size(), file.string());
  return LastFailedRuns{std::move(*result), std::move(failed)};
}

// The report files of a --last-failed run hold the whole picture, as pytest's cache does: the
// earlier result's runs of every scenario not run again, beside this run's (the terminal and the
// exit code speak of this run). Without the earlier one (it judged another subject or tool
// version) they hold this run alone, saying so.
report::RunResult WithEarlierRuns(report::RunResult rerun, report::RunResult earlier,
                                  std::ostream& err) {
  std::set<std::string> rerun_names;
  for (const report::ScenarioResult& run : rerun.scenarios) rerun_names.insert(run.name);
  std::erase_if(earlier.scenarios,
                [&](const report::ScenarioResult& run) { return rerun_names.contains(run.name); });
  std::erase_if(earlier.thresholds, [&](const report::ThresholdResult& threshold) {
    return rerun_names.contains(threshold.name);
  });
  if (earlier.scenarios.empty()) return rerun;
  const std::string shard = rerun.shard;
  const std::size_t kept = earlier.scenarios.size();
  std::vector<report::RunResult> parts;
  parts.push_back(std::move(rerun));  // first: its seed and subject options are the run's
  parts.push_back(std::move(earlier));
  auto merged = report::Merge(parts);
  if (!merged) {
    err << fmt::format(
        "faultline run: --last-failed: the reports hold only this run's results, "
        "not the earlier ones ({})\n",
        merged.error());
    return std::move(parts.front());
  }
  merged->shard = shard;
  err << fmt::format(
      "faultline run: --last-failed: the reports keep {} earlier run(s) of the scenarios not run "
      "again beside these\n",
      kept);
  return std::move(*merged);
}

std::expected<WorldChoice, std::string> ChooseWorld(const RunCommandOptions& options) {
  const bool adapter =
      !options.adapter.empty() || !options.exec.empty() || !options.gateway.empty();
  if (options.time == "auto") return adapter ? WorldChoice::kReal : WorldChoice::kVirtual;
  if (options.time == "real") return WorldChoice::kReal;
  if (options.time == "both" && !adapter) return WorldChoice::kBoth;
  if (options.time == "virtual" && !adapter) return WorldChoice::kVirtual;
  if (options.time == "virtual" || options.time == "both") {
    return std::unexpected(
        "--time virtual runs the in-process reference client under a virtual clock; an external "
        "--adapter, --exec app or --gateway can only run in real time (--time real)");
  }
  return std::unexpected(
      fmt::format("unknown --time '{}' (auto, real, virtual, both)", options.time));
}

std::string DialectList(const std::vector<scenario::Dialect>& dialects) {
  std::string out;
  for (const scenario::Dialect dialect : dialects) {
    out += (out.empty() ? "" : ", ") + std::string(scenario::ToString(dialect));
  }
  return out;
}

// --threshold, every one parsed before the first run.
std::expected<std::vector<scenario::Threshold>, std::string> ParseThresholds(
    const std::vector<std::string>& texts) {
  std::vector<scenario::Threshold> thresholds;
  for (const std::string& text : texts) {
    auto threshold = scenario::ParseThreshold(text);
    if (!threshold) {
      return std::unexpected(fmt::format("--threshold '{}': {}", text, threshold.error()));
    }
    thresholds.push_back(std::move(*threshold));
  }
  return thresholds;
}

// The scenarios to run and the subject to run them against.
void AddRunSubjectOptions(CLI::App& run, RunCommandOptions& options) {
  run.add_option("paths", options.paths,
                 "scenario files, folders or globs (default: the built-in catalogue)");
  run.add_option("--adapter", options.adapter,
                 "a command speaking the adapter protocol, or a shipped adapter: " +
                     AdapterShortcutNames() + " (default: the in-process reference client)");
  run.add_option("--exec", options.exec,
                 "an unmodified app to judge: a shell command run once per call of each "
                 "scenario with OPENAI_BASE_URL, ANTHROPIC_BASE_URL, their keys and FAULTLINE_* "
                 "pointing at the scenario; exit 0 means it got its answer, and the provider's "
                 "journal shows what it did (docs/testing-your-app.md)");
  run.add_option("--gateway", options.gateway,
                 "a gateway to judge, between the reference client (--policy, default no-retry) "
                 "and each scenario's routes as its upstreams: a shipped one (" +
                     GatewayNames() +
                     ") or a folder with gateway.json; runs the gateway catalogue unless "
                     "scenario paths are given (docs/gateways.md)");
  run.add_option("--time", options.time,
                 "real (sockets), virtual (virtual clock, reference client only), both, or auto "
                 "(virtual for the reference client, real for an adapter or an --exec app)")
      ->capture_default_str();
  run.add_option("--jobs,-j", options.jobs,
                 "scenarios run at once (default: 2 virtual, 16 real: real runs mostly wait)")
      ->check(CLI::Range(1, 4096));
  run.add_option("--seed", options.seed, "run seed (same seed, same virtual traces)")
      ->capture_default_str();
}

// Which of the scenarios run, how often, and where the reports go.
void AddRunSelectionOptions(CLI::App& run, RunCommandOptions& options) {
  run.add_option("--filter", options.filter,
                 "comma-separated name globs, tag:NAME or dialect:NAME, any of which keeps a "
                 "scenario; A+B "
                 "needs both; !TERM excludes (\"rate-limit/*,tag:stall+tag:openai-chat,!*slow*\")");
  run.add_option("--repeat", options.repeat, "run each scenario N times (p50/p95/p99 latency)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  AddShardOptions(run, options.shard, options.shard_count, "scenarios");
  run.add_option("--out", options.out_dir, "folder for the reports")->capture_default_str();
  run.add_option("--format", options.formats, "reports to write: json junit md html")
      ->delimiter(',')
      ->capture_default_str();
  run.add_flag("--no-reports", options.no_reports, "write no report files");
}

// The reference client's policy, the limits on a subject, and what fails the run.
void AddRunJudgingOptions(CLI::App& run, RunCommandOptions& options) {
  run.add_option("--policy", options.policy_file,
                 "the reference client's retry policy, or with --exec the policy the app is "
                 "declared to run: a preset's name or a JSON or YAML file (docs/policy.md)");
  run.add_option("--timeout", options.timeout_s,
                 "seconds after which a real-world run's subject is stopped")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  run.add_option("--fail-on", options.fail_on,
                 "what fails the run: violation (contract breaks only) or advisory (also what "
                 "the declared policy allows but harms: ADV-*)")
      ->check(CLI::IsMember({"violation", "advisory"}))
      ->capture_default_str();
  run.add_option("--max-line", options.max_line,
                 "longest adapter output line in bytes; longer is a subject error")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30))
      ->capture_default_str();
  run.add_option("--max-virtual-requests", options.max_virtual_requests,
                 "requests one virtual run may send before it is stopped: a run in virtual time, "
                 "and each run of a declared policy's twin (a policy that retries a lasting "
                 "failure forever is judged as far as this bound; ADV-012 says so)")
      ->check(CLI::Range(std::uint64_t{100}, std::uint64_t{100'000}))
      ->capture_default_str();
}

constexpr std::string_view kRunFooter =
    "Subjects are judged against the policy they declare in adapter/hello (docs/policy.md; an "
    "--exec app: the one --policy declares for it): violations break the contract, advisories "
    "(ADV-*) flag what that policy allows but harms.\n"
    "Reports (in --out): result.json (the source of truth), junit.xml, summary.md, "
    "report.html.\nExit code: 0 all passed, 1 a check failed, 2 bad usage or input, 3 a "
    "subject error (the adapter or --exec app could not start, or the adapter crashed, flooded "
    "or broke the protocol) or "
    "a broken run, with no check failed, 4 interrupted (the first Ctrl-C or SIGTERM starts no "
    "further run, stops the running ones and writes the reports of what finished, marked "
    "interrupted; a second one exits at once with 128 + signal), 5 a report could not be written "
    "(an I/O error such as a full disk, whatever the verdict; the reports of an earlier run in "
    "--out are removed before this one starts), 99 every check passed but a threshold "
    "(--threshold or a scenario's expect.thresholds) was crossed.";

// What the command line gives a run, each part read and checked before the first run.
struct RunInputs {
  std::vector<scenario::Scenario> scenarios;
  ref::RetryPolicy policy;
  WorldChoice world;
  std::vector<scenario::Threshold> thresholds;
  std::optional<harness::Shard> shard;
  std::optional<ResolvedAdapter> adapter;
  std::optional<report::RunResult> earlier;  // --last-failed: the result the re-runs join
  std::shared_ptr<const harness::GatewayDefinition> gateway;  // --gateway
};

// --adapter, when given.
std::expected<std::optional<ResolvedAdapter>, std::string> AdapterOption(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return ResolveAdapter(text);
}

// The inputs, or the first usage error in the order a user fixes them.
std::expected<RunInputs, std::string> ReadRunInputs(const RunCommandOptions& options) {
  const bool gateway = !options.gateway.empty();
  auto scenarios = LoadAll(options.paths, gateway);
  // Behind a gateway the reference client does not retry unless told to: the gateway's retries
  // are what is judged, one client request at a time.
  auto policy = fleet::PolicyOption(gateway && options.policy_file.empty() ? std::string("no-retry")
                                                                           : options.policy_file);
  auto world = ChooseWorld(options);
  auto thresholds = ParseThresholds(options.thresholds);
  if (!thresholds) return std::unexpected(thresholds.error());
  auto shard = ShardOption(options.shard, options.shard_count);
  if (!shard) return std::unexpected(shard.error());
  if (gateway && (!options.adapter.empty() || !options.exec.empty())) {
    return std::unexpected(
        "--gateway is the subject, called by the in-process reference client; it takes no "
        "--adapter or --exec");
  }
  if (!options.adapter.empty() && !options.exec.empty()) {
    return std::unexpected(
        "--adapter and --exec each name the subject: an adapter speaks the protocol, an --exec "
        "app is judged from its exit status and the journal; give one");
  }
  if (!options.adapter.empty() && !options.policy_file.empty()) {
    return std::unexpected(
        "--policy configures the in-process reference client; an --adapter declares its own "
        "policy in adapter/hello");
  }
  if (!scenarios) return std::unexpected(scenarios.error());
  if (!policy) return std::unexpected(policy.error());
  if (!world) return std::unexpected(world.error());
  auto adapter = AdapterOption(options.adapter);
  if (!adapter) return std::unexpected(adapter.error());
  RunInputs inputs{
      std::move(*scenarios), std::move(*policy), *world, std::move(*thresholds), *shard,
      std::move(*adapter),   std::nullopt,       nullptr};
  if (gateway) {
    auto definition = harness::LoadGateway(options.gateway);
    if (!definition) return std::unexpected(definition.error());
    inputs.gateway = std::make_shared<const harness::GatewayDefinition>(std::move(*definition));
  }
  return inputs;
}

// --last-failed: keeps only the scenarios that did not pass last time (saying so on `err`) and
// returns the earlier result, which the reports keep beside the re-runs.
std::expected<std::optional<report::RunResult>, std::string> KeepLastFailed(
    const RunCommandOptions& options, std::vector<scenario::Scenario>& scenarios,
    std::ostream& err) {
  if (!options.last_failed) return std::nullopt;
  std::string note;
  auto failed = LastFailed(options.out_dir, note);
  if (!failed) return std::unexpected("--last-failed: " + failed.error());
  err << "faultline run: --last-failed: " << note << "\n";
  if (!*failed) return std::nullopt;
  std::erase_if(scenarios,
                [&](const scenario::Scenario& s) { return !(*failed)->names.contains(s.name); });
  return std::move((*failed)->earlier);
}

// The scenarios that run: --last-failed, --filter, (saying so on `err`) only the dialects the
// adapter speaks, then --shard's share.
std::expected<std::vector<scenario::Scenario>, std::string> SelectRuns(
    const RunCommandOptions& options, RunInputs& inputs, std::ostream& err) {
  auto earlier = KeepLastFailed(options, inputs.scenarios, err);
  if (!earlier) return std::unexpected(earlier.error());
  inputs.earlier = std::move(*earlier);
  if (auto problem = harness::FilterProblem(options.filter)) return std::unexpected(*problem);
  auto selected =
      harness::SelectScenarios(std::move(inputs.scenarios), options.filter, std::nullopt);
  const std::optional<ResolvedAdapter>& adapter = inputs.adapter;
  if (adapter && !adapter->dialects.empty()) {
    const auto before = selected.size();
    std::erase_if(selected, [&](const scenario::Scenario& s) {
      return std::ranges::find(adapter->dialects, s.dialect) == adapter->dialects.end();
    });
    if (before != selected.size()) {
      err << fmt::format("faultline run: {} speaks {}; skipping {} scenario(s) of other dialects\n",
                         adapter->label, DialectList(adapter->dialects), before - selected.size());
    }
  }
  if (inputs.gateway && !inputs.gateway->dialects.empty()) {
    const auto& dialects = inputs.gateway->dialects;
    const auto before = selected.size();
    std::erase_if(selected, [&](const scenario::Scenario& s) {
      return std::ranges::find(dialects, scenario::ToString(s.dialect)) == dialects.end();
    });
    if (before != selected.size()) {
      std::string names;
      for (const std::string& name : dialects) names += (names.empty() ? "" : ", ") + name;
      err << fmt::format(
          "faultline run: gateway {} stands in front of {} only; skipping {} scenario(s) of other "
          "dialects\n",
          inputs.gateway->name, names, before - selected.size());
    }
  }
  if (selected.empty()) {
    return std::unexpected("no scenario matches" +
                           (options.filter.empty() ? "" : " --filter '" + options.filter + "'"));
  }
  if (!inputs.shard) return selected;
  // The shard is taken last: a scenario's shard is its name's alone, so it cannot depend on the
  // order of these steps. A shard that keeps nothing is no mistake (a few scenarios over many
  // CI jobs): it runs nothing and writes an empty result, which merges like any other.
  const std::size_t matched = selected.size();
  selected = harness::KeepShard(std::move(selected), *inputs.shard);
  if (selected.empty()) {
    err << fmt::format(
        "faultline run: shard {} holds none of the {} selected scenario(s); its result is "
        "empty\n",
        harness::ShardText(*inputs.shard), matched);
  }
  return selected;
}

harness::RunnerOptions RunnerOptionsOf(const RunCommandOptions& options, RunInputs& inputs) {
  harness::RunnerOptions runner;
  runner.world = inputs.world;
  if (inputs.adapter) {
    runner.adapter = inputs.adapter->command;
    runner.subject_label = inputs.adapter->label;
  }
  if (!options.exec.empty()) {
    runner.exec = options.exec;
    runner.subject_options = {"--exec", scenario::RedactSecrets(options.exec)};
  }
  if (inputs.gateway) {
    runner.gateway = inputs.gateway;
    runner.policy = inputs.policy;  // no-retry unless --policy says otherwise
    runner.subject_options = {"--gateway", options.gateway};
  }
  if (!options.policy_file.empty()) {
    runner.subject_options.insert(runner.subject_options.end(), {"--policy", options.policy_file});
    if (runner.exec) {
      runner.app_policy = ref::PolicyToHelloJson(inputs.policy);  // what the app runs, declared
    } else {
      runner.policy = inputs.policy;  // the reference client's; else each scenario's own
    }
  }
  runner.seed = options.seed;
  runner.jobs = options.jobs > 0 ? options.jobs : (inputs.world == WorldChoice::kVirtual ? 2 : 16);
  runner.repeat = options.repeat;
  runner.timeout = std::chrono::milliseconds(static_cast<long long>(options.timeout_s * 1000));
  runner.fail_on.advisories = options.fail_on == "advisory";
  runner.max_line_bytes = options.max_line;
  runner.max_virtual_requests = options.max_virtual_requests;
  runner.thresholds = std::move(inputs.thresholds);
  return runner;
}

// Runs `selected` with progress on `err`, then reports, all while the first Ctrl-C or SIGTERM
// is a stop request (the reports of what finished are still written).
std::expected<ExitCode, std::string> RunAndReport(const std::vector<scenario::Scenario>& selected,
                                                  harness::RunnerOptions runner,
                                                  const RunCommandOptions& options,
                                                  const std::optional<harness::Shard>& shard,
                                                  std::optional<report::RunResult> earlier,
                                                  const std::vector<PlannedReport>& planned,
                                                  std::ostream& out, std::ostream& err) {
  report::RunResult context;  // what a reproduce command needs before the result exists
  context.seed = runner.seed;
  context.subject = harness::SubjectLabel(runner);
  context.subject_options = runner.subject_options;
  ProgressPrinter printer(
      err, {.verbose = options.verbose, .live = &err == &std::cerr && ::isatty(STDERR_FILENO) == 1},
      context, harness::PlannedRuns(selected.size(), runner));
  InterruptGuard interrupt([&printer](const std::string& signal) {
    printer.Note(
        fmt::format("faultline run: {}: starting no further run and stopping the running "
                    "ones; the reports of what finished follow (again to exit at once)",
                    signal));
  });
  runner.stop = interrupt.token();
  // With reports, each run goes whole to runs.jsonl as it finishes and the result keeps it slim;
  // without, nothing reads a trace again. Either way memory stays small per run.
  if (planned.empty()) {
    runner.slim_runs = true;
  } else {
    auto spool = report::RunSpool::Create(RunStreamPath(options.out_dir));
    if (!spool) return std::unexpected("--out: " + spool.error());
    runner.spool = std::move(*spool);
  }
  auto result = harness::RunAll(selected, runner, std::ref(printer));
  if (!result) return std::unexpected(result.error());
  result->shard = shard ? harness::ShardText(*shard) : "";
  if (result->interrupted) result->interrupted->reason = interrupt.signal_name().value_or("stop");
  ExitCode code = ExitCode::kSuccess;
  if (earlier) {
    const report::RunResult whole = WithEarlierRuns(*result, std::move(*earlier), err);
    code = Report(*result, planned, "run", out, err, &whole);
  } else {
    code = Report(*result, planned, "run", out, err);
  }
  // The runs the stream could not take were kept whole: the reports hold them all, the stream
  // does not, and a full disk is said as any report's write error is.
  if (const auto failed = runner.spool ? runner.spool->error() : std::nullopt) {
    err << "faultline run: " << *failed
        << " (the stream is incomplete; the reports hold every run)\n";
    code = ExitCode::kReportWriteError;
  }
  return code;
}

}  // namespace

CLI::App* AddRunCommand(CLI::App& app, RunCommandOptions& options) {
  CLI::App* run = app.add_subcommand(
      "run", "Run scenarios against a client and judge it: invariants, expectations, latency.");
  AddRunSubjectOptions(*run, options);
  AddRunSelectionOptions(*run, options);
  AddRunJudgingOptions(*run, options);
  run->add_flag("--last-failed", options.last_failed,
                "re-run only the scenarios that did not pass (or crossed a threshold) in --out's "
                "result.json (all when there is none or nothing failed); --filter still applies; "
                "the new reports keep the earlier runs of the scenarios not run again");
  run->add_option("--threshold", options.thresholds,
                  "a bound on an aggregate over every run and call of each scenario, as k6's "
                  "thresholds (repeatable): METRIC.AGG OP BOUND with metrics ttft, total, "
                  "attempts, overhead, wasted_bytes and aggregations p50 p90 p95 p99 pN avg min "
                  "max count, e.g. 'ttft.p99<2s', 'attempts.max<=3'; crossed: exit 99")
      ->allow_extra_args(false);
  run->add_flag("--verbose,-v", options.verbose, "a line per scenario");
  run->footer(std::string(kRunFooter));
  return run;
}

// Read and check the inputs, select the scenarios, plan the reports, then run and report; every
// mistake of the command line is a usage error before the first run.
ExitCode RunRun(const RunCommandOptions& options, std::ostream& out, std::ostream& err) {
  const auto usage_error = [&err](const std::string& message) {
    err << "faultline run: " << message << "\n";
    return ExitCode::kUsageError;
  };
  auto inputs = ReadRunInputs(options);
  if (!inputs) return usage_error(inputs.error());
  auto selected = SelectRuns(options, *inputs, err);
  if (!selected) return usage_error(selected.error());
  auto planned = PlanReports(options.formats, options.out_dir, options.no_reports);
  if (!planned) return usage_error(planned.error());
  auto exit_code = RunAndReport(*selected, RunnerOptionsOf(options, *inputs), options,
                                inputs->shard, std::move(inputs->earlier), *planned, out, err);
  if (!exit_code) return usage_error(exit_code.error());
  return *exit_code;
}

CLI::App* AddValidateCommand(CLI::App& app, ValidateOptions& options) {
  CLI::App* validate = app.add_subcommand(
      "validate",
      "Check scenario files against the schema: every error of each file (up to 50), each "
      "with file:line:column.");
  validate->add_option("paths", options.paths, "scenario files, folders or globs")->required();
  validate->footer("Exit code: 0 all valid, 1 some file is invalid, 2 bad usage.");
  return validate;
}

ExitCode RunValidate(const ValidateOptions& options, std::ostream& out, std::ostream& err) {
  const std::vector<fs::path> files = ExpandPaths(options.paths);
  for (const fs::path& file : files) {
    if (!fs::exists(file)) {
      err << "faultline validate: no such file or folder: " << file.string() << "\n";
      return ExitCode::kUsageError;
    }
  }
  auto loaded = scenario::LoadScenarios(files, scenario::kMaxErrorsPerFile);
  if (!loaded) {
    for (const auto& error : loaded.error()) err << error.ToString() << "\n";
    err << fmt::format("faultline validate: {} error(s)\n", loaded.error().size());
    return ExitCode::kChecksFailed;
  }
  const std::vector<std::string> policy_errors = harness::ScenarioPolicyErrors(*loaded);
  if (!policy_errors.empty()) {
    for (const std::string& error : policy_errors) err << error << "\n";
    err << fmt::format("faultline validate: {} error(s)\n", policy_errors.size());
    return ExitCode::kChecksFailed;
  }
  out << fmt::format("faultline validate: {} scenario(s) valid\n", loaded->size());
  return ExitCode::kSuccess;
}

}  // namespace faultline::cli
