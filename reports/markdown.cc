// Markdown for a GitHub step summary ($GITHUB_STEP_SUMMARY): a headline, the failures first
// (one row per scenario, world and check, its runs folded), the advisories apart (folded per
// check ID), then the thresholds (crossed first), then one row per
// scenario and world (repeated runs folded into counts and medians), then the latency
// percentiles; always under 1 MiB.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "reports/folded_checks.h"
#include "reports/report.h"
#include "reports/text.h"

namespace faultline::report {
namespace {

using internal::FormatBytes;
using internal::FormatMs;
using internal::MarkdownCell;

constexpr std::size_t kEvidenceChars = 240;

std::string_view VerdictBadge(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "✅ pass";
    case Verdict::kFail:
      return "❌ fail";
    case Verdict::kError:
      return "⚠️ error";
  }
  return "?";
}

// A code span when the text allows one, escaped text otherwise. In a GitHub table a '|' ends the
// cell even inside a code span unless escaped.
std::string Code(std::string_view text) {
  if (text.empty()) return "–";
  if (text.find_first_of("`\n\r") != std::string_view::npos) return MarkdownCell(text);
  std::string span = "`";
  for (const char c : text) span += c == '|' ? std::string("\\|") : std::string(1, c);
  return span + "`";
}

std::string Headline(const RunResult& result) {
  const std::string_view icon = result.errors() > 0                                      ? "⚠️"
                                : result.failed() > 0 || result.thresholds_crossed() > 0 ? "❌"
                                                                                         : "✅";
  std::string counts = fmt::format("{} passed", result.passed());
  if (result.failed() > 0) counts = fmt::format("{} failed, {}", result.failed(), counts);
  if (result.errors() > 0) {
    counts =
        fmt::format("{} error{}, {}", result.errors(), result.errors() == 1 ? "" : "s", counts);
  }
  if (result.advisories() > 0) {
    counts +=
        fmt::format(" · {} advisor{}", result.advisories(), result.advisories() == 1 ? "y" : "ies");
  }
  if (result.thresholds_crossed() > 0) {
    counts += fmt::format(" · {} of {} thresholds crossed", result.thresholds_crossed(),
                          result.thresholds.size());
  }
  std::string headline = fmt::format("## {} faultline: {}\n\n", icon, counts);
  if (result.interrupted) {
    headline += fmt::format("> **Interrupted**: {}\n\n", internal::InterruptionText(result));
  }
  return headline;
}

std::string Details(const RunResult& result) {
  std::string line = fmt::format("**Subject** {} · **world** {} · **seed** {}",
                                 Code(result.subject), MarkdownCell(result.world), result.seed);
  if (!result.shard.empty()) line += fmt::format(" · **shard** {}", MarkdownCell(result.shard));
  line += fmt::format(" · **fingerprint** {}", Code(result.fingerprint));
  line +=
      fmt::format(" · {} scenario runs in {}", result.scenarios.size(), FormatMs(result.wall_ms));
  return line + "\n\n";
}

// Rows of one table within a byte budget: past it, rows are counted, not written, and the table
// ends with a note saying how many were left out. Keeps summary.md under the 1 MiB cap of a
// GitHub step summary whatever the run's size.
class BudgetedTable {
 public:
  BudgetedTable(std::string& out, std::size_t budget) : out_(out), limit_(out.size() + budget) {}
  void Row(const std::string& row) {
    if (omitted_ > 0 || out_.size() + row.size() > limit_) {
      ++omitted_;
      return;
    }
    out_ += row;
  }
  void End(std::string_view what) {
    if (omitted_ > 0) {
      out_ += fmt::format(
          "\n_{} more {} not shown (summary.md stays under 1 MiB); result.json and report.html "
          "have them all._\n",
          omitted_, what);
    }
    out_ += '\n';
  }

 private:
  std::string& out_;
  std::size_t limit_;
  std::size_t omitted_ = 0;
};

// GitHub rejects a step summary over 1 MiB; the header and notes take well under the margin.
constexpr std::size_t kSummaryBudget = 1000 * 1000;

// "3 of 5: runs 1, 2, 4": the runs a check failed in, of the scenario's runs.
std::string RunsCell(const internal::FoldedCheck& check, int total) {
  const std::string list = internal::RunList(check.runs);
  if (total == 1) return list;
  return fmt::format("{} of {}: {}", check.runs.size(), total, list);
}

std::string MessageCell(const internal::FoldedCheck& check) {
  return MarkdownCell(
      internal::Shorten(check.message.empty() ? check.statement : check.message, kEvidenceChars));
}

// One row per scenario, world and check (its runs folded into one cell), the command that
// reproduces the scenario on its first row only.
void WriteFailures(const RunResult& result, std::string& out, std::size_t budget) {
  const std::vector<internal::FoldedScenario> folded =
      internal::FoldFailures(result, Severity::kViolation);
  if (folded.empty()) return;
  out +=
      "### Failures\n\n| Scenario | World | Check | Runs | First message | Reproduce |\n"
      "| --- | --- | --- | --- | --- | --- |\n";
  BudgetedTable table(out, budget);
  for (const internal::FoldedScenario& scenario : folded) {
    std::string reproduce = Code(ReproduceCommand(result, *scenario.first));
    for (const internal::FoldedCheck& check : scenario.checks) {
      table.Row(fmt::format("| {} | {} | {} | {} | {} | {} |\n", MarkdownCell(scenario.first->name),
                            MarkdownCell(scenario.first->world), MarkdownCell(check.id),
                            RunsCell(check, scenario.runs), MessageCell(check), reproduce));
      reproduce = "↑";  // once per scenario: the rows below it share it
    }
  }
  table.End("failed checks");
}

// Advisories apart from the failures (they do not fail a run unless asked), folded per check ID:
// what each asks for once, then a row per scenario and world with its runs folded.
void WriteAdvisories(const RunResult& result, std::string& out, std::size_t budget) {
  const std::vector<internal::FoldedScenario> folded =
      internal::FoldFailures(result, Severity::kAdvisory);
  if (folded.empty()) return;
  const std::vector<internal::FoldedByCheck> by_check = internal::GroupByCheck(folded);
  out += fmt::format(
      "### Advisories\n\n{} in {} run{}: legal under the subject's declared policy but harmful "
      "to its user or the provider; they fail the run only with `--fail-on advisory`.\n\n",
      result.advisories(), internal::RunsWithAdvisories(result),
      internal::RunsWithAdvisories(result) == 1 ? "" : "s");
  for (const internal::FoldedByCheck& check : by_check) {
    out += fmt::format("- **{}** ({} run{} in {} scenario{}): {}\n", MarkdownCell(check.id),
                       check.runs, check.runs == 1 ? "" : "s", check.scenarios.size(),
                       check.scenarios.size() == 1 ? "" : "s", MarkdownCell(check.statement));
  }
  out +=
      "\n| Check | Scenario | World | Runs | First message |\n"
      "| --- | --- | --- | --- | --- |\n";
  BudgetedTable table(out, budget);
  for (const internal::FoldedByCheck& check : by_check) {
    for (const auto& [scenario, folded_check] : check.scenarios) {
      table.Row(fmt::format("| {} | {} | {} | {} | {} |\n", MarkdownCell(check.id),
                            MarkdownCell(scenario->first->name),
                            MarkdownCell(scenario->first->world),
                            RunsCell(*folded_check, scenario->runs), MessageCell(*folded_check)));
    }
  }
  table.End("advisories");
}

// Every threshold, the crossed ones first, each crossed one with the command that re-judges it.
void WriteThresholds(const RunResult& result, std::string& out, std::size_t budget) {
  if (result.thresholds.empty()) return;
  out +=
      "### Thresholds\n\n| Scenario | World | Threshold | Status | Evidence | Reproduce |\n"
      "| --- | --- | --- | --- | --- | --- |\n";
  BudgetedTable table(out, budget);
  for (const bool crossed : {true, false}) {
    for (const ThresholdResult& threshold : result.thresholds) {
      if ((threshold.status == CheckStatus::kFail) != crossed) continue;
      const std::string_view status = threshold.status == CheckStatus::kFail   ? "❌ crossed"
                                      : threshold.status == CheckStatus::kPass ? "✅ pass"
                                                                               : "n/a";
      table.Row(fmt::format("| {} | {} | {} | {} | {} | {} |\n", MarkdownCell(threshold.name),
                            MarkdownCell(threshold.world), Code(threshold.expression), status,
                            MarkdownCell(threshold.evidence),
                            crossed ? Code(ReproduceCommand(result, threshold)) : "–"));
    }
  }
  table.End("thresholds");
}

// The runs of one scenario name in one world.
struct MarkdownGroup {
  const ScenarioResult* first = nullptr;
  std::vector<const ScenarioResult*> runs;
};

std::vector<MarkdownGroup> MarkdownGroupRuns(const RunResult& result) {
  std::vector<MarkdownGroup> groups;
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> index;
  for (const ScenarioResult& scenario : result.scenarios) {
    auto [it, inserted] = index.try_emplace({scenario.name, scenario.world}, groups.size());
    if (inserted) groups.push_back({&scenario, {}});
    groups[it->second].runs.push_back(&scenario);
  }
  return groups;
}

// "✅ pass" for one run; "❌ 2 · ✅ 48" for several.
std::string GroupVerdict(const MarkdownGroup& group) {
  if (group.runs.size() == 1) return std::string(VerdictBadge(group.first->verdict));
  std::string out;
  for (const Verdict verdict : {Verdict::kFail, Verdict::kError, Verdict::kPass}) {
    const auto count = std::ranges::count(group.runs, verdict, &ScenarioResult::verdict);
    if (count == 0) continue;
    const std::string_view badge = VerdictBadge(verdict);
    out +=
        fmt::format("{}{} {}", out.empty() ? "" : " · ", badge.substr(0, badge.find(' ')), count);
  }
  return out;
}

// The median of a metric over the group's runs (the value itself for one run).
std::optional<double> Median(const MarkdownGroup& group,
                             std::optional<double> (*metric)(const Metrics&)) {
  SampleSeries values;
  for (const ScenarioResult* run : group.runs) {
    if (auto value = metric(run->metrics)) values.Add(*value);
  }
  if (values.empty()) return std::nullopt;
  return values.Percentile(50);
}

std::string Wasted(const Metrics& metrics) {
  if (metrics.wasted_bytes == 0 && metrics.wasted_tokens == 0) return "–";
  return fmt::format("{} ({} tok)", FormatBytes(metrics.wasted_bytes), metrics.wasted_tokens);
}

std::string GroupRow(const MarkdownGroup& group) {
  const auto metric = [&](std::optional<double> (*get)(const Metrics&)) {
    return FormatMs(Median(group, get));
  };
  const auto attempts = Median(group, [](const Metrics& m) -> std::optional<double> {
    return static_cast<double>(m.attempts);
  });
  return fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                     MarkdownCell(group.first->name), MarkdownCell(group.first->world),
                     group.runs.size(), GroupVerdict(group),
                     metric([](const Metrics& m) { return m.first_token_ms; }),
                     metric([](const Metrics& m) { return m.terminal_ms; }),
                     metric([](const Metrics& m) { return m.recovery_overhead_ms; }),
                     attempts ? fmt::format("{:g}", *attempts) : "–",
                     group.runs.size() == 1 ? Wasted(group.first->metrics) : "–");
}

// One row per scenario name and world: repeated runs are folded into counts and medians.
void WriteScenarios(const RunResult& result, std::string& out, std::size_t budget) {
  out +=
      "### Scenarios\n\n"
      "| Scenario | World | Runs | Verdict | First token | Terminal | Overhead | Attempts | "
      "Wasted |\n"
      "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n";
  BudgetedTable table(out, budget);
  for (const MarkdownGroup& group : MarkdownGroupRuns(result)) table.Row(GroupRow(group));
  table.End("scenarios");
}

std::string MarkdownPercentiles(const std::optional<LatencySummary::Percentiles>& p) {
  if (!p) return "–";
  return fmt::format("{} / {} / {}", FormatMs(p->p50), FormatMs(p->p95), FormatMs(p->p99));
}

void WriteLatency(const RunResult& result, std::string& out, std::size_t budget) {
  if (result.latency.empty()) return;
  out +=
      "### Latency over repetitions and calls (p50 / p95 / p99)\n\n"
      "| Scenario | World | Runs | Calls | First token | Terminal | Overhead |\n"
      "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n";
  BudgetedTable table(out, budget);
  for (const LatencySummary& summary : result.latency) {
    table.Row(fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", MarkdownCell(summary.name),
                          MarkdownCell(summary.world), summary.runs, summary.samples,
                          MarkdownPercentiles(summary.first_token_ms),
                          MarkdownPercentiles(summary.terminal_ms),
                          MarkdownPercentiles(summary.recovery_overhead_ms)));
  }
  table.End("latency rows");
}

}  // namespace

void RenderMarkdown(const RunResult& result, std::ostream& out) {
  // Failures first and with the most room; then the scenarios, then the percentiles, each in
  // what the sections before it left.
  std::string text = Headline(result) + Details(result);
  WriteFailures(result, text, kSummaryBudget * 5 / 10);
  WriteAdvisories(result, text, (kSummaryBudget - std::min(text.size(), kSummaryBudget)) * 3 / 10);
  WriteThresholds(result, text, (kSummaryBudget - std::min(text.size(), kSummaryBudget)) * 3 / 10);
  WriteScenarios(result, text, (kSummaryBudget - std::min(text.size(), kSummaryBudget)) * 7 / 10);
  WriteLatency(result, text, kSummaryBudget - std::min(text.size(), kSummaryBudget));
  out << text;
}

}  // namespace faultline::report
