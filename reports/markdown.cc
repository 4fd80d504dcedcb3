// Markdown for a GitHub step summary ($GITHUB_STEP_SUMMARY): a headline, the failures first,
// then every scenario with its metrics, then the latency percentiles of repeated runs.
#include <algorithm>
#include <string>

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

// A code span when the text allows one, escaped text otherwise.
std::string Code(std::string_view text) {
  if (text.empty()) return "–";
  if (text.find_first_of("`\n\r") == std::string_view::npos) return fmt::format("`{}`", text);
  return MarkdownCell(text);
}

std::string Headline(const RunResult& result) {
  const std::string_view icon = result.errors() > 0 ? "⚠️" : result.failed() > 0 ? "❌" : "✅";
  std::string counts = fmt::format("{} passed", result.passed());
  if (result.failed() > 0) counts = fmt::format("{} failed, {}", result.failed(), counts);
  if (result.errors() > 0) {
    counts =
        fmt::format("{} error{}, {}", result.errors(), result.errors() == 1 ? "" : "s", counts);
  }
  if (result.advisories() > 0) counts += fmt::format(" · {} advisories", result.advisories());
  return fmt::format("## {} faultline: {}\n\n", icon, counts);
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

// The scenario's name, with world and repetition when the result mixes them.
std::string RunLabel(const RunResult& result, const ScenarioResult& scenario) {
  std::string label = scenario.name;
  if (result.world == "mixed") label += fmt::format(" ({})", scenario.world);
  const bool repeated = std::any_of(result.scenarios.begin(), result.scenarios.end(),
                                    [](const ScenarioResult& s) { return s.repetition > 0; });
  if (repeated) label += fmt::format(" (rep {})", scenario.repetition);
  return MarkdownCell(label);
}

void WriteFailures(const RunResult& result, std::ostream& out) {
  if (result.failed() == 0 && result.errors() == 0) return;
  out << "### Failures\n\n| Scenario | Check | Evidence |\n| --- | --- | --- |\n";
  for (const ScenarioResult& scenario : result.scenarios) {
    const std::string label = RunLabel(result, scenario);
    if (scenario.verdict == Verdict::kError) {
      out << fmt::format("| {} | error | {} |\n", label,
                         MarkdownCell(internal::Shorten(scenario.error, kEvidenceChars)));
      continue;
    }
    if (scenario.verdict != Verdict::kFail) continue;
    for (const CheckResult& check : scenario.checks) {
      if (check.status != CheckStatus::kFail) continue;
      const bool advisory = check.severity == Severity::kAdvisory;
      out << fmt::format("| {} | {} | {} |\n", label,
                         MarkdownCell(advisory ? check.id + " (advisory)" : check.id),
                         MarkdownCell(internal::Shorten(check.evidence, kEvidenceChars)));
    }
  }
  out << '\n';
}

std::string Wasted(const Metrics& metrics) {
  if (metrics.wasted_bytes == 0 && metrics.wasted_tokens == 0) return "–";
  return fmt::format("{} ({} tok)", FormatBytes(metrics.wasted_bytes), metrics.wasted_tokens);
}

void WriteScenarios(const RunResult& result, std::ostream& out) {
  out << "### Scenarios\n\n"
         "| Scenario | Verdict | First token | Terminal | Overhead | Attempts | Wasted |\n"
         "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n";
  for (const ScenarioResult& scenario : result.scenarios) {
    const Metrics& m = scenario.metrics;
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", RunLabel(result, scenario),
                       VerdictBadge(scenario.verdict), FormatMs(m.first_token_ms),
                       FormatMs(m.terminal_ms), FormatMs(m.recovery_overhead_ms), m.attempts,
                       Wasted(m));
  }
  out << '\n';
}

std::string Percentiles(const std::optional<LatencySummary::Percentiles>& p) {
  if (!p) return "–";
  return fmt::format("{} / {} / {}", FormatMs(p->p50), FormatMs(p->p95), FormatMs(p->p99));
}

void WriteLatency(const RunResult& result, std::ostream& out) {
  if (result.latency.empty()) return;
  out << "### Latency over repetitions (p50 / p95 / p99)\n\n"
         "| Scenario | World | Runs | First token | Terminal | Overhead |\n"
         "| --- | --- | ---: | ---: | ---: | ---: |\n";
  for (const LatencySummary& summary : result.latency) {
    out << fmt::format("| {} | {} | {} | {} | {} | {} |\n", MarkdownCell(summary.name),
                       MarkdownCell(summary.world), summary.runs,
                       Percentiles(summary.first_token_ms), Percentiles(summary.terminal_ms),
                       Percentiles(summary.recovery_overhead_ms));
  }
  out << '\n';
}

}  // namespace

void RenderMarkdown(const RunResult& result, std::ostream& out) {
  out << Headline(result) << Details(result);
  WriteFailures(result, out);
  WriteScenarios(result, out);
  WriteLatency(result, out);
}

}  // namespace faultline::report
