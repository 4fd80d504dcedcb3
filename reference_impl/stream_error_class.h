// Maps a provider's error `type` / `code` string to the failure taxonomy
// (docs/failure-taxonomy.md).
//
// The same strings appear in HTTP error bodies and in errors sent inside a 200 stream (an OpenAI
// `{"error":{...}}` envelope, Anthropic `event: error`, Responses `response.failed` / `error`). A
// mid-stream error must be classified exactly like its HTTP twin, so both the stream assembler and
// the HTTP classifier use this one table: in-stream `overloaded_error` is OVERLOADED, like 529.
//
// Pure functions over constant tables; safe from any thread.
#pragma once

#include <optional>
#include <string_view>

#include "reference_impl/dialect.h"
#include "reference_impl/failure.h"

namespace faultline::ref {

struct ProviderErrorClass {
  FailureCode code = FailureCode::kUnknown;
  FailureClass failure_class = FailureClass::kUnknown;
  bool retryable = false;
  friend bool operator==(const ProviderErrorClass&, const ProviderErrorClass&) = default;
};

// Classifies one error string: an Anthropic `error.type` ("overloaded_error", "rate_limit_error",
// "api_error", ...), an OpenAI `error.type` or `error.code` ("server_error",
// "rate_limit_exceeded", "insufficient_quota", "context_length_exceeded", ...) or a Responses
// `error.code`. Returns nullopt for strings it does not know (the caller then falls back to the
// HTTP status, or to UNKNOWN for an in-stream error).
std::optional<ProviderErrorClass> ClassifyProviderErrorString(Dialect dialect,
                                                              std::string_view text);

// Classifies an error object that carries both a `type` and a `code` (either may be empty): the
// code is more specific and wins when known (OpenAI sends {"type":"invalid_request_error",
// "code":"context_length_exceeded"} and {"type":"requests","code":"rate_limit_exceeded"}).
std::optional<ProviderErrorClass> ClassifyProviderError(Dialect dialect, std::string_view type,
                                                        std::string_view code);

// An error inside a stream, which has no status: the table's class of its type and code, refined
// by its words the way an HTTP error's body refines its status (classify.h) — a model-overloaded
// wording makes a server or unavailable error OVERLOADED (Gemini's in-stream overload is an
// UNAVAILABLE "The model is overloaded"), a context wording makes an invalid request a context
// overflow (Bedrock's in-stream validationException "Input is too long…"), a quota wording makes
// a rate limit QUOTA. Ollama's error line names no kind at all: it is SERVER, like the 500 it
// stands for.
std::optional<ProviderErrorClass> ClassifyStreamError(Dialect dialect, std::string_view type,
                                                      std::string_view code,
                                                      std::string_view message);

// The wordings, case-insensitive, shared with the HTTP classifier:
// "That model is currently overloaded" (OpenAI's per-model 503), "The model is overloaded"
// (Gemini's 503) and "Too many connections" (Bedrock's 503); not OpenAI's generic "The server is
// overloaded or not ready yet", which also covers deploys.
bool SaysModelOverloaded(std::string_view message);
// A context window's wording: OpenAI's, DeepSeek's, Anthropic's two, Gemini's, Ollama's and
// Bedrock's ("Input is too long for requested model.", "Too many input tokens").
bool SaysContextOverflow(std::string_view message);
// "exceeded your current quota" (OpenAI; Gemini's daily quota), "credit balance is too low"
// (Anthropic), "insufficient balance" (DeepSeek), "insufficient_quota".
bool SaysQuotaExhausted(std::string_view message);

}  // namespace faultline::ref
