// RenderHtml: one self-contained page. A run header (counts, subject, world, seed, fingerprint),
// a verdict filter that works without script (radio buttons and CSS), then one collapsible
// section per scenario run (failures open) with its checks, metrics, SVG timeline, client events
// and adapter stderr, then the latency percentiles of repeated runs.
#include <string>

#include "fmt/format.h"
#include "reports/html_page.h"
#include "reports/report.h"
#include "reports/text.h"
#include "reports/timeline.h"

namespace faultline::report {
namespace {

using internal::FormatBytes;
using internal::FormatMs;
using internal::XmlEscape;

std::string Esc(std::string_view text) { return XmlEscape(text, true); }

std::string_view Overall(const RunResult& result) {
  if (result.errors() > 0) return "error";
  return result.failed() > 0 ? "fail" : "pass";
}

void WriteCount(int count, std::string_view label, std::string_view css, std::ostream& out) {
  out << fmt::format(R"(<span class="count {}">{} {}</span>)", count > 0 ? css : "zero", count,
                     label);
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
               "advisory", out);
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
  out << "</dl>\n</header>\n";
}

void WriteFilters(const RunResult& result, std::ostream& out) {
  const std::pair<std::string_view, std::string> choices[] = {
      {"all", fmt::format("All ({})", result.scenarios.size())},
      {"fail", fmt::format("Failed ({})", result.failed())},
      {"error", fmt::format("Errors ({})", result.errors())},
      {"pass", fmt::format("Passed ({})", result.passed())}};
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

std::string Lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

void WriteSummaryLine(const ScenarioResult& scenario, bool repeated, std::ostream& out) {
  const std::string_view css = internal::VerdictClass(scenario.verdict);
  std::string where = scenario.world;
  if (repeated) where += fmt::format(" · rep {}", scenario.repetition);
  out << fmt::format(
      R"(<summary><span class="badge {}">{}</span><span class="name">{}</span><span class="where">{}</span>)",
      css, ToString(scenario.verdict), Esc(scenario.name), Esc(where));
  if (const std::string ids = FailedIds(scenario); !ids.empty()) {
    out << fmt::format(R"(<span class="ids">{}</span>)", Esc(ids));
  }
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
      Esc(scenario.source), Esc(scenario.dialect), Esc(tags.empty() ? "–" : tags), scenario.seed,
      Esc(scenario.fingerprint.empty() ? "–" : scenario.fingerprint), FormatMs(scenario.wall_ms));
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

std::string_view StatusClass(CheckStatus status) {
  switch (status) {
    case CheckStatus::kPass:
      return "pass";
    case CheckStatus::kFail:
      return "fail";
    case CheckStatus::kNotApplicable:
      return "na";
  }
  return "na";
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

// Open when the run broke: the adapter's own words are then the best clue.
void WriteStderr(const nlohmann::json& trace, bool open, std::ostream& out) {
  if (!trace.is_object() || !trace.contains("stderr") || !trace["stderr"].is_string()) return;
  const std::string text = trace["stderr"].get<std::string>();
  if (text.empty()) return;
  out << fmt::format(
      R"(<details class="more"{}><summary>Adapter stderr</summary><pre class="stderr">{}</pre></details>)",
      open ? " open" : "", Esc(text));
}

void WriteTimeline(const ScenarioResult& scenario, std::size_t index, std::ostream& out) {
  out << "<h3>Timeline</h3><div class=\"timeline-box\">";
  const internal::Timeline timeline = internal::BuildTimeline(scenario.trace);
  internal::RenderTimelineSvg(timeline, "timeline of " + scenario.name, fmt::format("s{}", index),
                              out);
  out << "</div>";
  internal::RenderTimelineLegend(out);
}

// Failures start open; so does everything in a small report (one scenario being debugged).
constexpr std::size_t kOpenAllUpTo = 6;

void WriteScenario(const ScenarioResult& scenario, std::size_t index, bool repeated, bool open,
                   std::ostream& out) {
  const std::string_view css = internal::VerdictClass(scenario.verdict);
  out << fmt::format(R"(<details class="scenario {}" id="s{}" data-name="{}"{}>)", css, index,
                     Esc(Lowercase(scenario.name)), open ? " open" : "");
  WriteSummaryLine(scenario, repeated, out);
  out << "<div class=\"body\">";
  WriteFacts(scenario, out);
  WriteChecks(scenario, out);
  WriteMetrics(scenario.metrics, out);
  WriteTimeline(scenario, index, out);
  WriteProtocolErrors(scenario.trace, out);
  WriteClientEvents(scenario.trace, out);
  WriteStderr(scenario.trace, scenario.verdict == Verdict::kError, out);
  out << "</div></details>\n";
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
  WriteFilters(result, out);
  const bool repeated = std::any_of(result.scenarios.begin(), result.scenarios.end(),
                                    [](const ScenarioResult& s) { return s.repetition > 0; });
  out << "<main>\n<h2>Scenarios</h2>\n";
  for (std::size_t i = 0; i < result.scenarios.size(); ++i) {
    const ScenarioResult& scenario = result.scenarios[i];
    const bool open = scenario.verdict != Verdict::kPass || result.scenarios.size() <= kOpenAllUpTo;
    WriteScenario(scenario, i, repeated, open, out);
  }
  WriteLatency(result, out);
  out << "</main>\n<footer>Rendered by faultline from a run result (format " << result.format
      << ").</footer>\n";
  internal::WritePageEnd(out);
}

}  // namespace faultline::report
