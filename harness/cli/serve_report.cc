#include "harness/cli/serve_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "fleet/policy_file.h"
#include "harness/runner.h"
#include "harness/worlds/served_session.h"
#include "reference_impl/policy_json.h"

namespace faultline::cli {
namespace {

using Clock = std::chrono::steady_clock;

// The wall clock at a session's start (`started`, on the steady clock).
std::chrono::system_clock::time_point WallAt(std::optional<Clock::time_point> started) {
  const auto since = Clock::now() - started.value_or(Clock::now());
  return std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      std::chrono::system_clock::now() - since);
}

std::optional<harness::StatedOutcome> StatedOutcomeOf(const std::string& outcome) {
  if (outcome == "committed") return harness::StatedOutcome::kCommitted;
  if (outcome == "failed") return harness::StatedOutcome::kFailed;
  return std::nullopt;
}

// Every session of a loaded scenario that a client reached, as a run to judge.
std::vector<harness::RecordedRun> ServedRuns(const provider::Server& server,
                                             const std::vector<scenario::Scenario>& scenarios,
                                             const ServeReportPlan& plan) {
  std::vector<harness::RecordedRun> runs;
  for (const provider::SessionInfo& session : server.Sessions()) {
    const auto scenario =
        std::ranges::find(scenarios, session.scenario_name, &scenario::Scenario::name);
    if (scenario == scenarios.end()) continue;  // created through the control API
    auto journal = server.JournalOf(session.id);
    if (!journal) continue;
    auto trace = harness::ServedTrace({.journal = std::move(*journal),
                                       .scripted_from = server.ScriptedStart(session.id),
                                       .wall_start = WallAt(session.started)},
                                      plan.policy, StatedOutcomeOf(plan.options.outcome));
    if (trace) runs.push_back({&*scenario, std::move(*trace)});
  }
  return runs;
}

}  // namespace

void AddServeReportOptions(CLI::App& serve, ServeReportOptions& options) {
  serve.add_option("--report", options.out_dir,
                   "When the server stops, judge every session a client reached from its "
                   "journal, as `faultline run --exec` judges an app, and write the reports "
                   "into this folder (exit code as faultline run's)");
  serve.add_option("--format", options.formats, "with --report: json junit md html")
      ->delimiter(',')
      ->capture_default_str();
  serve.add_option("--policy", options.policy,
                   "with --report: the policy the app is declared to run, a preset's name or a "
                   "JSON or YAML file (docs/policy.md)");
  serve
      .add_option("--outcome", options.outcome,
                  "with --report: how the app's calls ended, when the test suite knows "
                  "(unknown leaves the checks of an ending n/a)")
      ->check(CLI::IsMember({"committed", "failed", "unknown"}))
      ->capture_default_str();
  serve.add_option("--fail-on", options.fail_on, "with --report: violation or advisory")
      ->check(CLI::IsMember({"violation", "advisory"}))
      ->capture_default_str();
}

std::expected<std::optional<ServeReportPlan>, std::string> PlanServeReport(
    const ServeReportOptions& options) {
  if (options.out_dir.empty()) {
    if (!options.policy.empty() || options.outcome != "unknown") {
      return std::unexpected("--policy and --outcome say how to judge: they need --report DIR");
    }
    return std::nullopt;
  }
  ServeReportPlan plan{.reports = {}, .policy = std::nullopt, .options = options};
  auto reports = PlanReports(options.formats, options.out_dir, false);
  if (!reports) return std::unexpected(reports.error());
  plan.reports = std::move(*reports);
  if (!options.policy.empty()) {
    auto policy = fleet::PolicyOption(options.policy);
    if (!policy) return std::unexpected(policy.error());
    plan.policy = ref::PolicyToHelloJson(*policy);
  }
  return plan;
}

ExitCode JudgeServedSessions(const provider::Server& server,
                             const std::vector<scenario::Scenario>& scenarios,
                             const ServeReportPlan& plan, std::uint64_t seed, std::ostream& out,
                             std::ostream& err) {
  const std::vector<harness::RecordedRun> runs = ServedRuns(server, scenarios, plan);
  if (runs.empty()) {
    out << "faultline serve: no session saw a request, so nothing was judged (is the app's base "
           "URL a session's, with /v1 for the OpenAI SDKs?)\n";
    return ExitCode::kSubjectError;
  }
  harness::RunnerOptions options;
  options.world = harness::WorldChoice::kReal;
  options.seed = seed;
  options.subject_label = "an app via faultline serve";
  options.subject_options = {"--exec", "<your app's command>"};
  if (!plan.options.policy.empty()) {
    options.subject_options.insert(options.subject_options.end(),
                                   {"--policy", plan.options.policy});
  }
  options.app_policy = plan.policy;
  options.fail_on.advisories = plan.options.fail_on == "advisory";
  return Report(harness::JudgeRecorded(runs, options), plan.reports, "serve", out, err);
}

}  // namespace faultline::cli
