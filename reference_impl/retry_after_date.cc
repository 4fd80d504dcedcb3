// ParseHttpDate (declared in retry_after.h): the three HTTP-date forms of RFC 9110 §5.6.7;
// ParseDateLikeJavaScript: the same forms and the ones JavaScript's Date.parse (V8) also reads;
// ParseRfc3339: an RFC 3339 date-time, Anthropic's rate-limit reset instants.
//
//   IMF-fixdate  Sun, 06 Nov 1994 08:49:37 GMT
//   RFC 850      Sunday, 06-Nov-94 08:49:37 GMT
//   asctime      Sun Nov  6 08:49:37 1994          (no zone: UTC)
//
// The value is split on runs of spaces (so asctime's padded day and doubled spaces both work),
// then each form checks its own token shapes. Ranges are checked (hour 0-23, minute 0-59, second
// 0-60 for a leap second, a real calendar day).
#include <array>
#include <string>
#include <vector>

#include "reference_impl/retry_after.h"

namespace faultline::ref {
namespace {

using namespace std::chrono;

constexpr std::array<std::string_view, 7> kShortDays{"Mon", "Tue", "Wed", "Thu",
                                                     "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> kLongDays{"Monday", "Tuesday",  "Wednesday", "Thursday",
                                                    "Friday", "Saturday", "Sunday"};
constexpr std::array<std::string_view, 12> kMonths{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

std::vector<std::string_view> SplitOnSpaces(std::string_view text) {
  std::vector<std::string_view> tokens;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t start = text.find_first_not_of(' ', pos);
    if (start == std::string_view::npos) break;
    const std::size_t end = std::min(text.find(' ', start), text.size());
    tokens.push_back(text.substr(start, end - start));
    pos = end;
  }
  return tokens;
}

bool IsWeekday(std::string_view token) {
  for (std::size_t i = 0; i < kShortDays.size(); ++i) {
    if (token == kShortDays[i] || token == kLongDays[i]) return true;
  }
  return false;
}

// `token` as an unsigned number of `min_digits` to `max_digits` digits.
std::optional<int> Number(std::string_view token, std::size_t min_digits, std::size_t max_digits) {
  if (token.size() < min_digits || token.size() > max_digits) return std::nullopt;
  int value = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

std::optional<unsigned> Month(std::string_view token) {
  for (std::size_t i = 0; i < kMonths.size(); ++i) {
    if (token == kMonths[i]) return static_cast<unsigned>(i + 1);
  }
  return std::nullopt;
}

// "HH:MM:SS" as seconds since midnight.
std::optional<seconds> TimeOfDay(std::string_view token) {
  if (token.size() != 8 || token[2] != ':' || token[5] != ':') return std::nullopt;
  auto hour = Number(token.substr(0, 2), 2, 2);
  auto minute = Number(token.substr(3, 2), 2, 2);
  auto second = Number(token.substr(6, 2), 2, 2);
  if (!hour || !minute || !second || *hour > 23 || *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  return hours(*hour) + minutes(*minute) + seconds(*second);
}

struct DateParts {
  std::string_view day;
  std::string_view month;
  int year = 0;
  std::string_view time;
};

std::optional<sys_seconds> Assemble(const DateParts& parts) {
  auto day = Number(parts.day, 1, 2);
  auto month = Month(parts.month);
  auto time = TimeOfDay(parts.time);
  if (!day || !month || !time) return std::nullopt;
  const year_month_day date{year(parts.year), std::chrono::month(*month),
                            std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) return std::nullopt;
  return sys_days(date) + *time;
}

bool IsGmt(std::string_view zone) { return zone == "GMT" || zone == "UTC"; }

// Two-digit year -> the year within (now - 50, now + 50] with those last two digits.
int ResolveTwoDigitYear(int two_digits, system_clock::time_point now) {
  const int current = static_cast<int>(year_month_day(floor<days>(now)).year());
  int candidate = current - current % 100 + two_digits;
  if (candidate > current + 50) candidate -= 100;
  if (candidate <= current - 50) candidate += 100;
  return candidate;
}

// Sun, 06 Nov 1994 08:49:37 GMT
std::optional<sys_seconds> ImfFixdate(const std::vector<std::string_view>& t) {
  if (t.size() != 6 || !t[0].ends_with(',') || !IsWeekday(t[0].substr(0, t[0].size() - 1)) ||
      !IsGmt(t[5])) {
    return std::nullopt;
  }
  auto year = Number(t[3], 4, 4);
  if (!year) return std::nullopt;
  return Assemble({t[1], t[2], *year, t[4]});
}

// Sunday, 06-Nov-94 08:49:37 GMT; `resolve` makes the two-digit year whole.
template <typename ResolveYear>
std::optional<sys_seconds> Rfc850(const std::vector<std::string_view>& t, ResolveYear resolve) {
  if (t.size() != 4 || !t[0].ends_with(',') || !IsWeekday(t[0].substr(0, t[0].size() - 1)) ||
      !IsGmt(t[3]) || t[1].size() != 9 || t[1][2] != '-' || t[1][6] != '-') {
    return std::nullopt;
  }
  auto year = Number(t[1].substr(7, 2), 2, 2);
  if (!year) return std::nullopt;
  return Assemble({t[1].substr(0, 2), t[1].substr(3, 3), resolve(*year), t[2]});
}

// "+HH:MM" / "-HH:MM" / "Z" as the offset to subtract from local time; nullopt when invalid.
std::optional<minutes> ZoneOffset(std::string_view zone) {
  if (zone == "Z" || zone == "z") return minutes(0);
  if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || zone[3] != ':') return std::nullopt;
  auto hour = Number(zone.substr(1, 2), 2, 2);
  auto minute = Number(zone.substr(4, 2), 2, 2);
  if (!hour || !minute || *hour > 23 || *minute > 59) return std::nullopt;
  const minutes offset = hours(*hour) + minutes(*minute);
  return zone[0] == '-' ? -offset : offset;
}

// ".5", ".123456": a fraction of a second, rounded up to whole milliseconds (never early).
std::optional<milliseconds> Fraction(std::string_view digits) {
  if (digits.empty() || digits.size() > 9) return std::nullopt;
  auto value = Number(digits, 1, 9);
  if (!value) return std::nullopt;
  long long ns = *value;
  for (std::size_t i = digits.size(); i < 9; ++i) ns *= 10;
  return milliseconds((ns + 999'999) / 1'000'000);
}

// Sun Nov  6 08:49:37 1994
std::optional<sys_seconds> Asctime(const std::vector<std::string_view>& t) {
  if (t.size() != 5 || !IsWeekday(t[0])) return std::nullopt;
  auto year = Number(t[4], 4, 4);
  if (!year) return std::nullopt;
  return Assemble({t[2], t[1], *year, t[3]});
}

// The three forms, the two-digit year made whole by `resolve`.
template <typename ResolveYear>
std::optional<sys_seconds> AnyHttpDate(std::string_view value, ResolveYear resolve) {
  std::string text(value);
  for (char& c : text) {
    if (c == '\t') c = ' ';
  }
  const std::vector<std::string_view> tokens = SplitOnSpaces(text);
  if (tokens.empty()) return std::nullopt;
  if (auto date = ImfFixdate(tokens)) return date;
  if (auto date = Rfc850(tokens, resolve)) return date;
  return Asctime(tokens);
}

// ---- JavaScript's Date.parse (V8) ----

using UnixMs = sys_time<milliseconds>;
constexpr int kMaxJsYear = 275760;  // ECMAScript time values end in September 275760

// V8's two-digit year outside the ISO format: 19xx from 50, 20xx below.
int JsTwoDigitYear(int two_digits) {
  return two_digits < 50 ? 2000 + two_digits : 1900 + two_digits;
}

bool InJsRange(UnixMs date) {
  constexpr milliseconds kLimit(8'640'000'000'000'000);  // ECMAScript's time value range
  return date.time_since_epoch() >= -kLimit && date.time_since_epoch() <= kLimit;
}

// Reads a fixed number of digits from `text` at `*at`.
std::optional<int> Digits(std::string_view text, std::size_t* at, std::size_t count) {
  if (*at + count > text.size()) return std::nullopt;
  auto value = Number(text.substr(*at, count), count, count);
  if (value) *at += count;
  return value;
}

bool Takes(std::string_view text, std::size_t* at, char c) {
  if (*at >= text.size() || text[*at] != c) return false;
  ++*at;
  return true;
}

// "THH:mm[:ss[.sss]][Z|±HH:mm]" after the date: the time of day, shifted to UTC.
std::optional<milliseconds> EcmaScriptTime(std::string_view t, std::size_t* at) {
  auto hour = Digits(t, at, 2);
  if (!hour || !Takes(t, at, ':')) return std::nullopt;
  auto minute = Digits(t, at, 2);
  if (!minute) return std::nullopt;
  int second = 0, ms = 0;
  if (Takes(t, at, ':')) {
    auto whole = Digits(t, at, 2);
    if (!whole) return std::nullopt;
    second = *whole;
    if (Takes(t, at, '.')) {
      auto fraction = Digits(t, at, 3);
      if (!fraction) return std::nullopt;
      ms = *fraction;
    }
  }
  if (*hour > 24 || *minute > 59 || second > 59 || (*hour == 24 && (*minute || second || ms))) {
    return std::nullopt;
  }
  milliseconds time = hours(*hour) + minutes(*minute) + seconds(second) + milliseconds(ms);
  if (Takes(t, at, 'Z')) return time;
  if (*at < t.size() && (t[*at] == '+' || t[*at] == '-')) {
    const int sign = t[(*at)++] == '-' ? -1 : 1;
    auto zone_hour = Digits(t, at, 2);
    if (!zone_hour || !Takes(t, at, ':')) return std::nullopt;
    auto zone_minute = Digits(t, at, 2);
    if (!zone_minute || *zone_hour > 23 || *zone_minute > 59) return std::nullopt;
    time -= sign * (hours(*zone_hour) + minutes(*zone_minute));
  }
  return time;
}

// The ECMAScript date-time format: "YYYY[-MM[-DD]][THH:mm...]", or "±YYYYYY..." for the year.
std::optional<UnixMs> EcmaScriptDate(std::string_view t) {
  std::size_t at = 0;
  int sign = 1;
  std::size_t year_digits = 4;
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) {
    sign = t[0] == '-' ? -1 : 1;
    year_digits = 6;
    at = 1;
  }
  auto year = Digits(t, &at, year_digits);
  if (!year || (sign < 0 && *year == 0)) return std::nullopt;
  int month = 1, day = 1;
  if (Takes(t, &at, '-')) {
    auto given_month = Digits(t, &at, 2);
    if (!given_month) return std::nullopt;
    month = *given_month;
    if (Takes(t, &at, '-')) {
      auto given_day = Digits(t, &at, 2);
      if (!given_day) return std::nullopt;
      day = *given_day;
    }
  }
  milliseconds time{0};
  if (Takes(t, &at, 'T')) {
    auto of_day = EcmaScriptTime(t, &at);
    if (!of_day) return std::nullopt;
    time = *of_day;
  }
  const year_month_day date{std::chrono::year(sign * *year),
                            std::chrono::month(static_cast<unsigned>(month)),
                            std::chrono::day(static_cast<unsigned>(day))};
  if (at != t.size() || !date.ok()) return std::nullopt;
  const UnixMs result = UnixMs(sys_days(date)) + time;
  return InJsRange(result) ? std::optional(result) : std::nullopt;
}

// V8's legacy reading of numbers apart by separators (see ParseDateLikeJavaScript).
std::optional<UnixMs> LegacyNumbers(std::string_view t) {
  std::vector<long long> numbers;
  for (std::size_t i = 0; i < t.size();) {
    if (t[i] >= '0' && t[i] <= '9') {
      long long n = 0;
      for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
        if (n < 1'000'000'000) n = n * 10 + (t[i] - '0');  // saturates: a year far too late
      }
      numbers.push_back(n);
      if (numbers.size() > 3) return std::nullopt;
    } else if (std::string_view(".,-+/ ").find(t[i]) != std::string_view::npos) {
      ++i;
    } else {
      return std::nullopt;
    }
  }
  if (numbers.empty()) return std::nullopt;
  numbers.resize(3, 1);  // a missing month or day is 1, a missing year 1 (2001)
  const bool first_is_day = numbers[0] >= 1 && numbers[0] <= 31;
  long long year = first_is_day ? numbers[2] : numbers[0];
  const long long month = first_is_day ? numbers[0] : numbers[1];
  const long long day = first_is_day ? numbers[1] : numbers[2];
  if (year <= 99) year = JsTwoDigitYear(static_cast<int>(year));
  if (month < 1 || month > 12 || day < 1 || day > 31 || year > kMaxJsYear) return std::nullopt;
  // A day past the month's end rolls into the next month, as V8's MakeDay does ("2.30").
  const sys_days first{year_month_day{std::chrono::year(static_cast<int>(year)),
                                      std::chrono::month(static_cast<unsigned>(month)),
                                      std::chrono::day(1)}};
  return UnixMs(first + days(day - 1));
}

}  // namespace

std::optional<sys_seconds> ParseHttpDate(std::string_view value, system_clock::time_point now) {
  return AnyHttpDate(value, [now](int two_digits) { return ResolveTwoDigitYear(two_digits, now); });
}

std::optional<sys_time<milliseconds>> ParseDateLikeJavaScript(std::string_view value) {
  const std::size_t first = value.find_first_not_of(" \t");
  if (first == std::string_view::npos) return std::nullopt;
  value = value.substr(first, value.find_last_not_of(" \t") - first + 1);
  if (auto date = EcmaScriptDate(value)) return date;
  if (auto date = AnyHttpDate(value, JsTwoDigitYear)) return UnixMs(*date);
  return LegacyNumbers(value);
}

std::optional<sys_time<milliseconds>> ParseRfc3339(std::string_view value) {
  // 2024-11-29T12:00:02Z, 2024-11-29t12:00:02.5+01:00
  if (value.size() < 20 || value[4] != '-' || value[7] != '-' ||
      (value[10] != 'T' && value[10] != 't')) {
    return std::nullopt;
  }
  auto year = Number(value.substr(0, 4), 4, 4);
  auto month = Number(value.substr(5, 2), 2, 2);
  auto day = Number(value.substr(8, 2), 2, 2);
  auto time = TimeOfDay(value.substr(11, 8));
  if (!year || !month || !day || !time) return std::nullopt;
  const year_month_day date{std::chrono::year(*year),
                            std::chrono::month(static_cast<unsigned>(*month)),
                            std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) return std::nullopt;
  std::string_view rest = value.substr(19);
  milliseconds fraction{0};
  if (rest.starts_with('.')) {
    const std::size_t digits = std::min(rest.find_first_not_of("0123456789", 1), rest.size());
    auto parsed = Fraction(rest.substr(1, digits - 1));
    if (!parsed) return std::nullopt;
    fraction = *parsed;
    rest.remove_prefix(digits);
  }
  auto offset = ZoneOffset(rest);
  if (!offset) return std::nullopt;
  return sys_days(date) + *time + fraction - *offset;
}

}  // namespace faultline::ref
