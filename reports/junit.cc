// JUnit XML in the shape Jenkins, GitLab and the GitHub test-report actions read, valid against
// Jenkins' xunit junit-10.xsd (reports/schema/junit-10.xsd; a test checks it with xmllint):
// testsuites > testsuite (one per scenario and world, named with the subject, `file` = the
// scenario file, `time` = the wall-clock span of its runs) > testcase (one per run, then one per
// threshold: crossed is a failure, n/a is skipped) > failure | error | skipped, with system-out /
// system-err. A failed check is one <failure> whose message is its
// evidence; since some viewers show only the first failure of a test case, system-out repeats
// every check with its full evidence.
//
// Advisories. A passed run with an advisory stays a passed test case: advisories do not fail a
// run unless `--fail-on advisory` (then the run failed and each advisory is a <failure> like a
// violation). A <skipped> would misreport a run that ran and passed, and CI dashboards count it
// as not run. What the viewers do show of a passed case: Jenkins shows its system-out, so the
// advisories open it ("ADVISORY ADV-004: ..."); GitLab and the GitHub test-report actions show
// nothing of a passed case, which is why summary.md lists them. The suite's <properties> (the
// only properties junit-10.xsd allows; Surefire's per-testcase ones are invalid there) carry them
// for tools and scripts: `advisories` (the count) and one `advisory` per check, its runs folded:
// "ADV-004 in 2 of 2 runs (runs 1, 2): <first evidence>".
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

using internal::Category;
using internal::FormatBytes;
using internal::FormatMs;
using internal::JUnitSeconds;
using internal::XmlEscape;

std::string Attr(std::string_view text) { return XmlEscape(text, true); }

// What CI viewers show in their one line: the evidence itself, not the generic statement.
constexpr std::size_t kMessageChars = 500;

// One suite per scenario and world: the scenario file is the suite's `file`, as a test class's
// file is in Surefire's reports, and the suite's name carries the subject so that merged reports
// of several subjects never collide.
struct Suite {
  const ScenarioResult* first = nullptr;
  std::vector<const ScenarioResult*> runs;
  std::vector<const ThresholdResult*> thresholds;
  int failures = 0;
  int errors = 0;
  int skipped = 0;                                       // thresholds with no sample
  const internal::FoldedScenario* advisories = nullptr;  // its failed advisory checks, folded
  double started_ms = 0, ended_ms = 0;                   // wall-clock span of its runs
};

std::vector<Suite> SuitesOf(const RunResult& result,
                            const std::vector<internal::FoldedScenario>& advisories) {
  std::vector<Suite> suites;
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> index;
  for (const ScenarioResult& scenario : result.scenarios) {
    auto [it, inserted] = index.try_emplace({scenario.name, scenario.world}, suites.size());
    if (inserted) {
      Suite suite;
      suite.first = &scenario;
      suite.started_ms = scenario.started_ms;
      suite.ended_ms = scenario.started_ms + scenario.wall_ms;
      suites.push_back(std::move(suite));
    }
    Suite& suite = suites[it->second];
    suite.runs.push_back(&scenario);
    suite.failures += scenario.verdict == Verdict::kFail ? 1 : 0;
    suite.errors += scenario.verdict == Verdict::kError ? 1 : 0;
    suite.started_ms = std::min(suite.started_ms, scenario.started_ms);
    suite.ended_ms = std::max(suite.ended_ms, scenario.started_ms + scenario.wall_ms);
  }
  for (const ThresholdResult& threshold : result.thresholds) {
    const auto it = index.find({threshold.name, threshold.world});
    if (it == index.end()) continue;
    Suite& suite = suites[it->second];
    suite.thresholds.push_back(&threshold);
    suite.failures += threshold.status == CheckStatus::kFail ? 1 : 0;
    suite.skipped += threshold.status == CheckStatus::kNotApplicable ? 1 : 0;
  }
  for (const internal::FoldedScenario& folded : advisories) {
    const auto it = index.find({folded.first->name, folded.first->world});
    if (it != index.end()) suites[it->second].advisories = &folded;
  }
  return suites;
}

bool HasRepetitions(const RunResult& result) {
  return std::any_of(result.scenarios.begin(), result.scenarios.end(),
                     [](const ScenarioResult& s) { return s.repetition > 0; });
}

// Repetitions are numbered from 1, as the console numbers them.
std::string CaseName(const ScenarioResult& scenario, bool repetitions) {
  if (!repetitions) return scenario.name;
  return fmt::format("{} [rep {}]", scenario.name, scenario.repetition + 1);
}

// "ADV-004 in 2 of 2 runs (runs 1, 2): gave up after one 503".
std::string AdvisoryProperty(const internal::FoldedCheck& check, int runs) {
  return fmt::format("{} in {} of {} run{} ({}): {}", check.id, check.runs.size(), runs,
                     runs == 1 ? "" : "s", internal::RunList(check.runs),
                     internal::Shorten(check.message, kMessageChars));
}

void WriteProperties(const RunResult& result, const Suite& suite, std::ostream& out) {
  const std::pair<const char*, std::string> properties[] = {
      {"subject", result.subject},
      {"tool_version", result.tool_version},
      {"seed", std::to_string(result.seed)},
      {"shard", result.shard},
      {"fingerprint", result.fingerprint},
      {"started_at", result.started_at},
      {"interrupted", internal::InterruptionText(result)}};
  out << "    <properties>\n";
  for (const auto& [name, value] : properties) {
    if (value.empty()) continue;
    out << fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, Attr(value));
  }
  if (suite.advisories != nullptr) {
    int count = 0;
    for (const internal::FoldedCheck& check : suite.advisories->checks) {
      count += static_cast<int>(check.runs.size());
    }
    out << fmt::format("      <property name=\"advisories\" value=\"{}\"/>\n", count);
    for (const internal::FoldedCheck& check : suite.advisories->checks) {
      out << fmt::format("      <property name=\"advisory\" value=\"{}\"/>\n",
                         Attr(AdvisoryProperty(check, suite.advisories->runs)));
    }
  }
  out << "    </properties>\n";
}

// Every check with its evidence, the metrics and the identifiers needed to reproduce the run.
std::string SystemOut(const ScenarioResult& scenario) {
  std::string text;
  // Advisories first: of a passed case, Jenkins shows only this text.
  for (const CheckResult& check : scenario.checks) {
    if (check.status != CheckStatus::kFail || check.severity != Severity::kAdvisory) continue;
    text += fmt::format("ADVISORY {}: {}\n", check.id,
                        check.evidence.empty() ? check.statement : check.evidence);
  }
  if (!text.empty()) {
    text += scenario.verdict == Verdict::kPass
                ? "(advisories do not fail a run; --fail-on advisory makes them fail it)\n\n"
                : "\n";
  }
  if (!scenario.description.empty()) text += scenario.description + "\n\n";
  for (const CheckResult& check : scenario.checks) {
    const bool advisory =
        check.severity == Severity::kAdvisory && check.status == CheckStatus::kFail;
    text += fmt::format("[{}] {}: {}\n", advisory ? "advisory" : ToString(check.status), check.id,
                        check.statement);
    if (!check.evidence.empty()) text += fmt::format("    {}\n", check.evidence);
  }
  const Metrics& m = scenario.metrics;
  text += fmt::format(
      "\nattempts {} | first token {} | terminal {} | recovery overhead {} | wasted {} ({} "
      "tokens)\n",
      m.attempts, FormatMs(m.first_token_ms), FormatMs(m.terminal_ms),
      FormatMs(m.recovery_overhead_ms), FormatBytes(m.wasted_bytes), m.wasted_tokens);
  text +=
      fmt::format("world {} | dialect {} | seed {} | fingerprint {} | source {}\n", scenario.world,
                  scenario.dialect, scenario.seed, scenario.fingerprint, scenario.source);
  if (scenario.black_box) text += "black-box subject: judged from the server journal only\n";
  const nlohmann::json& trace = scenario.trace;
  if (trace.is_object() && trace.contains("endings") && trace["endings"].is_array()) {
    for (const nlohmann::json& ending : trace["endings"]) {
      if (ending.is_string()) text += ending.get<std::string>() + "\n";
    }
  }
  if (trace.is_object() && trace.contains("stdout") && trace["stdout"].is_string()) {
    text += "\nthe app's stdout (its last 64 KiB):\n" + trace["stdout"].get<std::string>();
  }
  return text;
}

void WriteFailures(const ScenarioResult& scenario, std::ostream& out) {
  if (scenario.verdict == Verdict::kError) {
    const std::string kind = scenario.subject_error ? scenario.subject_error->kind : "error";
    out << fmt::format("      <error message=\"{}\" type=\"{}\">{}</error>\n",
                       Attr(internal::Shorten(scenario.error, kMessageChars)), Attr(kind),
                       XmlEscape(scenario.error));
    return;
  }
  if (scenario.verdict != Verdict::kFail) return;
  // The checks that failed the run: its violations; its advisories only when it has none (then
  // --fail-on advisory failed it). An advisory next to a violation stays a property.
  const bool violated = std::ranges::any_of(scenario.checks, [](const CheckResult& check) {
    return check.status == CheckStatus::kFail && check.severity == Severity::kViolation;
  });
  int written = 0;
  for (const CheckResult& check : scenario.checks) {
    if (check.status != CheckStatus::kFail) continue;
    const bool advisory = check.severity == Severity::kAdvisory;
    if (advisory && violated) continue;
    const std::string evidence = check.evidence.empty() ? check.statement : check.evidence;
    out << fmt::format("      <failure message=\"{}\" type=\"{}\">{}{}: {}\n{}</failure>\n",
                       Attr(fmt::format("{}{}: {}", advisory ? "advisory " : "", check.id,
                                        internal::Shorten(evidence, kMessageChars))),
                       Attr(check.id), advisory ? "advisory " : "", XmlEscape(check.id),
                       XmlEscape(check.statement), XmlEscape(evidence));
    ++written;
  }
  if (written == 0) {  // a failed verdict must show as failed even without a failed check
    out << "      <failure message=\"scenario failed\" type=\"verdict\"></failure>\n";
  }
}

void WriteTestCase(const ScenarioResult& run, bool repetitions, std::ostream& out) {
  const FullRun full(run);  // a slim run read back whole: every check, the trace's endings
  const ScenarioResult& scenario = *full;
  out << fmt::format("    <testcase name=\"{}\" classname=\"{}\" time=\"{}\">\n",
                     Attr(CaseName(scenario, repetitions)), Attr(Category(scenario.name)),
                     JUnitSeconds(scenario.wall_ms));
  WriteFailures(scenario, out);
  out << fmt::format("      <system-out>{}</system-out>\n", XmlEscape(SystemOut(scenario)));
  if (scenario.trace.is_object() && scenario.trace.contains("stderr") &&
      scenario.trace["stderr"].is_string()) {
    out << fmt::format("      <system-err>{}</system-err>\n",
                       XmlEscape(scenario.trace["stderr"].get<std::string>()));
  }
  out << "    </testcase>\n";
}

// A threshold is a test case of its scenario's suite: crossed fails, no sample is skipped.
void WriteThresholdCase(const ThresholdResult& threshold, std::ostream& out) {
  out << fmt::format("    <testcase name=\"threshold {}\" classname=\"{}\" time=\"0\">\n",
                     Attr(threshold.expression), Attr(Category(threshold.name)));
  const std::string message = fmt::format("{}: {}", threshold.expression, threshold.evidence);
  if (threshold.status == CheckStatus::kFail) {
    out << fmt::format("      <failure message=\"{}\" type=\"threshold\">{}</failure>\n",
                       Attr(message), XmlEscape(message));
  } else if (threshold.status == CheckStatus::kNotApplicable) {
    out << fmt::format("      <skipped message=\"{}\"/>\n", Attr(message));
  }
  out << fmt::format("      <system-out>[{}] {} ({})\n</system-out>\n", ToString(threshold.status),
                     XmlEscape(message), threshold.origin == "cli" ? "--threshold" : "expect");
  out << "    </testcase>\n";
}

void WriteSuite(const RunResult& result, const Suite& suite, bool repetitions, std::ostream& out) {
  const ScenarioResult& first = *suite.first;
  out << fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
      "time=\"{}\" file=\"{}\"",
      Attr(fmt::format("{} [{}] {}", result.subject, first.world, first.name)),
      suite.runs.size() + suite.thresholds.size(), suite.failures, suite.errors, suite.skipped,
      JUnitSeconds(suite.ended_ms - suite.started_ms), Attr(first.source));
  if (!result.started_at.empty()) out << fmt::format(" timestamp=\"{}\"", Attr(result.started_at));
  out << ">\n";
  WriteProperties(result, suite, out);
  for (const ScenarioResult* scenario : suite.runs) WriteTestCase(*scenario, repetitions, out);
  for (const ThresholdResult* threshold : suite.thresholds) WriteThresholdCase(*threshold, out);
  out << "  </testsuite>\n";
}

// An interrupted run shows as an error of its own, so no viewer mistakes it for a green run.
void WriteInterruption(const RunResult& result, std::ostream& out) {
  if (!result.interrupted) return;
  out << fmt::format(
      "  <testsuite name=\"{} interrupted\" tests=\"1\" failures=\"0\" errors=\"1\" "
      "skipped=\"0\" time=\"0\">\n"
      "    <testcase name=\"faultline run\" classname=\"faultline\" time=\"0\">\n"
      "      <error message=\"interrupted {}\" type=\"interrupted\"/>\n"
      "    </testcase>\n  </testsuite>\n",
      Attr(result.subject), Attr(internal::InterruptionText(result)));
}

}  // namespace

void RenderJUnit(const RunResult& result, std::ostream& out) {
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  const int interrupted = result.interrupted ? 1 : 0;
  out << fmt::format(
      "<testsuites name=\"faultline\" tests=\"{}\" failures=\"{}\" errors=\"{}\" "
      "time=\"{}\">\n",
      result.scenarios.size() + result.thresholds.size() + interrupted,
      result.failed() + result.thresholds_crossed(), result.errors() + interrupted,
      JUnitSeconds(result.wall_ms));
  const bool repetitions = HasRepetitions(result);
  const std::vector<internal::FoldedScenario> advisories =
      internal::FoldFailures(result, Severity::kAdvisory);
  for (const Suite& suite : SuitesOf(result, advisories)) {
    WriteSuite(result, suite, repetitions, out);
  }
  WriteInterruption(result, out);
  out << "</testsuites>\n";
}

}  // namespace faultline::report
