// The HTML page of a simulate run: one file, inline SVG plots, the frame of reports/html_page.
#include <algorithm>

#include "fleet/plot_svg.h"
#include "fleet/report.h"
#include "fmt/format.h"
#include "reports/html_page.h"
#include "reports/text.h"

namespace faultline::fleet {
namespace {

using report::internal::XmlEscape;

std::string Label(const JobResult& result) {
  if (!result.sweep_value) return result.measures.policy;
  return fmt::format("{} @ {:g}", result.measures.policy, *result.sweep_value);
}

plot::Axis TimeAxis() { return {"time (s)", plot::Unit::kNumber}; }

// One line per job, coloured by its index (as in the bars); `per_second` divides each step's
// value by the step's width.
template <typename F>
std::vector<plot::Series> SeriesLines(const Experiment& experiment, F value,
                                      bool per_second = true) {
  std::size_t steps = 0;  // every line as long as the longest, so equal ones can coincide
  for (const JobResult& r : experiment.results) steps = std::max(steps, r.measures.series.size());
  std::vector<plot::Series> lines;
  for (std::size_t j = 0; j < experiment.results.size(); ++j) {
    const JobResult& result = experiment.results[j];
    plot::Series line{Label(result), {}, j};
    const PolicyMeasures& m = result.measures;
    for (std::size_t i = 0; i < steps; ++i) {  // zero after a job's last call: nothing happened
      const double v = i < m.series.size() ? value(m.series[i]) : 0.0;
      line.points.emplace_back((static_cast<double>(i) + 0.5) * m.bucket_seconds,
                               v / (per_second ? m.bucket_seconds : 1.0));
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

void WriteOverTime(std::string title, std::string y_title, std::vector<plot::Series> series,
                   std::ostream& out, std::vector<plot::StepLine> steps = {}) {
  plot::LineChart chart;
  chart.title = std::move(title);
  chart.x = TimeAxis();
  chart.y.title = std::move(y_title);
  chart.series = std::move(series);
  chart.steps = std::move(steps);
  plot::WriteLineChart(chart, out);
}

// The provider's capacity over time, once per distinct schedule (a sweep of provider.rate has
// one per value), named by its sweep value when there are several.
std::vector<plot::StepLine> CapacityLines(const Experiment& experiment) {
  std::vector<plot::StepLine> lines;
  std::vector<const JobResult*> owners;
  for (const JobResult& result : experiment.results) {
    const auto& steps = result.measures.capacity_steps;
    if (steps.empty()) continue;
    if (std::ranges::any_of(lines, [&](const auto& line) { return line.steps == steps; })) continue;
    lines.push_back({"provider capacity", steps});
    owners.push_back(&result);
  }
  if (lines.size() > 1) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (owners[i]->sweep_value) lines[i].label += fmt::format(" @ {:g}", *owners[i]->sweep_value);
    }
  }
  return lines;
}

void WriteCdf(const Experiment& experiment, std::ostream& out) {
  plot::LineChart chart{
      "Latency CDF of logical calls",
      {"latency, log scale (ms, s)", plot::Unit::kMilliseconds, true},
      {"calls finished within (%)", plot::Unit::kFraction, false, true, 0.0, 1.0}};
  for (std::size_t j = 0; j < experiment.results.size(); ++j) {
    const JobResult& r = experiment.results[j];
    chart.series.push_back({Label(r), r.measures.latency.Cdf(), j});
  }
  plot::WriteLineChart(chart, out);
}

void WriteBars(const Experiment& experiment, std::ostream& out) {
  std::vector<plot::Bar> bars;
  for (std::size_t j = 0; j < experiment.results.size(); ++j) {
    const PolicyMeasures& m = experiment.results[j].measures;
    bars.push_back({Label(experiment.results[j]), m.amplification, m.load_amplification, j});
  }
  plot::WriteBarChart(
      "Amplification: attempts per logical call (provider requests per call, lighter)",
      {"attempts per logical call (\u00d7)", plot::Unit::kTimes}, bars, out);
}

// A --sweep: each measure against the swept value, one line per policy (coloured as its first
// job), a dot per sweep value.
struct SweepMeasure {
  std::string_view title, axis;
  plot::Unit unit;
  double (*value)(const PolicyMeasures&);
};
constexpr SweepMeasure kSweepMeasures[] = {
    {"Goodput", "successful calls/s", plot::Unit::kNumber,
     [](const PolicyMeasures& m) { return m.goodput; }},
    {"Success rate", "calls that succeeded (%)", plot::Unit::kFraction,
     [](const PolicyMeasures& m) { return m.success_rate; }},
    {"p99 latency", "p99 latency (ms, s)", plot::Unit::kMilliseconds,
     [](const PolicyMeasures& m) { return m.p99_ms; }},
    {"Amplification", "attempts per logical call (\u00d7)", plot::Unit::kTimes,
     [](const PolicyMeasures& m) { return m.amplification; }},
};

void WriteSweepCharts(const Experiment& experiment, std::ostream& out) {
  const std::string& key = experiment.sweep->key;
  for (const SweepMeasure& measure : kSweepMeasures) {
    plot::LineChart chart{fmt::format("{} against {}", measure.title, key),
                          {key, plot::Unit::kNumber, false, false},
                          {std::string(measure.axis), measure.unit}};
    if (measure.unit == plot::Unit::kFraction) chart.y.max = 1.0;
    chart.markers = true;
    for (std::size_t j = 0; j < experiment.results.size(); ++j) {
      const JobResult& r = experiment.results[j];
      if (!r.sweep_value) continue;
      auto line = std::ranges::find(chart.series, r.measures.policy, &plot::Series::name);
      if (line == chart.series.end()) {
        chart.series.push_back({r.measures.policy, {}, j});
        line = chart.series.end() - 1;
      }
      line->points.emplace_back(*r.sweep_value, measure.value(r.measures));
    }
    for (plot::Series& line : chart.series) std::ranges::sort(line.points);
    plot::WriteLineChart(chart, out);
  }
}

void WriteSummaryTable(const Experiment& experiment, std::ostream& out) {
  out << "<table><tr><th>policy</th><th class=num>calls</th><th class=num>success</th>"
         "<th class=num>attempts/call</th><th class=num>goodput/s</th><th class=num>p50</th>"
         "<th class=num>p99</th><th class=num>p99.9</th><th class=num>recovery</th>"
         "<th class=num>wasted tokens</th><th>parameters</th></tr>\n";
  for (const JobResult& r : experiment.results) {
    const PolicyMeasures& m = r.measures;
    const std::string recovery = m.trigger_end_seconds
                                     ? FormatSeconds(m.recovery_seconds, "did not recover")
                                     : std::string("-");
    out << fmt::format(
        "<tr><td><b>{}</b></td><td class=num>{}</td><td class=num>{:.1f}%</td>"
        "<td class=num>{:.3f}</td><td class=num>{:.1f}</td><td class=num>{}</td>"
        "<td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td>"
        "<td><span class=mono>{}</span><br><small>{}</small></td></tr>\n",
        XmlEscape(Label(r)), m.calls, 100 * m.success_rate, m.amplification, m.goodput,
        FormatMs(m.p50_ms), FormatMs(m.p99_ms), FormatMs(m.p999_ms), recovery, m.wasted_tokens,
        XmlEscape(m.description), XmlEscape(m.source));
  }
  out << "</table>\n";
}

}  // namespace

void WriteHtml(const Experiment& experiment, std::ostream& out) {
  report::internal::WritePageStart("faultline simulate: " + experiment.scenario, out);
  out << "<style>.charts { display: flex; flex-wrap: wrap; gap: 14px; } .charts svg { "
         "background: #fff; border: 1px solid #d9dde3; border-radius: 6px; }</style>\n";
  out << "<div class='page'><header class='run'>";
  out << fmt::format("<h1>faultline simulate: {}</h1>", XmlEscape(experiment.scenario));
  out << fmt::format(
      "<dl class='meta'><dt>scenario</dt><dd>{}</dd><dt>seed</dt><dd>{}</dd>"
      "<dt>jobs</dt><dd>{}</dd></dl></header>\n",
      XmlEscape(experiment.source), experiment.seed, experiment.results.size());
  out << "<h2>Summary</h2>\n";
  WriteSummaryTable(experiment, out);
  if (experiment.sweep) {
    out << fmt::format("<h2>Against {}</h2>\n<div class='charts'>",
                       XmlEscape(experiment.sweep->key));
    WriteSweepCharts(experiment, out);
    out << "</div>\n";
  }
  out << "<h2>Over time</h2>\n<div class='charts'>";
  WriteOverTime("Provider load (attempts/s)", "requests/s",
                SeriesLines(experiment, [](const Bucket& b) { return double(b.attempts); }), out,
                CapacityLines(experiment));
  WriteOverTime("Goodput (successful calls/s)", "calls/s",
                SeriesLines(experiment, [](const Bucket& b) { return double(b.succeeded); }), out);
  WriteOverTime("Retries/s", "retries/s",
                SeriesLines(experiment, [](const Bucket& b) { return double(b.retries); }), out);
  WriteOverTime("Offered load (calls/s)", "calls/s",
                SeriesLines(experiment, [](const Bucket& b) { return double(b.offered); }), out);
  WriteOverTime("Provider queue (longest per step)", "requests waiting",
                SeriesLines(
                    experiment, [](const Bucket& b) { return double(b.queue_max); }, false),
                out);
  WriteOverTime("Wasted work (served after the client gave up)", "requests/s",
                SeriesLines(experiment, [](const Bucket& b) { return double(b.wasted); }), out);
  out << "</div>\n<h2>Latency and amplification</h2>\n<div class='charts'>";
  WriteCdf(experiment, out);
  WriteBars(experiment, out);
  out << "</div></div>\n";
  report::internal::WritePageEnd(out);
}

}  // namespace faultline::fleet
