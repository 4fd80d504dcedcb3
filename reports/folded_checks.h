// The failed checks of a run folded the way a person reads them: one entry per scenario, world and
// check with every run it failed in, so that a check failing in 40 repetitions is one line with
// "40 runs", not 40. Violations (and broken runs) and advisories are folded apart: a report lists
// them in tables of their own. The one home of this folding for report.html, summary.md and
// junit.xml. Internal to reports/. Pure functions; the entries point into the result.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reports/run_result.h"

namespace faultline::report::internal {

// One check (or a broken run) of one scenario in one world, over every run it failed in.
struct FoldedCheck {
  std::string id;            // the check's ID; for a broken run the subject error kind or "error"
  std::string statement;     // what must hold (empty for a broken run)
  bool error = false;        // a run that broke (Verdict::kError), not a failed check
  std::string_view message;  // the evidence (or error text) of its first run
  std::vector<const ScenarioResult*> runs;  // every run it failed in, in run order
};

// One scenario in one world with its folded checks, in the order they first failed.
struct FoldedScenario {
  const ScenarioResult* first = nullptr;  // its first run with one of `checks`: the one to rerun
  int runs = 0;                           // every run of this scenario and world in the result
  std::vector<FoldedCheck> checks;
};

// Violations: the failed violation checks of failed runs, and every broken run as an entry of
// its own. Advisories: the failed advisory checks of every run that was judged (passed or failed:
// a passed run keeps its advisories). Scenarios in the order of their first such run.
std::vector<FoldedScenario> FoldFailures(const RunResult& result, Severity severity);

// The folded advisories regrouped by check ID (sorted), for the reports that list them per check.
struct FoldedByCheck {
  std::string id;
  std::string statement;
  int runs = 0;  // runs it failed in, over every scenario
  std::vector<std::pair<const FoldedScenario*, const FoldedCheck*>> scenarios;
};
std::vector<FoldedByCheck> GroupByCheck(const std::vector<FoldedScenario>& folded);

// "run 1" or "runs 1, 2, 5" ... the 1-based repetitions of `runs`, at most `max` of them listed
// ("runs 1, 2, 3 and 7 more").
std::string RunList(const std::vector<const ScenarioResult*>& runs, std::size_t max = 10);

// Runs of `result` that have at least one failed advisory check.
int RunsWithAdvisories(const RunResult& result);
bool HasAdvisory(const ScenarioResult& scenario);

}  // namespace faultline::report::internal
