// The provider wire dialects the reference client speaks.
//
// Values only; no I/O. Safe to use from any thread.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace faultline::ref {

enum class Dialect {
  kOpenAiChat,         // "openai-chat": POST /v1/chat/completions
  kAnthropicMessages,  // "anthropic-messages": POST /v1/messages
  kOpenAiResponses,    // "openai-responses": POST /v1/responses
  kGemini,             // "gemini": POST /v1beta/models/{model}:streamGenerateContent?alt=sse |
                       // :generateContent
  kOllama,             // "ollama": POST /api/chat, newline-delimited JSON
  kBedrockConverse,    // "bedrock-converse": POST /model/{modelId}/converse-stream | /converse,
                       // AWS binary event stream
};

// How the dialect frames a stream: Server-Sent Events, newline-delimited JSON (Ollama) or the
// AWS binary event stream (Bedrock).
enum class StreamFraming { kSse, kNdjson, kEventStream };
StreamFraming StreamFramingOf(Dialect dialect);
// The media type of the dialect's stream, which the response's content type must be (and the
// request's accept header asks for): "text/event-stream", "application/x-ndjson",
// "application/vnd.amazon.eventstream".
std::string_view StreamMediaType(Dialect dialect);

std::string_view ToString(Dialect dialect);
std::optional<Dialect> ParseDialect(std::string_view text);
// Every dialect, in the order of the enum.
std::span<const Dialect> AllDialects();

}  // namespace faultline::ref
