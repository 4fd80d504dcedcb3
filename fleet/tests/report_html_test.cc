// The simulate report's plots from real runs: the capacity line on the load plot, the SDK lines
// that coincide named together, the sweep's plots of each measure against the swept value.
#include <gtest/gtest.h>

#include <sstream>

#include "fleet/experiment.h"
#include "fleet/report.h"
#include "fleet/tests/test_support.h"

namespace faultline::fleet {
namespace {

scenario::Scenario Load(std::string_view provider, std::string_view policies) {
  return fleet_test::LoadFleet(provider, policies, "html.yaml");
}

std::string Html(const ExperimentInput& input) {
  auto experiment = RunExperiment(input);
  EXPECT_TRUE(experiment.has_value()) << experiment.error();
  std::ostringstream out;
  WriteHtml(*experiment, out);
  return out.str();
}

// The text of the SVG chart titled `title`.
std::string Chart(const std::string& html, std::string_view title) {
  const std::size_t start = html.find(std::string("data-title='") + std::string(title) + "'");
  if (start == std::string::npos) return "";
  return html.substr(start, html.find("</svg>", start) - start);
}

// How often `pattern` (a regular expression) matches in `text`.
std::size_t Count(const std::string& text, const std::string& pattern) {
  return fleet_test::AllMatches(text, "(" + pattern + ")").size();
}

TEST(ReportHtmlTest, TheLoadPlotHasTheCapacityLineWithItsBrownout) {
  ExperimentInput input;
  input.scenario =
      Load("{rate: 30, brownouts: [{from: 5s, for: 5s, capacity: 0.5}]}", "[no-retry]");
  const std::string html = Html(input);
  const std::string load = Chart(html, "Provider load (attempts/s)");
  ASSERT_FALSE(load.empty());
  EXPECT_EQ(Count(load, "class='step-line' data-label='provider capacity'"), 1u);
  EXPECT_NE(load.find(">provider capacity<"), std::string::npos) << "in the legend";
  // 30/s, 15/s over the brownout, 30/s again: three horizontal runs.
  const std::size_t d = load.find("d='", load.find("class='step-line'"));
  EXPECT_EQ(Count(load.substr(d, load.find('\'', d + 3) - d), " L"), 5u);
  EXPECT_EQ(Count(Chart(html, "Goodput (successful calls/s)"), "step-line"), 0u);
}

TEST(ReportHtmlTest, PoliciesWithTheSameResultsShareOneNamedLine) {
  ExperimentInput input;
  // Same policy under two names: identical results on the same seed.
  input.scenario = Load("{rate: 30, overload: {status: 429, retry_after: 2s}}",
                        "[openai-node, anthropic-node, no-retry]");
  const std::string load = Chart(Html(input), "Provider load (attempts/s)");
  EXPECT_NE(load.find(">openai-node = anthropic-node<"), std::string::npos) << load;
  EXPECT_NE(load.find(">no-retry<"), std::string::npos);
  EXPECT_EQ(Count(load, "class='series'"), 3u);
}

TEST(ReportHtmlTest, TheCdfRunsToOneHundredPercentWithUnits) {
  ExperimentInput input;
  input.scenario = Load("{rate: 30}", "[openai-node]");
  const std::string cdf = Chart(Html(input), "Latency CDF of logical calls");
  ASSERT_FALSE(cdf.empty());
  EXPECT_NE(cdf.find(">100%</text>"), std::string::npos);
  EXPECT_EQ(cdf.find(">120%"), std::string::npos);
  EXPECT_EQ(cdf.find("e+"), std::string::npos) << "no exponent notation";
  EXPECT_NE(cdf.find(" ms</text>"), std::string::npos);
}

TEST(ReportHtmlTest, ASweepPlotsEachMeasureAgainstTheSweptValue) {
  ExperimentInput input;
  input.scenario = Load("{rate: 30}", "[no-retry, openai-node]");
  input.sweep = *ParseSweep("provider.rate=20..50:10");
  const std::string html = Html(input);
  for (std::string_view title :
       {"Goodput against provider.rate", "Success rate against provider.rate",
        "p99 latency against provider.rate", "Amplification against provider.rate"}) {
    const std::string chart = Chart(html, title);
    ASSERT_FALSE(chart.empty()) << title;
    EXPECT_EQ(Count(chart, "class='series'"), 2u) << title << ": one line per policy";
    EXPECT_EQ(Count(chart, "<circle class='point'"), 8u) << title << ": 4 values x 2 policies";
    EXPECT_NE(chart.find(">provider.rate</text>"), std::string::npos) << title;
  }
  // Four capacities, one line each, named by their sweep value.
  const std::string load = Chart(html, "Provider load (attempts/s)");
  EXPECT_EQ(Count(load, "class='step-line'"), 4u);
  EXPECT_NE(load.find("provider capacity @ 50"), std::string::npos);
}

TEST(ReportHtmlTest, ARunWithoutSweepHasNoSweepPlots) {
  ExperimentInput input;
  input.scenario = Load("{rate: 30}", "[no-retry]");
  EXPECT_EQ(Html(input).find(" against "), std::string::npos);
}

}  // namespace
}  // namespace faultline::fleet
