#include "harness/judge/thresholds.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "fmt/format.h"

namespace faultline::harness {
namespace {

using scenario::Threshold;
using scenario::ThresholdAggregation;
using scenario::ThresholdMetric;

bool PerCall(ThresholdMetric metric) {
  return metric == ThresholdMetric::kFirstToken || metric == ThresholdMetric::kTotal ||
         metric == ThresholdMetric::kAttempts;
}

// The samples of `metric` over `runs`, summarised (reports/sample_series.h: exact percentiles up
// to SampleSeries::kExactSamples samples, within its relative error beyond).
report::SampleSeries Samples(ThresholdMetric metric,
                             const std::vector<const report::ScenarioResult*>& runs) {
  report::SampleSeries values;
  for (const report::ScenarioResult* run : runs) {
    const report::Metrics& metrics = run->metrics;
    if (metric == ThresholdMetric::kOverhead && metrics.recovery_overhead_ms) {
      values.Add(*metrics.recovery_overhead_ms);
    }
    if (metric == ThresholdMetric::kWastedBytes) {
      values.Add(static_cast<double>(metrics.wasted_bytes));
    }
    if (!PerCall(metric)) continue;
    for (const report::CallMetrics& call : report::CallSamples(metrics)) {
      if (metric == ThresholdMetric::kFirstToken && call.first_token_ms) {
        values.Add(*call.first_token_ms);
      }
      if (metric == ThresholdMetric::kTotal && call.terminal_ms) values.Add(*call.terminal_ms);
      if (metric == ThresholdMetric::kAttempts) values.Add(call.attempts);
    }
  }
  return values;
}

double Aggregate(const Threshold& threshold, const report::SampleSeries& values) {
  switch (threshold.aggregation) {
    case ThresholdAggregation::kPercentile:
      return values.Percentile(threshold.percentile);
    case ThresholdAggregation::kAvg:
      return values.sum() / static_cast<double>(values.count());
    case ThresholdAggregation::kMin:
      return values.min();
    case ThresholdAggregation::kMax:
      return values.max();
    case ThresholdAggregation::kCount:
      return static_cast<double>(values.count());
  }
  return 0;
}

// "2350 ms", "3", "1.5 ms": whole values without decimals.
std::string Show(double value, std::string_view unit) {
  const std::string number = value == static_cast<double>(static_cast<long long>(value))
                                 ? fmt::format("{}", static_cast<long long>(value))
                                 : fmt::format("{:.1f}", value);
  return unit.empty() ? number : fmt::format("{} {}", number, unit);
}

}  // namespace

report::ThresholdResult JudgeThreshold(const Threshold& threshold,
                                       const std::vector<const report::ScenarioResult*>& runs) {
  report::ThresholdResult result;
  result.expression = threshold.text;
  result.unit = scenario::IsTimeValued(threshold) ? "ms" : "";
  const report::SampleSeries values = Samples(threshold.metric, runs);
  result.samples = static_cast<int>(values.count());
  const std::string_view what = PerCall(threshold.metric) ? " call(s)" : "";
  if (values.empty() && threshold.aggregation != ThresholdAggregation::kCount) {
    result.status = report::CheckStatus::kNotApplicable;
    result.evidence = fmt::format("no sample in {} run(s): nothing to aggregate", runs.size());
    return result;
  }
  const double value = Aggregate(threshold, values);
  result.value = value;
  const bool holds = scenario::Holds(threshold, value);
  result.status = holds ? report::CheckStatus::kPass : report::CheckStatus::kFail;
  result.evidence =
      fmt::format("{} over {}{} of {} run(s); {} {} {}", Show(value, result.unit), result.samples,
                  what, runs.size(), holds ? "within" : "crossed", scenario::ToString(threshold.op),
                  Show(threshold.bound, result.unit));
  return result;
}

std::vector<report::ThresholdResult> JudgeThresholds(
    const std::vector<scenario::Scenario>& scenarios, std::span<const Threshold> command_line,
    const std::vector<report::ScenarioResult>& runs) {
  // Only the runs of scenarios with a threshold are gathered (none, for most runs).
  std::set<std::string_view> judged;
  for (const scenario::Scenario& scenario : scenarios) {
    if (!command_line.empty() || !scenario.expect.thresholds.empty()) judged.insert(scenario.name);
  }
  if (judged.empty()) return {};
  std::map<std::pair<std::string, std::string>, std::vector<const report::ScenarioResult*>> groups;
  for (const report::ScenarioResult& run : runs) {
    if (judged.contains(run.name)) groups[{run.name, run.world}].push_back(&run);
  }
  std::vector<report::ThresholdResult> out;
  for (const scenario::Scenario& scenario : scenarios) {
    for (const char* world : {"virtual", "real"}) {
      const auto group = groups.find({scenario.name, world});
      if (group == groups.end()) continue;
      const auto judge = [&](const Threshold& threshold, const char* origin) {
        report::ThresholdResult result = JudgeThreshold(threshold, group->second);
        result.name = scenario.name;
        result.world = world;
        result.origin = origin;
        out.push_back(std::move(result));
      };
      for (const Threshold& threshold : scenario.expect.thresholds) judge(threshold, "expect");
      for (const Threshold& threshold : command_line) judge(threshold, "cli");
    }
  }
  return out;
}

}  // namespace faultline::harness
