// JUnit XML in the shape Jenkins, GitLab and the GitHub test-report actions read:
// testsuites > testsuite (one per world) > testcase (one per scenario run) > failure | error,
// with system-out / system-err. A failed check is one <failure>; since some viewers show only the
// first failure of a test case, system-out repeats every check with its full evidence.
#include <algorithm>
#include <string>
#include <vector>

#include "fmt/format.h"
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

struct Suite {
  std::string world;
  std::vector<const ScenarioResult*> scenarios;
  int failures = 0;
  int errors = 0;
  double wall_ms = 0;
};

std::vector<Suite> SuitesByWorld(const RunResult& result) {
  std::vector<Suite> suites;
  for (const ScenarioResult& scenario : result.scenarios) {
    auto it = std::find_if(suites.begin(), suites.end(),
                           [&](const Suite& suite) { return suite.world == scenario.world; });
    if (it == suites.end()) {
      it = suites.insert(suites.end(), Suite{});
      it->world = scenario.world;
    }
    it->scenarios.push_back(&scenario);
    it->failures += scenario.verdict == Verdict::kFail ? 1 : 0;
    it->errors += scenario.verdict == Verdict::kError ? 1 : 0;
    it->wall_ms += scenario.wall_ms;
  }
  return suites;
}

bool HasRepetitions(const RunResult& result) {
  return std::any_of(result.scenarios.begin(), result.scenarios.end(),
                     [](const ScenarioResult& s) { return s.repetition > 0; });
}

std::string CaseName(const ScenarioResult& scenario, bool repetitions) {
  if (!repetitions) return scenario.name;
  return fmt::format("{} [rep {}]", scenario.name, scenario.repetition);
}

void WriteProperties(const RunResult& result, std::ostream& out) {
  const std::pair<const char*, std::string> properties[] = {
      {"subject", result.subject},           {"tool_version", result.tool_version},
      {"seed", std::to_string(result.seed)}, {"shard", result.shard},
      {"fingerprint", result.fingerprint},   {"started_at", result.started_at}};
  out << "    <properties>\n";
  for (const auto& [name, value] : properties) {
    if (value.empty()) continue;
    out << fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, Attr(value));
  }
  out << "    </properties>\n";
}

// Every check with its evidence, the metrics and the identifiers needed to reproduce the run.
std::string SystemOut(const ScenarioResult& scenario) {
  std::string text;
  if (!scenario.description.empty()) text += scenario.description + "\n\n";
  for (const CheckResult& check : scenario.checks) {
    text += fmt::format("[{}] {}: {}\n", ToString(check.status), check.id, check.statement);
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
  return text;
}

void WriteFailures(const ScenarioResult& scenario, std::ostream& out) {
  if (scenario.verdict == Verdict::kError) {
    out << fmt::format("      <error message=\"{}\" type=\"error\">{}</error>\n",
                       Attr(internal::FirstLine(scenario.error)), XmlEscape(scenario.error));
    return;
  }
  if (scenario.verdict != Verdict::kFail) return;
  int written = 0;
  for (const CheckResult& check : scenario.checks) {
    if (check.status != CheckStatus::kFail) continue;
    const bool advisory = check.severity == Severity::kAdvisory;
    out << fmt::format(
        "      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
        Attr(fmt::format("{}{}: {}", advisory ? "advisory " : "", check.id, check.statement)),
        Attr(check.id), XmlEscape(check.evidence));
    ++written;
  }
  if (written == 0) {  // a failed verdict must show as failed even without a failed check
    out << "      <failure message=\"scenario failed\" type=\"verdict\"></failure>\n";
  }
}

void WriteTestCase(const ScenarioResult& scenario, bool repetitions, std::ostream& out) {
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

void WriteSuite(const RunResult& result, const Suite& suite, bool repetitions, std::ostream& out) {
  const std::string name = suite.world.empty() ? "faultline" : "faultline." + suite.world;
  out << fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" "
      "time=\"{}\"",
      Attr(name), suite.scenarios.size(), suite.failures, suite.errors,
      JUnitSeconds(suite.wall_ms));
  if (!result.started_at.empty()) out << fmt::format(" timestamp=\"{}\"", Attr(result.started_at));
  out << ">\n";
  WriteProperties(result, out);
  for (const ScenarioResult* scenario : suite.scenarios) WriteTestCase(*scenario, repetitions, out);
  out << "  </testsuite>\n";
}

}  // namespace

void RenderJUnit(const RunResult& result, std::ostream& out) {
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << fmt::format(
      "<testsuites name=\"faultline\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" "
      "time=\"{}\">\n",
      result.scenarios.size(), result.failed(), result.errors(), JUnitSeconds(result.wall_ms));
  const bool repetitions = HasRepetitions(result);
  std::vector<Suite> suites = SuitesByWorld(result);
  if (suites.empty()) {
    suites.emplace_back();
    suites.back().world = result.world;
  }
  for (const Suite& suite : suites) WriteSuite(result, suite, repetitions, out);
  out << "</testsuites>\n";
}

}  // namespace faultline::report
