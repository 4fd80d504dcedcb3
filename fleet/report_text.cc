// The terminal table, CSV and Markdown of a simulate run.
#include <algorithm>
#include <array>
#include <cmath>

#include "fleet/report.h"
#include "fmt/format.h"
#include "reports/text.h"

namespace faultline::fleet {
using report::internal::MarkdownCell;

namespace {

constexpr std::string_view kNotDrained = "not drained";
constexpr std::string_view kNotRecovered = "did not recover";

// One column of the table and of the Markdown summary: a header and a cell writer.
struct Column {
  std::string_view header;
  std::string (*cell)(const JobResult&);
};

const std::array<Column, 13> kColumns{{
    {"policy", [](const JobResult& r) { return r.measures.policy; }},
    {"calls", [](const JobResult& r) { return fmt::format("{}", r.measures.calls); }},
    {"success",
     [](const JobResult& r) { return fmt::format("{:.1f}%", 100 * r.measures.success_rate); }},
    {"attempts/call",
     [](const JobResult& r) { return fmt::format("{:.3f}", r.measures.amplification); }},
    {"load x",
     [](const JobResult& r) { return fmt::format("{:.3f}", r.measures.load_amplification); }},
    {"goodput/s", [](const JobResult& r) { return fmt::format("{:.1f}", r.measures.goodput); }},
    {"p50", [](const JobResult& r) { return FormatMs(r.measures.p50_ms); }},
    {"p95", [](const JobResult& r) { return FormatMs(r.measures.p95_ms); }},
    {"p99", [](const JobResult& r) { return FormatMs(r.measures.p99_ms); }},
    {"p99.9", [](const JobResult& r) { return FormatMs(r.measures.p999_ms); }},
    {"drain",
     [](const JobResult& r) { return FormatSeconds(r.measures.drain_seconds, kNotDrained); }},
    {"recovery",
     [](const JobResult& r) {
       if (!r.measures.trigger_end_seconds) return std::string("-");
       return FormatSeconds(r.measures.recovery_seconds, kNotRecovered);
     }},
    {"wasted tokens",
     [](const JobResult& r) { return fmt::format("{}", r.measures.wasted_tokens); }},
}};

std::string SweepCell(const JobResult& result) {
  return result.sweep_value ? fmt::format("{:g}", *result.sweep_value) : std::string();
}

// The layering of the load: the client's attempts per call, then each gateway layer's tries per
// request received ("3.000 x 4.000" multiplies to the load x when nothing is shed between).
std::string LayersCell(const JobResult& result) {
  std::string cell = fmt::format("{:.3f}", result.measures.amplification);
  for (const LayerMeasures& layer : result.measures.layers) {
    cell += fmt::format(" x {:.3f}", layer.amplification);
  }
  return cell;
}

// After "load x", the per-layer column, when a job has gateway layers (the table of a fleet
// without a gateway stays as it was).
constexpr std::size_t kLayersAfter = 4;
constexpr std::string_view kLayersHeader = "per layer";

std::vector<std::vector<std::string>> Rows(const Experiment& experiment) {
  const bool layered = std::ranges::any_of(
      experiment.results, [](const JobResult& r) { return !r.measures.layers.empty(); });
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header;
  if (experiment.sweep) header.push_back(experiment.sweep->key);
  for (std::size_t i = 0; i < kColumns.size(); ++i) {
    header.emplace_back(kColumns[i].header);
    if (layered && i == kLayersAfter) header.emplace_back(kLayersHeader);
  }
  rows.push_back(std::move(header));
  for (const JobResult& result : experiment.results) {
    std::vector<std::string> row;
    if (experiment.sweep) row.push_back(SweepCell(result));
    for (std::size_t i = 0; i < kColumns.size(); ++i) {
      row.push_back(kColumns[i].cell(result));
      if (layered && i == kLayersAfter) row.push_back(LayersCell(result));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string FormatMs(double ms) {
  if (ms < 1) return fmt::format("{:.2f} ms", ms);
  if (ms < 1000) return fmt::format("{:.0f} ms", ms);
  return fmt::format("{:.2f} s", ms / 1000);
}

std::string FormatSeconds(const std::optional<double>& seconds, std::string_view none) {
  return seconds ? fmt::format("{:.1f} s", *seconds) : std::string(none);
}

void WriteTable(const Experiment& experiment, std::ostream& out) {
  const auto rows = Rows(experiment);
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::string line;
    for (std::size_t i = 0; i < rows[r].size(); ++i) {
      const bool left = i == 0 || (experiment.sweep && i == 1);
      line += left ? fmt::format("{:<{}}", rows[r][i], widths[i])
                   : fmt::format("{:>{}}", rows[r][i], widths[i]);
      if (i + 1 < rows[r].size()) line += "  ";
    }
    out << line << "\n";
  }
}

void WriteCsv(const Experiment& experiment, std::ostream& out) {
  out << "job,sweep_key,sweep_value,policy,calls,succeeded,failed,unfinished,shed,attempts,"
         "provider_requests,retries,overloaded,timeouts,amplification,load_amplification,"
         "success_rate,goodput_per_s,p50_ms,p95_ms,p99_ms,p999_ms,drain_s,recovery_s,"
         "utilisation,wasted_tokens,wasted_bytes\n";
  auto optional = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.3f}", *v) : std::string();
  };
  for (const JobResult& r : experiment.results) {
    const PolicyMeasures& m = r.measures;
    out << fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.3f},{:.3f},{:.3f},"
        "{:.3f},{:.3f},{},{},{:.4f},{},{}\n",
        r.job, experiment.sweep ? CsvField(experiment.sweep->key) : "", SweepCell(r),
        CsvField(m.policy), m.calls, m.succeeded, m.failed, m.unfinished, m.shed, m.attempts,
        m.provider_requests, m.retries, m.overloaded, m.timeouts, m.amplification,
        m.load_amplification, m.success_rate, m.goodput, m.p50_ms, m.p95_ms, m.p99_ms, m.p999_ms,
        optional(m.drain_seconds), optional(m.recovery_seconds), m.utilisation, m.wasted_tokens,
        m.wasted_bytes);
  }
}

// Every name in the summary comes from a file (the scenario's, a policy file's), so each is
// escaped: a '|' or a newline in a policy's name must not break the table, nor '*' the list.
void WriteMarkdown(const Experiment& experiment, std::ostream& out) {
  out << fmt::format("# faultline simulate: {}\n\n", MarkdownCell(experiment.scenario));
  out << fmt::format("Scenario {}, seed {}, {} job(s).\n\n", MarkdownCell(experiment.source),
                     experiment.seed, experiment.results.size());
  auto rows = Rows(experiment);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::string& cell : rows[r]) cell = MarkdownCell(cell);
    out << "| " << fmt::format("{}", fmt::join(rows[r], " | ")) << " |\n";
    if (r == 0) {
      std::vector<std::string> rule(rows[r].size(), "---");
      out << "| " << fmt::format("{}", fmt::join(rule, " | ")) << " |\n";
    }
  }
  out << "\n";
  std::vector<std::string_view> listed;  // each policy once, whatever the sweep
  for (const JobResult& r : experiment.results) {
    if (std::ranges::find(listed, r.measures.policy) != listed.end()) continue;
    listed.push_back(r.measures.policy);
    out << fmt::format("- **{}**: {} ({})\n", MarkdownCell(r.measures.policy),
                       MarkdownCell(r.measures.description), MarkdownCell(r.measures.source));
  }
}

}  // namespace faultline::fleet
