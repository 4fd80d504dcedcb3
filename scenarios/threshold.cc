#include "scenarios/threshold.h"

#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <utility>

#include "fmt/format.h"
#include "scenarios/duration.h"

namespace faultline::scenario {
namespace {

constexpr std::string_view kSyntax =
    "expected METRIC.AGGREGATION OP BOUND, such as ttft.p99<2s or attempts.max<=3";

constexpr std::array<std::pair<std::string_view, ThresholdMetric>, 6> kMetrics = {{
    {"ttft", ThresholdMetric::kFirstToken},
    {"total", ThresholdMetric::kTotal},
    {"latency", ThresholdMetric::kTotal},
    {"attempts", ThresholdMetric::kAttempts},
    {"overhead", ThresholdMetric::kOverhead},
    {"wasted_bytes", ThresholdMetric::kWastedBytes},
}};

constexpr std::array<std::pair<std::string_view, ThresholdAggregation>, 4> kAggregations = {{
    {"avg", ThresholdAggregation::kAvg},
    {"min", ThresholdAggregation::kMin},
    {"max", ThresholdAggregation::kMax},
    {"count", ThresholdAggregation::kCount},
}};

// Longest operators first, so "<=" is not read as "<" followed by "=2s".
constexpr std::array<std::pair<std::string_view, ThresholdOp>, 5> kOps = {{
    {"<=", ThresholdOp::kLessEqual},
    {">=", ThresholdOp::kGreaterEqual},
    {"==", ThresholdOp::kEqual},
    {"<", ThresholdOp::kLess},
    {">", ThresholdOp::kGreater},
}};

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::optional<double> PlainNumber(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::expected<void, std::string> ReadAggregation(std::string_view text, Threshold& out) {
  if (text == "med") text = "p50";
  for (const auto& [name, aggregation] : kAggregations) {
    if (text == name) {
      out.aggregation = aggregation;
      return {};
    }
  }
  std::string_view digits = text.starts_with('p') ? text.substr(1) : std::string_view{};
  if (digits.starts_with('(') && digits.ends_with(')'))
    digits = digits.substr(1, digits.size() - 2);
  const std::optional<double> percentile = digits.empty() ? std::nullopt : PlainNumber(digits);
  if (!percentile || *percentile <= 0 || *percentile > 100) {
    return std::unexpected(fmt::format(
        "unknown aggregation '{}' (p50, p90, p95, p99, pN or p(N) with 0 < N <= 100, med, avg, "
        "min, max, count)",
        text));
  }
  out.aggregation = ThresholdAggregation::kPercentile;
  out.percentile = *percentile;
  return {};
}

std::expected<void, std::string> ReadMetric(std::string_view text, Threshold& out) {
  const std::size_t dot = text.find('.');  // metric names have none; p(99.9) does
  if (dot == std::string_view::npos) {
    return std::unexpected(
        fmt::format("'{}' has no aggregation: write it as METRIC.AGGREGATION (ttft.p99)", text));
  }
  const std::string_view metric = text.substr(0, dot);
  for (const auto& [name, value] : kMetrics) {
    if (metric == name) {
      out.metric = value;
      return ReadAggregation(text.substr(dot + 1), out);
    }
  }
  return std::unexpected(fmt::format(
      "unknown metric '{}' (ttft, total, latency, attempts, overhead, wasted_bytes)", metric));
}

std::expected<double, std::string> ReadBound(std::string_view text, const Threshold& threshold) {
  if (text.empty()) return std::unexpected(std::string("missing the bound after the operator"));
  if (const std::optional<double> number = PlainNumber(text)) return *number;
  if (!IsTimeValued(threshold)) {
    return std::unexpected(fmt::format(
        "bad bound '{}': expected a plain number (this aggregate is not a time)", text));
  }
  const auto duration = ParseDuration(text);
  if (!duration) {
    return std::unexpected(
        fmt::format("bad bound '{}': {}; a time's bound is a duration such as 2s or a number of "
                    "milliseconds",
                    text, duration.error()));
  }
  return static_cast<double>(duration->count()) / 1000.0;
}

}  // namespace

std::expected<Threshold, std::string> ParseThreshold(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return std::unexpected(fmt::format("empty threshold: {}", kSyntax));
  Threshold threshold;
  threshold.text = std::string(text);
  const std::size_t at = text.find_first_of("<>=");
  if (at == std::string_view::npos) {
    return std::unexpected(fmt::format("'{}' has no comparison: {}", text, kSyntax));
  }
  std::string_view rest = text.substr(at);
  bool found = false;
  for (const auto& [name, op] : kOps) {
    if (rest.starts_with(name)) {
      threshold.op = op;
      rest.remove_prefix(name.size());
      found = true;
      break;
    }
  }
  if (!found) {
    return std::unexpected(fmt::format("'{}': unknown comparison (<, <=, >, >=, ==)", text));
  }
  if (auto metric = ReadMetric(Trim(text.substr(0, at)), threshold); !metric) {
    return std::unexpected(metric.error());
  }
  auto bound = ReadBound(Trim(rest), threshold);
  if (!bound) return std::unexpected(bound.error());
  threshold.bound = *bound;
  return threshold;
}

bool IsTimeValued(const Threshold& threshold) {
  const bool time = threshold.metric == ThresholdMetric::kFirstToken ||
                    threshold.metric == ThresholdMetric::kTotal ||
                    threshold.metric == ThresholdMetric::kOverhead;
  return time && threshold.aggregation != ThresholdAggregation::kCount;
}

bool Holds(const Threshold& threshold, double value) {
  switch (threshold.op) {
    case ThresholdOp::kLess:
      return value < threshold.bound;
    case ThresholdOp::kLessEqual:
      return value <= threshold.bound;
    case ThresholdOp::kGreater:
      return value > threshold.bound;
    case ThresholdOp::kGreaterEqual:
      return value >= threshold.bound;
    case ThresholdOp::kEqual:
      return value == threshold.bound;
  }
  return false;
}

std::string_view ToString(ThresholdOp op) {
  for (const auto& [name, value] : kOps) {
    if (value == op) return name;
  }
  return "?";
}

}  // namespace faultline::scenario
