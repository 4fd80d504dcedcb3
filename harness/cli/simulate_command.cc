#include "harness/cli/simulate_command.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "fleet/experiment.h"
#include "fleet/profiles.h"
#include "fleet/report.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "harness/cli/report_files.h"
#include "harness/cli/shard_option.h"
#include "scenarios/duration.h"
#include "scenarios/fleet_bounds.h"
#include "scenarios/loader.h"

namespace faultline::cli {
namespace {

namespace fs = std::filesystem;

// Report files, by the format name --format takes.
struct Output {
  std::string_view format;
  std::string_view file;
  void (*write)(const fleet::Experiment&, std::ostream&);
};
constexpr Output kOutputs[] = {
    {"json", "result.json",
     [](const fleet::Experiment& e, std::ostream& out) {
       out << fleet::ToJson(e).dump(1) << "\n";
     }},
    {"csv", "result.csv", fleet::WriteCsv},
    {"md", "summary.md", fleet::WriteMarkdown},
    {"html", "report.html", fleet::WriteHtml},
};

std::expected<scenario::Duration, std::string> Duration(std::string_view flag,
                                                        const std::string& text) {
  auto parsed = scenario::ParseDuration(text);
  if (!parsed || parsed->count() <= 0) {
    return std::unexpected(
        fmt::format("{} '{}': expected a positive duration such as 500ms or 2s", flag, text));
  }
  return *parsed;
}

// The flag that sets each fleet value of a fleet from flags, to name it in a range error.
constexpr std::pair<std::string_view, std::string_view> kFleetFlags[] = {
    {"fleet.clients", "--clients"},
    {"fleet.arrivals.rate", "--rate"},
    {"fleet.horizon", "--horizon"},
    {"fleet.provider.concurrency", "--concurrency"},
    {"fleet.provider.rate", "--provider-rate"},
    {"fleet.provider.queue", "--queue"},
    {"fleet.provider.service.mean", "--service"},
    {"fleet.timeout", "--timeout"},
};

// A fleet from flags within the ranges of a fleet section (scenarios/fleet_bounds.h).
std::expected<void, std::string> CheckFlags(const scenario::FleetSpec& fleet) {
  std::optional<std::string> error = scenario::CheckFleetSpec(fleet);
  if (!error) return {};
  for (const auto& [key, flag] : kFleetFlags) {
    if (error->starts_with(fmt::format("{}: ", key))) error->replace(0, key.size(), flag);
  }
  return std::unexpected(*error);
}

// The fleet the flags describe, when no scenario file is given.
std::expected<scenario::Scenario, std::string> ScenarioFromFlags(const SimulateOptions& options) {
  scenario::Scenario built;
  built.name = "flags";
  built.source = "<flags>";
  scenario::FleetSpec& fleet = built.fleet.emplace();
  fleet.clients = options.clients;
  fleet.workload.rate = {{scenario::Duration{0}, options.rate}};
  fleet.provider.concurrency = options.concurrency;
  fleet.provider.rate = options.provider_rate;
  fleet.provider.queue = options.queue;
  fleet.provider.overload.status = options.overload_status;
  auto horizon = Duration("--horizon", options.horizon);
  auto service = Duration("--service", options.service);
  if (!horizon) return std::unexpected(horizon.error());
  if (!service) return std::unexpected(service.error());
  fleet.horizon = *horizon;
  fleet.provider.service_mean = *service;
  if (!options.timeout.empty()) {
    auto timeout = Duration("--timeout", options.timeout);
    if (!timeout) return std::unexpected(timeout.error());
    fleet.timeout = *timeout;
  }
  if (options.policies.empty()) return std::unexpected("give --compare POLICY,... (or a scenario)");
  if (auto checked = CheckFlags(fleet); !checked) return std::unexpected(checked.error());
  return built;
}

std::expected<scenario::Scenario, std::string> LoadFleetScenario(const SimulateOptions& options) {
  if (options.scenario.empty()) return ScenarioFromFlags(options);
  // A file on disk wins; otherwise the experiments built into the binary answer to the names the
  // README uses, so its examples run from any directory and after install.
  std::error_code exists_error;
  std::optional<std::expected<scenario::Scenario, scenario::LoadError>> builtin;
  if (!std::filesystem::exists(options.scenario, exists_error)) {
    builtin = scenario::LoadBuiltinFleet(options.scenario);
    if (!builtin) {
      return std::unexpected(fmt::format("{}: no such file, nor a built-in fleet experiment ({})",
                                         options.scenario,
                                         fmt::join(scenario::BuiltinFleetNames(), ", ")));
    }
  }
  auto loaded = builtin ? std::move(*builtin) : scenario::LoadScenarioFile(options.scenario);
  if (!loaded) return std::unexpected(loaded.error().ToString());
  if (!loaded->fleet) {
    return std::unexpected(
        fmt::format("{}: has no 'fleet' section; faultline simulate runs fleet "
                    "experiments (docs/fleet.md), faultline run runs the rest",
                    options.scenario));
  }
  return std::move(*loaded);
}

ExitCode ListPolicies(std::ostream& out) {
  for (const fleet::Profile& profile : fleet::BuiltinProfiles()) {
    auto policy = fleet::ResolvePolicy(profile.name);
    out << fmt::format("{}\n  {}\n  {}\n  source: {}\n", profile.name, profile.summary,
                       policy ? fleet::DescribePolicy(*policy) : policy.error(), profile.source);
  }
  out << "\nAny policy file, JSON or YAML (docs/policy.md), may be given in place of a name.\n";
  return ExitCode::kSuccess;
}

// Progress on stderr: a line whenever a job starts or another tenth of its horizon is done, and
// between them every kHeartbeat of wall time, with the events simulated so far: a long job's
// lines keep moving even while its share of the horizon reads the same.
constexpr auto kHeartbeat = std::chrono::seconds(10);

std::function<void(std::size_t, std::size_t, double, std::uint64_t)> Progress(std::ostream& err) {
  struct Last {
    std::size_t job = SIZE_MAX;
    int tenth = -1;
    std::chrono::steady_clock::time_point at;
  };
  auto last = std::make_shared<Last>();
  return [&err, last](std::size_t done, std::size_t total, double fraction, std::uint64_t events) {
    const int tenth = static_cast<int>(std::min(fraction, 1.0) * 10);
    const auto now = std::chrono::steady_clock::now();
    if (last->job == done && last->tenth == tenth && now - last->at < kHeartbeat) return;
    *last = {done, tenth, now};
    const std::string_view draining = fraction > 1 ? " (draining)" : "";
    err << fmt::format("simulate: job {}/{}: {:.1f}% of the horizon{}, {} events\n", done + 1,
                       total, 100 * std::min(fraction, 1.0), draining,
                       fleet::ReadableCount(static_cast<double>(events)));
  };
}

// What the run is estimated to cost, before it starts.
std::function<void(const fleet::RunCost&, std::size_t)> Estimate(std::ostream& err) {
  return [&err](const fleet::RunCost& cost, std::size_t jobs) {
    err << fmt::format(
        "simulate: {} job(s), about {} calls and up to about {} events, {} of time series\n", jobs,
        fleet::ReadableCount(cost.calls), fleet::ReadableCount(cost.events),
        fleet::ReadableBytes(cost.series_bytes));
  };
}

// The reports --format asks for, in a folder that exists: checked before the experiment, so that
// a bad --format or --out never costs a whole simulation.
std::expected<std::vector<const Output*>, std::string> PlanReports(const SimulateOptions& options) {
  std::vector<const Output*> planned;
  if (options.no_reports) return planned;
  for (const std::string& format : options.formats) {
    const auto known = std::ranges::find(kOutputs, format, &Output::format);
    if (known == std::end(kOutputs)) {
      return std::unexpected(fmt::format("--format '{}': expected json, csv, md or html", format));
    }
    planned.push_back(known);
  }
  std::error_code error;
  fs::create_directories(options.out_dir, error);
  if (error) {
    return std::unexpected(fmt::format("cannot create '{}': {}", options.out_dir, error.message()));
  }
  return planned;
}

// Every report an earlier run left in --out goes first (every format's: an old summary.md beside
// a new result.json would look current), then the planned ones (report_files.h). Only now, once
// the experiment ran: --merge may read its shards from --out.
std::expected<std::vector<std::string>, std::string> WriteReports(
    const fleet::Experiment& experiment, const std::vector<const Output*>& planned,
    const std::string& out_dir) {
  std::vector<fs::path> earlier;
  for (const Output& output : kOutputs) earlier.push_back(fs::path(out_dir) / output.file);
  if (auto removed = RemoveStaleReports(earlier); !removed) {
    return std::unexpected(removed.error());
  }
  std::vector<ReportFile> files;
  for (const Output* output : planned) {
    files.push_back({fs::path(out_dir) / output->file,
                     [&experiment, output](std::ostream& out) { output->write(experiment, out); }});
  }
  return WriteReportFiles(files);
}

std::expected<fleet::Experiment, std::string> Merge(const std::vector<std::string>& files) {
  std::vector<fleet::Experiment> shards;
  for (const std::string& file : files) {
    auto json = ReadJsonFile(file);
    if (!json) return std::unexpected(json.error());
    auto shard = fleet::ExperimentFromJson(*json);
    if (!shard) return std::unexpected(fmt::format("{}: {}", file, shard.error()));
    shards.push_back(std::move(*shard));
  }
  return fleet::MergeShards(std::move(shards));
}

// The report `faultline report merge` writes: --format's, else the one the output file's
// extension names, else result.json's (as report merge does for run results). nullptr for a
// --format that is not one of ours.
const Output* MergeOutput(const std::string& output, const std::string& format) {
  for (const Output& known : kOutputs) {
    const bool wanted = format.empty()
                            ? fs::path(output).extension() == fs::path(known.file).extension()
                            : known.format == format;
    if (wanted) return &known;
  }
  return format.empty() ? &kOutputs[0] : nullptr;
}

std::expected<fleet::Experiment, std::string> Simulate(const SimulateOptions& options,
                                                       std::ostream& err) {
  if (!options.merge.empty()) return Merge(options.merge);
  auto scenario = LoadFleetScenario(options);
  if (!scenario) return std::unexpected(scenario.error());
  fleet::ExperimentInput input;
  input.seed = options.seed.value_or(scenario->fleet->seed.value_or(1));
  input.scenario = std::move(*scenario);
  input.policies = options.policies;
  if (!options.sweep.empty()) {
    auto sweep = fleet::ParseSweep(options.sweep);
    if (!sweep) return std::unexpected(sweep.error());
    input.sweep = std::move(*sweep);
  }
  auto shard = ShardOption(options.shard, options.shard_count);
  if (!shard) return std::unexpected(shard.error());
  if (*shard) {
    input.shard_index = (*shard)->index;
    input.shard_count = (*shard)->count;
  }
  if (options.large_run) input.bounds = fleet::RunBounds::Lifted();
  if (!options.quiet) {
    input.progress = Progress(err);
    input.estimate = Estimate(err);
  }
  return fleet::RunExperiment(input);
}

// The fleet of a run without a scenario file, from flags.
void AddFleetFlags(CLI::App& sim, SimulateOptions& options) {
  auto* flags = "Fleet from flags (without a scenario)";
  sim.add_option("--clients", options.clients, "clients")->group(flags)->capture_default_str();
  sim.add_option("--rate", options.rate, "calls per second (Poisson)")
      ->group(flags)
      ->capture_default_str();
  sim.add_option("--horizon", options.horizon, "simulated time")
      ->group(flags)
      ->capture_default_str();
  sim.add_option("--concurrency", options.concurrency, "provider slots (0: unlimited)")
      ->group(flags)
      ->capture_default_str();
  sim.add_option("--provider-rate", options.provider_rate, "requests/s the provider admits")
      ->group(flags)
      ->capture_default_str();
  sim.add_option("--queue", options.queue, "provider queue length")
      ->group(flags)
      ->capture_default_str();
  sim.add_option("--service", options.service, "mean service time (exponential)")
      ->group(flags)
      ->capture_default_str();
  sim.add_option("--timeout", options.timeout, "per-attempt client timeout")->group(flags);
  sim.add_option("--overload-status", options.overload_status, "429, 503 or 529")
      ->check(CLI::IsMember({429, 503, 529}))
      ->group(flags)
      ->capture_default_str();
}

// The experiment: its scenario, the policies compared, the seed, a sweep, and a shard of its jobs
// (or the shards to merge).
void AddExperimentOptions(CLI::App& sim, SimulateOptions& options) {
  sim.add_option(
      "scenario", options.scenario,
      fmt::format("a scenario file with a 'fleet:' section, or a built-in experiment: {}",
                  fmt::join(scenario::BuiltinFleetNames(), ", ")));
  sim.add_option("--compare,--policy", options.policies,
                 "policies to run side by side on the same seed: profile names "
                 "(--list-policies) or policy JSON files (default: the fleet section's)")
      ->delimiter(',');
  sim.add_option("--seed", options.seed, "run seed (default: the fleet section's, else 1)");
  sim.add_option("--sweep", options.sweep,
                 "KEY=FROM..TO[:STEP]: run every value, e.g. provider.rate=10..50:10 or "
                 "policy.max_attempts=1..6 (keys: docs/fleet.md)");
  AddShardOptions(sim, options.shard, options.shard_count, "jobs");
  sim.add_flag("--large-run", options.large_run,
               "run even when the estimate is over the bounds: 10^9 simulated events, 1 GiB of "
               "time series, 1000 sweep points (then up to 10^6); docs/fleet.md");
  sim.add_option("--merge", options.merge,
                 "join shards' result.json files into one result and its reports (as "
                 "`faultline report merge` does)")
      ->delimiter(',');
}

constexpr std::string_view kSimulateFooter =
    "Each call is run by the reference client's own retry code (reference_impl: Decide, "
    "backoff, Retry-After, budget) with the policy named. Reports (in --out): result.json, "
    "result.csv, summary.md, report.html. docs/fleet.md describes the fleet section, the "
    "profiles and the measures, and the bounds a run is checked against before it starts "
    "(--large-run lifts them).\nExit code: 0 done, 2 bad usage or input (a value out of range, a "
    "run over the bounds), 5 a report could not be written (an I/O error such as a full disk; "
    "the reports of an earlier run in --out are removed first), 6 out of memory.";

}  // namespace

CLI::App* AddSimulateCommand(CLI::App& app, SimulateOptions& options) {
  CLI::App* sim =
      app.add_subcommand("simulate",
                         "Simulate a fleet of clients and compare retry policies under contention, "
                         "overload and metastable failure, in virtual time.");
  AddExperimentOptions(*sim, options);
  sim->add_flag("--list-policies", options.list_policies,
                "list the built-in profiles with their parameters and sources");
  sim->add_option("--out", options.out_dir, "folder for the reports")->capture_default_str();
  sim->add_option("--format", options.formats, "reports to write: json csv md html")
      ->delimiter(',')
      ->capture_default_str();
  sim->add_flag("--no-reports", options.no_reports, "print the table only");
  sim->add_flag("--quiet,-q", options.quiet, "no progress lines");
  AddFleetFlags(*sim, options);
  sim->footer(std::string(kSimulateFooter));
  return sim;
}

bool IsFleetResultFile(const std::string& path) {
  const auto json = ReadJsonFile(path);
  return json && json->is_object() && json->contains("faultline_simulate");
}

ExitCode RunFleetMerge(const std::vector<std::string>& files, const std::string& output,
                       const std::string& format, std::ostream& out, std::ostream& err) {
  const Output* chosen = MergeOutput(output, format);
  if (chosen == nullptr) {
    err << fmt::format(
        "faultline report merge: fleet results merge to json, csv, md or html, not '{}'\n", format);
    return ExitCode::kUsageError;
  }
  auto merged = Merge(files);
  if (!merged) {
    err << "faultline report merge: " << merged.error() << "\n";
    return ExitCode::kUsageError;
  }
  return EmitReport(
      output, [&](std::ostream& stream) { chosen->write(*merged, stream); }, "report merge", out,
      err);
}

namespace {

ExitCode RunSimulateUnguarded(const SimulateOptions& options, std::ostream& out,
                              std::ostream& err) {
  if (options.list_policies) return ListPolicies(out);
  if (options.scenario.empty() && options.policies.empty() && options.merge.empty()) {
    err << "faultline simulate: give a scenario file with a 'fleet:' section, --compare "
           "POLICY,... with fleet flags, or --merge; see --help\n";
    return ExitCode::kUsageError;
  }
  auto planned = PlanReports(options);
  if (!planned) {
    err << "faultline simulate: " << planned.error() << "\n";
    return ExitCode::kUsageError;
  }
  auto experiment = Simulate(options, err);
  if (!experiment) {
    err << "faultline simulate: " << experiment.error() << "\n";
    return ExitCode::kUsageError;
  }
  out << fmt::format("faultline simulate: {} (seed {}), {} job(s)\n", experiment->scenario,
                     experiment->seed, experiment->results.size());
  fleet::WriteTable(*experiment, out);
  if (options.no_reports) return ExitCode::kSuccess;
  auto written = WriteReports(*experiment, *planned, options.out_dir);
  if (!written) {
    err << "faultline simulate: " << written.error() << "\n";
    return ExitCode::kReportWriteError;
  }
  out << fmt::format("reports: {}\n", fmt::join(*written, ", "));
  return ExitCode::kSuccess;
}

}  // namespace

// The bounds (run_cost.h) refuse what can be foreseen; this turns what cannot (the machine's own
// memory, a size past a container's limit) into a message and an exit code instead of an abort.
ExitCode RunSimulate(const SimulateOptions& options, std::ostream& out, std::ostream& err) {
  try {
    return RunSimulateUnguarded(options, out, err);
  } catch (const std::bad_alloc&) {
    err << "faultline simulate: out of memory; widen fleet.bucket, shorten fleet.horizon or run "
           "fewer jobs at once (--shard)\n";
  } catch (const std::length_error& error) {
    err << fmt::format(
        "faultline simulate: the run outgrew a size limit ({}); widen "
        "fleet.bucket, shorten fleet.horizon or run fewer jobs (--shard)\n",
        error.what());
  } catch (const std::exception& error) {
    err << fmt::format("faultline simulate: internal error: {}\n", error.what());
  }
  return ExitCode::kOutOfResources;
}

}  // namespace faultline::cli
