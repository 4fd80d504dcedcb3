#include "reference_impl/route_json.h"

#include <fmt/format.h>

#include <array>
#include <optional>
#include <string_view>

#include "reference_impl/call_event.h"
#include "reference_impl/policy_json.h"

namespace faultline::ref {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::string_view, 9> kRouteKeys{
    "id", "base_url", "dialect", "model", "request", "capabilities", "priority", "weight", "group"};
constexpr std::array<std::string_view, 7> kCapabilityKeys{
    "tools", "reasoning", "images", "strict_tools", "stop_sequences", "prefill", "context_window"};

std::optional<std::string> UnknownKey(const Json& object, std::string_view path,
                                      std::span<const std::string_view> known) {
  for (const auto& [key, value] : object.items()) {
    if (std::ranges::find(known, key) == known.end()) {
      return fmt::format("{}.{}: unknown key '{}'{}", path, key, key, DidYouMean(key, known));
    }
  }
  return std::nullopt;
}

std::expected<RouteCapabilities, std::string> ReadCapabilities(const Json& json,
                                                               const std::string& path) {
  RouteCapabilities out;
  if (!json.is_object()) return std::unexpected(fmt::format("{}: expected an object", path));
  if (auto bad = UnknownKey(json, path, kCapabilityKeys)) return std::unexpected(*bad);
  for (auto [key, field] : {std::pair<const char*, bool*>{"tools", &out.tools},
                            {"reasoning", &out.reasoning},
                            {"images", &out.images},
                            {"strict_tools", &out.strict_tools},
                            {"stop_sequences", &out.stop_sequences},
                            {"prefill", &out.prefill}}) {
    const auto found = json.find(key);
    if (found == json.end()) continue;
    if (!found->is_boolean())
      return std::unexpected(fmt::format("{}.{}: expected a boolean", path, key));
    *field = found->get<bool>();
  }
  if (const auto window = json.find("context_window"); window != json.end()) {
    if (!window->is_number_integer() || window->get<std::int64_t>() < 1 ||
        window->get<std::int64_t>() > std::numeric_limits<int>::max()) {
      return std::unexpected(fmt::format("{}.context_window: expected a positive integer", path));
    }
    out.context_window = window->get<int>();
  }
  return out;
}

std::expected<std::string, std::string> StringAt(const Json& json, const char* key,
                                                 const std::string& path, bool required) {
  const auto found = json.find(key);
  if (found == json.end()) {
    if (required) return std::unexpected(fmt::format("{}: missing \"{}\"", path, key));
    return std::string();
  }
  if (!found->is_string())
    return std::unexpected(fmt::format("{}.{}: expected a string", path, key));
  return found->get<std::string>();
}

std::expected<int, std::string> IntAt(const Json& json, const char* key, const std::string& path,
                                      int fallback, int low, int high) {
  const auto found = json.find(key);
  if (found == json.end()) return fallback;
  if (!found->is_number_integer() || found->get<std::int64_t>() < low ||
      found->get<std::int64_t>() > high) {
    return std::unexpected(
        fmt::format("{}.{}: expected an integer from {} to {}", path, key, low, high));
  }
  return found->get<int>();
}

std::expected<CallRoute, std::string> ReadRoute(const Json& json, const std::string& path) {
  if (!json.is_object()) return std::unexpected(fmt::format("{}: expected an object", path));
  if (auto bad = UnknownKey(json, path, kRouteKeys)) return std::unexpected(*bad);
  CallRoute route;
  auto id = StringAt(json, "id", path, true);
  auto url_text = StringAt(json, "base_url", path, true);
  auto dialect_text = StringAt(json, "dialect", path, false);
  auto model = StringAt(json, "model", path, false);
  auto group = StringAt(json, "group", path, false);
  for (const auto* text : {&id, &url_text, &dialect_text, &model, &group}) {
    if (!*text) return std::unexpected(text->error());
  }
  auto url = ParseBaseUrl(*url_text);
  if (!url) return std::unexpected(fmt::format("{}.base_url: {}", path, url.error()));
  const auto dialect = ParseDialect(dialect_text->empty() ? "openai-chat" : *dialect_text);
  if (!dialect) {
    return std::unexpected(fmt::format("{}.dialect: unknown dialect '{}'", path, *dialect_text));
  }
  const auto request = json.find("request");
  if (request == json.end() || !request->is_object()) {
    return std::unexpected(fmt::format("{}: missing object \"request\"", path));
  }
  auto priority = IntAt(json, "priority", path, 0, 0, 1000);
  auto weight = IntAt(json, "weight", path, 1, 1, 1000);
  if (!priority || !weight) return std::unexpected(priority ? weight.error() : priority.error());
  if (const auto caps = json.find("capabilities"); caps != json.end()) {
    auto read = ReadCapabilities(*caps, path + ".capabilities");
    if (!read) return std::unexpected(read.error());
    route.traits.capabilities = *read;
  }
  route.traits.id = std::move(*id);
  route.traits.model = model->empty() ? request->value("model", "") : std::move(*model);
  route.traits.priority = *priority;
  route.traits.weight = *weight;
  route.traits.group = std::move(*group);
  route.dialect = *dialect;
  route.base_url = std::move(*url);
  route.body = DumpJson(*request);
  return route;
}

}  // namespace

std::expected<std::vector<CallRoute>, std::string> RoutesFromJson(const Json& routes) {
  if (!routes.is_array() || routes.empty()) {
    return std::unexpected("routes: expected a non-empty array of routes");
  }
  std::vector<CallRoute> out;
  for (std::size_t i = 0; i < routes.size(); ++i) {
    auto route = ReadRoute(routes[i], fmt::format("routes[{}]", i));
    if (!route) return std::unexpected(route.error());
    for (const CallRoute& earlier : out) {
      if (earlier.traits.id == route->traits.id) {
        return std::unexpected(
            fmt::format("routes[{}].id: '{}' is listed twice", i, route->traits.id));
      }
    }
    out.push_back(std::move(*route));
  }
  return out;
}

Json CapabilitiesToJson(const RouteCapabilities& capabilities) {
  return {{"tools", capabilities.tools},
          {"reasoning", capabilities.reasoning},
          {"images", capabilities.images},
          {"strict_tools", capabilities.strict_tools},
          {"stop_sequences", capabilities.stop_sequences},
          {"prefill", capabilities.prefill},
          {"context_window", capabilities.context_window}};
}

}  // namespace faultline::ref
