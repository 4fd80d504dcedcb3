#include "fake_provider/wire/http_date.h"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <string_view>

namespace faultline::provider {
namespace {

constexpr std::array<std::string_view, 7> kShortDays = {"Sun", "Mon", "Tue", "Wed",
                                                        "Thu", "Fri", "Sat"};
constexpr std::array<std::string_view, 7> kLongDays = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                                       "Thursday", "Friday", "Saturday"};
constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// The calendar fields of an instant, in UTC, at one-second resolution.
struct Civil {
  int year = 0;
  unsigned month = 0;    // 1..12
  unsigned day = 0;      // 1..31
  unsigned weekday = 0;  // 0 = Sunday
  long hours = 0;
  long minutes = 0;
  long seconds = 0;
};

Civil ToCivil(WallTime instant) {
  using namespace std::chrono;
  const sys_seconds whole = floor<seconds>(instant);
  const sys_days day = floor<days>(whole);
  const year_month_day date{day};
  const hh_mm_ss time{whole - day};
  return Civil{static_cast<int>(date.year()),
               static_cast<unsigned>(date.month()),
               static_cast<unsigned>(date.day()),
               weekday{day}.c_encoding(),
               static_cast<long>(time.hours().count()),
               static_cast<long>(time.minutes().count()),
               static_cast<long>(time.seconds().count())};
}

}  // namespace

std::string FormatImfFixdate(WallTime instant) {
  const Civil c = ToCivil(instant);
  return fmt::format("{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT", kShortDays[c.weekday], c.day,
                     kMonths[c.month - 1], c.year, c.hours, c.minutes, c.seconds);
}

std::string FormatRfc850(WallTime instant) {
  const Civil c = ToCivil(instant);
  const int two_digit_year = ((c.year % 100) + 100) % 100;
  return fmt::format("{}, {:02}-{}-{:02} {:02}:{:02}:{:02} GMT", kLongDays[c.weekday], c.day,
                     kMonths[c.month - 1], two_digit_year, c.hours, c.minutes, c.seconds);
}

std::string FormatAsctime(WallTime instant) {
  const Civil c = ToCivil(instant);
  return fmt::format("{} {} {:>2} {:02}:{:02}:{:02} {:04}", kShortDays[c.weekday],
                     kMonths[c.month - 1], c.day, c.hours, c.minutes, c.seconds, c.year);
}

std::string FormatRfc3339(WallTime instant) {
  const Civil c = ToCivil(instant);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", c.year, c.month, c.day, c.hours,
                     c.minutes, c.seconds);
}

std::string FormatRetryAfter(const scenario::RetryAfter& retry_after, WallTime date) {
  const WallTime target = date + retry_after.date_offset;
  switch (retry_after.form) {
    case scenario::RetryAfter::Form::kImfFixdate:
      return FormatImfFixdate(target);
    case scenario::RetryAfter::Form::kRfc850:
      return FormatRfc850(target);
    case scenario::RetryAfter::Form::kAsctime:
      return FormatAsctime(target);
    case scenario::RetryAfter::Form::kSeconds:
    case scenario::RetryAfter::Form::kRaw:
      break;
  }
  return retry_after.text;
}

}  // namespace faultline::provider
