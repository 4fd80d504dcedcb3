#include "reference_impl/retry_after.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "reference_impl/ascii_text.h"
#include "reference_impl/recent_memo.h"

namespace faultline::ref {
namespace {

using std::chrono::milliseconds;
using Json = nlohmann::json;

constexpr std::array<std::pair<DelaySource, std::string_view>, 8> kRetryAfterSourceNames{{
    {DelaySource::kRetryAfterMs, "retry-after-ms"},
    {DelaySource::kRetryAfter, "retry-after"},
    {DelaySource::kRetryAfterDate, "retry-after-date"},
    {DelaySource::kBody, "body"},
    {DelaySource::kRatelimitReset, "ratelimit-reset"},
    {DelaySource::kBackoff, "backoff"},
    {DelaySource::kFailover, "failover"},
    {DelaySource::kBreaker, "breaker"},
}};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Length of the unsigned decimal ("12", "1.5", ".5", "5.") at the start of `text`; 0 if none.
std::size_t DecimalPrefixLength(std::string_view text) {
  std::size_t i = 0;
  std::size_t digits = 0;
  while (i < text.size() && IsDigit(text[i])) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && IsDigit(text[i])) ++i, ++digits;
  }
  return digits == 0 ? 0 : i;
}

// The value of an unsigned decimal from DecimalPrefixLength(). Too many digits for a double
// is not an error: a huge value is +infinity (it saturates as a hint), a tiny one 0.
double ToDouble(std::string_view decimal) {
  // from_chars rejects a leading '.' and accepts a trailing one; normalise both ways.
  std::string text(decimal);
  if (text.front() == '.') text.insert(text.begin(), '0');
  if (text.back() == '.') text.pop_back();
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range) {
    const bool huge = text.find_first_not_of('0') < text.find('.');
    return huge ? std::numeric_limits<double>::infinity() : 0.0;
  }
  return value;
}

// A whole-string unsigned decimal; nullopt for anything else (signs, exponents, "nan", "inf").
std::optional<double> ParseDecimal(std::string_view text) {
  text = ascii::Trim(text);
  if (text.empty() || DecimalPrefixLength(text) != text.size()) return std::nullopt;
  return ToDouble(text);
}

// A delay in (possibly fractional) milliseconds as a hint: rounded up; a valid but absurd value
// saturates at kMaxRetryHint, so the policy's Retry-After cap (not this parser) decides about it.
std::optional<milliseconds> ToHint(double ms) {
  if (std::isnan(ms) || ms < 0) return std::nullopt;
  if (ms > static_cast<double>(kMaxRetryHint.count())) return kMaxRetryHint;
  // Round up, but not for the last bits of binary noise: 1.1 s is 1100.0000000000002 ms.
  constexpr double kNoise = 1e-6;
  return milliseconds(static_cast<milliseconds::rep>(std::max(0.0, std::ceil(ms - kNoise))));
}

struct GoUnit {
  std::string_view suffix;
  double ms;
};
// Longer suffixes first so that "ms" is not read as "m" followed by garbage.
constexpr std::array<GoUnit, 8> kGoUnits{{
    {"ms", 1.0},
    {"us", 1e-3},
    {"\xC2\xB5s", 1e-3},  // U+00B5 MICRO SIGN
    {"\xCE\xBCs", 1e-3},  // U+03BC GREEK SMALL LETTER MU
    {"ns", 1e-6},
    {"h", 3'600'000.0},
    {"m", 60'000.0},
    {"s", 1'000.0},
}};

// Reads "<decimal><unit>" repeatedly from the start of `text`; returns total ms and the length
// consumed (0 when nothing matched).
std::pair<double, std::size_t> GoDurationPrefix(std::string_view text) {
  double total = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t number = DecimalPrefixLength(text.substr(pos));
    if (number == 0) break;
    const GoUnit* matched = nullptr;
    for (const GoUnit& unit : kGoUnits) {
      if (text.substr(pos + number).starts_with(unit.suffix)) {
        matched = &unit;
        break;
      }
    }
    if (matched == nullptr) break;
    total += ToDouble(text.substr(pos, number)) * matched->ms;
    pos += number + matched->suffix.size();
  }
  return {total, pos};
}

struct WordUnit {
  std::string_view word;
  double ms;
};
constexpr std::array<WordUnit, 6> kWordUnits{{
    {"millisecond", 1.0},
    {"hour", 3'600'000.0},
    {"ms", 1.0},
    {"second", 1'000.0},
    {"sec", 1'000.0},
    {"minute", 60'000.0},
}};

// "<number> <unit word>" or a Go duration at the start of `text` (already lowercase).
std::optional<milliseconds> DurationPhrase(std::string_view text) {
  const auto [go_ms, go_length] = GoDurationPrefix(text);
  if (go_length > 0) return ToHint(go_ms);
  const std::size_t number = DecimalPrefixLength(text);
  if (number == 0) return std::nullopt;
  std::string_view rest = text.substr(number);
  while (rest.starts_with(' ')) rest.remove_prefix(1);
  for (const WordUnit& unit : kWordUnits) {
    if (rest.starts_with(unit.word)) return ToHint(ToDouble(text.substr(0, number)) * unit.ms);
  }
  return std::nullopt;
}

// The first "try again in X" / "retry after X" phrase of a human-readable message.
std::optional<milliseconds> HintInMessage(std::string_view message) {
  const std::string lower = ascii::Lowercase(message);
  for (std::string_view phrase : {"try again in ", "retry after ", "retry in "}) {
    const std::size_t at = lower.find(phrase);
    if (at == std::string::npos) continue;
    if (auto hint = DurationPhrase(std::string_view(lower).substr(at + phrase.size()))) {
      return hint;
    }
  }
  return std::nullopt;
}

// Google's google.rpc.RetryInfo: {"error":{"details":[{"retryDelay":"30s"}]}}.
std::optional<milliseconds> GoogleRetryDelay(const Json& error) {
  const auto details = error.find("details");
  if (details == error.end() || !details->is_array()) return std::nullopt;
  for (const Json& detail : *details) {
    if (!detail.is_object()) continue;
    const auto delay = detail.find("retryDelay");
    if (delay != detail.end() && delay->is_string()) {
      if (auto parsed = ParseGoDuration(delay->get_ref<const std::string&>())) return parsed;
    }
  }
  return std::nullopt;
}

std::optional<milliseconds> HintInJson(const Json& body) {
  if (!body.is_object()) return std::nullopt;
  const auto error = body.find("error");
  if (error != body.end() && error->is_object()) {
    if (auto delay = GoogleRetryDelay(*error)) return delay;
    const auto message = error->find("message");
    if (message != error->end() && message->is_string()) {
      if (auto hint = HintInMessage(message->get_ref<const std::string&>())) return hint;
    }
  }
  if (error != body.end() && error->is_string()) {
    return HintInMessage(error->get_ref<const std::string&>());
  }
  const auto message = body.find("message");
  if (message != body.end() && message->is_string()) {
    return HintInMessage(message->get_ref<const std::string&>());
  }
  return std::nullopt;
}

// The longest valid delay over every instance of the field (duplicates: never retry early).
template <typename Parser>
std::optional<RetryHint> LongestHint(const HttpHeaders& headers, std::string_view name,
                                     Parser parse) {
  std::optional<RetryHint> best;
  for (std::string_view value : headers.FindAll(name)) {
    std::optional<RetryHint> hint = parse(value);
    if (hint && (!best || hint->delay > best->delay)) best = hint;
  }
  return best;
}

// Instants of hint arithmetic: milliseconds since 1970 in 64 bits hold any HTTP-date (years 0 to
// 9999), where system_clock's nanoseconds end in 1677 and 2262.
using UnixMs = std::chrono::sys_time<milliseconds>;

// From `reference` to `when`, saturated to [0, kMaxRetryHint]. `reference` is floored to the ms,
// which rounds the delay up, as every hint is.
milliseconds DelayUntil(std::chrono::sys_seconds when, UnixMs reference) {
  const milliseconds delta = std::chrono::time_point_cast<milliseconds>(when) - reference;
  return std::clamp(delta, milliseconds(0), kMaxRetryHint);
}

// The instant a Retry-After date is measured from: the response's Date header, else `now`.
UnixMs DateReference(const RetryHintInput& input) {
  for (std::string_view value : input.headers.FindAll("date")) {
    if (auto date = ParseHttpDate(value, input.now)) return *date;
  }
  return std::chrono::floor<milliseconds>(input.now);
}

// `retry-after` as JavaScript's Date.parse reads it: a date against the receiver's own clock.
std::optional<RetryHint> DateParseHint(const RetryHintInput& input) {
  const UnixMs now = std::chrono::floor<milliseconds>(input.now);
  return LongestHint(input.headers, "retry-after",
                     [&](std::string_view value) -> std::optional<RetryHint> {
                       auto date = ParseDateLikeJavaScript(value);
                       if (!date) return std::nullopt;
                       return RetryHint{std::clamp(*date - now, milliseconds(0), kMaxRetryHint),
                                        DelaySource::kRetryAfterDate};
                     });
}

std::optional<RetryHint> RetryAfterHint(const RetryHintInput& input) {
  if (input.parse == RetryAfterParse::kDateParse) return DateParseHint(input);
  const auto reference = DateReference(input);
  return LongestHint(input.headers, "retry-after",
                     [&](std::string_view value) -> std::optional<RetryHint> {
                       if (auto seconds = ParseDelaySeconds(value)) {
                         return RetryHint{*seconds, DelaySource::kRetryAfter};
                       }
                       auto date = ParseHttpDate(value, input.now);
                       if (!date) return std::nullopt;
                       return RetryHint{DelayUntil(*date, reference), DelaySource::kRetryAfterDate};
                     });
}

// The latest reset of the resources that are used up, else of all (retry_after.h, source 4).
struct ResetChoice {
  std::optional<milliseconds> exhausted, latest;
  void Add(milliseconds delay, std::optional<std::string_view> remaining) {
    if (!latest || delay > *latest) latest = delay;
    if (remaining && ascii::Trim(*remaining) == "0" && (!exhausted || delay > *exhausted)) {
      exhausted = delay;
    }
  }
};

std::optional<RetryHint> RatelimitResetHint(const RetryHintInput& input) {
  const HttpHeaders& headers = input.headers;
  ResetChoice choice;
  for (std::string_view resource : {"requests", "tokens"}) {
    const std::string suffix(resource);
    auto reset = headers.Find("x-ratelimit-reset-" + suffix);
    if (!reset) continue;
    // OpenAI writes a Go duration ("6m0s"); a bare number is read as seconds, as Retry-After's,
    // so a huge one saturates as it does there instead of being dropped.
    if (auto delay = ParseGoDuration(*reset).or_else([&] { return ParseDelaySeconds(*reset); })) {
      choice.Add(*delay, headers.Find("x-ratelimit-remaining-" + suffix));
    }
  }
  const UnixMs reference = DateReference(input);
  for (std::string_view resource : {"requests", "tokens", "input-tokens", "output-tokens"}) {
    const std::string prefix = "anthropic-ratelimit-" + std::string(resource);
    auto reset = headers.Find(prefix + "-reset");
    if (!reset) continue;
    if (auto instant = ParseRfc3339(*reset)) {
      const milliseconds delay = std::clamp(*instant - reference, milliseconds(0), kMaxRetryHint);
      choice.Add(delay, headers.Find(prefix + "-remaining"));
    }
  }
  std::optional<milliseconds> chosen = choice.exhausted ? choice.exhausted : choice.latest;
  if (!chosen) return std::nullopt;
  return RetryHint{*chosen, DelaySource::kRatelimitReset};
}

}  // namespace

std::string_view ToString(RetryAfterParse value) {
  return NameOf(kRetryAfterParseNames, value, "rfc9110");
}

std::optional<RetryAfterParse> ParseRetryAfterParse(std::string_view text) {
  return ValueOf(kRetryAfterParseNames, text);
}

std::string_view ToString(DelaySource source) {
  for (const auto& [value, name] : kRetryAfterSourceNames) {
    if (value == source) return name;
  }
  return "backoff";
}

std::optional<DelaySource> ParseDelaySource(std::string_view text) {
  for (const auto& [value, name] : kRetryAfterSourceNames) {
    if (name == text) return value;
  }
  return std::nullopt;
}

std::optional<milliseconds> ParseRetryAfterMs(std::string_view value) {
  auto ms = ParseDecimal(value);
  if (!ms) return std::nullopt;
  return ToHint(*ms);
}

std::optional<milliseconds> ParseDelaySeconds(std::string_view value) {
  auto seconds = ParseDecimal(value);
  if (!seconds) return std::nullopt;
  return ToHint(*seconds * 1000.0);
}

std::optional<milliseconds> ParseGoDuration(std::string_view value) {
  value = ascii::Trim(value);
  if (value.empty()) return std::nullopt;
  if (value == "0") return milliseconds(0);  // Go's one unit-less duration
  const auto [ms, length] = GoDurationPrefix(value);
  if (length != value.size()) return std::nullopt;
  return ToHint(ms);
}

namespace {

// Whether `body` may hold a hint at all. Every hint is a `retryDelay` field or follows a phrase
// that HintInMessage looks for, and JSON can hide their letters and spaces only behind a
// backslash-u escape, so a body with neither needs no parse (most error bodies: their parse was
// about 8% of a judged virtual run's instructions).
bool MayHoldHint(std::string_view body) {
  if (body.find("\\u") != std::string_view::npos) return true;
  const std::string lower = ascii::Lowercase(body);
  return std::ranges::any_of(
      std::initializer_list<std::string_view>{"retrydelay", "try again in ", "retry after ",
                                              "retry in "},
      [&](std::string_view phrase) { return lower.find(phrase) != std::string::npos; });
}

}  // namespace

std::optional<milliseconds> ParseBodyRetryHint(std::string_view body) {
  if (ascii::Trim(body).empty() || !MayHoldHint(body)) return std::nullopt;
  // The same error body is read by the client, the fingerprint and the judge, run after run.
  thread_local RecentMemo<std::optional<milliseconds>> memo;
  return memo.Get(body, [](std::string_view text) {
    const Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    return parsed.is_discarded() ? HintInMessage(text) : HintInJson(parsed);
  });
}

std::vector<RetryHint> FindRetryHints(const RetryHintInput& input) {
  std::vector<RetryHint> hints;
  auto from_ms = LongestHint(input.headers, "retry-after-ms",
                             [](std::string_view value) -> std::optional<RetryHint> {
                               auto ms = ParseRetryAfterMs(value);
                               if (!ms) return std::nullopt;
                               return RetryHint{*ms, DelaySource::kRetryAfterMs};
                             });
  if (from_ms) hints.push_back(*from_ms);
  if (auto from_header = RetryAfterHint(input)) hints.push_back(*from_header);
  if (auto from_body = ParseBodyRetryHint(input.body)) {
    hints.push_back(RetryHint{*from_body, DelaySource::kBody});
  }
  if (input.status == 429) {
    if (auto reset = RatelimitResetHint(input)) hints.push_back(*reset);
  }
  return hints;
}

std::optional<RetryHint> FindRetryHint(const RetryHintInput& input) {
  std::vector<RetryHint> hints = FindRetryHints(input);
  if (hints.empty()) return std::nullopt;
  return hints.front();
}

}  // namespace faultline::ref
