#include "harness/judge/thresholds.h"

#include <algorithm>
#include <map>
#include <numeric>

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

std::vector<double> Samples(ThresholdMetric metric,
                            const std::vector<const report::ScenarioResult*>& runs) {
  std::vector<double> values;
  for (const report::ScenarioResult* run : runs) {
    const report::Metrics& metrics = run->metrics;
    if (metric == ThresholdMetric::kOverhead && metrics.recovery_overhead_ms) {
      values.push_back(*metrics.recovery_overhead_ms);
    }
    if (metric == ThresholdMetric::kWastedBytes) {
      values.push_back(static_cast<double>(metrics.wasted_bytes));
    }
    if (!PerCall(metric)) continue;
    for (const report::CallMetrics& call : report::CallSamples(metrics)) {
      if (metric == ThresholdMetric::kFirstToken && call.first_token_ms) {
        values.push_back(*call.first_token_ms);
      }
      if (metric == ThresholdMetric::kTotal && call.terminal_ms)
        values.push_back(*call.terminal_ms);
      if (metric == ThresholdMetric::kAttempts) values.push_back(call.attempts);
    }
  }
  return values;
}

double Aggregate(const Threshold& threshold, std::vector<double> values) {
  switch (threshold.aggregation) {
    case ThresholdAggregation::kPercentile:
      return report::NearestRankPercentile(std::move(values), threshold.percentile);
    case ThresholdAggregation::kAvg:
      return std::accumulate(values.begin(), values.end(), 0.0) /
             static_cast<double>(values.size());
    case ThresholdAggregation::kMin:
      return std::ranges::min(values);
    case ThresholdAggregation::kMax:
      return std::ranges::max(values);
    case ThresholdAggregation::kCount:
      return static_cast<double>(values.size());
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
  std::vector<double> values = Samples(threshold.metric, runs);
  result.samples = static_cast<int>(values.size());
  const std::string_view what = PerCall(threshold.metric) ? " call(s)" : "";
  if (values.empty() && threshold.aggregation != ThresholdAggregation::kCount) {
    result.status = report::CheckStatus::kNotApplicable;
    result.evidence = fmt::format("no sample in {} run(s): nothing to aggregate", runs.size());
    return result;
  }
  const double value = Aggregate(threshold, std::move(values));
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
  std::map<std::pair<std::string, std::string>, std::vector<const report::ScenarioResult*>> groups;
  for (const report::ScenarioResult& run : runs) groups[{run.name, run.world}].push_back(&run);
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
