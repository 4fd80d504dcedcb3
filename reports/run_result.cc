#include "reports/run_result.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>

#include "fmt/format.h"
#include "hashing/fnv1a.h"
#include "reports/text.h"

namespace faultline::report {
namespace {

constexpr std::array<std::pair<CheckStatus, std::string_view>, 3> kCheckStatusNames{{
    {CheckStatus::kPass, "pass"},
    {CheckStatus::kFail, "fail"},
    {CheckStatus::kNotApplicable, "n/a"},
}};

constexpr std::array<std::pair<Verdict, std::string_view>, 3> kVerdictNames{{
    {Verdict::kPass, "pass"},
    {Verdict::kFail, "fail"},
    {Verdict::kError, "error"},
}};

template <typename Enum, std::size_t N>
std::string_view NameOf(const std::array<std::pair<Enum, std::string_view>, N>& names, Enum value) {
  for (const auto& [candidate, name] : names) {
    if (candidate == value) return name;
  }
  return "unknown";
}

template <typename Enum, std::size_t N>
std::optional<Enum> ValueOf(const std::array<std::pair<Enum, std::string_view>, N>& names,
                            std::string_view text) {
  for (const auto& [value, name] : names) {
    if (name == text) return value;
  }
  return std::nullopt;
}

int CountVerdict(const RunResult& result, Verdict verdict) {
  return static_cast<int>(
      std::count_if(result.scenarios.begin(), result.scenarios.end(),
                    [&](const ScenarioResult& s) { return s.verdict == verdict; }));
}

std::optional<LatencySummary::Percentiles> PercentilesOf(const SampleSeries& series) {
  if (series.empty()) return std::nullopt;
  return LatencySummary::Percentiles{
      .p50 = series.Percentile(50), .p95 = series.Percentile(95), .p99 = series.Percentile(99)};
}

// One scenario name + world's samples while Summarize reads its runs.
struct LatencySeries {
  int runs = 0, samples = 0;
  SampleSeries first_token, terminal, overhead;
};

// A field's value as an error quotes it: whole when short, else its start and its size.
std::string Quoted(std::string_view value) {
  constexpr std::size_t kChars = 120;
  if (value.size() <= kChars) return fmt::format("\"{}\"", value);
  const std::string shown = internal::Shorten(value.substr(0, 4 * kChars), kChars);
  return fmt::format("\"{}\" ({} bytes, the first {} characters shown)", shown, value.size(),
                     kChars);
}

// Fails when a part disagrees with the first on a field that must be shared (tool, subject).
std::expected<void, std::string> CheckSameField(const RunResult& first, const RunResult& part,
                                                std::size_t number, std::string_view label,
                                                std::string RunResult::*field) {
  if (part.*field == first.*field) return {};
  return std::unexpected(fmt::format("part {}: {} {} differs from part 1's {}", number, label,
                                     Quoted(part.*field), Quoted(first.*field)));
}

// At most kMaxStderrTail bytes, as a run keeps them: the last ones, after a line saying how many
// earlier ones were cut (never in the middle of a UTF-8 sequence).
void BoundStderrTail(std::string& tail) {
  if (tail.size() <= kMaxStderrTail) return;
  constexpr std::size_t kNoteRoom = 100;
  std::size_t cut = tail.size() - (kMaxStderrTail - kNoteRoom);
  while (cut < tail.size() && (static_cast<unsigned char>(tail[cut]) & 0xC0) == 0x80) ++cut;
  tail =
      fmt::format("[faultline report merge: the first {} bytes of this stderr were cut]\n", cut) +
      tail.substr(cut);
}

// Joins `reason` into the reasons of the parts interrupted so far (each once).
void JoinInterruption(std::optional<Interruption>& merged, const Interruption& part) {
  if (!merged) merged.emplace();
  if (merged->reason.find(part.reason) == std::string::npos) {
    merged->reason += (merged->reason.empty() ? "" : "+") + part.reason;
  }
}

// Each threshold in the place of its scenario's runs: by name, then world as runs order them.
void SortThresholds(std::vector<ThresholdResult>& thresholds) {
  const auto run_of = [](const ThresholdResult& threshold) {
    ScenarioResult run;
    run.name = threshold.name;
    run.world = threshold.world;
    return run;
  };
  std::ranges::stable_sort(thresholds, [&](const ThresholdResult& a, const ThresholdResult& b) {
    return RunOrderLess(run_of(a), run_of(b));
  });
}

}  // namespace

std::string_view ToString(CheckStatus status) { return NameOf(kCheckStatusNames, status); }

std::optional<CheckStatus> ParseCheckStatus(std::string_view text) {
  return ValueOf(kCheckStatusNames, text);
}

std::string_view ToString(Verdict verdict) { return NameOf(kVerdictNames, verdict); }

std::optional<Verdict> ParseVerdict(std::string_view text) { return ValueOf(kVerdictNames, text); }

ScenarioResult SlimRun(ScenarioResult run, DetailsRef details) {
  run.trace = nullptr;
  // clear() and shrink_to_fit(): assigning {} would keep the buffers.
  run.description.clear();
  run.description.shrink_to_fit();
  run.tags.clear();  // the same for every run of a scenario: about 140 bytes a run
  run.tags.shrink_to_fit();
  run.dialect.clear();
  run.dialect.shrink_to_fit();
  std::erase_if(run.checks,
                [](const CheckResult& check) { return check.status != CheckStatus::kFail; });
  run.checks.shrink_to_fit();
  run.details = std::move(details);
  return run;
}

FullRun::FullRun(const ScenarioResult& run) : run_(&run) {
  if (!run.details || !run.details->from) return;
  loaded_ = run.details->from->Read(run.details->at, run.details->size);
  if (loaded_) run_ = &*loaded_;
}

int RunResult::passed() const { return CountVerdict(*this, Verdict::kPass); }
int RunResult::failed() const { return CountVerdict(*this, Verdict::kFail); }
int RunResult::errors() const { return CountVerdict(*this, Verdict::kError); }

std::vector<CallMetrics> CallSamples(const Metrics& metrics) {
  if (!metrics.calls.empty()) return metrics.calls;
  return {CallMetrics{.call = 0,
                      .first_token_ms = metrics.first_token_ms,
                      .terminal_ms = metrics.terminal_ms,
                      .attempts = metrics.attempts}};
}

int RunResult::thresholds_crossed() const {
  return static_cast<int>(std::ranges::count_if(
      thresholds, [](const ThresholdResult& t) { return t.status == CheckStatus::kFail; }));
}

int RunResult::advisories() const {
  int count = 0;
  for (const ScenarioResult& scenario : scenarios) {
    count += static_cast<int>(std::ranges::count_if(scenario.checks, [](const CheckResult& c) {
      return c.severity == Severity::kAdvisory && c.status == CheckStatus::kFail;
    }));
  }
  return count;
}

std::string_view ToString(Severity severity) {
  return severity == Severity::kAdvisory ? "advisory" : "violation";
}

std::optional<Severity> ParseSeverity(std::string_view text) {
  if (text == "violation") return Severity::kViolation;
  if (text == "advisory") return Severity::kAdvisory;
  return std::nullopt;
}

Verdict VerdictOf(const std::vector<CheckResult>& checks, const FailPolicy& fail_on) {
  const bool failed = std::ranges::any_of(checks, [&](const CheckResult& check) {
    return check.status == CheckStatus::kFail &&
           (check.severity == Severity::kViolation || fail_on.advisories);
  });
  return failed ? Verdict::kFail : Verdict::kPass;
}

void Summarize(RunResult& result) {
  using Key = std::pair<std::string, std::string>;  // name + world
  std::vector<Key> order;                           // first appearance, of the open series
  std::map<Key, LatencySeries> open;
  result.latency.clear();
  const auto close_all = [&] {
    for (const Key& key : order) {
      LatencySeries& series = open[key];
      if (series.samples < 2) continue;
      result.latency.push_back({.name = key.first,
                                .world = key.second,
                                .runs = series.runs,
                                .samples = series.samples,
                                .first_token_ms = PercentilesOf(series.first_token),
                                .terminal_ms = PercentilesOf(series.terminal),
                                .recovery_overhead_ms = PercentilesOf(series.overhead)});
    }
    order.clear();
    open.clear();
  };
  // In the canonical order a name's runs are together: its series close when the next name
  // begins, so one name's samples are held at a time.
  const bool canonical = std::ranges::is_sorted(result.scenarios, RunOrderLess);
  for (const ScenarioResult& run : result.scenarios) {
    if (canonical && !order.empty() && order.back().first != run.name) close_all();
    Key key{run.name, run.world};
    auto [at, fresh] = open.try_emplace(key);
    if (fresh) order.push_back(std::move(key));
    LatencySeries& series = at->second;
    ++series.runs;
    if (run.metrics.recovery_overhead_ms) series.overhead.Add(*run.metrics.recovery_overhead_ms);
    for (const CallMetrics& call : CallSamples(run.metrics)) {
      ++series.samples;
      if (call.first_token_ms) series.first_token.Add(*call.first_token_ms);
      if (call.terminal_ms) series.terminal.Add(*call.terminal_ms);
    }
  }
  close_all();
}

bool RunOrderLess(const ScenarioResult& a, const ScenarioResult& b) {
  const auto rank = [](const std::string& world) {
    return world == "virtual" ? 0 : world == "real" ? 1 : 2;
  };
  return std::forward_as_tuple(a.name, a.repetition, rank(a.world), a.world) <
         std::forward_as_tuple(b.name, b.repetition, rank(b.world), b.world);
}

std::string RunFingerprint(const std::vector<ScenarioResult>& scenarios) {
  std::uint64_t hash = hashing::kFnv1aOffsetBasis;
  const auto add = [&hash](const ScenarioResult& scenario) {
    hash = hashing::Fnv1a64(scenario.fingerprint, hash);
    hash = hashing::Fnv1a64("|", hash);  // separator: ["ab","c"] and ["a","bc"] differ
  };
  // Runs from RunAll and Merge are in the canonical order already: no sorted copy to hold.
  if (std::ranges::is_sorted(scenarios, RunOrderLess)) {
    std::ranges::for_each(scenarios, add);
  } else {
    std::vector<const ScenarioResult*> ordered;
    for (const ScenarioResult& scenario : scenarios) ordered.push_back(&scenario);
    std::ranges::stable_sort(ordered, [](const ScenarioResult* a, const ScenarioResult* b) {
      return RunOrderLess(*a, *b);
    });
    for (const ScenarioResult* scenario : ordered) add(*scenario);
  }
  return fmt::format("{:016x}", hash);
}

std::expected<RunResult, std::string> Merge(const std::vector<RunResult>& parts) {
  ResultMerger merger;
  for (const RunResult& part : parts) {
    if (auto added = merger.Add(part); !added) return std::unexpected(added.error());
  }
  return std::move(merger).Finish();
}

std::expected<void, std::string> ResultMerger::Add(RunResult part) {
  const std::size_t number = parts_ + 1;
  if (parts_ > 0) {
    for (const auto& [label, field] :
         {std::pair{"tool version", &RunResult::tool_version}, {"subject", &RunResult::subject}}) {
      if (auto same = CheckSameField(merged_, part, number, label, field); !same) return same;
    }
  }
  // Every run is checked before anything changes, so a refused part leaves nothing behind.
  std::map<RunKey, std::size_t> fresh;
  for (const ScenarioResult& scenario : part.scenarios) {
    RunKey key{scenario.name, scenario.world, scenario.repetition};
    const auto earlier = seen_.find(key);
    const std::size_t other = earlier != seen_.end() ? earlier->second : number;
    if (earlier != seen_.end() || !fresh.emplace(std::move(key), number).second) {
      return std::unexpected(fmt::format(
          "scenario \"{}\" (world {}, repetition {}) appears twice: in part {} and part {}",
          scenario.name, scenario.world, scenario.repetition, other, number));
    }
  }
  seen_.merge(fresh);
  parts_ = number;
  if (number == 1) {
    merged_.format = kResultFormat;
    merged_.tool_version = part.tool_version;
    merged_.subject = part.subject;
    merged_.subject_options = part.subject_options;
    merged_.seed = part.seed;
    merged_.world = part.world;
  }
  if (part.world != merged_.world) merged_.world = "mixed";
  if (!part.shard.empty()) merged_.shard += (merged_.shard.empty() ? "" : "+") + part.shard;
  // RFC 3339 UTC timestamps of one format order like strings.
  if (!part.started_at.empty() &&
      (merged_.started_at.empty() || part.started_at < merged_.started_at)) {
    merged_.started_at = part.started_at;
  }
  merged_.wall_ms = std::max(merged_.wall_ms, part.wall_ms);
  planned_runs_ +=
      part.interrupted ? part.interrupted->planned_runs : static_cast<int>(part.scenarios.size());
  if (part.interrupted) JoinInterruption(merged_.interrupted, *part.interrupted);
  for (ScenarioResult& scenario : part.scenarios) {
    merged_.scenarios.push_back(std::move(scenario));
    if (auto& error = merged_.scenarios.back().subject_error) BoundStderrTail(error->stderr_tail);
  }
  std::ranges::move(part.thresholds, std::back_inserter(merged_.thresholds));
  return {};
}

std::expected<RunResult, std::string> ResultMerger::Finish() && {
  if (parts_ == 0) return std::unexpected("nothing to merge: no results given");
  if (merged_.interrupted) merged_.interrupted->planned_runs = planned_runs_;
  std::ranges::stable_sort(merged_.scenarios, RunOrderLess);
  SortThresholds(merged_.thresholds);
  merged_.fingerprint = RunFingerprint(merged_.scenarios);
  Summarize(merged_);
  return std::move(merged_);
}

}  // namespace faultline::report
