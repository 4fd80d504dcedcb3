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
    case Dialect::kBedrockConverse:
      return "bedrock-converse";
  }
  return "openai-chat";
}

StreamFraming StreamFramingOf(Dialect dialect) {
  switch (dialect) {
    case Dialect::kOllama:
      return StreamFraming::kNdjson;
    case Dialect::kBedrockConverse:
      return StreamFraming::kEventStream;
    default:
      return StreamFraming::kSse;
  }
}

std::string_view StreamMediaType(Dialect dialect) {
  switch (StreamFramingOf(dialect)) {
    case StreamFraming::kNdjson:
      return "application/x-ndjson";
    case StreamFraming::kEventStream:
      return "application/vnd.amazon.eventstream";
    case StreamFraming::kSse:
      break;
  }
  return "text/event-stream";
}

std::span<const Dialect> AllDialects() {
  static constexpr Dialect kAll[] = {Dialect::kOpenAiChat,      Dialect::kAnthropicMessages,
                                     Dialect::kOpenAiResponses, Dialect::kGemini,
                                     Dialect::kOllama,          Dialect::kBedrockConverse};
  return kAll;
}

std::optional<Dialect> ParseDialect(std::string_view text) {
  for (Dialect dialect : AllDialects()) {
    if (ToString(dialect) == text) return dialect;
  }
  return std::nullopt;
}

}  // namespace faultline::ref
