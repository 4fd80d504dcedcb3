// The conformance runner: scenarios x worlds x repetitions -> judged results.
//
// It selects scenarios (--filter, --shard), runs each in the chosen world(s) with the chosen
// subject, judges the trace (judge.h), computes metrics (metrics.h) and assembles the RunResult
// that every report is rendered from. Runs proceed concurrently on `jobs` threads (most of a
// real-world run is waiting); results keep the scenario order whatever finishes first.
// Per-run seeds derive from the run seed, the scenario name and the repetition, so one scenario
// can be re-run alone with the same seed and get the same virtual trace.
//
// Progress goes to a caller-supplied sink: called after each finished run, from the worker
// thread that finished it (the sink must be thread-safe).
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "harness/gateways/gateway.h"
#include "harness/shard.h"
#include "harness/trace/trace.h"
#include "harness/worlds/virtual_world.h"
#include "nlohmann/json.hpp"
#include "reference_impl/policy.h"
#include "reports/run_result.h"
#include "scenarios/scenario.h"

namespace faultline::report {
class RunSpool;
}  // namespace faultline::report

namespace faultline::harness {

enum class WorldChoice { kVirtual, kReal, kBoth };

struct RunnerOptions {
  WorldChoice world = WorldChoice::kVirtual;
  std::optional<std::string> adapter;  // a command; nullopt = the in-process reference client
  // An unmodified app's command instead (`--exec`, worlds/subjects/app_subject.h), with the policy
  // it is declared to run (the hello's policy object; nullopt: none declared).
  std::optional<std::string> exec;
  std::optional<nlohmann::json> app_policy;
  // A gateway between the reference client and each scenario's routes instead (`--gateway`,
  // harness/gateways/gateway.h): the gateway is the subject, judged by the GW-* checks.
  std::shared_ptr<const GatewayDefinition> gateway;
  std::string subject_label;  // how results name the subject ("" = the command)
  // The command-line words that chose the subject, redacted (RunResult::subject_options).
  std::vector<std::string> subject_options;
  // The reference client's policy for every scenario (--policy); unset: each scenario's own
  // (`policy:`, else the reference defaults).
  std::optional<ref::RetryPolicy> policy;
  std::uint64_t seed = 0;
  int jobs = 1;
  int repeat = 1;
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};  // per real-world run
  report::FailPolicy fail_on;                // advisories fail the run only when asked
  std::size_t max_line_bytes = 1024 * 1024;  // adapter line limit (--max-line)
  // Requests one virtual run may send, the subject's in virtual time and each of a twin's
  // (--max-virtual-requests; VirtualRunOptions::max_requests).
  std::uint64_t max_virtual_requests = kMaxVirtualRequests;
  // --threshold: judged over every scenario, after its own expect.thresholds (thresholds.h).
  std::vector<scenario::Threshold> thresholds;
  // Where each judged run goes whole as it finishes (reports/run_spool.h: runs.jsonl); RunAll's
  // result then holds every run slimmed, so its memory stays under a kilobyte a run. Without a
  // spool, `slim_runs` slims them all the same (nothing will read a trace: --no-reports), else
  // every run is kept whole.
  std::shared_ptr<report::RunSpool> spool;
  bool slim_runs = false;
  // A stop request (Ctrl-C) starts no further run and ends the running ones (real_world.h); the
  // result then lists only the runs that finished and is marked `interrupted`.
  std::stop_token stop;
};

// Which scenarios a filter keeps. Terms are separated by commas; a scenario is kept when any term
// matches: a glob on its name ("rate-limit/*", "*retry-after*"), "tag:NAME" or "dialect:NAME"
// (the wire format it speaks, whatever its name and tags say), or several of those joined by
// '+', all of which must match ("tag:stall+dialect:anthropic-messages"). A leading '!' excludes
// instead. Empty filter: everything.
bool MatchesFilter(const scenario::Scenario& scenario, std::string_view filter);
// What is wrong with `filter`, or nullopt: a "dialect:" atom that names no dialect (it would
// silently keep nothing).
std::optional<std::string> FilterProblem(std::string_view filter);
// The scenarios `filter` keeps, by name, and of those the ones `shard` keeps (KeepShard).
std::vector<scenario::Scenario> SelectScenarios(std::vector<scenario::Scenario> scenarios,
                                                std::string_view filter,
                                                std::optional<Shard> shard);
// The scenarios `shard` keeps, by a stable hash of each one's name (shard.h): a scenario's shard
// depends on its name alone, whatever else the catalogue or the filter holds.
std::vector<scenario::Scenario> KeepShard(std::vector<scenario::Scenario> scenarios,
                                          const Shard& shard);

struct RunProgress {
  int done = 0;
  int total = 0;
  int failed = 0;  // fail or error
  // The run that just ended; null for an update between completions (a run's subject ended
  // and its judging began), which changes only the slowest run below.
  const report::ScenarioResult* finished = nullptr;
  // The run that started longest ago and is not done, since when ("" when none), and whether its
  // subject already ended and it is being judged (since `slowest_judged_since`): a progress line
  // keeps counting its time between completions and never calls a stopped subject running.
  std::string slowest_running{};
  std::chrono::steady_clock::time_point slowest_since{};
  bool slowest_judging = false;
  std::chrono::steady_clock::time_point slowest_judged_since{};
};

// A trace recorded outside RunAll (a `faultline serve` session, worlds/served_session.h), with
// the scenario it ran.
struct RecordedRun {
  const scenario::Scenario* scenario = nullptr;
  Trace trace;
};
// Judges recorded runs as RunAll judges real ones (against options.app_policy's declaration,
// with options.fail_on and options.thresholds): one result each, in the given order.
report::RunResult JudgeRecorded(const std::vector<RecordedRun>& runs, const RunnerOptions& options);

// Runs everything (or, after a stop request, what finished). Errors: the real world could not
// start (no loopback port, ...).
std::expected<report::RunResult, std::string> RunAll(
    const std::vector<scenario::Scenario>& scenarios, const RunnerOptions& options,
    const std::function<void(const RunProgress&)>& progress);

// The runs RunAll makes of `scenarios`: each scenario x repetitions x worlds.
int PlannedRuns(std::size_t scenarios, const RunnerOptions& options);

// How results name the subject of `options` (RunResult::subject): the label, else the adapter
// or app command, redacted (scenario::RedactSecrets: reports end up in CI artifacts); else the
// in-process reference client.
std::string SubjectLabel(const RunnerOptions& options);

// The seed of one run, from the run seed, the scenario name and the repetition.
std::uint64_t RunSeed(std::uint64_t seed, std::string_view name, int repetition);

}  // namespace faultline::harness
