#include "reference_impl/dialect.h"

namespace faultline::ref {

std::string_view ToString(Dialect dialect) {
  switch (dialect) {
    case Dialect::kOpenAiChat:
      return "openai-chat";
    case Dialect::kAnthropicMessages:
      return "anthropic-messages";
    case Dialect::kOpenAiResponses:
      return "openai-responses";
    case Dialect::kGemini:
      return "gemini";
    case Dialect::kOllama:
      return "ollama";
  }
  return "openai-chat";
}

bool StreamsNdjson(Dialect dialect) { return dialect == Dialect::kOllama; }

std::optional<Dialect> ParseDialect(std::string_view text) {
  for (Dialect dialect : {Dialect::kOpenAiChat, Dialect::kAnthropicMessages,
                          Dialect::kOpenAiResponses, Dialect::kGemini, Dialect::kOllama}) {
    if (ToString(dialect) == text) return dialect;
  }
  return std::nullopt;
}

}  // namespace faultline::ref
