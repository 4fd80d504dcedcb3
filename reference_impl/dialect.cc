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
  }
  return "openai-chat";
}

std::optional<Dialect> ParseDialect(std::string_view text) {
  for (Dialect dialect :
       {Dialect::kOpenAiChat, Dialect::kAnthropicMessages, Dialect::kOpenAiResponses}) {
    if (ToString(dialect) == text) return dialect;
  }
  return std::nullopt;
}

}  // namespace faultline::ref
