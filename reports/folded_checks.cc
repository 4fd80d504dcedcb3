#include "reports/folded_checks.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "fmt/format.h"

namespace faultline::report::internal {
namespace {

// Folds into `folded` with `index` keyed by scenario name and world, then check ID.
class Folder {
 public:
  explicit Folder(const RunResult& result) {
    for (const ScenarioResult& s : result.scenarios) ++runs_[{s.name, s.world}];
  }
  void Add(const ScenarioResult& run, std::string id, std::string_view statement, bool error,
           std::string_view message) {
    auto [at, inserted] = scenarios_.try_emplace({run.name, run.world}, folded_.size());
    if (inserted) folded_.push_back({&run, runs_[{run.name, run.world}], {}});
    FoldedScenario& scenario = folded_[at->second];
    auto check = std::ranges::find(scenario.checks, id, &FoldedCheck::id);
    if (check == scenario.checks.end()) {
      scenario.checks.push_back({std::move(id), std::string(statement), error, message, {}});
      check = scenario.checks.end() - 1;
    }
    if (check->runs.empty() || check->runs.back() != &run) check->runs.push_back(&run);
  }
  std::vector<FoldedScenario> Take() { return std::move(folded_); }

 private:
  std::map<std::pair<std::string_view, std::string_view>, int> runs_;
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> scenarios_;
  std::vector<FoldedScenario> folded_;
};

}  // namespace

std::vector<FoldedScenario> FoldFailures(const RunResult& result, Severity severity) {
  Folder folder(result);
  for (const ScenarioResult& run : result.scenarios) {
    if (run.verdict == Verdict::kError) {
      if (severity == Severity::kViolation) {
        folder.Add(run, run.subject_error ? run.subject_error->kind : "error", "", true, run.error);
      }
      continue;
    }
    // A passed run has no failed violation; its advisories count.
    if (severity == Severity::kViolation && run.verdict != Verdict::kFail) continue;
    for (const CheckResult& check : run.checks) {
      if (check.status != CheckStatus::kFail || check.severity != severity) continue;
      folder.Add(run, check.id, check.statement, false, check.evidence);
    }
  }
  return folder.Take();
}

std::vector<FoldedByCheck> GroupByCheck(const std::vector<FoldedScenario>& folded) {
  std::map<std::string_view, FoldedByCheck> by_id;
  for (const FoldedScenario& scenario : folded) {
    for (const FoldedCheck& check : scenario.checks) {
      FoldedByCheck& entry = by_id[check.id];
      if (entry.id.empty()) {
        entry.id = check.id;
        entry.statement = check.statement;
      }
      entry.runs += static_cast<int>(check.runs.size());
      entry.scenarios.emplace_back(&scenario, &check);
    }
  }
  std::vector<FoldedByCheck> out;
  for (auto& [id, entry] : by_id) out.push_back(std::move(entry));
  return out;
}

std::string RunList(const std::vector<const ScenarioResult*>& runs, std::size_t max) {
  std::string text = runs.size() == 1 ? "run " : "runs ";
  for (std::size_t i = 0; i < runs.size() && i < max; ++i) {
    text += fmt::format("{}{}", i == 0 ? "" : ", ", runs[i]->repetition + 1);
  }
  if (runs.size() > max) text += fmt::format(" and {} more", runs.size() - max);
  return text;
}

bool HasAdvisory(const ScenarioResult& scenario) {
  return std::ranges::any_of(scenario.checks, [](const CheckResult& check) {
    return check.severity == Severity::kAdvisory && check.status == CheckStatus::kFail;
  });
}

int RunsWithAdvisories(const RunResult& result) {
  return static_cast<int>(std::ranges::count_if(result.scenarios, HasAdvisory));
}

}  // namespace faultline::report::internal
