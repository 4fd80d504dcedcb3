#include "scenarios/scenario.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "fmt/format.h"

namespace faultline::scenario {
namespace {

constexpr std::array<std::pair<Dialect, std::string_view>, 6> kDialectNames = {{
    {Dialect::kOpenAiChat, "openai-chat"},
    {Dialect::kAnthropicMessages, "anthropic-messages"},
    {Dialect::kOpenAiResponses, "openai-responses"},
    {Dialect::kGemini, "gemini"},
    {Dialect::kOllama, "ollama"},
    {Dialect::kBedrockConverse, "bedrock-converse"},
}};

constexpr std::array<Dialect, kDialectNames.size()> kAllDialects = [] {
  std::array<Dialect, kDialectNames.size()> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = kDialectNames[i].first;
  return out;
}();

struct ErrorKindInfo {
  ErrorKind kind;
  std::string_view name;
  int status;
};

// One row per ErrorKind. DefaultErrorKind takes the first row with a given status, so the row
// order decides which kind a bare 400 or 429 means (the plain one, not the special case).
constexpr std::array<ErrorKindInfo, 16> kErrorKinds = {{
    {ErrorKind::kInvalidRequest, "invalid_request", 400},
    {ErrorKind::kContextWindow, "context_window", 400},
    {ErrorKind::kAuth, "auth", 401},
    {ErrorKind::kPermission, "permission", 403},
    {ErrorKind::kNotFound, "not_found", 404},
    {ErrorKind::kRequestTimeout, "request_timeout", 408},
    {ErrorKind::kConflict, "conflict", 409},
    {ErrorKind::kTooLarge, "too_large", 413},
    {ErrorKind::kUnprocessable, "unprocessable", 422},
    {ErrorKind::kRateLimit, "rate_limit", 429},
    {ErrorKind::kQuota, "quota", 429},
    {ErrorKind::kServer, "server", 500},
    {ErrorKind::kBadGateway, "bad_gateway", 502},
    {ErrorKind::kUnavailable, "unavailable", 503},
    {ErrorKind::kGatewayTimeout, "gateway_timeout", 504},
    {ErrorKind::kOverloaded, "overloaded", 529},
}};

const ErrorKindInfo* FindErrorKind(ErrorKind kind) {
  for (const ErrorKindInfo& info : kErrorKinds) {
    if (info.kind == kind) return &info;
  }
  return nullptr;
}

}  // namespace

std::string_view ToString(Dialect dialect) {
  for (const auto& [value, name] : kDialectNames) {
    if (value == dialect) return name;
  }
  return "unknown";
}

std::span<const Dialect> AllDialects() { return kAllDialects; }

std::string DialectNames() {
  std::string out;
  for (const auto& [value, name] : kDialectNames) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
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

std::optional<Dialect> ParseDialect(std::string_view text) {
  for (const auto& [value, name] : kDialectNames) {
    if (name == text) return value;
  }
  return std::nullopt;
}

bool SpoilsStream(const EventFault& fault) {
  return fault.kind != EventFault::Kind::kDelay &&
         !(fault.kind == EventFault::Kind::kStall && !fault.wait.forever);
}

std::string_view ToString(EventFault::Kind kind) {
  switch (kind) {
    case EventFault::Kind::kDelay:
      return "delay";
    case EventFault::Kind::kStall:
      return "stall";
    case EventFault::Kind::kInvalidJson:
      return "invalid_json";
    case EventFault::Kind::kWrongShape:
      return "wrong_shape";
    case EventFault::Kind::kTwoObjects:
      return "two_objects";
    case EventFault::Kind::kErrorEnvelope:
      return "error_envelope";
    case EventFault::Kind::kProviderError:
      return "provider_error";
    case EventFault::Kind::kSequenceGap:
      return "sequence_gap";
    case EventFault::Kind::kRaw:
      break;
  }
  return "raw";
}

std::string_view ToString(Termination::Kind kind) {
  switch (kind) {
    case Termination::Kind::kDone:
      return "done";
    case Termination::Kind::kNoTerminator:
      return "no_terminator";
    case Termination::Kind::kNoFinalChunk:
      return "no_final_chunk";
    case Termination::Kind::kClose:
      return "close";
    case Termination::Kind::kReset:
      return "reset";
    case Termination::Kind::kStall:
      break;
  }
  return "stall";
}

std::string_view ToString(ErrorKind kind) {
  const ErrorKindInfo* info = FindErrorKind(kind);
  return info != nullptr ? info->name : "unknown";
}

std::optional<ErrorKind> ParseErrorKind(std::string_view text) {
  for (const ErrorKindInfo& info : kErrorKinds) {
    if (info.name == text) return info.kind;
  }
  return std::nullopt;
}

int DefaultStatus(ErrorKind kind) {
  const ErrorKindInfo* info = FindErrorKind(kind);
  return info != nullptr ? info->status : 500;
}

ErrorKind DefaultErrorKind(int status) {
  for (const ErrorKindInfo& info : kErrorKinds) {
    if (info.status == status) return info.kind;
  }
  // Statuses no provider documents: a 5xx is a server fault, anything else a bad request.
  return status >= 500 ? ErrorKind::kServer : ErrorKind::kInvalidRequest;
}

const ResponseSpec& ResponseForAttempt(const Scenario& scenario, int attempt) {
  static const ResponseSpec kDefault;
  if (scenario.responses.empty()) return kDefault;  // the loader never lets this happen
  std::int64_t first_attempt = 1;                   // the first attempt the current entry answers
  for (const ResponseSpec& entry : scenario.responses) {
    if (entry.repeat == 0) return entry;  // answers every remaining attempt
    if (attempt < first_attempt + entry.repeat) return entry;
    first_attempt += entry.repeat;
  }
  return scenario.responses.back();
}

LoadError PolicySpec::ErrorAt(std::string_view file, std::string_view root, std::string_view path,
                              std::string message) const {
  const std::string shown = root.empty()   ? std::string(path)
                            : path.empty() ? std::string(root)
                                           : fmt::format("{}.{}", root, path);
  std::string place(path);
  for (;;) {
    const auto found = std::ranges::find(positions, place, &Position::path);
    if (found != positions.end()) {
      return LoadError{.file = std::string(file),
                       .line = found->line,
                       .column = found->column,
                       .path = shown,
                       .message = std::move(message)};
    }
    if (place.empty()) break;
    const std::size_t cut = place.find_last_of(".[");
    place.resize(cut == std::string::npos ? 0 : cut);
  }
  return LoadError{.file = std::string(file), .path = shown, .message = std::move(message)};
}

}  // namespace faultline::scenario
