#include "fleet/run_cost.h"

#include <algorithm>
#include <chrono>

#include "fleet/measures.h"
#include "fmt/format.h"

namespace faultline::fleet {
namespace {

// Attempts per call assumed for a policy without a maximum (its deadline or budget ends it).
constexpr double kUnboundedAttempts = 10;
// Events per attempt: it starts, is answered (or served), and may time out.
constexpr double kEventsPerAttempt = 3;
// A time-series step: the Bucket, and its ten numbers once more in result.json's JSON form.
constexpr double kBytesPerStep = sizeof(Bucket) + 10 * 16;
// Simulated events per second on one core, for "about N minutes" (fleet/bench, storm_bench).
constexpr double kEventsPerSecond = 5e6;

double Seconds(scenario::Duration duration) {
  return std::chrono::duration<double>(duration).count();
}

// Calls offered over the horizon: the rate schedule's integral, or each closed client calling
// once per think time and service time.
double Calls(const scenario::FleetSpec& spec) {
  const double horizon = Seconds(spec.horizon);
  if (spec.workload.kind == scenario::FleetWorkload::Kind::kClosed) {
    const double cycle = Seconds(spec.workload.think) + Seconds(spec.provider.service_mean);
    return static_cast<double>(spec.clients) * (1 + horizon / std::max(cycle, 1e-6));
  }
  const auto& steps = spec.workload.rate;
  if (steps.empty()) return 10 * horizon;  // the default rate
  double calls = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const double from = std::min(Seconds(steps[i].at), horizon);
    const double to = i + 1 < steps.size() ? std::min(Seconds(steps[i + 1].at), horizon) : horizon;
    calls += steps[i].value * std::max(0.0, to - from);
  }
  return calls;
}

std::string WallTime(double seconds) {
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.0f} min", seconds / 60);
  if (seconds < 2 * 86400) return fmt::format("{:.0f} h", seconds / 3600);
  return fmt::format("{:.0f} days", seconds / 86400);
}

}  // namespace

RunCost& RunCost::operator+=(const RunCost& other) {
  calls += other.calls;
  events += other.events;
  series_steps += other.series_steps;
  series_bytes += other.series_bytes;
  return *this;
}

RunCost EstimateJob(const scenario::FleetSpec& spec, const ref::RetryPolicy& policy) {
  RunCost cost;
  cost.calls = Calls(spec);
  double attempts = policy.max_attempts ? *policy.max_attempts : kUnboundedAttempts;
  // Every attempt a layer receives becomes up to its max_attempts below: the layers multiply.
  for (const scenario::FleetGateway& gateway : spec.gateways) attempts *= gateway.max_attempts;
  cost.events = cost.calls * (1 + attempts * kEventsPerAttempt);
  cost.series_steps = (Seconds(spec.horizon) + Seconds(spec.drain)) / Seconds(spec.bucket) + 1;
  cost.series_bytes = cost.series_steps * kBytesPerStep;
  return cost;
}

std::optional<std::string> CheckCost(const RunCost& cost, std::size_t jobs,
                                     const RunBounds& bounds) {
  if (cost.series_bytes > bounds.max_series_bytes) {
    return fmt::format(
        "the time series would take about {} of memory ({} steps of fleet.bucket over the "
        "horizon and drain, {} job(s)), over the bound of {}; widen fleet.bucket or shorten "
        "fleet.horizon, or pass --large-run to run it anyway",
        ReadableBytes(cost.series_bytes), ReadableCount(cost.series_steps), jobs,
        ReadableBytes(bounds.max_series_bytes));
  }
  if (cost.events > bounds.max_events) {
    return fmt::format(
        "this run would simulate about {} events ({} calls, {} job(s); about {} at {} events/s), "
        "over the bound of {} events; lower the rate, the clients or fleet.horizon, or pass "
        "--large-run to run it anyway",
        ReadableCount(cost.events), ReadableCount(cost.calls), jobs,
        WallTime(cost.events / kEventsPerSecond), ReadableCount(kEventsPerSecond),
        ReadableCount(bounds.max_events));
  }
  return std::nullopt;
}

std::string ReadableCount(double count) {
  constexpr std::pair<double, std::string_view> kScales[] = {
      {1e12, "trillion"}, {1e9, "billion"}, {1e6, "million"}};
  for (const auto& [scale, name] : kScales) {
    if (count >= scale) return fmt::format("{:.3g} {}", count / scale, name);
  }
  return fmt::format("{:.0f}", count);
}

std::string ReadableBytes(double bytes) {
  constexpr std::pair<double, std::string_view> kScales[] = {
      {1024.0 * 1024 * 1024 * 1024, "TiB"}, {1024.0 * 1024 * 1024, "GiB"}, {1024.0 * 1024, "MiB"}};
  for (const auto& [scale, name] : kScales) {
    if (bytes >= scale) return fmt::format("{:.3g} {}", bytes / scale, name);
  }
  return fmt::format("{:.0f} KiB", bytes / 1024);
}

}  // namespace faultline::fleet
