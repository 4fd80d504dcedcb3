#include "harness/trace/protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "reference_impl/failure.h"

namespace faultline::harness::protocol {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 6> kEvents{kHello,       kStart,     kChunk,
                                                  kInterrupted, kCommitted, kFailed};

std::string Shown(std::string_view line) {
  constexpr std::size_t kMax = 120;
  std::string shown = ValidUtf8(line.substr(0, kMax));
  if (line.size() > kMax) shown += fmt::format("... ({} bytes)", line.size());
  return shown;
}

std::optional<std::string> Expect(const json& event, const char* key, json::value_t type,
                                  bool required) {
  const auto found = event.find(key);
  if (found == event.end()) {
    if (!required) return std::nullopt;
    return fmt::format("missing field \"{}\"", key);
  }
  const bool numeric = type == json::value_t::number_integer && found->is_number_integer();
  if (found->type() == type || numeric) return std::nullopt;
  if (type == json::value_t::object && found->is_null() && !required) return std::nullopt;
  return fmt::format("field \"{}\" is {}, expected {}", key, found->type_name(),
                     json(type).type_name());
}

std::optional<std::string> CheckFailure(const json& event, bool required) {
  if (auto bad = Expect(event, "failure", json::value_t::object, required)) return bad;
  const auto found = event.find("failure");
  if (found == event.end() || !found->is_object()) return std::nullopt;
  const auto cls = found->find("class");
  if (cls == found->end() || !cls->is_string()) return "failure has no string \"class\"";
  if (!ref::ParseFailureClass(cls->get<std::string>())) {
    return fmt::format("failure class \"{}\" is not one of DESIGN §6's classes",
                       ValidUtf8(cls->get<std::string>()));
  }
  const auto code = found->find("code");
  if (code == found->end() || !code->is_string() || code->get_ref<const std::string&>().empty()) {
    return "failure has no string \"code\"";
  }
  return std::nullopt;
}

// What every event may carry, whatever its type: its route and its adapter-side time.
std::optional<std::string> CheckCommonFields(const json& event) {
  if (auto bad = Expect(event, "route_id", json::value_t::string, false)) return bad;
  const auto at = event.find(kAtMs);
  if (at == event.end()) return std::nullopt;
  if (!at->is_number() || !std::isfinite(at->get<double>()) || at->get<double>() < 0) {
    return fmt::format("field \"{}\" is {}, expected a number of milliseconds >= 0", kAtMs,
                       at->dump());
  }
  return std::nullopt;
}

std::optional<std::string> CheckFields(std::string_view type, const json& event) {
  using T = json::value_t;
  if (auto bad = CheckCommonFields(event)) return bad;
  if (type == kHello) {
    if (auto bad = Expect(event, "name", T::string, true)) return bad;
    return Expect(event, "policy", T::object, false);
  }
  if (type == kStart) return Expect(event, "attempt", T::number_integer, false);
  if (type == kChunk) {
    if (!event.contains("text") && !event.contains("tool_call")) {
      return std::string("a chunk carries \"text\" or \"tool_call\"");
    }
    return Expect(event, "text", T::string, false);
  }
  if (type == kInterrupted) return CheckFailure(event, true);
  if (type == kCommitted) return Expect(event, "text", T::string, true);
  return CheckFailure(event, true);  // kFailed
}

}  // namespace

std::expected<ClientEvent, LineError> ParseLine(std::string_view line) {
  json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (event.is_discarded()) {
    return std::unexpected(LineError{"not-json", "not a JSON line: " + Shown(line)});
  }
  if (!event.is_object()) {
    return std::unexpected(LineError{
        "not-protocol",
        fmt::format("a JSON {}, not an event object: {}", event.type_name(), Shown(line))});
  }
  const auto type = event.find("type");
  if (type == event.end() || !type->is_string()) {
    return std::unexpected(LineError{"not-protocol", "no string \"type\": " + Shown(line)});
  }
  const std::string& name = type->get_ref<const std::string&>();
  if (std::ranges::find(kEvents, name) == kEvents.end()) {
    return std::unexpected(LineError{
        "not-protocol", fmt::format("unknown event type \"{}\" (expected adapter/hello, "
                                    "response/start, assistant/chunk, response/interrupted, "
                                    "response/committed or response/failed)",
                                    ValidUtf8(name))});
  }
  if (auto bad = CheckFields(name, event)) {
    return std::unexpected(LineError{"not-protocol", fmt::format("{}: {}", name, *bad)});
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
