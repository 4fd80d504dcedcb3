// The routes of one logical model as JSON: the `routes` array of the adapter protocol's call line
// (docs/adapter-protocol.md), read into the call engine's CallRoutes.
//
//   "routes": [{"id": "primary", "base_url": "http://127.0.0.1:8080/s/x/route/primary",
//               "dialect": "openai-chat", "model": "gpt-4o", "request": {...},
//               "capabilities": {"tools": true, "reasoning": false, "images": false,
//                                "strict_tools": false, "stop_sequences": true,
//                                "prefill": false, "context_window": 128000},
//               "priority": 0, "weight": 1, "group": "openai"}, ...]
//
// `id`, `base_url` and `request` (the body in the route's dialect, with its wire model) are
// required; the rest default as in route_registry.h. Loading is strict: a wrong type, an unknown
// key (with the nearest known one suggested) or a bad URL is an error naming the JSON path.
//
// Pure functions; thread-safe.
#pragma once

#include <expected>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "reference_impl/call.h"

namespace faultline::ref {

std::expected<std::vector<CallRoute>, std::string> RoutesFromJson(const nlohmann::json& routes);

nlohmann::json CapabilitiesToJson(const RouteCapabilities& capabilities);

}  // namespace faultline::ref
