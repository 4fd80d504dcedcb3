// Go-style durations ("250us", "1.5s", "1m30s", "-30s") as used throughout scenario files.
#include "scenarios/duration.h"

#include <array>
#include <cstdint>
#include <limits>
#include <string>

#include "fmt/format.h"

namespace faultline::scenario {
namespace {

// Wide enough that no single step of the parse can overflow.
__extension__ typedef __int128 Wide;

constexpr Wide kMaxMicros = std::numeric_limits<Duration::rep>::max();
constexpr int kMaxDigits = 20;  // more digits than any in-range duration needs
constexpr std::string_view kUnitHint = "use us, ms, s, m or h";

struct Unit {
  std::string_view name;
  std::int64_t micros;
};

// "µs" is accepted in both of its Unicode spellings (micro sign U+00B5, Greek mu U+03BC), like Go.
constexpr std::array<Unit, 7> kUnits = {{
    {"us", 1},
    {"\xC2\xB5s", 1},
    {"\xCE\xBCs", 1},
    {"ms", 1'000},
    {"s", 1'000'000},
    {"m", 60'000'000},
    {"h", 3'600'000'000},
}};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A decimal number "12", "1.5", ".5" or "1.": its digits as integer and fraction parts.
struct Number {
  Wide integer = 0;
  Wide fraction = 0;
  Wide fraction_scale = 1;  // 10^(number of fraction digits)
  int digits = 0;
};

std::expected<Number, std::string> ReadNumber(std::string_view& rest) {
  Number number;
  std::size_t i = 0;
  for (; i < rest.size() && IsDigit(rest[i]); ++i, ++number.digits) {
    if (number.digits >= kMaxDigits) return std::unexpected("out of range");
    number.integer = number.integer * 10 + (rest[i] - '0');
  }
  if (i < rest.size() && rest[i] == '.') {
    for (++i; i < rest.size() && IsDigit(rest[i]); ++i, ++number.digits) {
      if (number.digits >= kMaxDigits) return std::unexpected("too many digits");
      number.fraction = number.fraction * 10 + (rest[i] - '0');
      number.fraction_scale *= 10;
    }
  }
  if (number.digits == 0) {
    if (rest.empty()) return std::unexpected("missing number");
    return std::unexpected(fmt::format("expected a number at \"{}\"", rest));
  }
  rest.remove_prefix(i);
  return number;
}

std::expected<std::int64_t, std::string> ReadUnit(std::string_view& rest, std::string_view number) {
  std::size_t length = 0;
  while (length < rest.size() && !IsDigit(rest[length]) && rest[length] != '.') ++length;
  std::string_view name = rest.substr(0, length);
  if (name.empty())
    return std::unexpected(fmt::format("missing unit after \"{}\" ({})", number, kUnitHint));
  for (const Unit& unit : kUnits) {
    if (unit.name == name) {
      rest.remove_prefix(length);
      return unit.micros;
    }
  }
  return std::unexpected(fmt::format("unknown unit \"{}\" ({})", name, kUnitHint));
}

}  // namespace

std::expected<Duration, std::string> ParseDuration(std::string_view text) {
  if (text.empty()) return std::unexpected("empty duration");
  std::string_view rest = text;
  const bool negative = rest.front() == '-';
  if (rest.front() == '-' || rest.front() == '+') rest.remove_prefix(1);
  if (rest.empty()) return std::unexpected("missing number");
  Wide total = 0;
  while (!rest.empty()) {
    const std::string_view before = rest;
    auto number = ReadNumber(rest);
    if (!number) return std::unexpected(number.error());
    auto micros = ReadUnit(rest, before.substr(0, before.size() - rest.size()));
    if (!micros) return std::unexpected(micros.error());
    const Wide scaled_fraction = number->fraction * *micros;
    if (scaled_fraction % number->fraction_scale != 0) {
      return std::unexpected("finer than the 1us resolution");
    }
    total += number->integer * *micros + scaled_fraction / number->fraction_scale;
    if (total > kMaxMicros) return std::unexpected("out of range");
  }
  return Duration(static_cast<Duration::rep>(negative ? -total : total));
}

}  // namespace faultline::scenario
