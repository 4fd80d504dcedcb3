// The request a subject is asked to send: the JSON body for one user message in the dialect's
// shape (OpenAI Chat Completions, Anthropic Messages, OpenAI Responses).
//
// Pure functions. Thread-safety: reentrant.
#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "scenarios/scenario.h"

namespace faultline::harness {

// A plausible model name for the dialect, used when the scenario names none.
std::string DefaultModel(scenario::Dialect dialect);

// The body for `request` (model defaulted, stream flag, max_tokens, the get_weather tool when
// `tools` is set).
nlohmann::json RequestBody(scenario::Dialect dialect, const scenario::RequestSpec& request);

// What a subject calls: the scenario's dialect and request or, with routes, the primary route
// (scenario::PrimaryRoute) with its dialect and wire model. Failing over to the other routes is
// the subject's business; the worlds hand it the primary.
struct CallTarget {
  scenario::Dialect dialect = scenario::Dialect::kOpenAiChat;
  nlohmann::json body;
  std::string route_id;  // "" without routes
};
CallTarget PrimaryTarget(const scenario::Scenario& scenario);

}  // namespace faultline::harness
