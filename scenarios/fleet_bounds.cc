#include "scenarios/fleet_bounds.h"

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

#include "fmt/format.h"

namespace faultline::scenario {
namespace {

using Kind = FleetBound::Kind;

// 30 days: longer than any experiment worth simulating, and short enough that horizon + drain +
// every timeout and backoff added to it stay far inside the microsecond clock's range.
constexpr double kLongest = 720.0 * 3600;
constexpr double kMicrosecond = 1e-6;
constexpr double kMaxRate = 1e7;  // calls (or requests) per second
constexpr double kMaxInt = std::numeric_limits<int>::max();

// In FleetValue's order (checked below).
constexpr std::array<std::pair<FleetValue, FleetBound>, 25> kBounds{{
    {FleetValue::kClients, {"fleet.clients", 1, 1'000'000, Kind::kWhole}},
    {FleetValue::kHorizon, {"fleet.horizon", kMicrosecond, kLongest, Kind::kDuration}},
    {FleetValue::kDrain, {"fleet.drain", 0, kLongest, Kind::kDuration}},
    {FleetValue::kTimeout, {"fleet.timeout", kMicrosecond, kLongest, Kind::kDuration}},
    {FleetValue::kBucket, {"fleet.bucket", kMicrosecond, kLongest, Kind::kDuration}},
    {FleetValue::kStepAt, {"fleet.arrivals.rate[].at", 0, kLongest, Kind::kDuration}},
    {FleetValue::kArrivalRate, {"fleet.arrivals.rate", 0, kMaxRate, Kind::kNumber}},
    {FleetValue::kThink, {"fleet.arrivals.think", 0, kLongest, Kind::kDuration}},
    {FleetValue::kConcurrency, {"fleet.provider.concurrency", 0, kMaxInt, Kind::kWhole}},
    {FleetValue::kProviderRate, {"fleet.provider.rate", 0, kMaxRate, Kind::kNumber}},
    {FleetValue::kBurst, {"fleet.provider.burst", 1, kMaxRate, Kind::kNumber}},
    {FleetValue::kQueue, {"fleet.provider.queue", 0, kMaxInt, Kind::kWhole}},
    {FleetValue::kServiceMean,
     {"fleet.provider.service.mean", kMicrosecond, kLongest, Kind::kDuration}},
    {FleetValue::kServiceSigma, {"fleet.provider.service.sigma", 0, 10, Kind::kNumber}},
    {FleetValue::kRetryAfter,
     {"fleet.provider.overload.retry_after", 0, kLongest, Kind::kDuration}},
    {FleetValue::kBrownoutFrom, {"fleet.provider.brownouts[].from", 0, kLongest, Kind::kDuration}},
    {FleetValue::kBrownoutFor, {"fleet.provider.brownouts[].for", 0, kLongest, Kind::kDuration}},
    {FleetValue::kBrownoutCapacity, {"fleet.provider.brownouts[].capacity", 0, 1, Kind::kNumber}},
    {FleetValue::kTokensPerCall, {"fleet.tokens_per_call", 0, kMaxInt, Kind::kWhole}},
    {FleetValue::kBytesPerCall, {"fleet.bytes_per_call", 0, kMaxInt, Kind::kWhole}},
    // A million a second for a minute past the largest published tier, and exact in a double.
    {FleetValue::kTokensPerMinute, {"fleet.provider.tokens_per_minute", 0, 1e12, Kind::kNumber}},
    {FleetValue::kTokensSigma, {"fleet.tokens_per_call.sigma", 0, 10, Kind::kNumber}},
    // The reference policy's own limit on attempts (reference_impl/policy.h kMaxAttemptsLimit).
    {FleetValue::kGatewayAttempts, {"fleet.gateway.retry.max_attempts", 1, 1000, Kind::kWhole}},
    // At least a millisecond: the reference backoff counts whole milliseconds.
    {FleetValue::kGatewayBackoff, {"fleet.gateway.retry.backoff", 1e-3, kLongest, Kind::kDuration}},
    {FleetValue::kGatewayPerTryTimeout,
     {"fleet.gateway.retry.per_try_timeout", kMicrosecond, kLongest, Kind::kDuration}},
}};

constexpr bool InOrder() {
  for (std::size_t i = 0; i < kBounds.size(); ++i) {
    if (static_cast<std::size_t>(kBounds[i].first) != i) return false;
  }
  return true;
}
static_assert(InOrder(), "kBounds lists FleetValue in order");

double Seconds(Duration duration) { return std::chrono::duration<double>(duration).count(); }

std::string ValueText(const FleetBound& bound, double value) {
  if (bound.kind != Kind::kDuration) return fmt::format("{}", value);
  if (std::isfinite(value) && std::abs(value) < 1e12) {  // within the microsecond clock
    return DurationText(std::chrono::duration_cast<Duration>(std::chrono::duration<double>(value)));
  }
  return fmt::format("{}s", value);
}

// The first value in `values` out of range, as "key: expected ...".
std::optional<std::string> FirstOut(std::initializer_list<std::pair<FleetValue, double>> values) {
  for (const auto& [which, value] : values) {
    if (auto error = OutOfRange(which, value)) {
      return fmt::format("{}: {}", BoundOf(which).key, *error);
    }
  }
  return std::nullopt;
}

std::optional<std::string> CheckWorkload(const FleetWorkload& workload) {
  for (const FleetStep& step : workload.rate) {
    auto error =
        FirstOut({{FleetValue::kStepAt, Seconds(step.at)}, {FleetValue::kArrivalRate, step.value}});
    if (error) return error;
  }
  return FirstOut({{FleetValue::kThink, Seconds(workload.think)}});
}

std::optional<std::string> CheckProvider(const FleetProvider& provider) {
  auto error = FirstOut({
      {FleetValue::kConcurrency, provider.concurrency},
      {FleetValue::kProviderRate, provider.rate},
      {FleetValue::kBurst, provider.burst},
      {FleetValue::kQueue, provider.queue},
      {FleetValue::kServiceMean, Seconds(provider.service_mean)},
      {FleetValue::kServiceSigma, provider.service_sigma},
      {FleetValue::kRetryAfter, Seconds(provider.overload.constant)},
  });
  for (std::size_t i = 0; !error && i < provider.brownouts.size(); ++i) {
    const FleetBrownout& brownout = provider.brownouts[i];
    error = FirstOut({{FleetValue::kBrownoutFrom, Seconds(brownout.from)},
                      {FleetValue::kBrownoutFor, Seconds(brownout.length)},
                      {FleetValue::kBrownoutCapacity, brownout.capacity}});
  }
  if (!error) {
    error = FirstOut({{FleetValue::kTokensPerMinute, provider.tokens_per_minute}});
  }
  return error;
}

std::optional<std::string> CheckGateway(const FleetGateway& gateway) {
  auto error = FirstOut({{FleetValue::kGatewayAttempts, gateway.max_attempts},
                         {FleetValue::kGatewayBackoff, Seconds(gateway.backoff_base)},
                         {FleetValue::kGatewayBackoff, Seconds(gateway.backoff_cap)}});
  if (!error && gateway.per_try_timeout) {
    error = FirstOut({{FleetValue::kGatewayPerTryTimeout, Seconds(*gateway.per_try_timeout)}});
  }
  if (!error && gateway.backoff_cap < gateway.backoff_base) {
    error = fmt::format("{}: expected cap >= base ({}), got {}",
                        BoundOf(FleetValue::kGatewayBackoff).key,
                        DurationText(gateway.backoff_base), DurationText(gateway.backoff_cap));
  }
  return error;
}

}  // namespace

const FleetBound& BoundOf(FleetValue which) {
  return kBounds[static_cast<std::size_t>(which)].second;
}

std::optional<std::string> OutOfRange(FleetValue which, double value) {
  const FleetBound& bound = BoundOf(which);
  const bool whole = bound.kind != Kind::kWhole || value == std::floor(value);
  if (value >= bound.min && value <= bound.max && whole) return std::nullopt;  // false for NaN
  constexpr std::string_view kWhat[] = {"a number", "a whole number", "a duration"};
  return fmt::format("expected {} from {} to {}, got {}", kWhat[static_cast<int>(bound.kind)],
                     ValueText(bound, bound.min), ValueText(bound, bound.max),
                     ValueText(bound, value));
}

std::optional<std::string> CheckFleetSpec(const FleetSpec& spec) {
  auto error = FirstOut({
      {FleetValue::kClients, static_cast<double>(spec.clients)},
      {FleetValue::kHorizon, Seconds(spec.horizon)},
      {FleetValue::kDrain, Seconds(spec.drain)},
      {FleetValue::kBucket, Seconds(spec.bucket)},
      {FleetValue::kTokensPerCall, spec.tokens_per_call},
      {FleetValue::kBytesPerCall, spec.bytes_per_call},
      {FleetValue::kTokensSigma, spec.tokens_sigma},
  });
  if (!error && spec.timeout) error = FirstOut({{FleetValue::kTimeout, Seconds(*spec.timeout)}});
  if (!error) error = CheckWorkload(spec.workload);
  if (!error) error = CheckProvider(spec.provider);
  if (!error && spec.gateways.size() > kMaxGatewayLayers) {
    error = fmt::format("fleet.gateway: expected 1 to {} gateway layers, got {}", kMaxGatewayLayers,
                        spec.gateways.size());
  }
  for (std::size_t i = 0; !error && i < spec.gateways.size(); ++i) {
    error = CheckGateway(spec.gateways[i]);
  }
  return error;
}

std::string DurationText(Duration duration) {
  constexpr std::pair<std::int64_t, std::string_view> kUnits[] = {
      {3'600'000'000, "h"}, {60'000'000, "m"}, {1'000'000, "s"}, {1'000, "ms"}};
  const std::int64_t micros = duration.count();
  if (micros == 0) return "0s";
  for (const auto& [size, unit] : kUnits) {
    if (micros % size == 0) return fmt::format("{}{}", micros / size, unit);
  }
  return fmt::format("{}us", micros);
}

}  // namespace faultline::scenario
