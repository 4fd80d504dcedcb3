// Retry-After read as JavaScript's Date.parse reads it (retry_after.h, RetryAfterParse::
// kDateParse). The vectors are V8's own answers (Node.js 20, TZ=UTC: `Date.parse(v)`), so a
// declared `retry_after.parse: date-parse` predicts what such a client waits.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "reference_impl/retry_after.h"

namespace faultline::ref {
namespace {

using namespace std::chrono;

sys_time<milliseconds> Utc(int y, unsigned m, unsigned d, hours h = hours(0)) {
  return sys_days(year(y) / month(m) / day(d)) + h;
}

TEST(DateParseTest, V8sAnswers) {
  const std::vector<std::pair<std::string_view, sys_time<milliseconds>>> dates{
      {"5", Utc(2001, 5, 1)},
      {"-5", Utc(2001, 5, 1)},
      {"+5", Utc(2001, 5, 1)},
      {" 5 ", Utc(2001, 5, 1)},
      {"0", Utc(2000, 1, 1)},
      {"-1", Utc(2001, 1, 1)},
      {"12", Utc(2001, 12, 1)},
      {"32", Utc(2032, 1, 1)},
      {"49", Utc(2049, 1, 1)},
      {"50", Utc(1950, 1, 1)},
      {"99", Utc(1999, 1, 1)},
      {"100", Utc(100, 1, 1)},
      {"-120", Utc(120, 1, 1)},
      {"1.5", Utc(2001, 1, 5)},
      {"0.5", Utc(2000, 5, 1)},
      {"12.31", Utc(2001, 12, 31)},
      {"2.30", Utc(2001, 3, 2)},
      {"32.5", Utc(2032, 5, 1)},
      {"1.5.3", Utc(2003, 1, 5)},
      {"1,5", Utc(2001, 1, 5)},
      {"012", Utc(2001, 12, 1)},
      {"0012", Utc(12, 1, 1)},
      {"2030", Utc(2030, 1, 1)},
      {"2030-01-01", Utc(2030, 1, 1)},
      {"275760", Utc(275760, 1, 1)},
      {"2030-01-01T10:00:00Z", Utc(2030, 1, 1, hours(10))},
      {"2030-01-01T12:00+02:00", Utc(2030, 1, 1, hours(10))},
      {"Fri, 01 Jan 2100 00:00:00 GMT", Utc(2100, 1, 1)},
      {"Friday, 01-Jan-99 00:00:00 GMT", Utc(1999, 1, 1)},
      {"Fri Jan  1 00:00:00 2100", Utc(2100, 1, 1)},
  };
  for (const auto& [value, date] : dates) {
    EXPECT_EQ(ParseDateLikeJavaScript(value), date) << '"' << value << '"';
  }
  for (std::string_view nan :
       {"", "  ", "13", "31", "13.5", "1.32", "1.0", "0.0", "275761", "4294967297", "9e99", "1e3",
        "5s", "soon", "Infinity", "7 days", "1.2.3.4"}) {
    EXPECT_EQ(ParseDateLikeJavaScript(nan), std::nullopt) << '"' << nan << '"';
  }
}

// The client's reading against its own clock, never the response's Date header: a bare or
// negative number is a past date (a hint of 0), "32" a date years away (saturated), garbage none.
TEST(DateParseTest, HintsAgainstTheReceiversClock) {
  const system_clock::time_point now = sys_days(year(2026) / 3 / 1) + hours(12);
  const auto hint = [&](std::string_view value, RetryAfterParse parse) {
    HttpHeaders headers;
    headers.Append("date", "Sun, 01 Mar 2026 11:00:00 GMT");  // an hour behind: ignored
    headers.Append("retry-after", std::string(value));
    return FindRetryHint({headers, "", 503, now, parse});
  };
  const auto date_parse = RetryAfterParse::kDateParse;
  EXPECT_EQ(hint("-5", date_parse), (RetryHint{milliseconds(0), DelaySource::kRetryAfterDate}));
  EXPECT_EQ(hint("1.5", date_parse), (RetryHint{milliseconds(0), DelaySource::kRetryAfterDate}));
  EXPECT_EQ(hint("32", date_parse), (RetryHint{kMaxRetryHint, DelaySource::kRetryAfterDate}));
  EXPECT_EQ(hint("Sun, 01 Mar 2026 12:00:30 GMT", date_parse),
            (RetryHint{seconds(30), DelaySource::kRetryAfterDate}))
      << "the local clock, not the Date header";
  EXPECT_EQ(hint("9e99", date_parse), std::nullopt);
  EXPECT_EQ(hint("soon", date_parse), std::nullopt);
  // The same values as RFC 9110 reads them.
  const auto rfc = RetryAfterParse::kRfc9110;
  EXPECT_EQ(hint("-5", rfc), std::nullopt);
  EXPECT_EQ(hint("1.5", rfc), (RetryHint{milliseconds(1500), DelaySource::kRetryAfter}));
  EXPECT_EQ(hint("32", rfc), (RetryHint{seconds(32), DelaySource::kRetryAfter}));
  EXPECT_EQ(hint("Sun, 01 Mar 2026 12:00:30 GMT", rfc),
            (RetryHint{seconds(3630), DelaySource::kRetryAfterDate}))
      << "measured from the Date header";
}

}  // namespace
}  // namespace faultline::ref
