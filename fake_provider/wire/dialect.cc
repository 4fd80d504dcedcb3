// WriterFor, EstimateTokens, the DialectWriter defaults and the helpers the writers share:
// deterministic ids, UTF-8 aware splitting, Go durations, RFC 3339 instants and OpenAI-shaped
// errors (Chat Completions and Responses use the same error envelope).
#include "fake_provider/wire/dialect.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/wire/dialect_internal.h"
#include "hashing/fnv1a.h"
#include "scenarios/scenario.h"

namespace faultline::provider {

using scenario::ErrorKind;

const DialectWriter& WriterFor(scenario::Dialect dialect) {
  switch (dialect) {
    case scenario::Dialect::kOpenAiChat:
      return dialect_internal::OpenAiChatWriter();
    case scenario::Dialect::kAnthropicMessages:
      return dialect_internal::AnthropicWriter();
    case scenario::Dialect::kOpenAiResponses:
      return dialect_internal::OpenAiResponsesWriter();
    case scenario::Dialect::kGemini:
      return dialect_internal::GeminiWriter();
    case scenario::Dialect::kOllama:
      return dialect_internal::OllamaWriter();
    case scenario::Dialect::kBedrockConverse:
      return dialect_internal::BedrockWriter();
  }
  return dialect_internal::OpenAiChatWriter();
}

std::optional<scenario::Dialect> DialectOfTarget(std::string_view path, std::string_view query) {
  for (scenario::Dialect dialect : scenario::AllDialects()) {
    if (WriterFor(dialect).ReadTarget(path, query) != DialectWriter::TargetKind::kNotServed) {
      return dialect;
    }
  }
  return std::nullopt;
}

int EstimateTokens(std::string_view text) {
  if (text.empty()) return 0;
  return std::max<int>(1, static_cast<int>((text.size() + 3) / 4));
}

SseEvent DialectWriter::StreamErrorFor(const scenario::Content& content, std::size_t fault_index,
                                       const ResponseIds& ids) const {
  const scenario::EventFault& fault = content.faults.at(fault_index);
  if (fault.kind != scenario::EventFault::Kind::kErrorEnvelope) {
    return StreamError(fault.error, fault.shape, ids);
  }
  // The OpenAI-style envelope, whatever the dialect: what proxies and gateways inject.
  const dialect_internal::OpenAiErrorWords words{
      default_model(), dialect_internal::kOpenAiContextMessage, "messages"};
  dialect_internal::Json envelope;
  envelope["error"] = dialect_internal::OpenAiErrorObject(fault.error, words);
  return {"", dialect_internal::Dump(envelope)};
}

SseEvent MalformedEvent(scenario::EventFault::Kind kind, const SseEvent* neighbour,
                        const DialectWriter& writer) {
  // The data of an injected invalid-JSON event: an object cut off mid-value.
  constexpr std::string_view kInvalidJson = R"({"faultline":"invalid-json","truncated":)";
  constexpr std::string_view kFallbackTwoObjects = R"({"a":1}{"b":2})";
  const std::string name = neighbour != nullptr ? neighbour->name : std::string();
  switch (kind) {
    case scenario::EventFault::Kind::kWrongShape:
      return writer.WrongShape();
    case scenario::EventFault::Kind::kTwoObjects:
      if (neighbour == nullptr) return {"", std::string(kFallbackTwoObjects)};
      return {name, neighbour->data + neighbour->data};
    default:  // kInvalidJson
      return {name, std::string(kInvalidJson)};
  }
}

DialectWriter::TargetKind DialectWriter::ReadTarget(std::string_view path,
                                                    std::string_view /*query*/) const {
  return path == endpoint_path() ? TargetKind::kBodyDecides : TargetKind::kNotServed;
}

Body DialectWriter::ErrorWithIds(const scenario::ErrorSpec& error, int status,
                                 const ResponseIds& /*ids*/) const {
  return Error(error, status);
}

namespace dialect_internal {
namespace {

// splitmix64: the state advances by this step, and each draw is the state mixed.
constexpr std::uint64_t kIdSourceStep = 0x9e3779b97f4a7c15ULL;

std::uint64_t Mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The byte length of the UTF-8 character that starts with `lead` (1 for stray bytes).
std::size_t CharLength(unsigned char lead) {
  if (lead >= 0xF0 && lead <= 0xF7) return 4;
  if (lead >= 0xE0) return lead <= 0xEF ? 3 : 1;
  if (lead >= 0xC0) return 2;
  return 1;
}

bool IsContinuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// "59.6" for value=59600 with unit=1000: the integer part and the fraction without trailing zeros.
std::string WithFraction(std::int64_t value, std::int64_t unit) {
  std::string text = std::to_string(value / unit);
  std::int64_t fraction = value % unit;
  if (fraction == 0) return text;
  std::string digits = std::to_string(unit + fraction).substr(1);  // zero-padded
  digits.erase(digits.find_last_not_of('0') + 1);
  return text + "." + digits;
}

}  // namespace

void SkipToTerminator(const scenario::Termination& end, StreamEvents& stream) {
  if (end.kind != scenario::Termination::Kind::kDone || !end.after_event) return;
  const auto cut = static_cast<std::size_t>(std::max(0, *end.after_event));
  if (cut >= stream.terminator) return;
  const auto first = stream.events.begin();
  stream.events.erase(first + static_cast<std::ptrdiff_t>(cut),
                      first + static_cast<std::ptrdiff_t>(stream.terminator));
  stream.terminator = cut;
  if (stream.first_output && *stream.first_output >= cut) stream.first_output.reset();
}

Json ArgumentsObject(const std::string& arguments) {
  Json parsed = Json::parse(arguments, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? Json(arguments) : parsed;
}

std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

IdSource::IdSource(std::uint64_t seed, int attempt, WallTime now, std::string_view salt)
    : state_(Mix(seed ^ hashing::Fnv1a64(salt))) {
  state_ = Mix(state_ + static_cast<std::uint64_t>(attempt));
  state_ = Mix(state_ + static_cast<std::uint64_t>(now.time_since_epoch().count()));
}

template <std::size_t N>
std::string IdSource::Draw(const char (&alphabet)[N], std::size_t length) {
  // Ids are drawn at every request. The writers put a prefix before them ("chatcmpl-" +
  // Base62(29)), which the room reserved here takes without allocating again.
  constexpr std::size_t kPrefixRoom = 16;
  // The alphabet's size is a constant (N - 1, without its NUL), so the remainder below is a
  // multiplication rather than a division per character, and the state stays in a register
  // (the characters written could alias the member).
  constexpr std::size_t kSize = N - 1;
  std::string out;
  out.reserve(length + kPrefixRoom);
  out.resize(length);
  std::uint64_t state = state_;
  for (char& c : out) {
    state += kIdSourceStep;
    c = alphabet[Mix(state) % kSize];
  }
  state_ = state;
  return out;
}

std::string IdSource::Base62(std::size_t length) {
  return Draw("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", length);
}

std::string IdSource::Hex(std::size_t length) { return Draw("0123456789abcdef", length); }

std::int64_t CreatedSeconds(WallTime now) {
  std::int64_t seconds = std::chrono::floor<std::chrono::seconds>(now).time_since_epoch().count();
  return std::clamp<std::int64_t>(seconds, 1'000'000'000, 9'999'999'999);
}

std::vector<std::string> SplitCodePoints(std::string_view text, int code_points) {
  std::vector<std::string> pieces;
  const int per_piece = std::max(1, code_points);
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = at;
    for (int i = 0; i < per_piece && end < text.size(); ++i) {
      end = std::min(text.size(), end + CharLength(static_cast<unsigned char>(text[end])));
    }
    pieces.emplace_back(text.substr(at, end - at));
    at = end;
  }
  return pieces;
}

std::vector<std::string> SplitBytes(std::string_view text, int bytes) {
  std::vector<std::string> pieces;
  const std::size_t per_piece = static_cast<std::size_t>(std::max(1, bytes));
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = std::min(text.size(), at + per_piece);
    while (end < text.size() && IsContinuation(static_cast<unsigned char>(text[end]))) ++end;
    pieces.emplace_back(text.substr(at, end - at));
    at = end;
  }
  return pieces;
}

std::string GoDuration(scenario::Duration duration) {
  using std::chrono::microseconds;
  std::int64_t us = duration.count();
  if (us == 0) return "0s";
  std::string sign = us < 0 ? "-" : "";
  std::uint64_t magnitude = us < 0 ? 0 - static_cast<std::uint64_t>(us) : us;
  auto value = static_cast<std::int64_t>(std::min<std::uint64_t>(magnitude, INT64_MAX));
  if (value < 1000) return sign + std::to_string(value) + "\u00b5s";
  if (value < 1'000'000) return sign + WithFraction(value, 1000) + "ms";
  const std::int64_t minute = 60'000'000, hour = 60 * minute;
  std::string seconds = WithFraction(value % minute, 1'000'000) + "s";
  if (value < minute) return sign + seconds;
  std::string minutes = std::to_string((value % hour) / minute) + "m";
  if (value < hour) return sign + minutes + seconds;
  return sign + std::to_string(value / hour) + "h" + minutes + seconds;
}

std::string Rfc3339(WallTime instant) {
  using namespace std::chrono;
  const sys_seconds whole = ceil<seconds>(instant);
  const sys_days day = floor<days>(whole);
  const year_month_day date{day};
  const hh_mm_ss time{whole - day};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                     time.hours().count(), time.minutes().count(), time.seconds().count());
}

Body BadGatewayBody() {
  return {"text/plain",
          "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
          "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
          "</body>\r\n</html>\r\n"};
}

std::string_view ContextMessage(scenario::ContextWording wording,
                                std::string_view dialect_message) {
  switch (wording) {
    case scenario::ContextWording::kOpenAi:
      return kOpenAiContextMessage;
    case scenario::ContextWording::kDeepSeek:
      return kDeepSeekContextMessage;
    case scenario::ContextWording::kAnthropicPromptTooLong:
      return kAnthropicPromptTooLongMessage;
    case scenario::ContextWording::kAnthropicExceedContextLimit:
      return kAnthropicExceedContextLimitMessage;
    case scenario::ContextWording::kDialect:
      break;
  }
  return dialect_message;
}

namespace {

// One OpenAI error object before the scenario's message override.
struct OpenAiError {
  std::string type;
  Json code;   // a string, null, or (Cloudflare's gateway errors) the status as a number
  Json param;  // a string or null
  std::string message;
};

OpenAiError ContextWindowError(scenario::ContextWording wording, const OpenAiErrorWords& words) {
  if (wording == scenario::ContextWording::kDeepSeek) {
    // DeepSeek reuses the type as the code: clients matching on the code miss it.
    return {"invalid_request_error", "invalid_request_error", nullptr,
            std::string(kDeepSeekContextMessage)};
  }
  return {"invalid_request_error", "context_length_exceeded", std::string(words.context_param),
          std::string(ContextMessage(wording, words.context_message))};
}

// The 4xx kinds other than the rate and quota limits.
bool IsClientError(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidRequest:
    case ErrorKind::kAuth:
    case ErrorKind::kPermission:
    case ErrorKind::kNotFound:
    case ErrorKind::kRequestTimeout:
    case ErrorKind::kConflict:
    case ErrorKind::kTooLarge:
    case ErrorKind::kUnprocessable:
      return true;
    default:
      return false;
  }
}

OpenAiError ClientError(ErrorKind kind, const OpenAiErrorWords& words) {
  const std::string param(words.context_param);
  switch (kind) {
    case ErrorKind::kAuth:
      return {"invalid_request_error", "invalid_api_key", nullptr,
              "Incorrect API key provided: sk-fault*****line. You can find your API key at "
              "https://platform.openai.com/account/api-keys."};
    case ErrorKind::kPermission:
      return {"request_forbidden", "unsupported_country_region_territory", nullptr,
              "Country, region, or territory not supported"};
    case ErrorKind::kNotFound:
      return {"invalid_request_error", "model_not_found", nullptr,
              fmt::format("The model `{}` does not exist or you do not have access to it.",
                          words.model)};
    case ErrorKind::kRequestTimeout:
      return {"invalid_request_error", "timeout", nullptr, "Request timed out."};
    case ErrorKind::kConflict:
      return {"invalid_request_error", "conflict", nullptr,
              "Another request with the same idempotency key is still in progress."};
    case ErrorKind::kTooLarge:
      return {"invalid_request_error", "request_too_large", nullptr,
              "Request too large. The request body exceeds the maximum allowed size."};
    case ErrorKind::kUnprocessable:
      return {"invalid_request_error", nullptr, param,
              fmt::format("Invalid '{}': the request could not be processed.", param)};
    default:
      return {"invalid_request_error", "empty_array", param,
              fmt::format("Invalid '{}': empty array. Expected an array with minimum length 1, "
                          "but got an empty array instead.",
                          param)};
  }
}

OpenAiError LimitOrServerError(ErrorKind kind, const OpenAiErrorWords& words) {
  switch (kind) {
    case ErrorKind::kRateLimit:
      return {"requests", "rate_limit_exceeded", nullptr,
              fmt::format("Rate limit reached for {} in organization org-faultline on requests per "
                          "min (RPM): Limit 60, Used 60, Requested 1. Please try again in 1s. "
                          "Visit https://platform.openai.com/account/rate-limits to learn more.",
                          words.model)};
    case ErrorKind::kQuota:
      return {"insufficient_quota", "insufficient_quota", nullptr,
              "You exceeded your current quota, please check your plan and billing details. For "
              "more information on this error, read the docs: "
              "https://platform.openai.com/docs/guides/error-codes/api-errors."};
    case ErrorKind::kBadGateway:
      return {"cf_bad_gateway", 502, nullptr, "Bad gateway."};
    case ErrorKind::kGatewayTimeout:
      return {"cf_gateway_timeout", 504, nullptr, "Gateway timeout."};
    case ErrorKind::kUnavailable:
      return {"server_error", nullptr, nullptr, "The server is overloaded or not ready yet."};
    case ErrorKind::kOverloaded:
      return {"server_error", nullptr, nullptr,
              "That model is currently overloaded with other requests. You can retry your "
              "request, or contact us through our help center at help.openai.com if the error "
              "persists."};
    default:
      return {"server_error", nullptr, nullptr,
              "The server had an error while processing your request. Sorry about that!"};
  }
}

}  // namespace

Json OpenAiErrorObject(const scenario::ErrorSpec& error, const OpenAiErrorWords& words) {
  OpenAiError fields;
  if (error.kind == ErrorKind::kContextWindow) {
    fields = ContextWindowError(error.wording, words);
  } else if (IsClientError(error.kind)) {
    fields = ClientError(error.kind, words);
  } else {
    fields = LimitOrServerError(error.kind, words);
  }
  Json object;
  object["message"] = error.message.value_or(fields.message);
  object["type"] = fields.type;
  object["param"] = fields.param;
  object["code"] = fields.code;
  return object;
}

Body OpenAiErrorBody(const scenario::ErrorSpec& error, const OpenAiErrorWords& words) {
  if (error.kind == ErrorKind::kBadGateway) {
    Body body = BadGatewayBody();
    if (error.message) body.bytes = *error.message;
    return body;
  }
  Json envelope;
  envelope["error"] = OpenAiErrorObject(error, words);
  return {"application/json", Dump(envelope)};
}

void AppendOpenAiRateLimitHeaders(const scenario::RateLimitHeaders& limits,
                                  std::vector<scenario::Header>& out) {
  out.push_back({"x-ratelimit-limit-requests", std::to_string(limits.requests_limit)});
  out.push_back({"x-ratelimit-limit-tokens", std::to_string(limits.tokens_limit)});
  out.push_back({"x-ratelimit-remaining-requests", std::to_string(limits.requests_remaining)});
  out.push_back({"x-ratelimit-remaining-tokens", std::to_string(limits.tokens_remaining)});
  out.push_back({"x-ratelimit-reset-requests", GoDuration(limits.requests_reset)});
  out.push_back({"x-ratelimit-reset-tokens", GoDuration(limits.tokens_reset)});
}

}  // namespace dialect_internal
}  // namespace faultline::provider
