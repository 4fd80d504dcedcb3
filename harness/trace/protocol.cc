#include "harness/trace/protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "harness/trace/embedded_schemas.h"

namespace faultline::harness::protocol {
namespace {

using nlohmann::json;

constexpr std::size_t kShownViolations = 3;

std::string Shown(std::string_view line) {
  constexpr std::size_t kMax = 120;
  std::string shown = ValidUtf8(line.substr(0, kMax));
  if (line.size() > kMax) shown += fmt::format("... ({} bytes)", line.size());
  return shown;
}

std::unexpected<LineError> NotProtocol(std::string message) {
  return std::unexpected(LineError{"not-protocol", std::move(message)});
}

std::string Quoted(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

// The event of a line's `type`, which the schema lists.
std::expected<EventKind, LineError> KindOf(const json& event, std::string_view line) {
  const auto type = event.find("type");
  if (type == event.end() || !type->is_string()) {
    return NotProtocol("no string \"type\": " + Shown(line));
  }
  if (type->get_ref<const std::string&>() == "adapter/reset") {
    return NotProtocol("adapter/reset answers a reset line, and none was sent");
  }
  const auto listed = Schema().Validate(*type, "/properties/type", 1);
  const auto kind = ParseEventKind(type->get_ref<const std::string&>());
  if (!listed.empty() || !kind) {
    return NotProtocol(fmt::format(
        "unknown event type: {}",
        listed.empty() ? Quoted(type->get<std::string>()) + " is not an event the runner reads"
                       : listed.front().message));
  }
  return *kind;
}

}  // namespace

const JsonSchema& Schema() {
  static const JsonSchema schema = [] {
    auto compiled = JsonSchema::Compile(json::parse(EmbeddedSchema("protocol"), nullptr, false));
    if (!compiled) {  // the embedded file is checked by a test: this is a broken build
      std::fprintf(stderr, "faultline: the adapter protocol schema does not compile: %s\n",
                   compiled.error().c_str());
      std::abort();
    }
    return std::move(*compiled);
  }();
  return schema;
}

std::expected<ClientEvent, LineError> ParseLine(std::string_view line) {
  if (scenario::NestsDeeperThan(line, kMaxLineDepth)) {
    return NotProtocol(fmt::format("arrays and objects nest deeper than {} levels: {}",
                                   kMaxLineDepth, Shown(line)));
  }
  json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (event.is_discarded()) {
    return std::unexpected(LineError{"not-json", "not a JSON line: " + Shown(line)});
  }
  if (!event.is_object()) {
    return NotProtocol(
        fmt::format("a JSON {}, not an event object: {}", event.type_name(), Shown(line)));
  }
  const auto kind = KindOf(event, line);
  if (!kind) return std::unexpected(kind.error());
  const std::string_view name = ToString(*kind);
  const auto violations =
      Schema().Validate(event, JsonSchema::DefinitionPointer(name), kShownViolations);
  if (!violations.empty()) {
    std::vector<std::string> shown;
    for (const SchemaViolation& violation : violations) shown.push_back(violation.ToString());
    return NotProtocol(fmt::format("{}: {}", name, fmt::join(shown, "; ")));
  }
  return EventFromJson(event);
}

json ToJson(const RouteLine& route) {
  json out = {{"id", route.id},
              {"base_url", route.base_url},
              {"dialect", route.dialect},
              {"model", route.model},
              {"request", route.request},
              {"capabilities", route.capabilities},
              {"priority", route.priority},
              {"weight", route.weight}};
  if (!route.group.empty()) out["group"] = route.group;
  return out;
}

std::string StampedLine(json event, double at_ms) {
  event[kAtMs] = std::round(std::max(0.0, at_ms) * 10) / 10;
  return event.dump(-1, ' ', false, json::error_handler_t::replace);
}

json ToJson(const CallLine& call) {
  json out = {{"type", "call"},          {"base_url", call.base_url}, {"api_key", call.api_key},
              {"dialect", call.dialect}, {"request", call.request},   {"scenario", call.scenario}};
  if (call.call) out["call"] = *call.call;
  if (call.seed) out["seed"] = *call.seed;
  if (call.policy) out["policy"] = *call.policy;
  if (call.limits) out["limits"] = *call.limits;
  if (!call.routes.empty()) {
    json routes = json::array();
    for (const RouteLine& route : call.routes) routes.push_back(ToJson(route));
    out["routes"] = std::move(routes);
  }
  return out;
}

std::optional<json> CallLimits(const scenario::Scenario& scenario) {
  if (!scenario.policy) return std::nullopt;
  const json policy = json::parse(scenario.policy->json, nullptr, /*allow_exceptions=*/false);
  if (!policy.is_object()) return std::nullopt;
  json limits = json::object();
  if (const auto attempts = policy.find("max_attempts"); attempts != policy.end()) {
    limits["max_attempts"] = *attempts;
  }
  if (const auto timeouts = policy.find("timeouts");
      timeouts != policy.end() && timeouts->is_object()) {
    for (const char* key : {"connect_ms", "response_headers_ms", "idle_ms", "total_ms"}) {
      if (const auto value = timeouts->find(key); value != timeouts->end()) {
        limits["timeouts"][key] = *value;
      }
    }
  }
  if (limits.empty()) return std::nullopt;
  return limits;
}

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t length = c < 0x80           ? 1
                               : (c >> 5) == 0x6  ? 2
                               : (c >> 4) == 0xE  ? 3
                               : (c >> 3) == 0x1E ? 4
                                                  : 0;
    bool valid = length > 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) {
      valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    }
    if (valid && length > 1) {  // no overlong forms, surrogates or values past U+10FFFF
      const auto c1 = static_cast<unsigned char>(text[i + 1]);
      valid = !(c == 0xC0 || c == 0xC1 || (c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0) ||
                (c == 0xF0 && c1 < 0x90) || c > 0xF4 || (c == 0xF4 && c1 >= 0x90));
    }
    if (!valid) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

}  // namespace faultline::harness::protocol
