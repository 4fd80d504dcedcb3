// The provider wire dialects the reference client speaks.
//
// Values only; no I/O. Safe to use from any thread.
#pragma once

#include <optional>
#include <string_view>

namespace faultline::ref {

enum class Dialect {
  kOpenAiChat,         // "openai-chat": POST /v1/chat/completions
  kAnthropicMessages,  // "anthropic-messages": POST /v1/messages
  kOpenAiResponses,    // "openai-responses": POST /v1/responses
  kGemini,             // "gemini": POST /v1beta/models/{model}:streamGenerateContent?alt=sse |
                       // :generateContent
  kOllama,             // "ollama": POST /api/chat, newline-delimited JSON
};

// Whether the dialect streams newline-delimited JSON (Ollama) rather than Server-Sent Events.
bool StreamsNdjson(Dialect dialect);

std::string_view ToString(Dialect dialect);
std::optional<Dialect> ParseDialect(std::string_view text);

}  // namespace faultline::ref
