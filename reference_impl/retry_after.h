// The server's retry hint: how long it asked us to wait, and where that came from.
//
// Sources, strongest first (the first one present and valid wins):
//   1. `retry-after-ms`: a decimal number of milliseconds, fractions allowed (OpenAI's and
//      Anthropic's non-standard header). When it disagrees with `retry-after`, it wins, as in the
//      OpenAI SDK: it is the more precise of the two.
//   2. `retry-after` (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date in any of the three forms
//      of §5.6.7 (IMF-fixdate, obsolete RFC 850 with a two-digit year, asctime — read as UTC).
//      Delay-seconds may carry a fraction ("1.5"): the grammar says 1*DIGIT, but the OpenAI SDK
//      accepts parseFloat() and servers do send it, so we accept it too. A date is measured from
//      the response's own `Date` header when that is present and valid, so a skewed server clock
//      cancels out; otherwise from `now`. A date in the past means "now" (a zero delay).
//   3. The JSON error body: OpenAI's "Please try again in 1.5s" / "6m0s" / "20ms", Azure's "retry
//      after 20 seconds", Google's `error.details[].retryDelay` ("30s").
//   4. `x-ratelimit-reset-requests` / `x-ratelimit-reset-tokens` (OpenAI: Go-style durations such
//      as "1s", "6m0s", "59.6s", "1h2m3.5s", "250ms") and `anthropic-ratelimit-{requests,tokens,
//      input-tokens,output-tokens}-reset` (Anthropic: RFC 3339 instants, measured from the
//      response's Date header like an HTTP-date): a weaker hint, used only on a 429 (on other
//      statuses it describes a window we are not blocked by). When several are present, the
//      latest of those whose `*-remaining` is 0 is used; without one at 0, the latest of all.
//
// A client may read `retry-after` otherwise (RetryHintInput::parse): JavaScript clients that
// hand the value to Date.parse get a date for whatever V8 reads as one, a bare or negative
// number included ("5" is 1 May 2001, "-5" the same, "32" is 2032), measured against their own
// clock, never the response's Date header (ParseDateLikeJavaScript below).
//
// Invalid values are dropped as if absent: garbage, a sign, NaN, infinity, an unknown date form.
// A valid value above kMaxRetryHint (one day; "Retry-After: 4294967297" included) saturates at
// it: the server asked us to stay away, so it must be far over any cap and the policy's over-cap
// rule decides (give up, or fall back to local backoff); dropping it would retry at once.
// Duplicated fields: every instance is parsed and the LONGEST valid delay wins, so no retry ever
// comes before any of the hints the server (or a proxy) sent. Delays are rounded UP to whole
// milliseconds for the same reason.
//
// Pure functions of their arguments (time is passed in); thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>
#include <vector>

#include "reference_impl/http_response.h"
#include "reference_impl/name_table.h"

namespace faultline::ref {

// Where a retry delay came from; `delay_source` of `response/interrupted`
// (docs/adapter-protocol.md).
enum class DelaySource {
  kRetryAfterMs,    // "retry-after-ms"
  kRetryAfter,      // "retry-after" (delay-seconds)
  kRetryAfterDate,  // "retry-after-date" (HTTP-date)
  kBody,            // "body"
  kRatelimitReset,  // "ratelimit-reset"
  kBackoff,         // "backoff" (the policy's own backoff; never produced by the parser)
  kFailover,        // "failover": until another route is ready (0: at once); never parsed
  kBreaker,         // "breaker": until the route's own open breaker lets a probe through
};
std::string_view ToString(DelaySource source);
std::optional<DelaySource> ParseDelaySource(std::string_view text);

// How a `retry-after` value is read (a policy's retry_after.parse, policy.h).
enum class RetryAfterParse {
  kRfc9110,    // "rfc9110": delay-seconds (fractions accepted) or an HTTP-date, as above
  kDateParse,  // "date-parse": JavaScript's Date.parse, against the receiver's clock; a date in
               // the past is a hint of 0, a value Date.parse cannot read no hint at all
};
inline constexpr NameTable<RetryAfterParse, 2> kRetryAfterParseNames{{
    {RetryAfterParse::kRfc9110, "rfc9110"},
    {RetryAfterParse::kDateParse, "date-parse"},
}};
std::string_view ToString(RetryAfterParse value);
std::optional<RetryAfterParse> ParseRetryAfterParse(std::string_view text);

// Valid hints above this saturate at it (see above).
inline constexpr std::chrono::milliseconds kMaxRetryHint = std::chrono::hours(24);

struct RetryHint {
  std::chrono::milliseconds delay{0};
  DelaySource source = DelaySource::kRetryAfter;
  friend bool operator==(const RetryHint&, const RetryHint&) = default;
};

struct RetryHintInput {
  const HttpHeaders& headers;  // the response's header fields, duplicates kept
  std::string_view body;       // the error body as received (may be empty or not JSON)
  int status = 0;              // the HTTP status; the ratelimit-reset hint is read only on 429
  std::chrono::system_clock::time_point now;          // the receiver's wall clock
  RetryAfterParse parse = RetryAfterParse::kRfc9110;  // how `retry-after` is read
};

// The strongest valid hint of the response, or nullopt when it gave none.
std::optional<RetryHint> FindRetryHint(const RetryHintInput& input);
// Every valid hint of the response, one per source, strongest first (a policy may read only some
// sources: policy.h).
std::vector<RetryHint> FindRetryHints(const RetryHintInput& input);

// ---- The individual parsers (exposed for tests and for callers with only one source) ----

// `retry-after-ms`: "1500", "1500.5" (rounded up), " 20 "; nullopt when invalid.
std::optional<std::chrono::milliseconds> ParseRetryAfterMs(std::string_view value);

// `retry-after` delay-seconds: "120", "1.5"; nullopt when invalid (including dates).
std::optional<std::chrono::milliseconds> ParseDelaySeconds(std::string_view value);

// An HTTP-date in any of the three forms. `now` resolves RFC 850's two-digit year: a year that
// would be more than 50 years in the future is read as the most recent past year with the same
// last two digits (RFC 9110 §5.6.7). IMF-fixdate and RFC 850 require "GMT" (we also accept
// "UTC"); the weekday name must be well-formed but is not cross-checked against the date.
std::optional<std::chrono::sys_seconds> ParseHttpDate(std::string_view value,
                                                      std::chrono::system_clock::time_point now);

// An RFC 3339 date-time ("2024-11-29T12:00:02Z", "2024-11-29T13:00:02.5+01:00"), fractions
// rounded up to the millisecond.
std::optional<std::chrono::sys_time<std::chrono::milliseconds>> ParseRfc3339(
    std::string_view value);

// A date as JavaScript's Date.parse (V8, as in Node.js) reads `value`, or nullopt where it
// gives NaN. Modelled: the three HTTP-date forms (RFC 850's two-digit year is 19xx from 50, 20xx
// below); the ECMAScript date-time format ("2030", "2030-01-01", "2030-01-01T10:00:00Z",
// "+010000-01-01"); and V8's legacy reading of a bare number or numbers apart by `.`, `,`, `-`,
// `+`, `/` or spaces, signs ignored: one to three numbers are a month, day and year ("1.5" is
// 5 January 2001, the year defaulting to 2001), or a year, month and day when the first is no
// day of a month ("32.5" is May 2032; "0" is 2000); a two-digit year is 19xx from 50, 20xx below;
// "13" is NaN; years past 275760 are NaN. A time without a zone is read as UTC (the client's own
// zone is not known here). Other forms V8 also reads ("Jan 1 2030") are not modelled: nullopt.
std::optional<std::chrono::sys_time<std::chrono::milliseconds>> ParseDateLikeJavaScript(
    std::string_view value);

// A Go time.Duration string: "1s", "6m0s", "59.6s", "1h2m3.5s", "250ms", "10us", "0".
// Units h, m, s, ms, us (or µs), ns; no sign. Rounded up to milliseconds.
std::optional<std::chrono::milliseconds> ParseGoDuration(std::string_view value);

// The hint inside a JSON (or plain-text) error body, if any.
std::optional<std::chrono::milliseconds> ParseBodyRetryHint(std::string_view body);

}  // namespace faultline::ref
