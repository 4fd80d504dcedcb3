#include "harness/runner.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <ctime>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>

#include "faultline/version.h"
#include "harness/judge/declared_policy.h"
#include "harness/judge/gateway_checks.h"
#include "harness/judge/judge.h"
#include "harness/judge/metrics.h"
#include "harness/judge/policy_twin.h"
#include "harness/judge/scenario_policy.h"
#include "harness/judge/thresholds.h"
#include "harness/judge/timeline_bounds.h"
#include "harness/trace/protocol.h"
#include "harness/worlds/real_world.h"
#include "harness/worlds/virtual_world.h"
#include "hashing/fnv1a.h"
#include "reports/run_spool.h"
#include "scenarios/redact.h"

namespace faultline::harness {
namespace {

using Clock = std::chrono::steady_clock;

struct Job {
  const scenario::Scenario* scenario;
  bool real;
  int repetition;
};

constexpr std::string_view kDialectAtom = "dialect:";

bool AtomMatches(const scenario::Scenario& scenario, std::string_view term) {
  if (term.starts_with("tag:")) {
    return std::ranges::find(scenario.tags, term.substr(4)) != scenario.tags.end();
  }
  if (term.starts_with(kDialectAtom)) {
    return scenario::ToString(scenario.dialect) == term.substr(kDialectAtom.size());
  }
  const std::string pattern(term);
  return ::fnmatch(pattern.c_str(), scenario.name.c_str(), 0) == 0;
}

// A term is one or more atoms joined by '+', all of which must match ("tag:stall+tag:anthropic").
bool TermMatches(const scenario::Scenario& scenario, std::string_view term) {
  std::size_t start = 0;
  while (start <= term.size()) {
    const std::size_t end = std::min(term.find('+', start), term.size());
    if (!AtomMatches(scenario, term.substr(start, end - start))) return false;
    start = end + 1;
  }
  return true;
}

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// The verdicts of a judged run as the real-world fingerprint covers them: the run's verdict, the
// subject error's kind and the ids of the failed checks. Not evidence (it carries times), and
// not pass versus n/a: over sockets a check may find nothing to judge one time and pass the next
// (a cancel scripted after the commit is sent, or not, as the call ends a millisecond sooner).
std::string VerdictsText(const report::ScenarioResult& result) {
  std::string text(report::ToString(result.verdict));
  if (result.subject_error) text += ";" + result.subject_error->kind;
  for (const report::CheckResult& check : result.checks) {
    if (check.status == report::CheckStatus::kFail) text += ";" + check.id;
  }
  return text;
}

report::ScenarioResult Describe(const scenario::Scenario& scenario, const Job& job,
                                std::uint64_t seed) {
  report::ScenarioResult result;
  result.name = scenario.name;
  result.description = scenario.description;
  result.source = scenario.source;
  result.source_line = scenario.source_line;
  result.dialect = scenario::ToString(scenario.dialect);
  result.tags = scenario.tags;
  result.world = job.real ? "real" : "virtual";
  result.seed = seed;
  result.repetition = job.repetition;
  return result;
}

class Runner {
 public:
  Runner(const RunnerOptions& options, RealWorld* real,
         const std::function<void(const RunProgress&)>& progress, int total)
      : options_(options), real_(real), progress_(progress), total_(total) {}

  // nullopt when a stop request cut the run short: it is not judged. `slot` is the job's.
  std::optional<report::ScenarioResult> RunOne(const Job& job, std::size_t slot);
  // The trace, verdict, checks, metrics (or the subject error) and fingerprint of a finished run.
  void Judged(const Job& job, const Trace& trace, report::ScenarioResult& result) const;
  // The verdict, checks, metrics (or the subject error) of a finished run.
  void JudgeInto(const Job& job, const Trace& trace, report::ScenarioResult& result) const;
  // `result` is null for a run a stop request cut short.
  void Finished(const report::ScenarioResult* result, std::size_t slot);
  void Started(std::size_t slot, const std::string& name);
  // The subject of the job in `slot` ended; its judging begins.
  void Judging(std::size_t slot);

 private:
  std::expected<Trace, std::string> Execute(const Job& job, std::uint64_t seed);
  // Whether a result keeps its trace (and the judge's bands on it): not when runs are slimmed
  // with nowhere to keep their full form (--no-reports), where nothing would read it.
  bool KeepsTraces() const { return options_.spool || !options_.slim_runs; }
  // The checks of a run that broke no protocol, against its declared policy's twin when it has
  // one (`seed`: the run's own).
  std::vector<report::CheckResult> Checks(const Job& job, const Trace& trace,
                                          const DeclaredPolicy& declared,
                                          const Tolerance& tolerance, std::uint64_t seed) const;
  // The provider's seed is the run seed itself (plus the repetition), not a per-scenario hash:
  // a chaos scenario documents its draws for a session seed, and --seed picks other draws.
  std::uint64_t ProviderSeed(const Job& job) const {
    return options_.seed + static_cast<std::uint64_t>(job.repetition);
  }

  // CompileSessions(scenario), shared by its runs in virtual time and its twins' runs: compiled
  // by the first, kept for the few scenarios run most recently (jobs go scenario by scenario,
  // so a run's scenario is nearly always one of them, and memory does not grow with the
  // catalogue).
  std::shared_ptr<const CompiledSessions> Compiled(const scenario::Scenario& scenario) const;
  static constexpr std::size_t kCompiledKept = 16;
  mutable std::mutex compiled_mutex_;
  mutable std::deque<std::pair<const scenario::Scenario*, std::shared_ptr<const CompiledSessions>>>
      compiled_;

  const RunnerOptions& options_;
  RealWorld* real_;
  const std::function<void(const RunProgress&)>& progress_;
  int total_;
  Clock::time_point run_start_ = Clock::now();
  std::mutex mutex_;
  int done_ = 0;
  int failed_ = 0;
  struct Running {
    std::string name;
    Clock::time_point since;
    std::optional<Clock::time_point> judged_since;  // set once its subject ended
  };
  std::map<std::size_t, Running> running_;
  // The progress update for the runs now (under mutex_).
  RunProgress Progress(const report::ScenarioResult* finished) const;
};

std::shared_ptr<const CompiledSessions> Runner::Compiled(const scenario::Scenario& scenario) const {
  {
    std::lock_guard lock(compiled_mutex_);
    const auto found =
        std::ranges::find(compiled_, &scenario, [](const auto& e) { return e.first; });
    if (found != compiled_.end()) return found->second;
  }
  std::shared_ptr<const CompiledSessions> compiled = CompileSessions(scenario);
  std::lock_guard lock(compiled_mutex_);
  if (compiled_.size() >= kCompiledKept) compiled_.pop_front();
  compiled_.emplace_back(&scenario, compiled);
  return compiled;
}

std::expected<Trace, std::string> Runner::Execute(const Job& job, std::uint64_t seed) {
  const scenario::Scenario& scenario = *job.scenario;
  auto policy = options_.policy ? *options_.policy : ScenarioPolicy(scenario);
  if (!policy) return std::unexpected(policy.error());
  if (!job.real) {
    VirtualRunOptions virtual_options;
    virtual_options.seed = seed;
    virtual_options.provider_seed = ProviderSeed(job);
    virtual_options.policy = *policy;
    virtual_options.max_requests = options_.max_virtual_requests;
    virtual_options.compiled = Compiled(scenario);
    return RunVirtual(scenario, virtual_options);
  }
  RealRunOptions real_options{.seed = seed,
                              .provider_seed = ProviderSeed(job),
                              .timeout = options_.timeout,
                              .max_line_bytes = options_.max_line_bytes,
                              .stop = options_.stop};
  if (options_.gateway) {
    return real_->RunGatewaySubject(scenario, *options_.gateway, *policy, real_options);
  }
  if (options_.adapter) return real_->RunAdapterSubject(scenario, *options_.adapter, real_options);
  if (options_.exec) {
    return real_->RunAppSubject(scenario, {*options_.exec, options_.app_policy}, real_options);
  }
  return real_->RunReference(scenario, *policy, real_options);
}

// The last few lines of a subject's stderr, for the console and the reports.
std::string StderrTail(std::string_view text) {
  constexpr int kLines = 12;
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  std::size_t at = text.size();
  for (int lines = 0; at > 0; --at) {
    if (text[at - 1] == '\n' && ++lines == kLines) break;
  }
  return std::string(text.substr(at));
}

// A subject that broke the protocol, or declared a policy the runner cannot read.
std::optional<SubjectFault> SubjectFaultOf(const Trace& trace, const DeclaredPolicy& declared) {
  if (trace.subject_fault) return trace.subject_fault;
  if (declared.error) {
    return SubjectFault{"bad-policy",
                        "the policy in adapter/hello is invalid " + *declared.error +
                            " (docs/policy.md lists every key)",
                        std::nullopt, std::nullopt};
  }
  return std::nullopt;
}

std::optional<report::ScenarioResult> Runner::RunOne(const Job& job, std::size_t slot) {
  const scenario::Scenario& scenario = *job.scenario;
  const std::uint64_t seed = RunSeed(options_.seed, scenario.name, job.repetition);
  report::ScenarioResult result = Describe(scenario, job, seed);
  const auto started = Clock::now();
  result.started_ms = std::chrono::duration<double, std::milli>(started - run_start_).count();
  auto trace = Execute(job, seed);
  result.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  if (!trace) {
    result.verdict = report::Verdict::kError;
    result.error = trace.error();
    return result;
  }
  if (trace->interrupted) return std::nullopt;
  // Only a real run's subject can stop long before its judging ends; a virtual run's phase would
  // only redraw the live line once more per run.
  if (job.real) Judging(slot);
  Judged(job, *trace, result);
  return result;
}

void Runner::Judged(const Job& job, const Trace& trace, report::ScenarioResult& result) const {
  // Virtual time is the seed's alone, times and all; real time is not, so there only the
  // provider's plans and the verdicts count.
  if (!job.real && KeepsTraces()) {
    std::tie(result.trace, result.fingerprint) = TraceJsonAndFingerprint(trace);
  } else if (!job.real) {
    result.fingerprint = Fingerprint(trace);
  } else if (KeepsTraces()) {
    result.trace = TraceToJson(trace);
  }
  JudgeInto(job, trace, result);
  if (job.real) result.fingerprint = SeededFingerprint(trace, VerdictsText(result));
}

bool AnExpectationFailed(const std::vector<report::CheckResult>& checks) {
  return std::ranges::any_of(checks, [](const report::CheckResult& check) {
    return check.id.starts_with("EXPECT-") && check.status == report::CheckStatus::kFail;
  });
}

void Runner::JudgeInto(const Job& job, const Trace& trace, report::ScenarioResult& result) const {
  const DeclaredPolicy declared = ReadDeclaredPolicy(trace);
  if (std::optional<SubjectFault> fault = SubjectFaultOf(trace, declared)) {
    result.verdict = report::Verdict::kError;
    result.error = fault->message;
    result.subject_error = report::SubjectError{fault->kind, fault->exit_status, fault->signal,
                                                StderrTail(trace.subject_stderr)};
    return;
  }
  const Tolerance tolerance = job.real
                                  ? RealTolerance(trace.scheduling_lateness.value_or(Duration{0}))
                                  : VirtualTolerance();
  result.checks = Checks(job, trace, declared, tolerance, result.seed);
  if (KeepsTraces()) result.trace["bounds"] = TimelineBounds(*job.scenario, trace, tolerance);
  result.black_box = IsBlackBox(trace);
  result.metrics = ComputeMetrics(trace);
  result.verdict = report::VerdictOf(result.checks, options_.fail_on);
}

std::vector<report::CheckResult> Runner::Checks(const Job& job, const Trace& trace,
                                                const DeclaredPolicy& declared,
                                                const Tolerance& tolerance,
                                                std::uint64_t seed) const {
  const scenario::Scenario& scenario = *job.scenario;
  if (trace.gateway) return JudgeGateway(trace, tolerance);  // the subject is the gateway
  // The oracle is the subject's own declared policy: what its twin reaches, it may reach.
  const Duration lead = job.real ? LeadOfFirstAttempt(trace) : Duration{0};
  const auto twin_at = [&](Duration scripted_lead, int seeds) {
    return ComputeTwin(scenario, declared.policy, seed, ProviderSeed(job),
                       {.timeout_tolerance_ms = job.real ? tolerance.late_ms : 0,
                        .scripted_lead = scripted_lead,
                        .one_client = trace.one_client || trace.calls <= 1,
                        .seeds = seeds,
                        .max_requests = options_.max_virtual_requests,
                        .compiled = Compiled(scenario)});
  };
  // An app's first attempt is seen only when it arrives (a refused one never is): it began
  // anywhere between its launch, where its scripted time starts, and the first arrival. Its twin
  // runs at both ends, and what either reaches, the app may reach.
  const auto twin_over = [&](int seeds) {
    PolicyTwin twin = twin_at(lead, seeds);
    if (trace.own_request && lead > Duration{0}) MergeTwins(twin, twin_at(Duration{0}, seeds));
    return twin;
  };
  // A partial declaration has no twin: the twin runs a whole policy (declared_policy.h).
  if (!declared.usable() || declared.partial || DeclaresScenarioPolicy(declared, scenario)) {
    return Judge(scenario, trace, tolerance, nullptr);
  }
  PolicyTwin twin = twin_over(TwinOptions{}.seeds);
  auto checks = Judge(scenario, trace, tolerance, &twin);
  // Jitter makes some endings rare (every retry of a flapping route landing while it is down):
  // before an expectation calls the subject's ending one its policy cannot reach, the twin
  // looks for it over many more seeds.
  if (!AnExpectationFailed(checks)) return checks;
  twin = twin_over(kWitnessSeeds);
  return Judge(scenario, trace, tolerance, &twin);
}

void Runner::Started(std::size_t slot, const std::string& name) {
  std::lock_guard lock(mutex_);
  running_[slot] = {name, Clock::now(), std::nullopt};
}

void Runner::Judging(std::size_t slot) {
  std::lock_guard lock(mutex_);
  const auto it = running_.find(slot);
  if (it == running_.end()) return;
  it->second.judged_since = Clock::now();
  if (progress_) progress_(Progress(nullptr));
}

RunProgress Runner::Progress(const report::ScenarioResult* finished) const {
  RunProgress progress{.done = done_, .total = total_, .failed = failed_, .finished = finished};
  const auto oldest =
      std::ranges::min_element(running_, {}, [](const auto& item) { return item.second.since; });
  if (oldest != running_.end()) {
    progress.slowest_running = oldest->second.name;
    progress.slowest_since = oldest->second.since;
    progress.slowest_judging = oldest->second.judged_since.has_value();
    progress.slowest_judged_since = oldest->second.judged_since.value_or(Clock::time_point{});
  }
  return progress;
}

void Runner::Finished(const report::ScenarioResult* result, std::size_t slot) {
  std::lock_guard lock(mutex_);
  running_.erase(slot);
  if (result == nullptr) return;
  ++done_;
  if (result->verdict != report::Verdict::kPass) ++failed_;
  if (progress_) progress_(Progress(result));
}

// A real run's length as the same scenario takes with the reference client in virtual time
// (within [1 us, the timeout]; 1 us when that run fails).
Duration EstimatedLength(const scenario::Scenario& scenario, const RunnerOptions& options) {
  VirtualRunOptions estimate;
  estimate.policy =
      options.policy ? *options.policy : ScenarioPolicy(scenario).value_or(ref::RetryPolicy{});
  estimate.seed = RunSeed(options.seed, scenario.name, 0);
  estimate.provider_seed = options.seed;
  auto trace = RunVirtual(scenario, estimate);
  if (!trace) return Duration{1};
  return std::clamp(trace->ended, Duration{1},
                    std::chrono::duration_cast<Duration>(options.timeout));
}

// The order to start the jobs in: real runs take about as long as their scenario forces, and one
// long run started last ends alone, so the longest start first and the whole run takes about its
// longest scenario. A real run's length is estimated by the same scenario with the reference
// client in virtual time (microseconds each, once per scenario). Virtual runs, instant, go first:
// with --time both a user sees half the verdicts within a second instead of after the first real
// run, and the whole run still takes its longest real scenario. Results keep the job order
// whatever the start order.
std::vector<std::size_t> LongestFirst(const std::vector<Job>& jobs, const RunnerOptions& options) {
  std::map<const scenario::Scenario*, Duration> estimates;
  std::vector<std::pair<Duration, std::size_t>> order;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    Duration length = Duration::max();  // a virtual run: first
    if (jobs[i].real) {
      auto [it, fresh] = estimates.try_emplace(jobs[i].scenario, Duration{1});
      if (fresh) it->second = EstimatedLength(*jobs[i].scenario, options);
      length = it->second;
    }
    order.emplace_back(length, i);
  }
  std::ranges::stable_sort(order, std::greater<>{}, &std::pair<Duration, std::size_t>::first);
  std::vector<std::size_t> indices;
  for (const auto& [length, index] : order) indices.push_back(index);
  return indices;
}

}  // namespace

bool MatchesFilter(const scenario::Scenario& scenario, std::string_view filter) {
  bool any_positive = false;
  bool kept = false;
  std::size_t start = 0;
  while (start <= filter.size()) {
    std::size_t end = filter.find(',', start);
    if (end == std::string_view::npos) end = filter.size();
    std::string_view term = filter.substr(start, end - start);
    start = end + 1;
    if (term.empty()) continue;
    if (term.front() == '!') {
      if (TermMatches(scenario, term.substr(1))) return false;
      continue;
    }
    any_positive = true;
    kept = kept || TermMatches(scenario, term);
  }
  return !any_positive || kept;
}

std::optional<std::string> FilterProblem(std::string_view filter) {
  for (std::size_t at = filter.find(kDialectAtom); at != std::string_view::npos;
       at = filter.find(kDialectAtom, at + 1)) {
    const std::size_t begin = at + kDialectAtom.size();
    const std::string_view name = filter.substr(begin, filter.find_first_of(",+", begin) - begin);
    if (!scenario::ParseDialect(name)) {
      return fmt::format("--filter: no dialect '{}' ({})", name, scenario::DialectNames());
    }
  }
  return std::nullopt;
}

std::vector<scenario::Scenario> SelectScenarios(std::vector<scenario::Scenario> scenarios,
                                                std::string_view filter,
                                                std::optional<Shard> shard) {
  std::erase_if(scenarios, [&](const auto& s) { return !MatchesFilter(s, filter); });
  std::ranges::sort(scenarios, {}, &scenario::Scenario::name);
  if (!shard) return scenarios;
  return KeepShard(std::move(scenarios), *shard);
}

std::vector<scenario::Scenario> KeepShard(std::vector<scenario::Scenario> scenarios,
                                          const Shard& shard) {
  std::erase_if(scenarios, [&](const scenario::Scenario& s) { return !InShard(s.name, shard); });
  return scenarios;
}

int PlannedRuns(std::size_t scenarios, const RunnerOptions& options) {
  return static_cast<int>(scenarios) * std::max(1, options.repeat) *
         (options.world == WorldChoice::kBoth ? 2 : 1);
}

std::string SubjectLabel(const RunnerOptions& options) {
  if (!options.subject_label.empty()) return scenario::RedactSecrets(options.subject_label);
  if (options.adapter) return scenario::RedactSecrets(*options.adapter);
  if (options.exec) return scenario::RedactSecrets(*options.exec);
  if (options.gateway) return fmt::format("gateway {}", options.gateway->name);
  return fmt::format("faultline-ref {} (in-process)", kVersion);
}

std::uint64_t RunSeed(std::uint64_t seed, std::string_view name, int repetition) {
  const std::uint64_t hash =
      hashing::Fnv1a64(fmt::format("{}#{}", name, repetition), hashing::kFnv1aOffsetBasis ^ seed);
  return hash & 0x7fffffffffffffffULL;  // JSON readers without uint64 keep it exact-ish
}

namespace {

// Every run of the plan: each scenario, each repetition, in each world asked for.
std::vector<Job> PlanJobs(const std::vector<scenario::Scenario>& scenarios,
                          const RunnerOptions& options) {
  std::vector<Job> jobs;
  for (const scenario::Scenario& scenario : scenarios) {
    for (int repetition = 0; repetition < std::max(1, options.repeat); ++repetition) {
      if (options.world != WorldChoice::kReal) jobs.push_back({&scenario, false, repetition});
      if (options.world != WorldChoice::kVirtual) jobs.push_back({&scenario, true, repetition});
    }
  }
  return jobs;
}

// The result's heading, before any run.
report::RunResult ResultHeading(const RunnerOptions& options) {
  report::RunResult result;
  result.tool_version = fmt::format("faultline {}", kVersion);
  result.started_at = UtcNow();
  result.subject = SubjectLabel(options);
  result.subject_options = options.subject_options;
  result.world = options.world == WorldChoice::kBoth   ? "both"
                 : options.world == WorldChoice::kReal ? "real"
                                                       : "virtual";
  result.seed = options.seed;
  return result;
}

// A judged run as the result keeps it: whole, or slimmed with its full form in the spool.
report::ScenarioResult Kept(report::ScenarioResult run, std::size_t place,
                            const RunnerOptions& options) {
  if (options.spool) return options.spool->Keep(std::move(run), place);
  if (options.slim_runs) return report::SlimRun(std::move(run), {});
  return run;
}

// Runs the jobs on options.jobs threads, the longest first, until all ran or a stop request, into
// `runs` in job order (kept as Kept() keeps them; runs that never ran are left out). Each run
// lands in its own place as it finishes: no second copy of the runs is ever made.
void RunJobs(const std::vector<Job>& jobs, const RunnerOptions& options, Runner& runner,
             std::vector<report::ScenarioResult>& runs) {
  runs.resize(jobs.size());
  std::vector<char> ran(jobs.size(), 0);  // not vector<bool>: workers write neighbours at once
  const std::vector<std::size_t> order = LongestFirst(jobs, options);
  std::atomic<std::size_t> next{0};
  std::vector<std::jthread> workers;
  const int threads = std::clamp(options.jobs, 1, std::max(1, static_cast<int>(jobs.size())));
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (std::size_t k = next++; k < order.size() && !options.stop.stop_requested(); k = next++) {
        const std::size_t i = order[k];
        runner.Started(i, jobs[i].scenario->name);
        std::optional<report::ScenarioResult> run = runner.RunOne(jobs[i], i);
        runner.Finished(run ? &*run : nullptr, i);
        if (!run) continue;
        runs[i] = Kept(std::move(*run), i, options);
        ran[i] = 1;
      }
    });
  }
  workers.clear();  // joins
  std::size_t kept = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!ran[i]) continue;
    if (kept != i) runs[kept] = std::move(runs[i]);
    ++kept;
  }
  runs.resize(kept);
}

}  // namespace

report::RunResult JudgeRecorded(const std::vector<RecordedRun>& runs,
                                const RunnerOptions& options) {
  report::RunResult result = ResultHeading(options);
  const std::function<void(const RunProgress&)> no_progress;
  const Runner runner(options, nullptr, no_progress, static_cast<int>(runs.size()));
  std::vector<scenario::Scenario> scenarios;
  for (const RecordedRun& run : runs) {
    const Job job{run.scenario, true, 0};
    report::ScenarioResult judged = Describe(*run.scenario, job, options.seed);
    runner.Judged(job, run.trace, judged);
    result.scenarios.push_back(std::move(judged));
    scenarios.push_back(*run.scenario);
  }
  result.fingerprint = report::RunFingerprint(result.scenarios);
  report::Summarize(result);
  result.thresholds = JudgeThresholds(scenarios, options.thresholds, result.scenarios);
  return result;
}

std::expected<report::RunResult, std::string> RunAll(
    const std::vector<scenario::Scenario>& scenarios, const RunnerOptions& options,
    const std::function<void(const RunProgress&)>& progress) {
  const std::vector<Job> jobs = PlanJobs(scenarios, options);
  std::unique_ptr<RealWorld> real;
  if (options.world != WorldChoice::kVirtual) {
    auto started = RealWorld::Start();
    if (!started) return std::unexpected(started.error());
    real = std::move(*started);
  }
  report::RunResult result = ResultHeading(options);
  const auto started = Clock::now();
  Runner runner(options, real.get(), progress, static_cast<int>(jobs.size()));
  RunJobs(jobs, options, runner, result.scenarios);
  result.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  if (result.scenarios.size() < jobs.size()) {
    result.interrupted =
        report::Interruption{.reason = "stopped", .planned_runs = static_cast<int>(jobs.size())};
  }
  result.fingerprint = report::RunFingerprint(result.scenarios);
  report::Summarize(result);
  result.thresholds = JudgeThresholds(scenarios, options.thresholds, result.scenarios);
  return result;
}

}  // namespace faultline::harness
