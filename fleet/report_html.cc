// The HTML page of a simulate run: one file, inline SVG plots, the frame of reports/html_page.
#include <algorithm>
#include <array>
#include <cmath>

#include "fleet/report.h"
#include "fmt/format.h"
#include "reports/html_page.h"
#include "reports/text.h"

namespace faultline::fleet {
namespace {

using report::internal::XmlEscape;

constexpr std::array<std::string_view, 10> kColors{"#1f6feb", "#d1242f", "#2da44e", "#bf8700",
                                                   "#8250df", "#0a7c86", "#e16f24", "#57606a",
                                                   "#cf222e", "#116329"};
constexpr double kWidth = 560, kHeight = 250;
constexpr double kLeft = 56, kRight = 12, kTop = 28, kBottom = 36;

struct Line {
  std::string name;
  std::vector<std::pair<double, double>> points;
  bool dashed = false;
};

std::string Label(const JobResult& result) {
  if (!result.sweep_value) return result.measures.policy;
  return fmt::format("{} @ {:g}", result.measures.policy, *result.sweep_value);
}

// A "nice" upper bound for an axis with four intervals: four times a round step (1, 1.5, 2,
// 2.5, 3, 4, 5, 6 or 8 times a power of ten) at or above value / 4.
double NiceMax(double value) {
  if (value <= 0) return 1;
  const double quarter = value / 4;
  const double power = std::pow(10, std::floor(std::log10(quarter)));
  for (double step : {1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0}) {
    if (quarter <= step * power * (1 + 1e-12)) return 4 * step * power;
  }
  return 40 * power;
}

void WriteAxes(std::string_view title, std::string_view x_label, std::string_view y_label,
               double x_max, double y_max, bool log_x, double x_min, std::ostream& out) {
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  out << fmt::format("<text x='{}' y='16' font-weight='600'>{}</text>", kLeft, XmlEscape(title));
  out << fmt::format("<rect x='{}' y='{}' width='{}' height='{}' fill='#fff' stroke='#d9dde3'/>",
                     kLeft, kTop, w, h);
  for (int i = 0; i <= 4; ++i) {
    const double y = kTop + h - h * i / 4.0;
    out << fmt::format("<line x1='{}' x2='{}' y1='{:.1f}' y2='{:.1f}' stroke='#eef0f3'/>", kLeft,
                       kLeft + w, y, y);
    out << fmt::format("<text x='{}' y='{:.1f}' text-anchor='end' font-size='11'>{:g}</text>",
                       kLeft - 4, y + 4, y_max * i / 4.0);
    const double x_value = log_x ? x_min * std::pow(x_max / x_min, i / 4.0) : x_max * i / 4.0;
    out << fmt::format("<text x='{:.1f}' y='{}' text-anchor='middle' font-size='11'>{:.3g}</text>",
                       kLeft + w * i / 4.0, kTop + h + 14, x_value);
  }
  out << fmt::format(
      "<text x='{}' y='{}' text-anchor='middle' font-size='11' fill='#5f6670'>{}"
      "</text>",
      kLeft + w / 2, kHeight - 4, XmlEscape(x_label));
  out << fmt::format(
      "<text x='12' y='{}' font-size='11' fill='#5f6670' transform='rotate(-90 12 "
      "{})' text-anchor='middle'>{}</text>",
      kTop + h / 2, kTop + h / 2, XmlEscape(y_label));
}

// Legend rows under the plot, wrapped to the chart's width; returns the height they take.
double WriteLegend(const std::vector<Line>& lines, bool write, std::ostream& out) {
  double x = kLeft, y = kHeight + 2;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const double width = 22 + 6.5 * static_cast<double>(lines[i].name.size());
    if (x + width > kWidth && x > kLeft) {
      x = kLeft;
      y += 15;
    }
    if (write) {
      const std::string_view color = kColors[i % kColors.size()];
      out << fmt::format("<rect x='{:.0f}' y='{:.0f}' width='12' height='3' fill='{}'/>", x, y,
                         color);
      out << fmt::format("<text x='{:.0f}' y='{:.0f}' font-size='11'>{}</text>", x + 15, y + 4,
                         XmlEscape(lines[i].name));
    }
    x += width;
  }
  return y + 12 - kHeight;
}

void WriteLineChart(std::string_view title, std::string_view x_label, std::string_view y_label,
                    const std::vector<Line>& lines, bool log_x, std::ostream& out) {
  double x_min = log_x ? 1e300 : 0, x_max = 0, y_max = 0;
  for (const Line& line : lines) {
    for (const auto& [x, y] : line.points) {
      if (log_x && x > 0) x_min = std::min(x_min, x);
      x_max = std::max(x_max, x);
      y_max = std::max(y_max, y);
    }
  }
  if (log_x && x_min >= x_max) x_min = x_max / 10;
  if (x_max <= 0) x_max = 1;
  y_max = NiceMax(y_max * 1.05);
  if (!log_x) x_max = NiceMax(x_max);
  const double height = kHeight + WriteLegend(lines, false, out);
  out << fmt::format(
      "<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{:.0f}' "
      "viewBox='0 0 {} {:.0f}' font-family='system-ui,sans-serif' font-size='12'>",
      kWidth, height, kWidth, height);
  WriteAxes(title, x_label, y_label, x_max, y_max, log_x, x_min, out);
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string path;
    for (const auto& [x, y] : lines[i].points) {
      if (log_x && x <= 0) continue;
      const double fx = log_x ? std::log(x / x_min) / std::log(x_max / x_min) : x / x_max;
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", kLeft + w * fx,
                          kTop + h - h * std::min(1.0, y / y_max));
    }
    out << fmt::format("<path d='{}' fill='none' stroke='{}' stroke-width='1.6'{}/>", path,
                       kColors[i % kColors.size()],
                       lines[i].dashed ? " stroke-dasharray='4 3'" : "");
  }
  WriteLegend(lines, true, out);
  out << "</svg>\n";
}

// One line per job; `per_second` divides each step's value by the step's width.
template <typename F>
std::vector<Line> SeriesLines(const Experiment& experiment, F value, bool per_second = true) {
  std::vector<Line> lines;
  for (const JobResult& result : experiment.results) {
    Line line{Label(result), {}, false};
    const PolicyMeasures& m = result.measures;
    for (std::size_t i = 0; i < m.series.size(); ++i) {
      line.points.emplace_back((static_cast<double>(i) + 0.5) * m.bucket_seconds,
                               value(m.series[i]) / (per_second ? m.bucket_seconds : 1.0));
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

void WriteBars(const Experiment& experiment, std::ostream& out) {
  const double row = 22;
  const double height = kTop + row * static_cast<double>(experiment.results.size()) + 20;
  double max = 1;
  for (const JobResult& r : experiment.results) max = std::max(max, r.measures.amplification);
  max = NiceMax(max);
  out << fmt::format(
      "<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{:.0f}' "
      "font-family='system-ui,sans-serif' font-size='12'>",
      kWidth, height);
  out << "<text x='4' y='16' font-weight='600'>Amplification: attempts per logical call "
         "(provider requests per call, lighter)</text>";
  const double left = 190, w = kWidth - left - 60;
  for (std::size_t i = 0; i < experiment.results.size(); ++i) {
    const PolicyMeasures& m = experiment.results[i].measures;
    const double y = kTop + row * static_cast<double>(i);
    const std::string_view color = kColors[i % kColors.size()];
    out << fmt::format("<text x='{}' y='{:.0f}' text-anchor='end'>{}</text>", left - 6, y + 14,
                       XmlEscape(Label(experiment.results[i])));
    out << fmt::format("<rect x='{}' y='{:.0f}' width='{:.1f}' height='16' fill='{}'/>", left, y,
                       w * m.amplification / max, color);
    out << fmt::format(
        "<rect x='{}' y='{:.0f}' width='{:.1f}' height='6' fill='#ffffff' "
        "opacity='0.6'/>",
        left, y + 10, w * m.load_amplification / max);
    out << fmt::format("<text x='{:.1f}' y='{:.0f}'>{:.3f}</text>",
                       left + w * m.amplification / max + 4, y + 13, m.amplification);
  }
  out << "</svg>\n";
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
  out << "<h2>Over time</h2>\n<div class='charts'>";
  WriteLineChart("Provider load (attempts/s)", "time (s)", "requests/s",
                 SeriesLines(experiment, [](const Bucket& b) { return double(b.attempts); }), false,
                 out);
  WriteLineChart("Goodput (successful calls/s)", "time (s)", "calls/s",
                 SeriesLines(experiment, [](const Bucket& b) { return double(b.succeeded); }),
                 false, out);
  WriteLineChart("Retries/s", "time (s)", "retries/s",
                 SeriesLines(experiment, [](const Bucket& b) { return double(b.retries); }), false,
                 out);
  WriteLineChart("Offered load (calls/s)", "time (s)", "calls/s",
                 SeriesLines(experiment, [](const Bucket& b) { return double(b.offered); }), false,
                 out);
  WriteLineChart("Provider queue (longest per step)", "time (s)", "requests",
                 SeriesLines(
                     experiment, [](const Bucket& b) { return double(b.queue_max); }, false),
                 false, out);
  WriteLineChart("Wasted work (served after the client gave up)", "time (s)", "requests/s",
                 SeriesLines(experiment, [](const Bucket& b) { return double(b.wasted); }), false,
                 out);
  out << "</div>\n<h2>Latency and amplification</h2>\n<div class='charts'>";
  std::vector<Line> cdf;
  for (const JobResult& r : experiment.results) cdf.push_back({Label(r), r.measures.latency.Cdf()});
  WriteLineChart("Latency CDF of logical calls", "latency (ms, log scale)", "share of calls", cdf,
                 true, out);
  WriteBars(experiment, out);
  out << "</div></div>\n";
  report::internal::WritePageEnd(out);
}

}  // namespace faultline::fleet
