// Reading a scenario's `fleet:` section (fleet_spec.h), with the loader's usual errors.
#include <cctype>
#include <limits>

#include "fmt/format.h"
#include "scenarios/loader_internal.h"
#include "scenarios/loader_keys.h"

namespace faultline::scenario::internal {
namespace {

constexpr std::uint64_t kMaxClients = 1'000'000;
constexpr double kMaxRate = 1e7;  // calls (or requests) per second
constexpr int kMaxInt = std::numeric_limits<int>::max();

void ReadStep(Reader& reader, const Field& field, std::vector<FleetStep>* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kFleetStep);
  if (!map) return;
  FleetStep step;
  if (std::optional<Field> at = reader.Require(*map, "at")) {
    step.at = reader.ReadDuration(*at, Sign::kNonNegative).value_or(Duration{0});
    if (reader.ok() && !out->empty() && step.at <= out->back().at) {
      reader.Fail(*at, "expected the steps in increasing order of 'at'");
    }
  }
  if (std::optional<Field> rate = reader.Require(*map, "rate")) {
    step.value = reader.ReadNumber(*rate, 0, kMaxRate).value_or(0);
  }
  out->push_back(step);
}

// `rate: 50` or `rate: [{at: 0s, rate: 20}, {at: 30s, rate: 3}]`.
void ReadRate(Reader& reader, const Field& field, std::vector<FleetStep>* out) {
  if (field.node.IsScalar()) {
    out->push_back({Duration{0}, reader.ReadNumber(field, 0, kMaxRate).value_or(0)});
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
  reader.Get(*map, "think", &out->think);
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
  reader.Get(*map, "mean", &out->service_mean);
  if (std::optional<Field> sigma = reader.Present(*map, "sigma")) {
    out->service_sigma = reader.ReadNumber(*sigma, 0, 10).value_or(0);
  }
  if (reader.ok() && out->service_mean.count() == 0) {
    reader.Fail(*map->Get("mean"), "expected a service time longer than 0");
  }
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
  out->constant = reader.ReadDuration(field, Sign::kNonNegative).value_or(Duration{0});
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
      brownout.from = reader.ReadDuration(*from, Sign::kNonNegative).value_or(Duration{0});
    }
    if (std::optional<Field> length = reader.Require(*map, "for")) {
      brownout.length = reader.ReadDuration(*length, Sign::kNonNegative).value_or(Duration{0});
    }
    if (std::optional<Field> capacity = reader.Require(*map, "capacity")) {
      brownout.capacity = reader.ReadNumber(*capacity, 0, 1).value_or(0);
    }
    out->push_back(brownout);
  }
}

void ReadProvider(Reader& reader, const Field& field, FleetProvider* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kFleetProvider);
  if (!map) return;
  reader.Get(*map, "concurrency", &out->concurrency, 0, kMaxInt);
  if (std::optional<Field> rate = reader.Present(*map, "rate")) {
    out->rate = reader.ReadNumber(*rate, 0, kMaxRate).value_or(0);
  }
  if (std::optional<Field> burst = reader.Present(*map, "burst")) {
    out->burst = reader.ReadNumber(*burst, 1, kMaxRate).value_or(1);
  }
  reader.Get(*map, "queue", &out->queue, 0, kMaxInt);
  if (std::optional<Field> service = reader.Present(*map, "service")) {
    ReadService(reader, *service, out);
  }
  if (std::optional<Field> overload = reader.Present(*map, "overload")) {
    ReadOverload(reader, *overload, &out->overload);
  }
  if (std::optional<Field> brownouts = reader.Present(*map, "brownouts")) {
    ReadBrownouts(reader, *brownouts, &out->brownouts);
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
    out->clients = static_cast<std::uint64_t>(
        reader.ReadInt(*clients, 1, static_cast<std::int64_t>(kMaxClients)).value_or(1));
  }
  if (std::optional<Field> seed = reader.Present(map, "seed")) out->seed = reader.ReadUint64(*seed);
  reader.Get(map, "horizon", &out->horizon);
  reader.Get(map, "drain", &out->drain);
  reader.Get(map, "timeout", &out->timeout);
  reader.Get(map, "bucket", &out->bucket);
  reader.Get(map, "tokens_per_call", &out->tokens_per_call, 0, kMaxInt);
  reader.Get(map, "bytes_per_call", &out->bytes_per_call, 0, kMaxInt);
  if (reader.ok() && out->horizon.count() == 0) {
    reader.Fail(*map.Get("horizon"), "expected a horizon longer than 0");
  }
  if (reader.ok() && out->bucket.count() == 0) {
    reader.Fail(*map.Get("bucket"), "expected a bucket longer than 0");
  }
  if (reader.ok() && out->timeout && out->timeout->count() == 0) {
    reader.Fail(*map.Get("timeout"), "expected a timeout longer than 0");
  }
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
  if (std::optional<Field> policies = reader.Require(*map, "policies")) {
    ReadPolicies(reader, *policies, &out->policies);
  }
}

}  // namespace faultline::scenario::internal
