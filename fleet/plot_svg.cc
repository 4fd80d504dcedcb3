#include "fleet/plot_svg.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "fmt/format.h"
#include "reports/text.h"

namespace faultline::fleet::plot {
namespace {

using report::internal::XmlEscape;

constexpr std::array<std::string_view, 10> kColors{"#1f6feb", "#d1242f", "#2da44e", "#bf8700",
                                                   "#8250df", "#0a7c86", "#e16f24", "#57606a",
                                                   "#bf3989", "#6f7f00"};
constexpr std::string_view kStepColor = "#24292f";
constexpr double kWidth = 560, kPlotHeight = 262;
constexpr double kLeft = 64, kRight = 30, kTop = 28, kBottom = 44;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kPlotHeight - kTop - kBottom;
// Series closer than this everywhere are drawn as one line (the stroke is 1.6 px wide).
constexpr double kCoincidePx = 1.5;
// Roughly what a character of the 11 px labels takes, to wrap the legend and thin ticks.
constexpr double kCharPx = 6.4;
constexpr double kLegendLeft = 20;
// A group's swatch shows the colours of its first members only, so that its names keep room.
constexpr std::size_t kMaxSwatchColors = 8;

std::string_view Color(std::size_t index) { return kColors[index % kColors.size()]; }

// "1.50" -> "1.5", "2.0" -> "2": labels carry no zeros the step does not need.
std::string Trim(std::string text) {
  if (text.find('.') == std::string::npos) return text;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

// Decimals that tell apart values `step` apart: 0 for a step of 1 or more, 1 for 0.5, 2 for 0.05.
int Decimals(double step) {
  if (!(step > 0)) return 0;
  return std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 6);
}

std::string Fixed(double value, double step) {
  return Trim(fmt::format("{:.{}f}", value, Decimals(step)));
}

// The smallest of 1, 2, 5 x 10^k at or above `raw`.
double NiceStep(double raw) {
  const double power = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw * (1 - 1e-9)) return m * power;
  }
  return 10 * power;
}

// An axis as drawn: its range, its ticks and the spacing its labels' decimals follow.
struct Scale {
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<double> ticks;
  // Where `value` falls, 0 at lo .. 1 at hi (outside for values off the axis).
  double Fraction(double value) const {
    if (log) return std::log(value / lo) / std::log(hi / lo);
    return (value - lo) / (hi - lo);
  }
  double Step(std::size_t i) const {
    if (log) return ticks[i];
    return ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  }
};

// A `tight` axis ends at the data (the ticks within it), else at the ticks around it: a time
// axis stops at the last step, a value axis at a labelled round number.
Scale MakeScale(const Axis& axis, double data_lo, double data_hi, bool tight) {
  Scale scale;
  scale.log = axis.log;
  double lo = 0, hi = 0;
  if (axis.log) {
    lo = axis.min.value_or(data_lo > 0 ? data_lo : 1);
    hi = axis.max.value_or(std::max(data_hi, lo));
    scale.ticks = LogTicks(lo, hi);
  } else {
    lo = axis.min.value_or(axis.from_zero ? std::min(0.0, data_lo) : data_lo);
    hi = axis.max.value_or(data_hi);
    scale.ticks = NiceTicks(lo, hi);
  }
  scale.lo = scale.ticks.front();
  scale.hi = scale.ticks.back();
  if (!tight || axis.min || axis.max) return scale;
  std::vector<double> inside;
  const double slack = (hi - lo) * 1e-9;
  for (double tick : scale.ticks) {
    if (tick >= lo - slack && tick <= hi + slack) inside.push_back(tick);
  }
  if (inside.size() < 2) return scale;  // a range too narrow for two ticks keeps the round one
  scale.ticks = std::move(inside);
  scale.lo = lo;
  scale.hi = hi;
  return scale;
}

// Every `stride`-th tick, so that no two labels of `length` px overlap.
std::vector<std::size_t> ShownTicks(const Scale& scale, const Axis& axis, double length,
                                    double min_gap_px) {
  double widest = 0;
  for (std::size_t i = 0; i < scale.ticks.size(); ++i) {
    widest =
        std::max(widest, kCharPx * FormatTick(scale.ticks[i], axis.unit, scale.Step(i)).size());
  }
  const double spacing = length / std::max<double>(1, scale.ticks.size() - 1);
  const double needed = std::max(min_gap_px, widest + 8);
  const std::size_t stride = std::max<std::size_t>(1, std::ceil(needed / spacing - 1e-9));
  std::vector<std::size_t> shown;
  for (std::size_t i = 0; i < scale.ticks.size(); i += stride) shown.push_back(i);
  return shown;
}

double PixelX(const Scale& x, double value) { return kLeft + kPlotW * x.Fraction(value); }
double PixelY(const Scale& y, double value) {
  return kTop + kPlotH - kPlotH * std::clamp(y.Fraction(value), 0.0, 1.0);
}

void WriteFrame(const LineChart& chart, const Scale& x, const Scale& y, std::ostream& out) {
  out << fmt::format("<text x='{}' y='17' font-weight='600'>{}</text>", kLeft,
                     XmlEscape(chart.title));
  out << fmt::format("<rect x='{}' y='{}' width='{}' height='{}' fill='#fff' stroke='#d9dde3'/>",
                     kLeft, kTop, kPlotW, kPlotH);
  for (std::size_t i : ShownTicks(y, chart.y, kPlotH, 16)) {
    const double py = PixelY(y, y.ticks[i]);
    out << fmt::format("<line x1='{}' x2='{}' y1='{:.1f}' y2='{:.1f}' stroke='#eef0f3'/>", kLeft,
                       kLeft + kPlotW, py, py);
    out << fmt::format(
        "<text class='y-tick' x='{}' y='{:.1f}' text-anchor='end' font-size='11'>{}</text>",
        kLeft - 5, py + 4, FormatTick(y.ticks[i], chart.y.unit, y.Step(i)));
  }
  for (std::size_t i : ShownTicks(x, chart.x, kPlotW, 0)) {
    const double px = PixelX(x, x.ticks[i]);
    out << fmt::format("<line x1='{:.1f}' x2='{:.1f}' y1='{}' y2='{}' stroke='#eef0f3'/>", px, px,
                       kTop, kTop + kPlotH);
    out << fmt::format(
        "<text class='x-tick' x='{:.1f}' y='{}' text-anchor='middle' font-size='11'>{}</text>", px,
        kTop + kPlotH + 15, FormatTick(x.ticks[i], chart.x.unit, x.Step(i)));
  }
  out << fmt::format(
      "<text class='x-title' x='{}' y='{}' text-anchor='middle' font-size='11' "
      "fill='#5f6670'>{}</text>",
      kLeft + kPlotW / 2, kPlotHeight - 8, XmlEscape(chart.x.title));
  out << fmt::format(
      "<text class='y-title' x='14' y='{0}' font-size='11' fill='#5f6670' "
      "transform='rotate(-90 14 {0})' text-anchor='middle'>{1}</text>",
      kTop + kPlotH / 2, XmlEscape(chart.y.title));
}

struct LegendEntry {
  std::string text;
  std::vector<std::size_t> colors;  // empty: a step line
};

double SwatchWidth(const LegendEntry& entry) {
  return entry.colors.size() > 1 ? 6.0 * static_cast<double>(entry.colors.size()) : 16;
}

// The entry's text in lines that fit beside its swatch, broken after a " =" (a long group).
std::vector<std::string> EntryLines(const LegendEntry& entry) {
  const double room = kWidth - 8 - kLegendLeft - SwatchWidth(entry) - 6;
  const auto fits = [&](const std::string& text) { return kCharPx * text.size() <= room; };
  if (fits(entry.text)) return {entry.text};
  std::vector<std::string> lines{""};
  std::string_view rest = entry.text;
  while (!rest.empty()) {
    const std::size_t cut = rest.find(" = ");
    const std::string_view name = rest.substr(0, cut);
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 3);
    const std::string more = std::string(name) + (rest.empty() ? "" : " =");
    if (!lines.back().empty() && !fits(lines.back() + " " + more)) lines.emplace_back();
    lines.back() += (lines.back().empty() ? "" : " ") + more;
  }
  return lines;
}

void WriteSwatch(const LegendEntry& entry, double x, double y, std::ostream& out) {
  if (entry.colors.empty()) {
    out << fmt::format(
        "<line x1='{0:.0f}' x2='{1:.0f}' y1='{2:.0f}' y2='{2:.0f}' stroke='{3}' "
        "stroke-width='1.6' stroke-dasharray='8 3 2 3'/>",
        x, x + 16, y + 1, kStepColor);
    return;
  }
  const double width = entry.colors.size() > 1 ? 6 : 16;
  for (std::size_t i = 0; i < entry.colors.size(); ++i) {
    out << fmt::format("<rect x='{:.0f}' y='{:.0f}' width='{:.0f}' height='4' fill='{}'/>",
                       x + width * i, y - 1, width, Color(entry.colors[i]));
  }
}

// Legend rows under the plot, wrapped to the chart's width (an entry of several lines on rows
// of its own); returns the height they add.
double WriteLegend(const std::vector<LegendEntry>& entries, bool write, std::ostream& out) {
  constexpr double kRowPx = 16;
  double x = kLegendLeft, y = kPlotHeight + 4;
  for (const LegendEntry& entry : entries) {
    const std::vector<std::string> lines = EntryLines(entry);
    const double width = SwatchWidth(entry) + 18 + kCharPx * lines[0].size();
    if ((lines.size() > 1 || x + width > kWidth - 8) && x > kLegendLeft) {
      x = kLegendLeft;
      y += kRowPx;
    }
    if (write) {
      WriteSwatch(entry, x, y, out);
      const double text_x = x + SwatchWidth(entry) + 6;
      out << fmt::format("<text class='legend' x='{:.0f}' y='{:.0f}' font-size='11'>{}", text_x,
                         y + 5, XmlEscape(lines[0]));
      for (std::size_t i = 1; i < lines.size(); ++i) {
        out << fmt::format("<tspan x='{:.0f}' dy='{}'>{}</tspan>", text_x, kRowPx,
                           XmlEscape(lines[i]));
      }
      out << "</text>";
    }
    y += kRowPx * static_cast<double>(lines.size() - 1);
    x = lines.size() > 1 ? kWidth : x + width;  // the next entry on a row of its own
  }
  return entries.empty() ? 0 : y + 14 - kPlotHeight;
}

std::vector<Points> PixelPaths(const LineChart& chart, const Scale& x, const Scale& y) {
  std::vector<Points> paths;
  for (const Series& series : chart.series) {
    Points path;
    for (const auto& [vx, vy] : series.points) {
      if (x.log && vx <= 0) continue;
      path.emplace_back(PixelX(x, vx), PixelY(y, vy));
    }
    paths.push_back(std::move(path));
  }
  return paths;
}

std::string PathData(const Points& points) {
  std::string data;
  for (const auto& [px, py] : points) {
    data += fmt::format("{}{:.1f},{:.1f}", data.empty() ? "M" : " L", px, py);
  }
  return data;
}

// A group of k coinciding series: each member draws its own path with dashes that leave room
// for the others', so the line shows every member's colour in turn.
void WriteGroup(const LineChart& chart, const std::vector<Points>& paths,
                const std::vector<std::size_t>& group, std::ostream& out) {
  constexpr double kDash = 7;
  const std::size_t k = group.size();
  for (std::size_t j = 0; j < k; ++j) {
    const std::size_t index = group[j];
    const std::string_view color = Color(chart.series[index].color);
    const std::string dash = k == 1
                                 ? std::string()
                                 : fmt::format(" stroke-dasharray='{} {}' stroke-dashoffset='{}'",
                                               kDash, kDash * (k - 1), kDash * ((k - j) % k));
    out << fmt::format(
        "<path class='series' data-series='{}' d='{}' fill='none' stroke='{}' "
        "stroke-width='{}'{}/>",
        XmlEscape(chart.series[index].name, true), PathData(paths[index]), color,
        k == 1 ? 1.6 : 2.2, dash);
  }
  if (!chart.markers) return;
  for (std::size_t j = 0; j < k; ++j) {  // concentric dots, the first member's the widest
    for (const auto& [px, py] : paths[group[j]]) {
      out << fmt::format("<circle class='point' cx='{:.1f}' cy='{:.1f}' r='{:.1f}' fill='{}'/>", px,
                         py, 2.8 + 1.6 * static_cast<double>(k - 1 - j),
                         Color(chart.series[group[j]].color));
    }
  }
}

void WriteStepLine(const StepLine& line, const Scale& x, const Scale& y, std::ostream& out) {
  std::string data;
  for (std::size_t i = 0; i < line.steps.size(); ++i) {
    const double from = std::max(line.steps[i].first, x.lo);
    const double to = i + 1 < line.steps.size() ? line.steps[i + 1].first : x.hi;
    if (from >= x.hi || to <= from) continue;
    const double py = PixelY(y, line.steps[i].second);
    data += fmt::format("{}{:.1f},{:.1f} L{:.1f},{:.1f}", data.empty() ? "M" : " L",
                        PixelX(x, from), py, PixelX(x, to), py);
  }
  if (data.empty()) return;
  out << fmt::format(
      "<path class='step-line' data-label='{}' d='{}' fill='none' stroke='{}' "
      "stroke-width='1.6' stroke-dasharray='8 3 2 3'/>",
      XmlEscape(line.label, true), data, kStepColor);
}

std::pair<double, double> Extent(const LineChart& chart, bool want_x) {
  double lo = INFINITY, hi = -INFINITY;
  auto add = [&](double value) {
    if (want_x && chart.x.log && value <= 0) return;
    lo = std::min(lo, value);
    hi = std::max(hi, value);
  };
  for (const Series& series : chart.series) {
    for (const auto& [vx, vy] : series.points) add(want_x ? vx : vy);
  }
  for (const StepLine& line : chart.steps) {
    for (const auto& [vx, vy] : line.steps) add(want_x ? vx : vy);
  }
  if (!(lo <= hi)) return {0, 0};
  return {lo, hi};
}

// The names of a group joined with " = ", those of the form "A @ B" (a policy at a sweep value)
// gathered by A: "openai-node @ 500, 750 = anthropic-node @ 500, 750".
std::string GroupText(const std::vector<std::string_view>& names) {
  std::vector<std::pair<std::string_view, std::string>> gathered;  // (A or the name, "B1, B2")
  for (std::string_view name : names) {
    const std::size_t at = name.rfind(" @ ");
    const std::string_view head = at == std::string_view::npos ? name : name.substr(0, at);
    auto found =
        std::ranges::find(gathered, head, &std::pair<std::string_view, std::string>::first);
    if (at == std::string_view::npos || found == gathered.end()) {
      gathered.emplace_back(head, at == std::string_view::npos ? "" : name.substr(at + 3));
    } else {
      found->second += ", " + std::string(name.substr(at + 3));
    }
  }
  std::string text;
  for (const auto& [head, values] : gathered) {
    text +=
        (text.empty() ? "" : " = ") + std::string(head) + (values.empty() ? "" : " @ ") + values;
  }
  return text;
}

std::vector<LegendEntry> Legend(const LineChart& chart,
                                const std::vector<std::vector<std::size_t>>& groups) {
  std::vector<LegendEntry> entries;
  for (const auto& group : groups) {
    LegendEntry entry;
    std::vector<std::string_view> names;
    for (std::size_t index : group) {
      names.push_back(chart.series[index].name);
      if (entry.colors.size() < kMaxSwatchColors) entry.colors.push_back(chart.series[index].color);
    }
    entry.text = GroupText(names);
    entries.push_back(std::move(entry));
  }
  for (const StepLine& line : chart.steps) entries.push_back({line.label, {}});
  return entries;
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = hi = 0;
  if (hi < lo) std::swap(lo, hi);
  if (hi - lo <= std::abs(hi) * 1e-12) hi = lo == 0 ? 1 : lo + std::abs(lo);  // a flat range
  // The finest 1-2-5 step that needs at most target + 2 ticks: the axis ends close above the
  // data (0..1040 ends at 1200, not 1500).
  std::vector<double> ticks;
  for (double step = NiceStep((hi - lo) / (std::max(1, target) + 1));;
       step = NiceStep(step * 1.5)) {
    const double first = std::floor(lo / step + 1e-9), last = std::ceil(hi / step - 1e-9);
    if (last - first > std::max(1, target) + 1) continue;
    for (double k = first; k <= last; ++k) ticks.push_back(k * step);
    return ticks;
  }
}

std::vector<double> LogTicks(double lo, double hi) {
  if (!(lo > 0) || !std::isfinite(lo)) lo = 1;
  if (!(hi > lo) || !std::isfinite(hi)) hi = lo;
  const int d0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int d1 = std::max(d0 + 1, static_cast<int>(std::ceil(std::log10(hi) - 1e-9)));
  std::vector<double> candidates;
  const bool fine = d1 - d0 <= 2;  // wider: a tick per decade, thinned if labels would touch
  for (int d = d0; d <= d1; ++d) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (m == 1 || fine) candidates.push_back(m * std::pow(10.0, d));
    }
  }
  std::vector<double> ticks;
  for (double tick : candidates) {
    const bool below = tick <= lo * (1 + 1e-9);
    if (below) ticks.clear();  // keep only the last tick at or below lo
    ticks.push_back(tick);
    if (tick >= hi * (1 - 1e-9)) break;
  }
  return ticks;
}

std::string FormatTick(double value, Unit unit, double step) {
  if (std::abs(value) < std::abs(step) * 1e-9) value = 0;  // no "-0"
  switch (unit) {
    case Unit::kNumber: {
      const double a = std::abs(value);
      const auto [scale, suffix] = a >= 1e6   ? std::pair{1e6, "M"}
                                   : a >= 1e3 ? std::pair{1e3, "k"}
                                              : std::pair{1.0, ""};
      return Fixed(value / scale, step / scale) + suffix;
    }
    case Unit::kMilliseconds:
      if (value == 0) return "0";  // "0 ms" under "50 s" would read as a unit change
      if (std::abs(value) >= 1000) return Fixed(value / 1000, step / 1000) + " s";
      if (value != 0 && std::abs(value) < 1) return Fixed(value * 1000, step * 1000) + " \u00b5s";
      return Fixed(value, step) + " ms";
    case Unit::kFraction:
      return Fixed(value * 100, step * 100) + "%";
    case Unit::kTimes:
      return Fixed(value, step) + "\u00d7";
  }
  return Fixed(value, step);
}

std::vector<std::vector<std::size_t>> CoincidentGroups(const std::vector<Points>& paths,
                                                       double tolerance) {
  auto near = [&](const Points& a, const Points& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (std::abs(a[i].first - b[i].first) > tolerance ||
          std::abs(a[i].second - b[i].second) > tolerance) {
        return false;
      }
    }
    return true;
  };
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    auto found =
        std::ranges::find_if(groups, [&](const auto& g) { return near(paths[g[0]], paths[i]); });
    if (found != groups.end()) {
      found->push_back(i);
    } else {
      groups.push_back({i});
    }
  }
  return groups;
}

void WriteLineChart(const LineChart& chart, std::ostream& out) {
  const auto [x_lo, x_hi] = Extent(chart, true);
  const auto [y_lo, y_hi] = Extent(chart, false);
  const Scale x = MakeScale(chart.x, x_lo, x_hi, true);
  const Scale y = MakeScale(chart.y, y_lo, y_hi * 1.04, false);  // headroom over the highest point
  const std::vector<Points> paths = PixelPaths(chart, x, y);
  const auto groups = CoincidentGroups(paths, kCoincidePx);
  const std::vector<LegendEntry> legend = Legend(chart, groups);
  const double height = kPlotHeight + WriteLegend(legend, false, out);
  out << fmt::format(
      "<svg class='chart' data-title='{0}' xmlns='http://www.w3.org/2000/svg' width='{1}' "
      "height='{2:.0f}' viewBox='0 0 {1} {2:.0f}' font-family='system-ui,sans-serif' "
      "font-size='12'>",
      XmlEscape(chart.title, true), kWidth, height);
  WriteFrame(chart, x, y, out);
  for (const StepLine& line : chart.steps) WriteStepLine(line, x, y, out);
  for (const auto& group : groups) WriteGroup(chart, paths, group, out);
  WriteLegend(legend, true, out);
  out << "</svg>\n";
}

void WriteBarChart(std::string_view title, const Axis& axis, const std::vector<Bar>& bars,
                   std::ostream& out) {
  constexpr double kRow = 22, kLabels = 190, kValues = 60;
  const double w = kWidth - kLabels - kValues, bottom = kTop + kRow * bars.size();
  double max = 0;
  for (const Bar& bar : bars) max = std::max({max, bar.value, bar.inner});
  const Scale scale = MakeScale(axis, 0, max, false);
  out << fmt::format(
      "<svg class='chart' data-title='{0}' xmlns='http://www.w3.org/2000/svg' width='{1}' "
      "height='{2:.0f}' font-family='system-ui,sans-serif' font-size='12'>",
      XmlEscape(title, true), kWidth, bottom + 42);
  out << fmt::format("<text x='4' y='17' font-weight='600'>{}</text>", XmlEscape(title));
  for (std::size_t i : ShownTicks(scale, axis, w, 0)) {
    const double px = kLabels + w * scale.Fraction(scale.ticks[i]);
    out << fmt::format("<line x1='{0:.1f}' x2='{0:.1f}' y1='{1}' y2='{2}' stroke='#eef0f3'/>", px,
                       kTop - 4, bottom);
    out << fmt::format(
        "<text class='x-tick' x='{:.1f}' y='{}' text-anchor='middle' font-size='11'>{}</text>", px,
        bottom + 14, FormatTick(scale.ticks[i], axis.unit, scale.Step(i)));
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double y = kTop + kRow * static_cast<double>(i);
    out << fmt::format("<text x='{}' y='{:.0f}' text-anchor='end'>{}</text>", kLabels - 6, y + 14,
                       XmlEscape(bars[i].label));
    out << fmt::format("<rect x='{}' y='{:.0f}' width='{:.1f}' height='16' fill='{}'/>", kLabels, y,
                       w * scale.Fraction(bars[i].value), Color(bars[i].color));
    out << fmt::format(
        "<rect x='{}' y='{:.0f}' width='{:.1f}' height='6' fill='#ffffff' opacity='0.6'/>", kLabels,
        y + 10, w * scale.Fraction(bars[i].inner));
    out << fmt::format("<text x='{:.1f}' y='{:.0f}'>{}</text>",
                       kLabels + w * scale.Fraction(bars[i].value) + 4, y + 13,
                       FormatTick(bars[i].value, axis.unit, 0.001));
  }
  out << fmt::format(
      "<text class='x-title' x='{}' y='{}' text-anchor='middle' font-size='11' "
      "fill='#5f6670'>{}</text>",
      kLabels + w / 2, bottom + 32, XmlEscape(axis.title));
  out << "</svg>\n";
}

}  // namespace faultline::fleet::plot
