// The request a subject is asked to send: the JSON body for one user message (with what else the
// scenario's request needs: an image, a prefill, reasoning, stop sequences, a strict tool) in the
// dialect's shape (OpenAI Chat Completions, Anthropic Messages, OpenAI Responses, Gemini). The one
// place `faultline call` and `faultline run` build bodies. A Gemini body also says "model" and
// "stream", which go in its path on the wire (ref::ToWire).
//
// Pure functions. Thread-safety: reentrant.
#pragma once

#include <expected>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/trace/protocol.h"
#include "nlohmann/json.hpp"
#include "reference_impl/call.h"
#include "reference_impl/route_registry.h"
#include "scenarios/scenario.h"

namespace faultline::harness {

// The API key every subject is given (the fake provider accepts any): one that looks like a key,
// so that a client's own check of its shape passes, and that reports redact (runner.h).
inline constexpr std::string_view kTestApiKey = "sk-faultline-test";

// A plausible model name for the dialect, used when the scenario names none.
std::string DefaultModel(scenario::Dialect dialect);

// The body for `request` in the dialect's own wire shape: model defaulted, stream flag,
// max_tokens, the get_weather tool when `tools` is set (strict with `strict_tools`), and what
// else the request needs (reasoning, an inline image, stop sequences, an assistant prefill).
// ref::NeedsOf reads each need back from it; the loader refuses a need the dialect cannot say.
nlohmann::json RequestBody(scenario::Dialect dialect, const scenario::RequestSpec& request);

// The scenario's capabilities of a route as the reference client holds them: the one conversion,
// for the call line and for the judge.
ref::RouteCapabilities RouteCapabilitiesOf(const scenario::Capabilities& capabilities);

// The body requests to `route` carry: the scenario's request in the route's dialect, with its
// wire model.
nlohmann::json RouteRequestBody(const scenario::Scenario& scenario, const scenario::Route& route);

// What a subject calls: the scenario's dialect and request or, with routes, the primary route
// (scenario::PrimaryRoute) with its dialect and wire model; the call line's `routes` (RouteLines)
// carry every route, and failing over between them is the subject's business.
struct CallTarget {
  scenario::Dialect dialect = scenario::Dialect::kOpenAiChat;
  nlohmann::json body;
  std::string route_id;  // "" without routes
};
CallTarget PrimaryTarget(const scenario::Scenario& scenario);

// The wire model requests to `route` carry: its own, else the request's, else the dialect's
// default.
std::string WireModel(const scenario::Scenario& scenario, const scenario::Route& route);

// The call line's routes for the scenario, in scenario order (empty without routes): each with
// its own request body (its dialect, its wire model) and capabilities; `base_url_of(route id)`
// says where the world serves it.
std::vector<protocol::RouteLine> RouteLines(
    const scenario::Scenario& scenario,
    const std::function<std::string(std::string_view)>& base_url_of);

// The routes the in-process reference client gets: the same lines, read as `faultline call
// --adapter` reads the call line's (ref::RoutesFromJson), so both subjects see one thing.
std::expected<std::vector<ref::CallRoute>, std::string> ReferenceRoutes(
    const std::vector<protocol::RouteLine>& lines);

}  // namespace faultline::harness
