// Helpers shared by the dialect writers (dialect_*.cc). Not part of the provider's public API.
//
// Everything here is a pure function of its arguments: no clocks, no globals besides constants.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/wire/dialect.h"
#include "scenarios/scenario.h"

namespace faultline::provider::dialect_internal {

// Keys stay in insertion order so payloads read like the providers' own.
using Json = nlohmann::ordered_json;

// The writer singletons, defined in their dialect's .cc.
const DialectWriter& OpenAiChatWriter();
const DialectWriter& AnthropicWriter();
const DialectWriter& OpenAiResponsesWriter();
const DialectWriter& GeminiWriter();
const DialectWriter& OllamaWriter();
const DialectWriter& BedrockWriter();

// `end: {kind: done, after_event: N}`: the events from N up to the terminator are left out, so
// the terminator comes right after event N-1 (and whatever faults are injected after it). Output
// that is left out no longer counts as shown. A stream without such an end is left as it is.
void SkipToTerminator(const scenario::Termination& end, StreamEvents& stream);

// Tool-call arguments as the object the providers that send whole calls put on the wire
// (Anthropic's `input`, Gemini's `args`, Ollama's `arguments`); arguments that are not JSON stay
// a string, so that a malformed call still reaches the client as the scenario wrote it.
Json ArgumentsObject(const std::string& arguments);

// Compact one-line JSON. Invalid UTF-8 in scenario strings is replaced, never thrown on.
std::string Dump(const Json& value);

// A deterministic stream of pseudo-random characters for ids: splitmix64 seeded from
// (seed, attempt, now, salt). Different salts give independent ids for the same attempt.
class IdSource {
 public:
  IdSource(std::uint64_t seed, int attempt, WallTime now, std::string_view salt);
  std::string Base62(std::size_t length);
  std::string Hex(std::size_t length);

 private:
  // `length` characters of `alphabet` (a string literal), one draw each.
  template <std::size_t N>
  std::string Draw(const char (&alphabet)[N], std::size_t length);
  std::uint64_t state_;
};

// `created` seconds: now, kept to exactly 10 digits (clamped into 2001-09-09 .. 2286-11-20).
std::int64_t CreatedSeconds(WallTime now);

// Splits UTF-8 text into pieces of `code_points` characters each (the last may be shorter),
// never inside a character. Empty text gives no pieces.
std::vector<std::string> SplitCodePoints(std::string_view text, int code_points);
// Splits into pieces of at least `bytes` bytes, extended to the next character boundary so that
// no multi-byte UTF-8 character is ever cut. Empty text gives no pieces.
std::vector<std::string> SplitBytes(std::string_view text, int bytes);

// Go's time.Duration.String(): "1s", "6m0s", "59.6s", "120ms", "1h0m0s", "0s".
std::string GoDuration(scenario::Duration duration);
// RFC 3339 UTC with second precision, rounded up: "2024-06-13T19:11:20Z".
std::string Rfc3339(WallTime instant);

// The 502 an nginx in front of the provider sends: text/plain.
Body BadGatewayBody();

// Context-window messages in each provider's words, with fixed plausible token counts.
inline constexpr std::string_view kOpenAiContextMessage =
    "This model's maximum context length is 128000 tokens. However, your messages resulted in "
    "131245 tokens. Please reduce the length of the messages.";
inline constexpr std::string_view kDeepSeekContextMessage =
    "This model's maximum context length is 131072 tokens. However, you requested 140316 tokens "
    "(139292 in the messages, 1024 in the completion). Please reduce the length of the messages "
    "or completion.";
inline constexpr std::string_view kAnthropicPromptTooLongMessage =
    "prompt is too long: 204817 tokens > 200000 maximum";
inline constexpr std::string_view kAnthropicExceedContextLimitMessage =
    "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000, decrease input "
    "length or `max_tokens` and try again";
inline constexpr std::string_view kResponsesContextMessage =
    "Your input exceeds the context window of this model. Please adjust your input and try "
    "again.";
// The message for an explicit wording; kDialect gives `dialect_message`.
std::string_view ContextMessage(scenario::ContextWording wording, std::string_view dialect_message);

// The OpenAI error object {"message","type","param","code"} for a kind; `model` fills the
// wordings that name it, `context_message` is the dialect's own context-window wording.
struct OpenAiErrorWords {
  std::string_view model;
  std::string_view context_message;  // the dialect's own context-window wording
  std::string_view context_param;    // "messages" | "input"
};
Json OpenAiErrorObject(const scenario::ErrorSpec& error, const OpenAiErrorWords& words);
// The whole non-2xx body in OpenAI's shape ({"error":{…}}), or the 502 text.
Body OpenAiErrorBody(const scenario::ErrorSpec& error, const OpenAiErrorWords& words);

// OpenAI `x-ratelimit-*` headers (shared by Chat Completions and Responses).
void AppendOpenAiRateLimitHeaders(const scenario::RateLimitHeaders& limits,
                                  std::vector<scenario::Header>& out);

}  // namespace faultline::provider::dialect_internal
