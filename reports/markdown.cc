// Markdown for a GitHub step summary ($GITHUB_STEP_SUMMARY): a headline, the failures first
// (every failed check of every run), then the thresholds (crossed first), then one row per
// scenario and world (repeated runs folded into counts and medians), then the latency
// percentiles; always under 1 MiB.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "fmt/format.h"
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
  if (result.advisories() > 0) counts += fmt::format(" · {} advisories", result.advisories());
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

void WriteFailures(const RunResult& result, std::string& out, std::size_t budget) {
  if (result.failed() == 0 && result.errors() == 0) return;
  out +=
      "### Failures\n\n| Scenario | World | Run | Check | Evidence | Reproduce |\n"
      "| --- | --- | ---: | --- | --- | --- |\n";
  BudgetedTable table(out, budget);
  for (const ScenarioResult& scenario : result.scenarios) {
    if (scenario.verdict == Verdict::kPass) continue;
    const std::string head = fmt::format("| {} | {} | {} ", MarkdownCell(scenario.name),
                                         MarkdownCell(scenario.world), scenario.repetition + 1);
    const std::string reproduce = Code(ReproduceCommand(result, scenario));
    if (scenario.verdict == Verdict::kError) {
      table.Row(fmt::format("{}| error | {} | {} |\n", head,
                            MarkdownCell(internal::Shorten(scenario.error, kEvidenceChars)),
                            reproduce));
      continue;
    }
    for (const CheckResult& check : scenario.checks) {
      if (check.status != CheckStatus::kFail) continue;
      const bool advisory = check.severity == Severity::kAdvisory;
      table.Row(fmt::format("{}| {} | {} | {} |\n", head,
                            MarkdownCell(advisory ? check.id + " (advisory)" : check.id),
                            MarkdownCell(internal::Shorten(check.evidence, kEvidenceChars)),
                            reproduce));
    }
  }
  table.End("failed checks");
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
struct Group {
  const ScenarioResult* first = nullptr;
  std::vector<const ScenarioResult*> runs;
};

std::vector<Group> GroupRuns(const RunResult& result) {
  std::vector<Group> groups;
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> index;
  for (const ScenarioResult& scenario : result.scenarios) {
    auto [it, inserted] = index.try_emplace({scenario.name, scenario.world}, groups.size());
    if (inserted) groups.push_back({&scenario, {}});
    groups[it->second].runs.push_back(&scenario);
  }
  return groups;
}

// "✅ pass" for one run; "❌ 2 · ✅ 48" for several.
std::string GroupVerdict(const Group& group) {
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
std::optional<double> Median(const Group& group, std::optional<double> (*metric)(const Metrics&)) {
  std::vector<double> values;
  for (const ScenarioResult* run : group.runs) {
    if (auto value = metric(run->metrics)) values.push_back(*value);
  }
  if (values.empty()) return std::nullopt;
  return NearestRankPercentile(std::move(values), 50);
}

std::string Wasted(const Metrics& metrics) {
  if (metrics.wasted_bytes == 0 && metrics.wasted_tokens == 0) return "–";
  return fmt::format("{} ({} tok)", FormatBytes(metrics.wasted_bytes), metrics.wasted_tokens);
}

std::string GroupRow(const Group& group) {
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
  for (const Group& group : GroupRuns(result)) table.Row(GroupRow(group));
  table.End("scenarios");
}

std::string Percentiles(const std::optional<LatencySummary::Percentiles>& p) {
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
                          Percentiles(summary.first_token_ms), Percentiles(summary.terminal_ms),
                          Percentiles(summary.recovery_overhead_ms)));
  }
  table.End("latency rows");
}

}  // namespace

void RenderMarkdown(const RunResult& result, std::ostream& out) {
  // Failures first and with the most room; then the scenarios, then the percentiles, each in
  // what the sections before it left.
  std::string text = Headline(result) + Details(result);
  WriteFailures(result, text, kSummaryBudget * 5 / 10);
  WriteThresholds(result, text, (kSummaryBudget - std::min(text.size(), kSummaryBudget)) * 3 / 10);
  WriteScenarios(result, text, (kSummaryBudget - std::min(text.size(), kSummaryBudget)) * 7 / 10);
  WriteLatency(result, text, kSummaryBudget - std::min(text.size(), kSummaryBudget));
  out << text;
}

}  // namespace faultline::report
