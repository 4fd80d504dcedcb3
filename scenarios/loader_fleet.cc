// Reading a scenario's `fleet:` section (fleet_spec.h), with the loader's usual errors. Every
// value's range comes from fleet_bounds.h, which --sweep values are checked against as well.
#include <cctype>

#include "fmt/format.h"
#include "scenarios/fleet_bounds.h"
#include "scenarios/loader_internal.h"
#include "scenarios/loader_keys.h"

namespace faultline::scenario::internal {
namespace {

// A number within its range in fleet_bounds.h; a whole number when the range says so.
double ReadBounded(Reader& reader, const Field& field, FleetValue which) {
  const FleetBound& bound = BoundOf(which);
  if (bound.kind != FleetBound::Kind::kWhole) {
    return reader.ReadNumber(field, bound.min, bound.max).value_or(bound.min);
  }
  const auto whole = reader.ReadInt(field, static_cast<std::int64_t>(bound.min),
                                    static_cast<std::int64_t>(bound.max));
  return static_cast<double>(whole.value_or(static_cast<std::int64_t>(bound.min)));
}

// A duration within its range in fleet_bounds.h.
Duration ReadBoundedDuration(Reader& reader, const Field& field, FleetValue which) {
  const Duration value = reader.ReadDuration(field, Sign::kAny).value_or(Duration{0});
  if (!reader.ok()) return value;
  if (auto error = OutOfRange(which, std::chrono::duration<double>(value).count())) {
    reader.Fail(field, *error);
  }
  return value;
}

void GetBounded(Reader& reader, const Map& map, std::string_view key, FleetValue which,
                Duration* out) {
  if (std::optional<Field> field = reader.Present(map, key)) {
    *out = ReadBoundedDuration(reader, *field, which);
  }
}

void GetBounded(Reader& reader, const Map& map, std::string_view key, FleetValue which,
                std::optional<Duration>* out) {
  if (std::optional<Field> field = reader.Present(map, key)) {
    *out = ReadBoundedDuration(reader, *field, which);
  }
}

void GetBounded(Reader& reader, const Map& map, std::string_view key, FleetValue which, int* out) {
  if (std::optional<Field> field = reader.Present(map, key)) {
    *out = static_cast<int>(ReadBounded(reader, *field, which));
  }
}

void GetBounded(Reader& reader, const Map& map, std::string_view key, FleetValue which,
                double* out) {
  if (std::optional<Field> field = reader.Present(map, key)) {
    *out = ReadBounded(reader, *field, which);
  }
}

void ReadStep(Reader& reader, const Field& field, std::vector<FleetStep>* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kFleetStep);
  if (!map) return;
  FleetStep step;
  if (std::optional<Field> at = reader.Require(*map, "at")) {
    step.at = ReadBoundedDuration(reader, *at, FleetValue::kStepAt);
    if (reader.ok() && !out->empty() && step.at <= out->back().at) {
      reader.Fail(*at, "expected the steps in increasing order of 'at'");
    }
  }
  if (std::optional<Field> rate = reader.Require(*map, "rate")) {
    step.value = ReadBounded(reader, *rate, FleetValue::kArrivalRate);
  }
  out->push_back(step);
}

// `rate: 50` or `rate: [{at: 0s, rate: 20}, {at: 30s, rate: 3}]`.
void ReadRate(Reader& reader, const Field& field, std::vector<FleetStep>* out) {
  if (field.node.IsScalar()) {
    out->push_back({Duration{0}, ReadBounded(reader, field, FleetValue::kArrivalRate)});
    return;
  }
  std::optional<std::vector<Field>> items = reader.ReadList(field);
  if (!items) return;
  if (items->empty()) reader.Fail(field, "expected a rate or at least one {at, rate} step");
  for (std::size_t i = 0; i < items->size() && reader.ok(); ++i) {
    ReadStep(reader, (*items)[i], out);
  }
  if (reader.ok() && out->front().at.count() != 0) {
    reader.Fail((*items)[0], "expected the first step at 0s");
  }
}

void ReadArrivals(Reader& reader, const Field& field, FleetWorkload* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kFleetArrivals);
  if (!map) return;
  reader.GetEnum(*map, "process", keys::kArrivalProcessNames, FleetWorkload::Kind::kPoisson,
                 &out->kind);
  if (std::optional<Field> rate = reader.Present(*map, "rate")) ReadRate(reader, *rate, &out->rate);
  GetBounded(reader, *map, "think", FleetValue::kThink, &out->think);
  if (!reader.ok()) return;
  if (out->kind == FleetWorkload::Kind::kClosed) {
    RejectKey(reader, *map, "rate", "a closed population has no arrival rate; give 'think'");
  } else {
    RejectKey(reader, *map, "think", "only a closed population thinks; give 'rate'");
  }
}

void ReadService(Reader& reader, const Field& field, FleetProvider* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kFleetService);
  if (!map) return;
  reader.GetEnum(*map, "distribution", keys::kServiceNames, FleetProvider::Service::kConstant,
                 &out->service);
  GetBounded(reader, *map, "mean", FleetValue::kServiceMean, &out->service_mean);
  GetBounded(reader, *map, "sigma", FleetValue::kServiceSigma, &out->service_sigma);
}

// `retry_after: honest | none | <duration>` (a constant hint).
void ReadOverloadHint(Reader& reader, const Field& field, FleetOverload* out) {
  if (field.node.IsScalar() && (field.node.Scalar() == "honest" || field.node.Scalar() == "none")) {
    out->hint =
        field.node.Scalar() == "honest" ? FleetOverload::Hint::kHonest : FleetOverload::Hint::kNone;
    return;
  }
  if (field.node.IsScalar() && !field.node.Scalar().empty() &&
      !std::isdigit(static_cast<unsigned char>(field.node.Scalar().front()))) {
    reader.Fail(field, fmt::format("expected 'honest', 'none' or a duration such as \"2s\", got {}",
                                   Describe(field.node)));
    return;
  }
  out->hint = FleetOverload::Hint::kConstant;
  out->constant = ReadBoundedDuration(reader, field, FleetValue::kRetryAfter);
}

void ReadOverload(Reader& reader, const Field& field, FleetOverload* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kFleetOverload);
  if (!map) return;
  if (std::optional<Field> status = reader.Present(*map, "status")) {
    const int value = static_cast<int>(reader.ReadInt(*status, 100, 599).value_or(429));
    if (reader.ok() && value != 429 && value != 503 && value != 529) {
      reader.Fail(*status, fmt::format("expected 429, 503 or 529, got {}", value));
    }
    out->status = value;
  }
  if (std::optional<Field> hint = reader.Present(*map, "retry_after")) {
    ReadOverloadHint(reader, *hint, out);
  }
}

void ReadBrownouts(Reader& reader, const Field& field, std::vector<FleetBrownout>* out) {
  std::optional<std::vector<Field>> items = reader.ReadList(field);
  for (std::size_t i = 0; items && i < items->size() && reader.ok(); ++i) {
    std::optional<Map> map = reader.ReadMap((*items)[i], keys::kFleetBrownout);
    if (!map) return;
    FleetBrownout brownout;
    if (std::optional<Field> from = reader.Require(*map, "from")) {
      brownout.from = ReadBoundedDuration(reader, *from, FleetValue::kBrownoutFrom);
    }
    if (std::optional<Field> length = reader.Require(*map, "for")) {
      brownout.length = ReadBoundedDuration(reader, *length, FleetValue::kBrownoutFor);
    }
    if (std::optional<Field> capacity = reader.Require(*map, "capacity")) {
      brownout.capacity = ReadBounded(reader, *capacity, FleetValue::kBrownoutCapacity);
    }
    out->push_back(brownout);
  }
}

void ReadProvider(Reader& reader, const Field& field, FleetProvider* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kFleetProvider);
  if (!map) return;
  GetBounded(reader, *map, "concurrency", FleetValue::kConcurrency, &out->concurrency);
  GetBounded(reader, *map, "rate", FleetValue::kProviderRate, &out->rate);
  GetBounded(reader, *map, "burst", FleetValue::kBurst, &out->burst);
  GetBounded(reader, *map, "queue", FleetValue::kQueue, &out->queue);
  if (std::optional<Field> service = reader.Present(*map, "service")) {
    ReadService(reader, *service, out);
  }
  if (std::optional<Field> overload = reader.Present(*map, "overload")) {
    ReadOverload(reader, *overload, &out->overload);
  }
  if (std::optional<Field> brownouts = reader.Present(*map, "brownouts")) {
    ReadBrownouts(reader, *brownouts, &out->brownouts);
  }
  GetBounded(reader, *map, "tokens_per_minute", FleetValue::kTokensPerMinute,
             &out->tokens_per_minute);
}

// `tokens_per_call: 500` or `{distribution: lognormal, mean: 500, sigma: 1}` (the shape of
// `provider.service`, a count for a mean).
void ReadTokens(Reader& reader, const Field& field, FleetSpec* out) {
  if (field.node.IsScalar()) {
    out->tokens_per_call = static_cast<int>(ReadBounded(reader, field, FleetValue::kTokensPerCall));
    return;
  }
  std::optional<Map> map = reader.ReadMap(field, keys::kFleetTokens);
  if (!map) return;
  reader.GetEnum(*map, "distribution", keys::kServiceNames, FleetDistribution::kConstant,
                 &out->tokens_distribution);
  if (std::optional<Field> mean = reader.Require(*map, "mean")) {
    out->tokens_per_call = static_cast<int>(ReadBounded(reader, *mean, FleetValue::kTokensPerCall));
  }
  GetBounded(reader, *map, "sigma", FleetValue::kTokensSigma, &out->tokens_sigma);
}

// A backoff bound in whole milliseconds, the reference backoff's unit.
void GetBackoffBound(Reader& reader, const Map& map, std::string_view key, Duration* out) {
  std::optional<Field> field = reader.Present(map, key);
  if (!field) return;
  *out = ReadBoundedDuration(reader, *field, FleetValue::kGatewayBackoff);
  if (reader.ok() && out->count() % 1000 != 0) {
    reader.Fail(*field, fmt::format("expected whole milliseconds, got {}", DurationText(*out)));
  }
}

void ReadGatewayBackoff(Reader& reader, const Field& field, FleetGateway* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kFleetBackoff);
  if (!map) return;
  GetBackoffBound(reader, *map, "base", &out->backoff_base);
  GetBackoffBound(reader, *map, "cap", &out->backoff_cap);
  reader.GetEnum(*map, "jitter", keys::kJitterNames, FleetJitter::kNone, &out->jitter);
  if (reader.ok() && out->backoff_cap < out->backoff_base) {
    const std::optional<Field> cap = reader.Present(*map, "cap");
    reader.Fail(cap ? *cap : field,
                fmt::format("expected cap >= base ({}), got {}", DurationText(out->backoff_base),
                            DurationText(out->backoff_cap)));
  }
}

void ReadGatewayRetry(Reader& reader, const Field& field, FleetGateway* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kFleetGatewayRetry);
  if (!map) return;
  GetBounded(reader, *map, "max_attempts", FleetValue::kGatewayAttempts, &out->max_attempts);
  if (std::optional<Field> backoff = reader.Present(*map, "backoff")) {
    ReadGatewayBackoff(reader, *backoff, out);
  }
  reader.Get(*map, "honor_retry_after", &out->honor_retry_after);
  reader.Get(*map, "pass_retry_after", &out->pass_retry_after);
  GetBounded(reader, *map, "per_try_timeout", FleetValue::kGatewayPerTryTimeout,
             &out->per_try_timeout);
}

void ReadGatewayLayer(Reader& reader, const Field& field, std::vector<FleetGateway>* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kFleetGateway);
  if (!map) return;
  FleetGateway gateway;
  gateway.name = out->empty() ? "gateway" : fmt::format("gateway {}", out->size() + 1);
  if (std::optional<Field> name = reader.Present(*map, "name")) {
    gateway.name = reader.ReadString(*name).value_or(gateway.name);
  }
  if (std::optional<Field> retry = reader.Present(*map, "retry")) {
    ReadGatewayRetry(reader, *retry, &gateway);
  }
  out->push_back(std::move(gateway));
}

// `gateway: {retry: {...}}`, one layer, or a list of layers, the one the clients call first.
void ReadGateways(Reader& reader, const Field& field, std::vector<FleetGateway>* out) {
  if (field.node.IsMap()) {
    ReadGatewayLayer(reader, field, out);
    return;
  }
  std::optional<std::vector<Field>> items = reader.ReadList(field);
  if (!items) return;
  if (items->empty() || items->size() > kMaxGatewayLayers) {
    reader.Fail(field, fmt::format("expected 1 to {} gateway layers, got {}", kMaxGatewayLayers,
                                   items->size()));
  }
  for (std::size_t i = 0; i < items->size() && reader.ok(); ++i) {
    ReadGatewayLayer(reader, (*items)[i], out);
  }
}

void ReadPolicies(Reader& reader, const Field& field, std::vector<Located>* out) {
  std::optional<std::vector<Field>> items = reader.ReadList(field);
  if (items && items->empty()) reader.Fail(field, "expected at least one policy");
  for (std::size_t i = 0; items && i < items->size() && reader.ok(); ++i) {
    const Field& item = (*items)[i];
    if (std::optional<std::string> name = reader.ReadString(item)) {
      out->push_back({*name, item.mark.line + 1, item.mark.column + 1});
    }
  }
}

void ReadSizes(Reader& reader, const Map& map, FleetSpec* out) {
  if (std::optional<Field> clients = reader.Present(map, "clients")) {
    out->clients = static_cast<std::uint64_t>(ReadBounded(reader, *clients, FleetValue::kClients));
  }
  if (std::optional<Field> seed = reader.Present(map, "seed")) out->seed = reader.ReadUint64(*seed);
  GetBounded(reader, map, "horizon", FleetValue::kHorizon, &out->horizon);
  GetBounded(reader, map, "drain", FleetValue::kDrain, &out->drain);
  GetBounded(reader, map, "timeout", FleetValue::kTimeout, &out->timeout);
  GetBounded(reader, map, "bucket", FleetValue::kBucket, &out->bucket);
  if (std::optional<Field> tokens = reader.Present(map, "tokens_per_call")) {
    ReadTokens(reader, *tokens, out);
  }
  GetBounded(reader, map, "bytes_per_call", FleetValue::kBytesPerCall, &out->bytes_per_call);
}

}  // namespace

void ReadFleet(Reader& reader, const Field& field, FleetSpec* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kFleet);
  if (!map) return;
  ReadSizes(reader, *map, out);
  if (std::optional<Field> arrivals = reader.Present(*map, "arrivals")) {
    ReadArrivals(reader, *arrivals, &out->workload);
  }
  if (std::optional<Field> provider = reader.Present(*map, "provider")) {
    ReadProvider(reader, *provider, &out->provider);
  }
  if (std::optional<Field> gateway = reader.Present(*map, "gateway")) {
    ReadGateways(reader, *gateway, &out->gateways);
  }
  if (std::optional<Field> policies = reader.Require(*map, "policies")) {
    ReadPolicies(reader, *policies, &out->policies);
  }
}

}  // namespace faultline::scenario::internal
