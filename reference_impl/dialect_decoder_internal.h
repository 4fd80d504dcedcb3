// Internal to the dialect decoders: JSON access helpers and the per-dialect entry points.
//
// Inside the decoders a shape violation throws ShapeError from deep within a helper, which keeps
// each dialect's decoding readable; DialectDecoder's public functions (dialect_decoder.cc) catch it
// and return a DecodeError. Nothing here is part of the public API.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference_impl/dialect_decoder.h"

namespace faultline::ref::internal {

using Json = nlohmann::json;

struct ShapeError {
  std::string message;
};

// Parses `text` as one JSON object; anything else (invalid JSON, trailing bytes such as a second
// object, an array) throws ShapeError naming `what`.
Json ParseObject(std::string_view text, std::string_view what);

// nullptr when the member is absent or JSON null.
const Json* Member(const Json& object, std::string_view key);
const Json& RequireObject(const Json& object, std::string_view key);
const Json& RequireArray(const Json& object, std::string_view key);
// "" when absent or null; throws when present with another type.
std::string_view OptString(const Json& object, std::string_view key);
std::string_view RequireString(const Json& object, std::string_view key);
std::optional<std::int64_t> OptInt(const Json& object, std::string_view key);
std::int64_t RequireInt(const Json& object, std::string_view key);
// An error `code` may be a string, a number or null; returns it as text ("" for null).
std::string CodeText(const Json& object, std::string_view key);

// The arguments of a tool call that comes whole (Gemini's `args`, Ollama's `arguments`): the
// object re-serialised, a string as it is, "{}" when absent.
std::string WholeCallArguments(const Json* arguments);

// {"type","code","message"} of an error object, the shape every provider uses.
ProviderErrorDelta ErrorFrom(const Json& error);
// The error object of an OpenAI-style envelope, {"error":{...}} on an unnamed data line without a
// `type`: what a gateway writes into any dialect's stream when the upstream fails after the
// headers. nullptr for anything else (Anthropic's own `error` event has a type).
const Json* OpenAiEnvelope(const SseEventView& event, const Json& data);

std::string Excerpt(std::string_view text);

// Bedrock's contentBlockIndex, [0, this]: a larger one is refused (it says nothing sensible).
inline constexpr std::int64_t kMaxBedrockBlockIndex =
    1'000'000;  // for error messages: at most ~120 bytes

// The allocation-free path for the commonest event shapes (decode_fast_path.cc). Returns false,
// having appended nothing and changed no state, for anything it does not recognise exactly.
bool TryDecodeFast(Dialect dialect, const SseEventView& event, DialectDecoder::State& state,
                   std::vector<Delta>& out);

EventWeight DecodeOpenAiChatEvent(const SseEventView& event, std::vector<Delta>& out);
void DecodeOpenAiChatBody(const Json& body, std::vector<Delta>& out);
EventWeight DecodeAnthropicEvent(const SseEventView& event, DialectDecoder::State& state,
                                 std::vector<Delta>& out);
void DecodeAnthropicBody(const Json& body, std::vector<Delta>& out);
EventWeight DecodeOpenAiResponsesEvent(const SseEventView& event, DialectDecoder::State& state,
                                       std::vector<Delta>& out);
void DecodeOpenAiResponsesBody(const Json& body, std::vector<Delta>& out);
EventWeight DecodeGeminiEvent(const SseEventView& event, DialectDecoder::State& state,
                              std::vector<Delta>& out);
void DecodeGeminiBody(const Json& body, std::vector<Delta>& out);
EventWeight DecodeOllamaEvent(const SseEventView& event, DialectDecoder::State& state,
                              std::vector<Delta>& out);
void DecodeOllamaBody(const Json& body, std::vector<Delta>& out);
EventWeight DecodeBedrockEvent(const SseEventView& event, std::vector<Delta>& out);
void DecodeBedrockBody(const Json& body, std::vector<Delta>& out);

}  // namespace faultline::ref::internal
