// RenderHtml: one self-contained page that a person reads in seconds at any size. A run header
// (counts, subject, world, seed, fingerprint; the advisory count links to their list), then the
// overview (html_overview.cc): failures folded per scenario and check, the advisories apart. Then
// a verdict filter that works without script (radio buttons and CSS; "With advisories" keeps the
// sections with an advisory, passed or not) and one collapsible section per scenario,
// world and verdict: the first run of each in full (checks, metrics, SVG timeline, client
// events, adapter stderr), failures open; passing sections are collapsed and their body is an
// inert <template> that the script renders when opened, and every other run of a section is a
// row of compact embedded data. So 10,000 passing runs cost one full body per scenario, not
// 10,000. Anchors are stable ("run-<name>-<world>-<repetition>"). Then the latency percentiles.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "fmt/format.h"
#include "reports/folded_checks.h"
#include "reports/html_page.h"
#include "reports/html_run.h"
#include "reports/report.h"
#include "reports/text.h"
#include "reports/timeline.h"

namespace faultline::report {
namespace {

using internal::FormatBytes;
using internal::FormatMs;
using internal::GroupAnchor;
using internal::Lowercase;
using internal::RunAnchor;
using internal::SourceText;
using internal::StatusClass;
using internal::XmlEscape;

std::string Esc(std::string_view text) { return XmlEscape(text, true); }

std::string_view Overall(const RunResult& result) {
  if (result.errors() > 0) return "error";
  return result.failed() > 0 || result.thresholds_crossed() > 0 ? "fail" : "pass";
}

// A count; with `href`, a link to where the counted things are listed.
void WriteCount(int count, std::string_view label, std::string_view css, std::ostream& out,
                std::string_view href = "") {
  const std::string_view tag = href.empty() ? "span" : "a";
  out << fmt::format(R"(<{0} class="count {1}"{2}>{3} {4}</{0}>)", tag, count > 0 ? css : "zero",
                     href.empty() ? "" : fmt::format(R"( href="{}")", href), count, label);
}

void WriteMetaRow(std::string_view name, std::string_view value, bool mono, std::ostream& out) {
  if (value.empty()) return;
  out << fmt::format("<dt>{}</dt><dd{}>{}</dd>", name, mono ? " class=\"mono\"" : "", Esc(value));
}

void WriteHeader(const RunResult& result, std::ostream& out) {
  out << fmt::format("<header class=\"run {}\">\n<h1>faultline report</h1>\n<div class=\"counts\">",
                     Overall(result));
  WriteCount(result.passed(), "passed", "pass", out);
  WriteCount(result.failed(), "failed", "fail", out);
  WriteCount(result.errors(), result.errors() == 1 ? "error" : "errors", "error", out);
  if (result.advisories() > 0) {
    WriteCount(result.advisories(), result.advisories() == 1 ? "advisory" : "advisories",
               "advisory", out, "#advisories");
  }
  if (!result.thresholds.empty()) {
    WriteCount(result.thresholds_crossed(),
               fmt::format("of {} thresholds crossed", result.thresholds.size()), "fail", out);
  }
  out << "</div>\n<dl class=\"meta\">";
  WriteMetaRow("Subject", result.subject, true, out);
  WriteMetaRow("World", result.world, false, out);
  WriteMetaRow("Seed", std::to_string(result.seed), true, out);
  WriteMetaRow("Shard", result.shard, false, out);
  WriteMetaRow("Fingerprint", result.fingerprint, true, out);
  WriteMetaRow("Started", result.started_at, false, out);
  WriteMetaRow("Duration",
               fmt::format("{} for {} scenario run{}", FormatMs(result.wall_ms),
                           result.scenarios.size(), result.scenarios.size() == 1 ? "" : "s"),
               false, out);
  WriteMetaRow("Tool", result.tool_version, false, out);
  if (result.interrupted)
    WriteMetaRow("Interrupted", internal::InterruptionText(result), false, out);
  out << "</dl>\n</header>\n";
}

void WriteFilters(const RunResult& result, std::ostream& out) {
  std::vector<std::pair<std::string_view, std::string>> choices = {
      {"all", fmt::format("All ({})", result.scenarios.size())},
      {"fail", fmt::format("Failed ({})", result.failed())},
      {"error", fmt::format("Errors ({})", result.errors())},
      {"pass", fmt::format("Passed ({})", result.passed())}};
  // Advisories do not fail a run, so a passed run's are found with a filter of their own.
  if (const int runs = internal::RunsWithAdvisories(result); runs > 0) {
    choices.emplace_back("advisory", fmt::format("With advisories ({})", runs));
  }
  for (const auto& [id, label] : choices) {
    out << fmt::format(R"(<input type="radio" class="filter" name="verdict" id="show-{}"{}>)", id,
                       id == "all" ? " checked" : "");
  }
  out << "\n<nav class=\"filters\"><span>Show:</span>";
  for (const auto& [id, label] : choices) {
    out << fmt::format(R"(<label for="show-{}">{}</label>)", id, label);
  }
  out << R"(<button type="button" id="expand-all" hidden>Expand all</button>)"
      << R"(<button type="button" id="collapse-all" hidden>Collapse all</button>)"
      << R"(<input type="search" id="name-filter" placeholder="Filter by scenario name" hidden>)"
      << "</nav>\n";
}

std::string FailedIds(const ScenarioResult& scenario) {
  std::string ids;
  for (const CheckResult& check : scenario.checks) {
    if (check.status != CheckStatus::kFail) continue;
    if (!ids.empty()) ids += ' ';
    ids += check.id;
    if (check.severity == Severity::kAdvisory) ids += " (advisory)";
  }
  return ids;
}

// The failed checks of a summary line: violations red, advisories amber (they did not fail it).
void WriteIds(const ScenarioResult& scenario, std::ostream& out) {
  for (const Severity severity : {Severity::kViolation, Severity::kAdvisory}) {
    std::string ids;
    for (const CheckResult& check : scenario.checks) {
      if (check.status != CheckStatus::kFail || check.severity != severity) continue;
      ids += (ids.empty() ? "" : " ") + check.id;
    }
    if (ids.empty()) continue;
    if (severity == Severity::kAdvisory) ids = "advisory " + ids;
    out << fmt::format(R"(<span class="ids{}">{}</span>)",
                       severity == Severity::kAdvisory ? " advisory" : "", Esc(ids));
  }
}

// " has-advisory" when a run of the section has an advisory: the advisory filter keeps it.
std::string_view AdvisoryClass(const std::vector<const ScenarioResult*>& runs) {
  return std::ranges::any_of(runs,
                             [](const ScenarioResult* run) { return internal::HasAdvisory(*run); })
             ? " has-advisory"
             : "";
}

void WriteSummaryLine(const ScenarioResult& scenario, bool repeated, std::ostream& out) {
  const std::string_view css = internal::VerdictClass(scenario.verdict);
  std::string where = scenario.world;
  if (repeated) where += fmt::format(" · run {}", scenario.repetition + 1);
  out << fmt::format(
      R"(<summary><span class="badge {}">{}</span><span class="name">{}</span><span class="where">{}</span>)",
      css, ToString(scenario.verdict), Esc(scenario.name), Esc(where));
  WriteIds(scenario, out);
  out << fmt::format(R"(<span class="facts">{} attempt{} · {}</span></summary>)",
                     scenario.metrics.attempts, scenario.metrics.attempts == 1 ? "" : "s",
                     FormatMs(scenario.metrics.terminal_ms));
}

void WriteFacts(const ScenarioResult& scenario, std::ostream& out) {
  if (!scenario.description.empty()) {
    out << fmt::format(R"(<p class="description">{}</p>)", Esc(scenario.description));
  }
  std::string tags;
  for (const std::string& tag : scenario.tags) tags += (tags.empty() ? "" : ", ") + tag;
  out << fmt::format(
      R"(<p class="facts-line">{} · {} · tags: {} · seed <span class="mono">{}</span> · fingerprint <span class="mono">{}</span> · ran in {}</p>)",
      Esc(SourceText(scenario)), Esc(scenario.dialect), Esc(tags.empty() ? "–" : tags),
      scenario.seed, Esc(scenario.fingerprint.empty() ? "–" : scenario.fingerprint),
      FormatMs(scenario.wall_ms));
  if (scenario.black_box) {
    out << R"(<p class="note">Black-box subject: it reported only its outcome, so it was judged )"
           R"(from the server journal and client-side checks are not applicable.</p>)";
  }
  if (scenario.verdict == Verdict::kError || !scenario.error.empty()) {
    const auto& subject = scenario.subject_error;
    out << fmt::format(R"(<h3>{}</h3><pre class="error-text">{}</pre>)",
                       subject ? "Subject error: " + Esc(subject->kind) : std::string("Error"),
                       Esc(scenario.error.empty() ? "(no error text)" : scenario.error));
    if (subject && !subject->stderr_tail.empty()) {
      out << fmt::format(R"(<h3>Last lines of stderr</h3><pre class="error-text">{}</pre>)",
                         Esc(subject->stderr_tail));
    }
  }
}

void WriteChecks(const ScenarioResult& scenario, std::ostream& out) {
  out << "<h3>Checks</h3>";
  if (scenario.checks.empty()) {
    out << "<p class=\"facts-line\">No checks were judged.</p>";
    return;
  }
  out << "<table class=\"checks\"><thead><tr><th>ID</th><th>Statement</th><th>Status</th>"
         "<th>Evidence</th></tr></thead><tbody>";
  for (const CheckResult& check : scenario.checks) {
    const bool advisory = check.severity == Severity::kAdvisory;
    const std::string_view css =
        advisory && check.status == CheckStatus::kFail ? "advisory" : StatusClass(check.status);
    const std::string status = advisory && check.status == CheckStatus::kFail
                                   ? std::string("advisory")
                                   : std::string(ToString(check.status));
    out << fmt::format(
        R"(<tr class="{0}"><td>{1}</td><td>{2}</td><td><span class="badge {0}">{3}</span></td><td><pre class="evidence">{4}</pre></td></tr>)",
        css, Esc(check.id), Esc(check.statement), status, Esc(check.evidence));
  }
  out << "</tbody></table>";
}

void WriteMetric(std::string_view name, std::string_view value, std::ostream& out) {
  out << fmt::format("<div><dt>{}</dt><dd>{}</dd></div>", name, Esc(value));
}

void WriteMetrics(const Metrics& m, std::ostream& out) {
  out << "<h3>Metrics</h3><dl class=\"metrics\">";
  WriteMetric("First token", FormatMs(m.first_token_ms), out);
  WriteMetric("Terminal event", FormatMs(m.terminal_ms), out);
  WriteMetric("Forced minimum", FormatMs(m.forced_minimum_ms), out);
  WriteMetric("Recovery overhead", FormatMs(m.recovery_overhead_ms), out);
  WriteMetric("Attempts", std::to_string(m.attempts), out);
  WriteMetric("Wasted", fmt::format("{} · {} tok", FormatBytes(m.wasted_bytes), m.wasted_tokens),
              out);
  out << "</dl>";
}

// Everything in a client event except what the columns already show.
std::string EventDetail(const nlohmann::json& event) {
  if (!event.is_object())
    return event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  nlohmann::json rest = event;
  rest.erase("type");
  rest.erase("attempt");
  if (rest.empty()) return "";
  return internal::Shorten(rest.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                           400);
}

void WriteClientEvents(const nlohmann::json& trace, std::ostream& out) {
  if (!trace.is_object() || !trace.contains("client") || !trace["client"].is_array()) return;
  const nlohmann::json& lines = trace["client"];
  out << fmt::format(
      R"(<details class="more"><summary>Client events ({})</summary><table class="events"><thead><tr><th class="num">t</th><th>Attempt</th><th>Event</th><th>Details</th></tr></thead><tbody>)",
      lines.size());
  for (const nlohmann::json& line : lines) {
    if (!line.is_object()) continue;
    const nlohmann::json event = line.value("event", nlohmann::json::object());
    const double t =
        line.contains("t_ms") && line["t_ms"].is_number() ? line["t_ms"].get<double>() : 0;
    const std::string type = event.is_object() ? event.value("type", std::string("?")) : "?";
    const std::string attempt =
        event.is_object() && event.contains("attempt") ? event["attempt"].dump() : "";
    out << fmt::format(
        R"(<tr><td class="num">{}</td><td>{}</td><td>{}</td><td class="detail">{}</td></tr>)",
        FormatMs(t), Esc(attempt), Esc(type), Esc(EventDetail(event)));
  }
  out << "</tbody></table></details>";
}

// What the runner could not make sense of in the adapter's output.
void WriteProtocolErrors(const nlohmann::json& trace, std::ostream& out) {
  if (!trace.is_object() || !trace.contains("protocol_errors")) return;
  const nlohmann::json& errors = trace["protocol_errors"];
  if (!errors.is_array() || errors.empty()) return;
  out << fmt::format(R"(<h3>Adapter protocol errors ({})</h3><pre class="error-text">)",
                     errors.size());
  for (const nlohmann::json& error : errors) {
    out << Esc(error.is_string()
                   ? error.get<std::string>()
                   : error.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
        << '\n';
  }
  out << "</pre>";
}

// The subject's own words: its stderr (open when the run broke, the best clue then), an app's
// stdout, and how each app process ended.
void WriteSubjectOutput(const nlohmann::json& trace, bool open, std::ostream& out) {
  if (!trace.is_object()) return;
  const auto section = [&](const char* key, std::string_view title) {
    if (!trace.contains(key) || !trace[key].is_string()) return;
    const std::string text = trace[key].get<std::string>();
    if (text.empty()) return;
    out << fmt::format(
        R"(<details class="more"{}><summary>{}</summary><pre class="stderr">{}</pre></details>)",
        open ? " open" : "", title, Esc(text));
  };
  if (trace.contains("endings") && trace["endings"].is_array()) {
    out << "<ul class=\"endings\">";
    for (const nlohmann::json& ending : trace["endings"]) {
      if (ending.is_string()) out << "<li>" << Esc(ending.get<std::string>()) << "</li>";
    }
    out << "</ul>";
  }
  section("stdout", "App stdout");
  section("stderr", "Subject stderr");
}

void WriteTimeline(const ScenarioResult& scenario, std::size_t index, std::ostream& out) {
  out << "<h3>Timeline</h3><div class=\"timeline-box\">";
  const internal::Timeline timeline = internal::BuildTimeline(scenario.trace);
  internal::RenderTimelineSvg(timeline, "timeline of " + scenario.name, fmt::format("s{}", index),
                              out);
  out << "</div>";
  internal::RenderTimelineLegend(timeline, out);
}

// A small report (one scenario being debugged) shows every run in full, open.
constexpr std::size_t kOpenAllUpTo = 6;

// The run whole (a slim run is read back from its spool: FullRun).
void WriteBody(const ScenarioResult& run, std::size_t index, std::ostream& out) {
  const FullRun full(run);
  const ScenarioResult& scenario = *full;
  WriteFacts(scenario, out);
  WriteChecks(scenario, out);
  WriteMetrics(scenario.metrics, out);
  WriteTimeline(scenario, index, out);
  WriteProtocolErrors(scenario.trace, out);
  WriteClientEvents(scenario.trace, out);
  WriteSubjectOutput(scenario.trace, scenario.verdict == Verdict::kError, out);
}

// One run on its own (small reports: everything in full, open).
void WriteScenario(const ScenarioResult& scenario, std::size_t index, bool repeated, bool open,
                   std::ostream& out) {
  const std::string_view css = internal::VerdictClass(scenario.verdict);
  out << fmt::format(R"(<details class="scenario {}{}" id="{}" data-name="{}"{}>)", css,
                     AdvisoryClass({&scenario}), RunAnchor(scenario), Esc(Lowercase(scenario.name)),
                     open ? " open" : "");
  WriteSummaryLine(scenario, repeated, out);
  out << "<div class=\"body\">";
  WriteBody(scenario, index, out);
  out << "</div></details>\n";
}

// The runs of one scenario in one world with one verdict, in run order.
struct Group {
  std::vector<const ScenarioResult*> runs;
  const ScenarioResult& first() const { return *runs.front(); }
};

std::vector<Group> GroupRuns(const RunResult& result) {
  std::vector<Group> groups;
  std::map<std::tuple<std::string_view, std::string_view, Verdict>, std::size_t> index;
  for (const ScenarioResult& scenario : result.scenarios) {
    auto [it, inserted] =
        index.try_emplace({scenario.name, scenario.world, scenario.verdict}, groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].runs.push_back(&scenario);
  }
  // Failures first, then errors, then passes; scenario order within each.
  std::ranges::stable_sort(groups, {}, [](const Group& g) {
    return g.first().verdict == Verdict::kFail ? 0 : g.first().verdict == Verdict::kError ? 1 : 2;
  });
  return groups;
}

std::string Median(const Group& group, std::optional<double> Metrics::*metric) {
  SampleSeries values;
  for (const ScenarioResult* run : group.runs) {
    if (const auto& value = run->metrics.*metric) values.Add(*value);
  }
  if (values.empty()) return "–";
  return FormatMs(values.Percentile(50));
}

void WriteGroupSummary(const Group& group, std::ostream& out) {
  const ScenarioResult& first = group.first();
  const std::string_view css = internal::VerdictClass(first.verdict);
  const std::size_t runs = group.runs.size();
  out << fmt::format(
      R"(<summary><span class="badge {}">{}</span><span class="name">{}</span><span class="where">{}{}</span>)",
      css, ToString(first.verdict), Esc(first.name), Esc(first.world),
      runs > 1 ? fmt::format(" · {} runs", runs) : "");
  WriteIds(first, out);
  out << fmt::format(R"(<span class="facts">{} attempt{} · {}{}</span></summary>)",
                     first.metrics.attempts, first.metrics.attempts == 1 ? "" : "s",
                     runs > 1 ? "median " : "", Median(group, &Metrics::terminal_ms));
}

// A section per group. Its first run in full: directly when it failed (open), else inside an
// inert template rendered when opened. The other runs: rows the script builds from `runs` data.
void WriteGroup(const Group& group, std::size_t index, std::ostream& out) {
  const ScenarioResult& first = group.first();
  const bool pass = first.verdict == Verdict::kPass;
  out << fmt::format(
      R"(<details class="scenario group {}{}" id="{}" data-name="{}" data-group="{}"{}>)",
      internal::VerdictClass(first.verdict), AdvisoryClass(group.runs), GroupAnchor(first),
      Esc(Lowercase(first.name)), index, pass ? "" : " open");
  WriteGroupSummary(group, out);
  out << "<div class=\"body\">";
  if (group.runs.size() > 1) {
    out << fmt::format(R"(<h3 id="{}">Run {} of {} (the first; the others below)</h3>)",
                       RunAnchor(first), first.repetition + 1, group.runs.size());
  } else {
    out << fmt::format(R"(<span id="{}"></span>)", RunAnchor(first));
  }
  if (pass) out << "<template>";
  WriteBody(first, index, out);
  if (pass) out << "</template>";
  if (group.runs.size() > 1) {
    out << R"(<h3>Every run</h3><table class="reps"><thead><tr><th>Run</th><th>Seed</th>)"
           R"(<th class="num">First token</th><th class="num">Terminal</th>)"
           R"(<th class="num">Attempts</th><th>Failed checks</th><th>Fingerprint</th></tr>)"
           R"(</thead><tbody></tbody></table>)";
  }
  out << "</div></details>\n";
}

// Compact data of every run past each group's first, for the script's tables: one array per
// run [group, anchor, repetition, seed (a string: JavaScript numbers lose 64-bit seeds), first
// token ms, terminal ms, attempts, failed ids, fingerprint]; numbers as numbers, null when absent.
// Written a row at a time, as the whole array's dump() writes it: a document of every run's row
// would hold more than the runs themselves.
void WriteRunData(const std::vector<Group>& groups, std::ostream& out) {
  out << R"(<script type="application/json" id="faultline-runs">[)";
  bool first_row = true;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].runs.size() < 2) continue;
    for (const ScenarioResult* run : groups[g].runs) {
      const auto number = [](const std::optional<double>& value) {
        return value ? nlohmann::json(std::round(*value * 10) / 10) : nlohmann::json(nullptr);
      };
      const nlohmann::json row = {g,
                                  RunAnchor(*run),
                                  run->repetition + 1,
                                  std::to_string(run->seed),
                                  number(run->metrics.first_token_ms),
                                  number(run->metrics.terminal_ms),
                                  run->metrics.attempts,
                                  FailedIds(*run),
                                  run->fingerprint};
      std::string json = row.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
      // Inside <script>, "</" could end the element: JSON allows "<\/" for it.
      for (std::size_t at = json.find("</"); at != std::string::npos; at = json.find("</", at)) {
        json.replace(at, 2, "<\\/");
      }
      out << (first_row ? "" : ",") << json;
      first_row = false;
    }
  }
  out << "]</script>\n";
}

std::string Percentiles(const std::optional<LatencySummary::Percentiles>& p) {
  if (!p) return "–";
  return fmt::format("{} / {} / {}", FormatMs(p->p50), FormatMs(p->p95), FormatMs(p->p99));
}

void WriteLatency(const RunResult& result, std::ostream& out) {
  if (result.latency.empty()) return;
  out << "<h2>Latency over repetitions <small>(p50 / p95 / p99)</small></h2><table><thead><tr>"
         "<th>Scenario</th><th>World</th><th class=\"num\">Runs</th><th class=\"num\">First "
         "token</th><th class=\"num\">Terminal</th><th class=\"num\">Recovery "
         "overhead</th></tr></thead><tbody>";
  for (const LatencySummary& s : result.latency) {
    out << fmt::format(
        R"(<tr><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td></tr>)",
        Esc(s.name), Esc(s.world), s.runs, Percentiles(s.first_token_ms),
        Percentiles(s.terminal_ms), Percentiles(s.recovery_overhead_ms));
  }
  out << "</tbody></table>\n";
}

}  // namespace

void RenderHtml(const RunResult& result, std::ostream& out) {
  internal::WritePageStart(
      fmt::format("faultline: {} passed, {} failed, {} errors — {}", result.passed(),
                  result.failed(), result.errors(), result.subject),
      out);
  WriteHeader(result, out);
  internal::WriteOverview(result, out);
  WriteFilters(result, out);
  out << "<main>\n<h2>Scenarios</h2>\n";
  if (result.scenarios.size() <= kOpenAllUpTo) {
    const bool repeated = std::any_of(result.scenarios.begin(), result.scenarios.end(),
                                      [](const ScenarioResult& s) { return s.repetition > 0; });
    for (std::size_t i = 0; i < result.scenarios.size(); ++i) {
      WriteScenario(result.scenarios[i], i, repeated, true, out);
    }
  } else {
    const std::vector<Group> groups = GroupRuns(result);
    for (std::size_t g = 0; g < groups.size(); ++g) WriteGroup(groups[g], g, out);
    WriteRunData(groups, out);
  }
  internal::WriteThresholds(result, out);
  WriteLatency(result, out);
  out << "</main>\n<footer>Rendered by faultline from a run result (format " << result.format
      << ").</footer>\n";
  internal::WritePageEnd(out);
}

}  // namespace faultline::report
