#include "harness/worlds/request_body.h"

#include "reference_impl/route_json.h"
#include "scenarios/route_scenario.h"

namespace faultline::harness {
namespace {

using nlohmann::json;

// The smallest image there is: a 1x1 PNG, so an image request stays a small body.
constexpr std::string_view kImagePng =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg"
    "==";

std::string ImageDataUrl() { return "data:image/png;base64," + std::string(kImagePng); }

// Strict tools need a closed schema (OpenAI and Anthropic both refuse a strict tool whose
// parameters allow other properties).
json WeatherParameters(bool strict) {
  json parameters = {{"type", "object"},
                     {"properties", {{"city", {{"type", "string"}}}}},
                     {"required", json::array({"city"})}};
  if (strict) parameters["additionalProperties"] = false;
  return parameters;
}

json Tools(scenario::Dialect dialect, bool strict) {
  json tool = {{"name", "get_weather"}, {"description", "Current weather for a city"}};
  if (dialect == scenario::Dialect::kGemini) {  // no strict mode: the loader refuses one
    tool["parameters"] = WeatherParameters(false);
    return json::array({{{"functionDeclarations", json::array({tool})}}});
  }
  tool[dialect == scenario::Dialect::kAnthropicMessages ? "input_schema" : "parameters"] =
      WeatherParameters(strict);
  if (strict) tool["strict"] = true;
  if (dialect == scenario::Dialect::kOpenAiChat) {
    return json::array({{{"type", "function"}, {"function", tool}}});
  }
  if (dialect == scenario::Dialect::kOpenAiResponses) tool["type"] = "function";
  return json::array({tool});
}

// The user's turn: the message alone, or the message and the image as content parts.
json UserContent(scenario::Dialect dialect, const scenario::RequestSpec& request) {
  if (!request.image) return request.message;
  switch (dialect) {
    case scenario::Dialect::kOpenAiChat:
      return json::array({{{"type", "text"}, {"text", request.message}},
                          {{"type", "image_url"}, {"image_url", {{"url", ImageDataUrl()}}}}});
    case scenario::Dialect::kAnthropicMessages:
      return json::array({{{"type", "text"}, {"text", request.message}},
                          {{"type", "image"},
                           {"source",
                            {{"type", "base64"},
                             {"media_type", "image/png"},
                             {"data", std::string(kImagePng)}}}}});
    case scenario::Dialect::kOpenAiResponses:
      return json::array({{{"type", "input_text"}, {"text", request.message}},
                          {{"type", "input_image"}, {"image_url", ImageDataUrl()}}});
    case scenario::Dialect::kGemini:
    case scenario::Dialect::kOllama:
    case scenario::Dialect::kBedrockConverse:
      break;  // GeminiContents, OllamaMessages, BedrockMessages
  }
  return request.message;
}

// Bedrock Converse's turns: content blocks ({"text"}, {"image":{"format","source":{"bytes"}}}),
// the assistant's own first words as an assistant turn.
json BedrockMessages(const scenario::RequestSpec& request) {
  json content = json::array({{{"text", request.message}}});
  if (request.image) {
    content.push_back(
        {{"image", {{"format", "png"}, {"source", {{"bytes", std::string(kImagePng)}}}}}});
  }
  json turns = json::array({{{"role", "user"}, {"content", std::move(content)}}});
  if (!request.prefill.empty()) {
    turns.push_back(
        {{"role", "assistant"}, {"content", json::array({{{"text", request.prefill}}})}});
  }
  return turns;
}

// Bedrock's tools: toolConfig.tools of toolSpec with the schema under inputSchema.json (no
// strict mode: the loader refuses one).
json BedrockToolConfig() {
  json spec = {{"name", "get_weather"},
               {"description", "Current weather for a city"},
               {"inputSchema", {{"json", WeatherParameters(false)}}}};
  return {{"tools", json::array({{{"toolSpec", std::move(spec)}}})}};
}

// Ollama's messages: OpenAI's roles, the image as a bare base64 string in `images`.
json OllamaMessages(const scenario::RequestSpec& request) {
  json user = {{"role", "user"}, {"content", request.message}};
  if (request.image) user["images"] = json::array({std::string(kImagePng)});
  json turns = json::array({std::move(user)});
  if (!request.prefill.empty()) {
    turns.push_back({{"role", "assistant"}, {"content", request.prefill}});
  }
  return turns;
}

// Gemini's turns: `contents` of {"role","parts"}, the model's own first words as a "model" turn.
json GeminiContents(const scenario::RequestSpec& request) {
  json parts = json::array({{{"text", request.message}}});
  if (request.image) {
    parts.push_back(
        {{"inlineData", {{"mimeType", "image/png"}, {"data", std::string(kImagePng)}}}});
  }
  json turns = json::array({{{"role", "user"}, {"parts", std::move(parts)}}});
  if (!request.prefill.empty()) {
    turns.push_back({{"role", "model"}, {"parts", json::array({{{"text", request.prefill}}})}});
  }
  return turns;
}

// Gemini keeps the budget, reasoning and stop sequences in generationConfig.
json GeminiGenerationConfig(const scenario::RequestSpec& request) {
  json config = {{"maxOutputTokens", request.max_tokens}};
  if (!request.stop.empty()) config["stopSequences"] = request.stop;
  if (request.reasoning) {
    config["thinkingConfig"] = {{"includeThoughts", true}, {"thinkingBudget", 1024}};
  }
  return config;
}

// The conversation: the user's turn, then the assistant's own first words when it prefills.
// OpenAI Responses takes a bare string as input unless the turn has parts or a second turn.
json Conversation(scenario::Dialect dialect, const scenario::RequestSpec& request) {
  const bool responses = dialect == scenario::Dialect::kOpenAiResponses;
  if (responses && !request.image && request.prefill.empty()) return request.message;
  json user = {{"role", "user"}, {"content", UserContent(dialect, request)}};
  if (responses) user = {{"type", "message"}, {"role", "user"}, {"content", user["content"]}};
  json turns = json::array({user});
  if (!request.prefill.empty()) {
    json assistant = {{"role", "assistant"}, {"content", request.prefill}};
    if (responses) assistant["type"] = "message";
    turns.push_back(assistant);
  }
  return turns;
}

// Reasoning and stop sequences, each in the dialect's own field (the loader refuses what a
// dialect cannot say: stop sequences in OpenAI Responses).
void AddReasoningAndStop(scenario::Dialect dialect, const scenario::RequestSpec& request,
                         json& body) {
  if (request.reasoning) {
    switch (dialect) {
      case scenario::Dialect::kOpenAiChat:
        body["reasoning_effort"] = "medium";
        break;
      case scenario::Dialect::kAnthropicMessages:
        body["thinking"] = {{"type", "enabled"},
                            {"budget_tokens", scenario::kAnthropicMinThinkingBudget}};
        break;
      case scenario::Dialect::kOpenAiResponses:
        body["reasoning"] = {{"effort", "medium"}};
        break;
      case scenario::Dialect::kGemini:
      case scenario::Dialect::kOllama:
      case scenario::Dialect::kBedrockConverse:
        break;  // in generationConfig, in "think", in additionalModelRequestFields
    }
  }
  if (request.stop.empty() || dialect == scenario::Dialect::kOpenAiResponses ||
      dialect == scenario::Dialect::kGemini || dialect == scenario::Dialect::kOllama) {
    return;
  }
  body[dialect == scenario::Dialect::kAnthropicMessages ? "stop_sequences" : "stop"] = request.stop;
}

}  // namespace

std::string DefaultModel(scenario::Dialect dialect) {
  switch (dialect) {
    case scenario::Dialect::kOpenAiChat:
    case scenario::Dialect::kOpenAiResponses:
      return "gpt-4o-mini";
    case scenario::Dialect::kAnthropicMessages:
      return "claude-sonnet-4-20250514";
    case scenario::Dialect::kGemini:
      return "gemini-2.5-flash";
    case scenario::Dialect::kOllama:
      return "llama3.2";
    case scenario::Dialect::kBedrockConverse:
      return "anthropic.claude-3-5-haiku-20241022-v1:0";
  }
  return "model";
}

json RequestBody(scenario::Dialect dialect, const scenario::RequestSpec& request) {
  const std::string model = request.model.empty() ? DefaultModel(dialect) : request.model;
  json body;
  if (dialect == scenario::Dialect::kGemini) {
    // `model` and `stream` choose Gemini's path, not its body (ref::ToWire takes them out).
    body = {{"model", model},
            {"stream", request.stream},
            {"contents", GeminiContents(request)},
            {"generationConfig", GeminiGenerationConfig(request)}};
    if (request.tools) body["tools"] = Tools(dialect, false);
    return body;
  }
  if (dialect == scenario::Dialect::kOllama) {
    // Ollama streams unless told not to; the budget and stop sequences go in its options.
    json options = {{"num_predict", request.max_tokens}};
    if (!request.stop.empty()) options["stop"] = request.stop;
    body = {{"model", model},
            {"messages", OllamaMessages(request)},
            {"stream", request.stream},
            {"options", std::move(options)}};
    if (request.reasoning) body["think"] = true;
    if (request.tools) body["tools"] = Tools(scenario::Dialect::kOpenAiChat, false);
    return body;
  }
  if (dialect == scenario::Dialect::kBedrockConverse) {
    // `model` and `stream` choose Bedrock's path, not its body (ref::ToWire takes them out);
    // the budget and stop sequences go in inferenceConfig, thinking to the model's own fields.
    json config = {{"maxTokens", request.max_tokens}};
    if (!request.stop.empty()) config["stopSequences"] = request.stop;
    body = {{"model", model},
            {"stream", request.stream},
            {"messages", BedrockMessages(request)},
            {"inferenceConfig", std::move(config)}};
    if (request.tools) body["toolConfig"] = BedrockToolConfig();
    if (request.reasoning) {
      body["additionalModelRequestFields"] = {
          {"thinking",
           {{"type", "enabled"}, {"budget_tokens", scenario::kAnthropicMinThinkingBudget}}}};
    }
    return body;
  }
  if (dialect == scenario::Dialect::kOpenAiResponses) {
    body = {
        {"model", model}, {"input", Conversation(dialect, request)}, {"stream", request.stream}};
    body["max_output_tokens"] = request.max_tokens;
  } else {
    body = {{"model", model},
            {"messages", Conversation(dialect, request)},
            {"stream", request.stream},
            {"max_tokens", request.max_tokens}};
  }
  if (request.tools) body["tools"] = Tools(dialect, request.strict_tools);
  AddReasoningAndStop(dialect, request, body);
  return body;
}

std::string WireModel(const scenario::Scenario& scenario, const scenario::Route& route) {
  if (!route.model.empty()) return route.model;
  return scenario.request.model.empty() ? DefaultModel(route.dialect) : scenario.request.model;
}

ref::RouteCapabilities RouteCapabilitiesOf(const scenario::Capabilities& caps) {
  return {.tools = caps.tools,
          .reasoning = caps.reasoning,
          .images = caps.images,
          .strict_tools = caps.strict_tools,
          .stop_sequences = caps.stop_sequences,
          .prefill = caps.prefill,
          .context_window = caps.context_window};
}

json RouteRequestBody(const scenario::Scenario& scenario, const scenario::Route& route) {
  scenario::RequestSpec request = scenario.request;
  request.model = WireModel(scenario, route);
  return RequestBody(route.dialect, request);
}

std::vector<protocol::RouteLine> RouteLines(
    const scenario::Scenario& scenario,
    const std::function<std::string(std::string_view)>& base_url_of) {
  std::vector<protocol::RouteLine> lines;
  for (const scenario::Route& route : scenario.routes) {
    lines.push_back(
        {.id = route.id,
         .base_url = base_url_of(route.id),
         .dialect = std::string(scenario::ToString(route.dialect)),
         .model = WireModel(scenario, route),
         .request = RouteRequestBody(scenario, route),
         .capabilities = ref::CapabilitiesToJson(RouteCapabilitiesOf(route.capabilities)),
         .priority = route.priority,
         .weight = route.weight,
         .group = route.group});
  }
  return lines;
}

std::expected<std::vector<ref::CallRoute>, std::string> ReferenceRoutes(
    const std::vector<protocol::RouteLine>& lines) {
  if (lines.empty()) return std::vector<ref::CallRoute>{};
  json routes = json::array();
  for (const protocol::RouteLine& line : lines) routes.push_back(protocol::ToJson(line));
  return ref::RoutesFromJson(routes);
}

CallTarget PrimaryTarget(const scenario::Scenario& scenario) {
  if (scenario.routes.empty()) {
    return {scenario.dialect, RequestBody(scenario.dialect, scenario.request), ""};
  }
  const scenario::Route& route = scenario::PrimaryRoute(scenario);
  scenario::RequestSpec request = scenario.request;
  if (!route.model.empty()) request.model = route.model;
  return {route.dialect, RequestBody(route.dialect, request), route.id};
}

}  // namespace faultline::harness
