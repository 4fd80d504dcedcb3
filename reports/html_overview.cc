// The top of the run report: what a person came for. Violations first, one row per scenario,
// world and check with the runs it failed in folded behind a count (a check failing in 40
// repetitions is one row, not 40), the command that reproduces them once per scenario; then the
// advisories in a section of their own (legal under the declared policy, so never mixed with
// violations), one block per check ID; crossed thresholds with the command that re-judges them.
#include <string>
#include <vector>

#include "fmt/format.h"
#include "reports/folded_checks.h"
#include "reports/html_run.h"
#include "reports/report.h"
#include "reports/text.h"

namespace faultline::report::internal {
namespace {

std::string Esc(std::string_view text) { return XmlEscape(text, true); }

// Capped so that 10,000 different failures stay readable; every run below has them all.
constexpr std::size_t kOverviewRows = 500;
// Runs listed by name behind a row's count; the rest are counted.
constexpr std::size_t kListedRuns = 50;
constexpr std::size_t kMessageChars = 400;

// "run 3 · seed 12": a link to the run.
std::string RunLink(const ScenarioResult& run) {
  return fmt::format(R"(<a href="#{}">run {}</a> · seed <span class="mono">{}</span>)",
                     RunAnchor(run), run.repetition + 1, run.seed);
}

// One run: its link. Several: "3 of 10 runs", expandable to every run with its seed.
std::string RunsCell(const FoldedCheck& check, int total) {
  if (check.runs.size() == 1) return RunLink(*check.runs.front());
  std::string list;
  for (std::size_t i = 0; i < check.runs.size() && i < kListedRuns; ++i) {
    list += "<li>" + RunLink(*check.runs[i]) + "</li>";
  }
  if (check.runs.size() > kListedRuns) {
    list += fmt::format("<li>and {} more</li>", check.runs.size() - kListedRuns);
  }
  return fmt::format(
      R"(<details class="runs"><summary>{} of {} runs</summary><ul>{}</ul></details>)",
      check.runs.size(), total, list);
}

std::string MessageCell(const FoldedCheck& check) {
  return fmt::format(
      R"(<pre class="evidence">{}</pre>)",
      Esc(Shorten(check.message.empty() ? check.statement : check.message, kMessageChars)));
}

// The violations table: a heading row per scenario (name, world, source, the reproduce command
// once), then a row per check.
void WriteViolations(const RunResult& result, const std::vector<FoldedScenario>& folded,
                     std::ostream& out) {
  out << R"(<table class="failures"><thead><tr><th>Check</th><th>Runs</th>)"
         R"(<th>First message</th></tr></thead>)";
  std::size_t rows = 0, left_out = 0;
  for (const FoldedScenario& scenario : folded) {
    if (rows >= kOverviewRows) {
      left_out += scenario.checks.size();
      continue;
    }
    const ScenarioResult& first = *scenario.first;
    out << fmt::format(
        R"(<tbody><tr class="scenario-row"><td colspan="3"><a href="#{}">{}</a> <span class="where">{}</span> <span class="source">{}</span><div class="reproduce">Reproduce: <code class="reproduce">{}</code></div></td></tr>)",
        RunAnchor(first), Esc(first.name), Esc(first.world), Esc(SourceText(first)),
        Esc(ReproduceCommand(result, first)));
    for (const FoldedCheck& check : scenario.checks) {
      ++rows;
      out << fmt::format(R"(<tr><td class="id">{}</td><td class="runs">{}</td><td>{}</td></tr>)",
                         Esc(check.id), RunsCell(check, scenario.runs), MessageCell(check));
    }
    out << "</tbody>";
  }
  out << "</table>";
  if (left_out > 0) {
    out << fmt::format(
        "<p class=\"note\">{} more failing checks are not listed here; every run below and "
        "result.json have them.</p>",
        left_out);
  }
}

// The advisories: a block per check ID (its statement once), a row per scenario and world.
void WriteAdvisories(const RunResult& result, std::ostream& out) {
  const std::vector<FoldedScenario> folded = FoldFailures(result, Severity::kAdvisory);
  if (folded.empty()) return;
  const int runs = RunsWithAdvisories(result);
  out << fmt::format(
      R"(<section class="overview advisories" id="advisories"><h2>Advisories <small>({} in {} run{})</small></h2>)"
      R"(<p class="facts-line">Legal under the subject's declared policy but harmful to its user or )"
      R"(the provider; they fail a run only with <code>--fail-on advisory</code>.</p>)",
      result.advisories(), runs, runs == 1 ? "" : "s");
  out << R"(<table class="failures advisory-list"><thead><tr><th>Scenario</th><th>Runs</th>)"
         R"(<th>First message</th></tr></thead>)";
  std::size_t rows = 0;
  for (const FoldedByCheck& by_check : GroupByCheck(folded)) {
    if (rows >= kOverviewRows) break;
    out << fmt::format(
        R"(<tbody><tr class="check-row"><td colspan="3"><span class="id">{}</span> {} <span class="where">{} run{} in {} scenario{}</span></td></tr>)",
        Esc(by_check.id), Esc(by_check.statement), by_check.runs, by_check.runs == 1 ? "" : "s",
        by_check.scenarios.size(), by_check.scenarios.size() == 1 ? "" : "s");
    for (const auto& [scenario, check] : by_check.scenarios) {
      ++rows;
      out << fmt::format(
          R"(<tr class="advisory"><td><a href="#{}">{}</a> <span class="where">{}</span></td><td class="runs">{}</td><td>{}</td></tr>)",
          RunAnchor(*check->runs.front()), Esc(scenario->first->name), Esc(scenario->first->world),
          RunsCell(*check, scenario->runs), MessageCell(*check));
    }
    out << "</tbody>";
  }
  out << "</table></section>\n";
}

// Thresholds as checks of the whole scenario: the crossed ones in the overview (with the command
// that re-judges them), every one in its own table.
void WriteThresholdRows(const RunResult& result, bool crossed_only, std::ostream& out) {
  out << "<table class=\"thresholds\"><thead><tr><th>Scenario</th><th>World</th>"
         "<th>Threshold</th><th>Status</th><th>Evidence</th><th>Reproduce</th></tr></thead><tbody>";
  for (const ThresholdResult& t : result.thresholds) {
    const bool crossed = t.status == CheckStatus::kFail;
    if (crossed_only && !crossed) continue;
    const std::string_view css = StatusClass(t.status);
    ScenarioResult anchor;
    anchor.name = t.name;
    anchor.world = t.world;
    out << fmt::format(
        R"(<tr class="{}"><td><a href="#{}">{}</a></td><td>{}</td><td class="id">{}</td><td><span class="badge {}">{}</span></td><td>{}</td><td>{}</td></tr>)",
        css, GroupAnchor(anchor), Esc(t.name), Esc(t.world), Esc(t.expression), css,
        crossed ? "crossed" : ToString(t.status), Esc(t.evidence),
        crossed
            ? fmt::format(R"(<code class="reproduce">{}</code>)", Esc(ReproduceCommand(result, t)))
            : "");
  }
  out << "</tbody></table>";
}

}  // namespace

void WriteThresholds(const RunResult& result, std::ostream& out) {
  if (result.thresholds.empty()) return;
  out << fmt::format("<h2>Thresholds <small>({} of {} crossed)</small></h2>",
                     result.thresholds_crossed(), result.thresholds.size());
  WriteThresholdRows(result, false, out);
  out << "\n";
}

void WriteOverview(const RunResult& result, std::ostream& out) {
  out << "<section class=\"overview\"><h2>Failures</h2>";
  if (result.thresholds_crossed() > 0) {
    out << "<h3>Thresholds crossed</h3>";
    WriteThresholdRows(result, true, out);
  }
  const std::vector<FoldedScenario> violations = FoldFailures(result, Severity::kViolation);
  if (violations.empty()) {
    // A run failed by its advisories alone (--fail-on advisory) lists them below.
    out << fmt::format("<p class=\"all-passed\">{}</p>",
                       result.failed() == 0 && result.errors() == 0
                           ? fmt::format("All {} runs passed.", result.scenarios.size())
                           : std::string("No violation: the failed runs failed on advisories."));
    if (result.advisories() > 0) {
      out << fmt::format(
          R"(<p class="facts-line"><a href="#advisories">{} advisor{} below</a>.</p>)",
          result.advisories(), result.advisories() == 1 ? "y" : "ies");
    }
  } else {
    WriteViolations(result, violations, out);
  }
  out << "</section>\n";
  WriteAdvisories(result, out);
}

}  // namespace faultline::report::internal
