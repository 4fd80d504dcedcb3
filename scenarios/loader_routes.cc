// Reading a scenario's `routes:` (one logical model, several endpoints) and `group_outages:`.
#include <algorithm>
#include <set>

#include "fmt/format.h"
#include "scenarios/loader_internal.h"
#include "scenarios/loader_keys.h"

namespace faultline::scenario::internal {
namespace {

constexpr int kMaxPriority = 1000;
constexpr int kMaxWeight = 1'000'000;
constexpr int kMaxRoutes = 64;
constexpr double kMaxLatencyMultiplier = 1000;

// [a-z0-9][a-z0-9._-]*: a route id is one path segment of its base URL.
bool IsRouteId(std::string_view id) {
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return !id.empty() && id.size() <= 64 && lower_or_digit(id.front()) &&
         std::all_of(id.begin(), id.end(),
                     [&](char c) { return lower_or_digit(c) || c == '.' || c == '_' || c == '-'; });
}

std::optional<std::string> ReadId(Reader& reader, const Field& field, std::string_view what) {
  std::optional<std::string> id = reader.ReadString(field);
  if (id && !IsRouteId(*id)) {
    reader.Fail(field, fmt::format("expected a {} of at most 64 characters made of a-z, 0-9 and "
                                   ". _ - (starting with a letter or digit), got {}",
                                   what, Describe(field.node)));
    return std::nullopt;
  }
  return id;
}

TimeWindow ReadWindow(Reader& reader, const Field& field) {
  TimeWindow window;
  std::optional<Map> map = reader.ReadMap(field, keys::kTimeWindow);
  if (!map) return window;
  reader.Get(*map, "from", &window.from);
  if (std::optional<Field> length = reader.Present(*map, "for")) {
    window.length = reader.ReadDuration(*length, Sign::kNonNegative);
    if (reader.ok() && window.length && window.length->count() == 0) {
      reader.Fail(*length,
                  "expected a window longer than 0 (leave 'for' out for one that never ends)");
    }
  }
  return window;
}

// `down: always` or a list of windows.
void ReadDown(Reader& reader, const Field& field, std::vector<TimeWindow>* out) {
  if (field.node.IsScalar() && field.node.Scalar() == "always") {
    out->push_back(TimeWindow{});
    return;
  }
  if (!field.node.IsSequence()) {
    reader.Fail(field, fmt::format("expected 'always' or a list of windows ({{from, for}}), got {}",
                                   Describe(field.node)));
    return;
  }
  for (const Field& item : reader.ReadList(field).value_or(std::vector<Field>{})) {
    out->push_back(ReadWindow(reader, item));
  }
}

void ReadFlapping(Reader& reader, const Field& field, Health* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kFlapping);
  if (!map) return;
  for (auto [key, target] : {std::pair{"up", &out->flap_up}, std::pair{"down", &out->flap_down}}) {
    if (std::optional<Field> value = reader.Require(*map, key)) {
      *target = reader.ReadDuration(*value, Sign::kNonNegative);
      if (reader.ok() && *target && (*target)->count() == 0) {
        reader.Fail(*value, "expected a duration longer than 0");
      }
    }
  }
}

void ReadBrownout(Reader& reader, const Field& field, Health* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kBrownout);
  if (!map) return;
  if (!map->Has("error_probability") && !map->Has("latency_multiplier")) {
    reader.Fail(field, "a brownout needs 'error_probability' and/or 'latency_multiplier'");
  }
  if (std::optional<Field> p = reader.Present(*map, "error_probability")) {
    out->error_probability = reader.ReadNumber(*p, 0, 1).value_or(0);
  }
  if (std::optional<Field> m = reader.Present(*map, "latency_multiplier")) {
    out->latency_multiplier = reader.ReadNumber(*m, 1, kMaxLatencyMultiplier).value_or(1);
  }
  if (std::optional<Field> seed = reader.Present(*map, "seed")) {
    out->seed = reader.ReadUint64(*seed).value_or(0);
  }
}

// A down route's answer when it gives none, or gives neither a status, an error nor a
// connection fault: 503, as a load balancer with no healthy backend sends.
ResponseSpec DefaultFailure() {
  ResponseSpec response;
  response.status = 503;
  response.error.emplace();
  response.error->kind = ErrorKind::kUnavailable;
  return response;
}

// `fail: refused` or a response entry with an error status or a connection fault.
void ReadFailure(Reader& reader, const Field& field, Dialect dialect, Health* out) {
  if (field.node.IsScalar()) {
    if (field.node.Scalar() == "refused") {
      out->failure = Health::Failure::kRefused;
      return;
    }
    reader.Fail(field, fmt::format("expected 'refused' or a response entry ({{status: 503, ...}}), "
                                   "got {}",
                                   Describe(field.node)));
    return;
  }
  ResponseSpec response;
  ReadResponse(reader, field, dialect, ResponsePlace::kHealth, &response);
  if (!reader.ok()) return;
  const bool has_status = field.node.IsMap() && field.node["status"];
  if (!has_status && !response.error && response.connection == ConnectionFault::kNone) {
    const ResponseSpec fallback = DefaultFailure();
    response.status = fallback.status;
    response.error = fallback.error;
  } else if (response.status < 400 && response.connection == ConnectionFault::kNone) {
    reader.Fail(field, fmt::format("a down route answers with an error status (4xx/5xx) or a "
                                   "connection fault, got status {}",
                                   response.status));
  }
  out->failure_response = std::move(response);
}

Health ReadHealth(Reader& reader, const Field& field, Dialect dialect) {
  Health health;
  health.failure_response = DefaultFailure();
  std::optional<Map> map = reader.ReadMap(field, keys::kHealth);
  if (!map) return health;
  if (std::optional<Field> down = reader.Present(*map, "down"))
    ReadDown(reader, *down, &health.down);
  if (std::optional<Field> recover = reader.Present(*map, "recover_at")) {
    if (map->Has("down")) {
      reader.Fail(*map->GetKey("recover_at"),
                  "'recover_at: T' is short for 'down: [{from: 0s, for: T}]'; give one of them");
    }
    const Duration at = reader.ReadDuration(*recover, Sign::kNonNegative).value_or(Duration{0});
    if (reader.ok() && at.count() == 0) reader.Fail(*recover, "expected a time after 0");
    health.down.push_back(TimeWindow{Duration{0}, at});
  }
  if (std::optional<Field> flapping = reader.Present(*map, "flapping")) {
    ReadFlapping(reader, *flapping, &health);
  }
  if (std::optional<Field> brownout = reader.Present(*map, "brownout")) {
    ReadBrownout(reader, *brownout, &health);
  }
  if (std::optional<Field> fail = reader.Present(*map, "fail")) {
    ReadFailure(reader, *fail, dialect, &health);
  }
  return health;
}

void ReadCapabilities(Reader& reader, const Field& field, Capabilities* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kCapabilities);
  if (!map) return;
  reader.Get(*map, "tools", &out->tools);
  reader.Get(*map, "reasoning", &out->reasoning);
  reader.Get(*map, "images", &out->images);
  reader.Get(*map, "strict_tools", &out->strict_tools);
  reader.Get(*map, "stop_sequences", &out->stop_sequences);
  reader.Get(*map, "prefill", &out->prefill);
  reader.Get(*map, "context_window", &out->context_window, 1, 100'000'000);
}

Route ReadRoute(Reader& reader, const Field& field, Dialect scenario_dialect) {
  Route route;
  route.dialect = scenario_dialect;
  std::optional<Map> map = reader.ReadMap(field, keys::kRoute);
  if (!map) return route;
  if (std::optional<Field> id = reader.Require(*map, "id")) {
    route.id = ReadId(reader, *id, "route id").value_or("");
  }
  if (std::optional<Field> dialect = reader.Present(*map, "dialect")) {
    if (std::optional<std::size_t> index = reader.ReadName(*dialect, keys::kDialectNames)) {
      route.dialect = ParseDialect(keys::kDialectNames[*index]).value_or(scenario_dialect);
    }
  }
  reader.Get(*map, "model", &route.model);
  if (std::optional<Field> capabilities = reader.Present(*map, "capabilities")) {
    ReadCapabilities(reader, *capabilities, &route.capabilities);
  }
  reader.Get(*map, "priority", &route.priority, 0, kMaxPriority);
  reader.Get(*map, "weight", &route.weight, 1, kMaxWeight);
  if (std::optional<Field> group = reader.Present(*map, "group")) {
    route.group = ReadId(reader, *group, "shared-fate group").value_or("");
  }
  if (std::optional<Field> responses = reader.Present(*map, "responses")) {
    ReadResponses(reader, *responses, route.dialect, &route.responses);
  }
  if (std::optional<Field> health = reader.Present(*map, "health")) {
    route.health = ReadHealth(reader, *health, route.dialect);
  }
  if (route.responses.empty()) route.responses.emplace_back();  // a plain answer
  return route;
}

void CheckGroupOutages(Reader& reader, const Field& field, const std::vector<Route>& routes,
                       std::vector<GroupOutage>* out) {
  for (const Field& item : reader.ReadList(field).value_or(std::vector<Field>{})) {
    std::optional<Map> map = reader.ReadMap(item, keys::kGroupOutage);
    if (!map) return;
    GroupOutage outage;
    if (std::optional<Field> group = reader.Require(*map, "group")) {
      outage.group = ReadId(reader, *group, "shared-fate group").value_or("");
      if (reader.ok() && std::none_of(routes.begin(), routes.end(), [&](const Route& route) {
            return route.group == outage.group;
          })) {
        reader.Fail(*group, fmt::format("no route is in group '{}'", outage.group));
      }
    }
    reader.Get(*map, "from", &outage.window.from);
    if (std::optional<Field> length = reader.Present(*map, "for")) {
      outage.window.length = reader.ReadDuration(*length, Sign::kNonNegative);
    }
    out->push_back(std::move(outage));
  }
}

}  // namespace

void ReadRoutes(Reader& reader, const Map& document, Scenario* out) {
  std::optional<Field> field = reader.Present(document, "routes");
  if (!field) {
    if (std::optional<Field> outages = reader.Present(document, "group_outages")) {
      reader.Fail(*document.GetKey("group_outages"), "'group_outages' needs 'routes'");
    }
    return;
  }
  for (std::string_view key : {"responses", "chaos", "rate_limit", "listener_outages"}) {
    RejectKey(reader, document, key,
              fmt::format("with 'routes', each route scripts its own answers; '{}' belongs "
                          "inside a route (responses) or its health",
                          key));
  }
  std::optional<std::vector<Field>> items = reader.ReadList(*field);
  if (!items) return;
  if (items->empty() || items->size() > kMaxRoutes) {
    reader.Fail(*field, fmt::format("expected 1 to {} routes, got {}", kMaxRoutes, items->size()));
  }
  std::set<std::string> ids;
  for (std::size_t i = 0; i < items->size() && reader.ok(); ++i) {
    Route route = ReadRoute(reader, (*items)[i], out->dialect);
    if (reader.ok() && !ids.insert(route.id).second) {
      reader.Fail((*items)[i], fmt::format("route id '{}' is given twice", route.id));
    }
    out->routes.push_back(std::move(route));
  }
  if (std::optional<Field> outages = reader.Present(document, "group_outages")) {
    CheckGroupOutages(reader, *outages, out->routes, &out->group_outages);
  }
  // A group outage takes its members down, so each needs a failure to answer with.
  for (Route& route : out->routes) {
    const bool in_outage =
        std::any_of(out->group_outages.begin(), out->group_outages.end(),
                    [&](const GroupOutage& outage) { return outage.group == route.group; });
    if (in_outage && !route.health) {
      route.health.emplace();
      route.health->failure_response = DefaultFailure();
    }
  }
}

}  // namespace faultline::scenario::internal
