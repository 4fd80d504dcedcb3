// The fleet report's plots: nice ticks with human units, coinciding series kept apart and named
// together, step lines drawn and in the legend.
#include "fleet/plot_svg.h"

#include <gtest/gtest.h>

#include <sstream>

#include "fleet/tests/test_support.h"

namespace faultline::fleet::plot {
namespace {

std::vector<std::string> Labels(const std::vector<double>& ticks, Unit unit, bool log = false) {
  std::vector<std::string> labels;
  for (double tick : ticks) {
    const double step = log ? tick : ticks[1] - ticks[0];
    labels.push_back(FormatTick(tick, unit, step));
  }
  return labels;
}

using fleet_test::AllMatches;

TEST(PlotTicksTest, LinearTicksStepOneTwoOrFiveAndCoverTheRange) {
  EXPECT_EQ(NiceTicks(0, 1850), (std::vector<double>{0, 500, 1000, 1500, 2000}));
  EXPECT_EQ(Labels(NiceTicks(0, 1850), Unit::kNumber),
            (std::vector<std::string>{"0", "500", "1k", "1.5k", "2k"}));
  EXPECT_EQ(Labels(NiceTicks(0, 2.3e6), Unit::kNumber),
            (std::vector<std::string>{"0", "500k", "1M", "1.5M", "2M", "2.5M"}));
  EXPECT_EQ(Labels(NiceTicks(500, 2000), Unit::kNumber),
            (std::vector<std::string>{"500", "1k", "1.5k", "2k"}));
  EXPECT_EQ(Labels(NiceTicks(0, 0.93), Unit::kFraction),
            (std::vector<std::string>{"0%", "20%", "40%", "60%", "80%", "100%"}));
  EXPECT_EQ(Labels(NiceTicks(0, 3.89), Unit::kTimes),
            (std::vector<std::string>{"0\u00d7", "1\u00d7", "2\u00d7", "3\u00d7", "4\u00d7"}));
  EXPECT_EQ(Labels(NiceTicks(0, 0), Unit::kNumber).back(), "1") << "a flat range still has ticks";
}

TEST(PlotTicksTest, MillisecondsReadAsMillisecondsOrSeconds) {
  EXPECT_EQ(Labels(NiceTicks(0, 3210), Unit::kMilliseconds),
            (std::vector<std::string>{"0", "1 s", "2 s", "3 s", "4 s"}));
  EXPECT_EQ(Labels(NiceTicks(0, 1800), Unit::kMilliseconds),
            (std::vector<std::string>{"0", "500 ms", "1 s", "1.5 s", "2 s"}));
}

TEST(PlotTicksTest, LogTicksAreOneTwoFiveOrDecadesWithUnits) {
  EXPECT_EQ(Labels(LogTicks(300, 3000), Unit::kMilliseconds, true),
            (std::vector<std::string>{"200 ms", "500 ms", "1 s", "2 s", "5 s"}));
  // The storm's CDF: 100 ms to two minutes, a label per decade.
  EXPECT_EQ(Labels(LogTicks(120, 119540), Unit::kMilliseconds, true),
            (std::vector<std::string>{"100 ms", "1 s", "10 s", "100 s", "1000 s"}));
  // Calls refused at once (no time in virtual time) down to a microsecond.
  EXPECT_EQ(Labels(LogTicks(0.001, 2), Unit::kMilliseconds, true),
            (std::vector<std::string>{"1 \u00b5s", "10 \u00b5s", "100 \u00b5s", "1 ms", "10 ms"}));
  for (double hi : {1.03e3, 3.21e3, 5.5e4, 2e7}) {
    for (const std::string& label : Labels(LogTicks(0.5, hi), Unit::kMilliseconds, true)) {
      EXPECT_EQ(label.find('e'), std::string::npos) << label << " (no exponent notation)";
    }
  }
}

TEST(PlotCoincideTest, GroupsSeriesThatLieOnEachOther) {
  const Points a{{0, 0}, {1, 10}, {2, 20}};
  const Points near_a{{0, 0.5}, {1, 10.4}, {2, 19.8}};
  const Points b{{0, 0}, {1, 30}, {2, 20}};
  const auto groups = CoincidentGroups({a, b, a, near_a, Points{{0, 0}}}, 1.0);
  EXPECT_EQ(groups, (std::vector<std::vector<std::size_t>>{{0, 2, 3}, {1}, {4}}));
}

LineChart Chart(std::vector<Series> series) {
  return {"Load", {"time (s)"}, {"requests/s"}, std::move(series)};
}

TEST(PlotLineChartTest, CoincidingSeriesShareALegendEntryAndStayVisible) {
  const Points same{{0.5, 100}, {1.5, 2000}, {2.5, 1900}};
  const Points other{{0.5, 100}, {1.5, 1000}, {2.5, 1000}};
  std::ostringstream out;
  WriteLineChart(Chart({{"openai-node", same, 0},
                        {"anthropic-node", same, 1},
                        {"aws-standard", other, 2},
                        {"openai-python", same, 3}}),
                 out);
  const std::string svg = out.str();
  EXPECT_EQ(
      AllMatches(svg, "class='legend'[^>]*>([^<]*)<"),
      (std::vector<std::string>{"openai-node = anthropic-node = openai-python", "aws-standard"}));
  // Every series is drawn; the three of the shared line as interleaved dashes, each its own
  // offset, so each colour shows.
  EXPECT_EQ(AllMatches(svg, "class='series' data-series='([^']*)'").size(), 4u);
  EXPECT_EQ(AllMatches(svg, "stroke-dashoffset='([^']*)'"),
            (std::vector<std::string>{"0", "14", "7"}));
  EXPECT_EQ(AllMatches(svg, "data-series='aws-standard'[^>]*stroke-width='([^']*)'/>"),
            (std::vector<std::string>{"1.6"}))
      << "a line of its own is solid";
}

TEST(PlotLineChartTest, AStepLineIsDrawnInTheRangeAndNamedInTheLegend) {
  LineChart chart = Chart({{"openai-node", {{0.5, 900}, {59.5, 800}}, 0}});
  chart.steps.push_back({"provider capacity", {{0, 1000}, {40, 200}, {50, 1000}}});
  std::ostringstream out;
  WriteLineChart(chart, out);
  const std::string svg = out.str();
  EXPECT_EQ(AllMatches(svg, "class='step-line' data-label='([^']*)'"),
            (std::vector<std::string>{"provider capacity"}));
  EXPECT_EQ(AllMatches(svg, "class='legend'[^>]*>([^<]*)<"),
            (std::vector<std::string>{"openai-node", "provider capacity"}));
  // The y axis reaches the capacity, not only the data.
  EXPECT_EQ(AllMatches(svg, "class='y-tick'[^>]*>([^<]*)<").back(), "1.2k");
  // The brownout: the line goes down to 200 and back, in three horizontal runs.
  const auto d = AllMatches(svg, "class='step-line'[^>]* d='([^']*)'");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(std::count(d[0].begin(), d[0].end(), 'L'), 5);
}

TEST(PlotLineChartTest, AFixedFractionAxisRunsZeroToHundredPercent) {
  LineChart chart{"CDF",
                  {"latency (log scale)", Unit::kMilliseconds, true},
                  {"calls (%)", Unit::kFraction, false, true, 0.0, 1.0},
                  {{"a", {{120, 0.2}, {3210, 0.9}, {119540, 1.0}}, 0}}};
  std::ostringstream out;
  WriteLineChart(chart, out);
  const std::string svg = out.str();
  EXPECT_EQ(AllMatches(svg, "class='y-tick'[^>]*>([^<]*)<"),
            (std::vector<std::string>{"0%", "20%", "40%", "60%", "80%", "100%"}));
  // A data axis: from the fastest call to the slowest, the decades within labelled.
  EXPECT_EQ(AllMatches(svg, "class='x-tick'[^>]*>([^<]*)<"),
            (std::vector<std::string>{"1 s", "10 s", "100 s"}));
  EXPECT_EQ(AllMatches(svg, "class='x-title'[^>]*>([^<]*)<"),
            (std::vector<std::string>{"latency (log scale)"}));
}

TEST(PlotLineChartTest, ALongSharedLegendEntryWrapsWithinTheChart) {
  std::vector<Series> series;
  std::string all;
  for (std::size_t i = 0; i < 10; ++i) {
    series.push_back({"policy-number-" + std::to_string(i), {{0, 1}, {1, 2}}, i});
    all += (i ? " = " : "") + series.back().name;
  }
  std::ostringstream out;
  WriteLineChart(Chart(series), out);
  const std::string svg = out.str();
  const auto first = AllMatches(svg, "class='legend'[^>]*>([^<]*)<");
  const auto more = AllMatches(svg, "<tspan[^>]*>([^<]*)<");
  ASSERT_EQ(first.size(), 1u);
  ASSERT_GE(more.size(), 1u);
  std::string joined = first[0];
  for (const std::string& line : more) joined += " " + line;
  EXPECT_EQ(joined, all) << "every name, in order";
  for (const std::string& line : more) EXPECT_LE(line.size(), 72u) << line;
}

TEST(PlotLineChartTest, ASweepsSharedLineGathersEachPolicysValues) {
  const Points flat{{0, 0}, {1, 0}};
  std::ostringstream out;
  WriteLineChart(Chart({{"openai-node @ 500", flat, 0},
                        {"aws-standard @ 500", flat, 1},
                        {"openai-node @ 750", flat, 2},
                        {"aws-standard @ 750", flat, 3},
                        {"no-retry", flat, 4}}),
                 out);
  EXPECT_EQ(
      AllMatches(out.str(), "class='legend'[^>]*>([^<]*)<"),
      (std::vector<std::string>{"openai-node @ 500, 750 = aws-standard @ 500, 750 = no-retry"}));
}

TEST(PlotLineChartTest, MarkersDrawADotPerPoint) {
  LineChart chart = Chart(
      {{"a", {{500, 1}, {1000, 2}, {1500, 3}}, 0}, {"b", {{500, 1}, {1000, 2}, {1500, 3}}, 1}});
  chart.markers = true;
  std::ostringstream out;
  WriteLineChart(chart, out);
  EXPECT_EQ(AllMatches(out.str(), "(<circle class='point')").size(), 6u);
}

}  // namespace
}  // namespace faultline::fleet::plot
