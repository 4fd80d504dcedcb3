// Reading one response entry: status, error body, headers, Retry-After and connection faults.
#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "fmt/format.h"
#include "scenarios/loader_internal.h"
#include "scenarios/loader_keys.h"

namespace faultline::scenario::internal {
namespace {

constexpr int kMaxRepeat = 1'000'000;

std::vector<std::string_view> ErrorKindNames() {
  std::vector<std::string_view> names;
  for (int i = 0; i <= static_cast<int>(ErrorKind::kOverloaded); ++i) {
    names.push_back(ToString(static_cast<ErrorKind>(i)));
  }
  return names;
}

std::optional<ErrorKind> ReadErrorKind(Reader& reader, const Field& field) {
  const std::vector<std::string_view> names = ErrorKindNames();
  std::optional<std::size_t> index = reader.ReadName(field, names);
  if (!index) return std::nullopt;
  return static_cast<ErrorKind>(*index);
}

// A header value given as text or a number, kept verbatim.
std::optional<std::string> ReadHeaderValue(Reader& reader, const Field& field) {
  std::optional<std::string> text = reader.ReadText(field);
  if (text && !IsHeaderSafe(*text)) {
    reader.Fail(field, "expected a header value without line breaks or NUL characters");
    return std::nullopt;
  }
  return text;
}

// delay-seconds as the header would carry it: "2", "-5", "1.5", "9e99". Anything else is `raw`.
bool IsDecimalNumber(std::string_view text) {
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  const std::size_t exponent = text.find_first_of("eE");
  if (exponent != std::string_view::npos) {
    std::string_view power = text.substr(exponent + 1);
    if (!power.empty() && (power.front() == '-' || power.front() == '+')) power.remove_prefix(1);
    if (power.empty() || power.find_first_not_of("0123456789") != std::string_view::npos) {
      return false;
    }
    text = text.substr(0, exponent);
  }
  const std::size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view fraction = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  auto digits = [](std::string_view part) {
    return part.find_first_not_of("0123456789") == std::string_view::npos;
  };
  return !whole.empty() && digits(whole) && digits(fraction) &&
         (dot == std::string_view::npos || !fraction.empty());
}

// Exactly one of `choices` must be present in `map`; returns it.
std::optional<std::string_view> OneOf(Reader& reader, const Map& map,
                                      std::span<const std::string_view> choices) {
  std::optional<std::string_view> found;
  for (std::string_view key : choices) {
    if (!map.Has(key)) continue;
    if (found) {
      reader.Fail(*map.GetKey(key), fmt::format("'{}' and '{}' cannot be combined; give one of: {}",
                                                *found, key, fmt::join(choices, ", ")));
      return std::nullopt;
    }
    found = key;
  }
  if (!found) {
    reader.Fail(map.self(), fmt::format("expected one of the keys {}", fmt::join(choices, ", ")));
  }
  return found;
}

std::optional<RetryAfter> ReadRetryAfter(Reader& reader, const Field& field) {
  std::optional<Map> map = reader.ReadMap(field, keys::kRetryAfter);
  if (!map) return std::nullopt;
  constexpr std::string_view kForms[] = {"seconds", "http_date", "raw"};
  std::optional<std::string_view> form = OneOf(reader, *map, kForms);
  if (!form) return std::nullopt;
  if (*form != "http_date") {
    RejectKey(reader, *map, "form", "'form' chooses the HTTP-date format; it needs 'http_date'");
  }
  RetryAfter retry_after;
  const Field value = *map->Get(*form);
  if (*form == "http_date") {
    retry_after.form = RetryAfter::Form::kImfFixdate;
    reader.Get(*map, "http_date", &retry_after.date_offset, Sign::kAny);
    reader.GetEnum(*map, "form", keys::kDateFormNames, RetryAfter::Form::kImfFixdate,
                   &retry_after.form);
  } else {
    retry_after.form = *form == "raw" ? RetryAfter::Form::kRaw : RetryAfter::Form::kSeconds;
    if (std::optional<std::string> text = ReadHeaderValue(reader, value)) retry_after.text = *text;
    if (*form == "seconds" && reader.ok() && !IsDecimalNumber(retry_after.text)) {
      reader.Fail(value, fmt::format("expected a number of seconds such as 2 or \"1.5\", got {} "
                                     "(use 'raw' for text that is not a number)",
                                     Describe(value.node)));
    }
  }
  if (!reader.ok()) return std::nullopt;
  return retry_after;
}

std::optional<RateLimitHeaders> ReadRateLimitHeaders(Reader& reader, const Field& field) {
  if (field.node.IsScalar() && Classify(field.node) == ScalarType::kBool) {
    std::optional<bool> enabled = reader.ReadBool(field);
    if (enabled && *enabled) return RateLimitHeaders{};
    return std::nullopt;
  }
  std::optional<Map> map = reader.ReadMap(field, keys::kRateLimitHeaders);
  if (!map) return std::nullopt;
  RateLimitHeaders headers;
  reader.Get(*map, "requests_limit", &headers.requests_limit, 0, kMaxInt);
  reader.Get(*map, "requests_remaining", &headers.requests_remaining, 0, kMaxInt);
  reader.Get(*map, "requests_reset", &headers.requests_reset);
  reader.Get(*map, "tokens_limit", &headers.tokens_limit, 0, kMaxInt);
  reader.Get(*map, "tokens_remaining", &headers.tokens_remaining, 0, kMaxInt);
  reader.Get(*map, "tokens_reset", &headers.tokens_reset);
  if (!reader.ok()) return std::nullopt;
  return headers;
}

std::vector<Header> ReadHeaders(Reader& reader, const Field& field) {
  std::vector<Header> headers;
  std::optional<std::vector<Field>> items = reader.ReadList(field);
  if (!items) return headers;
  for (const Field& item : *items) {
    std::optional<Map> map = reader.ReadMap(item, keys::kHeader);
    if (!map) break;
    Header header;
    if (std::optional<Field> name = reader.Require(*map, "name")) {
      if (std::optional<std::string> text = reader.ReadString(*name)) header.name = *text;
      if (reader.ok() && !IsHeaderName(header.name)) {
        reader.Fail(*name, fmt::format("expected a header name (letters, digits and "
                                       "!#$%&'*+-.^_`|~), got {}",
                                       Describe(name->node)));
      }
    }
    if (std::optional<Field> value = reader.Require(*map, "value")) {
      if (std::optional<std::string> text = ReadHeaderValue(reader, *value)) header.value = *text;
    }
    headers.push_back(std::move(header));
  }
  return headers;
}

// With a connection fault nothing is ever sent, so every key that shapes the response is noise.
void ReadConnection(Reader& reader, const Map& map, ResponseSpec* out) {
  if (!map.Has("connection")) return;
  reader.GetEnum(map, "connection", keys::kConnectionNames, ConnectionFault::kResetBeforeHeaders,
                 &out->connection);
  if (!reader.ok()) return;
  constexpr std::string_view kAllowed[] = {"repeat", "connection", "headers_delay"};
  for (std::string_view key : keys::kResponse) {
    if (std::find(std::begin(kAllowed), std::end(kAllowed), key) != std::end(kAllowed)) continue;
    RejectKey(reader, map, key,
              fmt::format("with 'connection: {}' no response byte is sent, so '{}' has no effect",
                          keys::kConnectionNames[static_cast<int>(out->connection) - 1], key));
  }
}

void ReadStatusAndError(Reader& reader, const Map& map, Dialect dialect, ResponseSpec* out) {
  reader.Get(map, "status", &out->status, 100, 599);
  if (std::optional<Field> field = reader.Present(map, "error")) {
    out->error = ReadError(reader, *field, dialect);
  }
  if (!reader.ok()) return;
  const bool success = out->status >= 200 && out->status <= 299;
  if (out->error && !map.Has("status")) {
    out->status = DefaultStatus(out->error->kind);
  } else if (out->error && success) {
    reader.Fail(*map.GetKey("error"),
                fmt::format("an error needs a non-2xx status, but status is {} (drop 'status' to "
                            "use the error's own, or inject the error into the stream)",
                            out->status));
  } else if (!out->error && !success) {
    out->error.emplace();
    out->error->kind = DefaultErrorKind(out->status);
  }
}

void ReadResponseContent(Reader& reader, const Map& map, Dialect dialect, ResponseSpec* out) {
  if (map.Has("content") && map.Has("stream")) {
    reader.Fail(*map.GetKey("stream"),
                "'stream' is another name for 'content'; give only one of them");
    return;
  }
  std::optional<Field> field = reader.Present(map, map.Has("stream") ? "stream" : "content");
  if (!field) return;
  const Field key = *map.GetKey(map.Has("stream") ? "stream" : "content");
  if (out->status < 200 || out->status > 299) {
    reader.Fail(key, fmt::format("content is sent only with a 2xx status; this response has "
                                 "status {} and sends an error body",
                                 out->status));
  } else if (out->body) {
    reader.Fail(key, "'content' and 'body' cannot be combined: 'body' replaces the whole body");
  }
  ReadContent(reader, *field, dialect, &out->content);
}

}  // namespace

bool IsHeaderName(std::string_view text) {
  constexpr std::string_view kSymbols = "!#$%&'*+-.^_`|~";
  return !text.empty() && std::all_of(text.begin(), text.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           kSymbols.find(c) != std::string_view::npos;
  });
}

bool IsHeaderSafe(std::string_view text) {
  return text.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

void RejectKey(Reader& reader, const Map& map, std::string_view key, std::string_view reason) {
  if (!reader.ok()) return;
  if (std::optional<Field> field = map.GetKey(key)) reader.Fail(*field, std::string(reason));
}

std::optional<OverlayContent> ReadOverlayContent(Reader& reader, const Map& response,
                                                 std::string_view owner, std::string_view where) {
  std::optional<Field> content =
      reader.Present(response, response.Has("stream") ? "stream" : "content");
  if (!content) return std::nullopt;
  std::optional<Map> map = reader.ReadMap(*content, keys::kContent);
  if (!map) return std::nullopt;
  for (std::string_view key : keys::kContent) {
    if (key == "faults" || key == "end") continue;
    RejectKey(
        reader, *map, key,
        fmt::format("'{}' is the {}'s to write; {} takes only faults and end", key, owner, where));
  }
  return OverlayContent{*content, *map};
}

std::optional<ErrorSpec> ReadError(Reader& reader, const Field& field, Dialect dialect) {
  ErrorSpec error;
  if (!field.node.IsMap()) {
    std::optional<ErrorKind> kind = ReadErrorKind(reader, field);
    if (!kind) return std::nullopt;
    error.kind = *kind;
    return error;
  }
  std::optional<Map> map = reader.ReadMap(field, keys::kError);
  if (!map) return std::nullopt;
  if (std::optional<Field> kind_field = reader.Require(*map, "kind")) {
    if (std::optional<ErrorKind> kind = ReadErrorKind(reader, *kind_field)) error.kind = *kind;
  }
  if (reader.ok() && error.kind != ErrorKind::kContextWindow) {
    RejectKey(reader, *map, "wording", "'wording' applies only to kind: context_window");
  }
  reader.GetEnum(*map, "wording", keys::kWordingNames, ContextWording::kOpenAi, &error.wording);
  reader.Get(*map, "message", &error.message);
  if (reader.ok() && dialect != Dialect::kGemini) {
    RejectKey(reader, *map, "retry_delay",
              fmt::format("'retry_delay' is Gemini's RetryInfo detail; {} says it otherwise "
                          "(retry_after, retry_after_ms, or the message's words)",
                          ToString(dialect)));
  }
  reader.Get(*map, "retry_delay", &error.retry_delay);
  if (!reader.ok()) return std::nullopt;
  return error;
}

void ReadResponse(Reader& reader, const Field& field, Dialect dialect, ResponsePlace place,
                  ResponseSpec* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kResponse);
  if (!map) return;
  if (place == ResponsePlace::kChaos) {
    RejectKey(reader, *map, "repeat",
              "'repeat' has no meaning inside chaos: every attempt draws its response afresh");
  } else if (place == ResponsePlace::kHealth) {
    RejectKey(reader, *map, "repeat",
              "'repeat' has no meaning in a health failure: it answers whenever the route is down");
  }
  if (map->Has("cassette")) return ReadCassetteEntry(reader, *map, dialect, out);
  RejectKey(reader, *map, "time_scale", "'time_scale' scales a cassette's times; give 'cassette'");
  reader.Get(*map, "repeat", &out->repeat, 0, kMaxRepeat);
  ReadConnection(reader, *map, out);
  reader.Get(*map, "headers_delay", &out->headers_delay);
  reader.Get(*map, "headers_stall", &out->headers_stall);
  ReadStatusAndError(reader, *map, dialect, out);
  if (std::optional<Field> retry_after = reader.Present(*map, "retry_after")) {
    out->retry_after = ReadRetryAfter(reader, *retry_after);
  }
  if (std::optional<Field> retry_after_ms = reader.Present(*map, "retry_after_ms")) {
    out->retry_after_ms = ReadHeaderValue(reader, *retry_after_ms);
  }
  reader.Get(*map, "should_retry", &out->should_retry);
  if (dialect == Dialect::kGemini) {
    RejectKey(reader, *map, "rate_limit_headers",
              "Gemini sends no rate-limit headers; its 429 says which quota ran out in its body");
  } else if (dialect == Dialect::kOllama) {
    RejectKey(reader, *map, "rate_limit_headers", "Ollama sends no rate-limit headers");
  } else if (dialect == Dialect::kBedrockConverse) {
    RejectKey(reader, *map, "rate_limit_headers",
              "Bedrock sends no rate-limit headers; its 429 is a ThrottlingException");
  }
  if (std::optional<Field> headers = reader.Present(*map, "rate_limit_headers")) {
    out->rate_limit_headers = ReadRateLimitHeaders(reader, *headers);
  }
  reader.Get(*map, "date_skew", &out->date_skew, Sign::kAny);
  if (std::optional<Field> content_type = reader.Present(*map, "content_type")) {
    std::optional<std::string> text = reader.ReadString(*content_type);
    if (text && (text->empty() || !IsHeaderSafe(*text))) {
      reader.Fail(*content_type, "expected a media type such as \"text/plain\"");
    }
    out->content_type = text;
  }
  reader.Get(*map, "body", &out->body);
  if (std::optional<Field> headers = reader.Present(*map, "headers")) {
    out->headers = ReadHeaders(reader, *headers);
  }
  ReadResponseContent(reader, *map, dialect, out);
}

}  // namespace faultline::scenario::internal
