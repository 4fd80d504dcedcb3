// The SVG plots of the fleet report (report_html.cc), in one home: line charts and bar rows with
// nice axis ticks (1-2-5 steps) in human units, series that coincide drawn so that each stays
// visible, and step lines over a chart (the provider's capacity).
//
// Why by hand: the page must be one self-contained file with no script, and the plots are few
// and simple; what a plotting library would add (nice ticks, unit labels, overlap handling) is
// here, with tests. Pure functions writing to an injected stream; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultline::fleet::plot {

using Points = std::vector<std::pair<double, double>>;

// How an axis labels its ticks.
enum class Unit {
  kNumber,        // 500, 1k, 1.5k, 2M
  kMilliseconds,  // a value in ms: 5 µs, 50 ms, 500 ms, 1 s, 1.5 s
  kFraction,      // 0..1 as 0%, 20%, ... 100%
  kTimes,         // amplification: 1×, 1.5×
};

struct Axis {
  std::string title = {};  // names the quantity and its unit: "time (s)", "latency (log scale)"
  Unit unit = Unit::kNumber;
  bool log = false;
  bool from_zero = true;  // a linear axis starts at 0, else at the data's least value
  std::optional<double> min = {}, max = {};  // a fixed range instead of the data's (the CDF's 0..1)
};

// Ticks at 1, 2 or 5 times a power of ten apart, about `target` of them, from the first at or
// below `lo` to the first at or above `hi` (the axis's range).
std::vector<double> NiceTicks(double lo, double hi, int target = 5);
// Ticks of a log axis over [lo, hi] (lo > 0): 1, 2 and 5 times each power of ten over at most
// two decades, each power of ten beyond (the chart shows every other one when labels would
// touch); the first at or below `lo`, the last at or above `hi`.
std::vector<double> LogTicks(double lo, double hi);
// A tick's label with as many decimals as `step` (the distance to its neighbour) needs.
std::string FormatTick(double value, Unit unit, double step);

struct Series {
  std::string name = {};
  Points points = {};
  std::size_t color = 0;  // index into the palette: one colour per policy across charts
};

// A step function drawn over the chart (the provider's capacity): value `second` from `first` on.
struct StepLine {
  std::string label = {};
  Points steps = {};
};

struct LineChart {
  std::string title = {};
  Axis x = {}, y = {};
  std::vector<Series> series = {};
  std::vector<StepLine> steps = {};
  bool markers = false;  // a dot at every point (few points: a sweep)
};

// The series whose points all lie within `tolerance` (in the units given) of the group's first
// series, as groups of indexes in order of first appearance; series with different numbers of
// points never coincide. The chart uses pixel positions, so "coincide" means "drawn as one".
std::vector<std::vector<std::size_t>> CoincidentGroups(const std::vector<Points>& paths,
                                                       double tolerance);

// One <svg class='chart'>: axes with ticks and titles, each series a path (a group of coinciding
// series as interleaved dashes of their colours), step lines, and a legend naming every series
// ("a = b = c" for a group).
void WriteLineChart(const LineChart& chart, std::ostream& out);

struct Bar {
  std::string label = {};
  double value = 0;
  double inner = 0;  // a lighter bar inside, on the same scale
  std::size_t color = 0;
};

// Horizontal bars with their values, on a ticked axis titled `axis.title`.
void WriteBarChart(std::string_view title, const Axis& axis, const std::vector<Bar>& bars,
                   std::ostream& out);

}  // namespace faultline::fleet::plot
