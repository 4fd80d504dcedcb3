#include "reference_impl/stream_error_class.h"

#include <array>
#include <string>
#include <utility>

#include "reference_impl/ascii_text.h"

namespace faultline::ref {
namespace {

using ascii::Contains;
using ascii::Lowercase;

constexpr ProviderErrorClass kRateLimit{FailureCode::kRateLimit, FailureClass::kRateLimit, true};
constexpr ProviderErrorClass kQuota{FailureCode::kQuota, FailureClass::kQuota, false};
constexpr ProviderErrorClass kServer{FailureCode::kServer, FailureClass::kProviderUnavailable,
                                     true};
constexpr ProviderErrorClass kOverloaded{FailureCode::kOverloaded,
                                         FailureClass::kProviderOverloaded, true};
constexpr ProviderErrorClass kUnavailable{FailureCode::kUnavailable,
                                          FailureClass::kProviderUnavailable, true};
constexpr ProviderErrorClass kTimeout{FailureCode::kTimeout, FailureClass::kTimeout, true};
constexpr ProviderErrorClass kInvalid{FailureCode::kInvalidRequest, FailureClass::kInvalidRequest,
                                      false};
constexpr ProviderErrorClass kContext{FailureCode::kContextWindowExceeded,
                                      FailureClass::kContextOverflow, false};
constexpr ProviderErrorClass kAuth{FailureCode::kAuth, FailureClass::kAuth, false};
constexpr ProviderErrorClass kSafety{FailureCode::kContentFilter, FailureClass::kSafety, false};

// The strings do not collide between providers, so one table serves every dialect: an
// OpenAI-compatible gateway in front of Claude may well send "overloaded_error" in an OpenAI
// envelope, and it still means 529.
constexpr std::array<std::pair<std::string_view, ProviderErrorClass>, 58> kTable{{
    // Anthropic error.type (https://docs.anthropic.com/en/api/errors).
    {"invalid_request_error", kInvalid},
    {"authentication_error", kAuth},
    {"permission_error", kAuth},
    {"billing_error", kQuota},
    {"not_found_error", kInvalid},
    {"request_too_large", kInvalid},
    {"rate_limit_error", kRateLimit},
    {"api_error", kServer},
    {"timeout_error", kTimeout},
    {"overloaded_error", kOverloaded},
    // OpenAI error.type / error.code.
    {"server_error", kServer},
    {"internal_error", kServer},
    {"rate_limit_exceeded", kRateLimit},
    {"requests", kRateLimit},
    {"tokens", kRateLimit},
    {"insufficient_quota", kQuota},
    {"billing_hard_limit_reached", kQuota},
    {"enforced_spend_limit_reached", kQuota},  // Anthropic error.details.error_code
    {"context_length_exceeded", kContext},
    {"string_above_max_length", kInvalid},
    {"invalid_api_key", kAuth},
    {"invalid_authentication", kAuth},
    {"permission_denied", kAuth},
    {"model_not_found", kInvalid},
    {"not_found", kInvalid},
    {"invalid_prompt", kInvalid},
    {"unsupported_parameter", kInvalid},
    {"invalid_value", kInvalid},
    {"engine_overloaded", kOverloaded},
    {"overloaded", kOverloaded},
    {"service_unavailable", kUnavailable},
    {"unavailable", kUnavailable},
    {"timeout", kTimeout},
    {"vector_store_timeout", kTimeout},
    {"content_filter", kSafety},
    {"content_policy_violation", kSafety},
    // Google's google.rpc.Status `status` (Gemini), upper case.
    {"INVALID_ARGUMENT", kInvalid},
    {"FAILED_PRECONDITION", kInvalid},
    {"NOT_FOUND", kInvalid},
    {"UNAUTHENTICATED", kAuth},
    {"PERMISSION_DENIED", kAuth},
    {"RESOURCE_EXHAUSTED", kRateLimit},
    {"INTERNAL", kServer},
    {"UNAVAILABLE", kUnavailable},
    {"DEADLINE_EXCEEDED", kTimeout},
    // Bedrock's modelled exceptions, in the lower camel case of the stream's union (the HTTP
    // x-amzn-ErrorType's upper camel case is looked up the same way: BedrockTypeName).
    {"throttlingException", kRateLimit},
    {"serviceQuotaExceededException", kQuota},
    {"serviceUnavailableException", kUnavailable},
    {"modelNotReadyException", kUnavailable},
    {"internalServerException", kServer},
    {"modelStreamErrorException", kServer},
    {"modelErrorException", kServer},
    {"modelTimeoutException", kTimeout},
    {"validationException", kInvalid},
    {"accessDeniedException", kAuth},
    {"unrecognizedClientException", kAuth},
    {"expiredTokenException", kAuth},
    {"resourceNotFoundException", kInvalid},
}};

// "ThrottlingException" -> "throttlingException": Bedrock names a type in upper camel case over
// HTTP and in lower camel case inside a stream.
std::string BedrockTypeName(std::string_view text) {
  std::string out(text);
  if (!out.empty() && out[0] >= 'A' && out[0] <= 'Z')
    out[0] = static_cast<char>(out[0] - 'A' + 'a');
  return out;
}

}  // namespace

bool SaysModelOverloaded(std::string_view message) {
  const std::string text = Lowercase(message);
  return Contains(text, "currently overloaded") || Contains(text, "model is overloaded") ||
         Contains(text, "too many connections");
}

bool SaysContextOverflow(std::string_view message) {
  const std::string text = Lowercase(message);
  return (Contains(text, "maximum context length is") && Contains(text, "tokens")) ||
         (Contains(text, "prompt is too long") && Contains(text, "tokens")) ||
         Contains(text, "exceed context limit") || Contains(text, "exceeds the context window") ||
         Contains(text, "context_length_exceeded") ||
         Contains(text, "exceeds the maximum number of tokens allowed") ||
         Contains(text, "exceeds the context length") || Contains(text, "input is too long") ||
         Contains(text, "too many input tokens");
}

bool SaysQuotaExhausted(std::string_view message) {
  const std::string text = Lowercase(message);
  return Contains(text, "exceeded your current quota") ||
         Contains(text, "credit balance is too low") || Contains(text, "insufficient balance") ||
         Contains(text, "insufficient_quota");
}

std::optional<ProviderErrorClass> ClassifyStreamError(Dialect dialect, std::string_view type,
                                                      std::string_view code,
                                                      std::string_view message) {
  std::optional<ProviderErrorClass> known = ClassifyProviderError(dialect, type, code);
  // Ollama's error line is a bare string that names no kind: the server failed mid-answer, which
  // is its HTTP 500.
  if (!known && dialect == Dialect::kOllama && type.empty() && code.empty()) return kServer;
  if (!known) return known;
  const bool server =
      known->code == FailureCode::kServer || known->code == FailureCode::kUnavailable;
  if (server && SaysModelOverloaded(message)) return kOverloaded;
  if (known->code == FailureCode::kInvalidRequest && SaysContextOverflow(message)) return kContext;
  if (known->code == FailureCode::kRateLimit && SaysQuotaExhausted(message)) return kQuota;
  return known;
}

std::optional<ProviderErrorClass> ClassifyProviderErrorString(Dialect dialect,
                                                              std::string_view text) {
  const std::string bedrock_name =
      dialect == Dialect::kBedrockConverse ? BedrockTypeName(text) : std::string();
  if (!bedrock_name.empty()) text = bedrock_name;
  for (const auto& [name, result] : kTable) {
    if (name == text) return result;
  }
  return std::nullopt;
}

std::optional<ProviderErrorClass> ClassifyProviderError(Dialect dialect, std::string_view type,
                                                        std::string_view code) {
  if (!code.empty()) {
    if (auto by_code = ClassifyProviderErrorString(dialect, code)) return by_code;
  }
  if (!type.empty()) return ClassifyProviderErrorString(dialect, type);
  return std::nullopt;
}

}  // namespace faultline::ref
