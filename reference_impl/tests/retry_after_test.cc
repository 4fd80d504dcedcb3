#include "reference_impl/retry_after.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace faultline::ref {
namespace {

using namespace std::chrono;
using Fields = std::vector<std::pair<std::string, std::string>>;

// Friday 2024-11-29 12:00:00 UTC.
const system_clock::time_point kNow = sys_days(year(2024) / 11 / 29) + hours(12);

std::optional<RetryHint> Find(const Fields& fields, std::string_view body = "", int status = 429,
                              system_clock::time_point now = kNow) {
  HttpHeaders headers;
  for (const auto& [name, value] : fields) headers.Append(name, value);
  return FindRetryHint({headers, body, status, now});
}

RetryHint Hint(milliseconds::rep ms, DelaySource source) { return {milliseconds(ms), source}; }

// ---- retry-after-ms ----

TEST(RetryAfterMsTest, ValidValues) {
  EXPECT_EQ(ParseRetryAfterMs("1500"), milliseconds(1500));
  EXPECT_EQ(ParseRetryAfterMs(" 20 "), milliseconds(20));
  EXPECT_EQ(ParseRetryAfterMs("0"), milliseconds(0));
  EXPECT_EQ(ParseRetryAfterMs("1500.2"), milliseconds(1501));  // rounded up: never early
  EXPECT_EQ(ParseRetryAfterMs("0.4"), milliseconds(1));
  EXPECT_EQ(ParseRetryAfterMs(".5"), milliseconds(1));
  EXPECT_EQ(ParseRetryAfterMs("86400000"), milliseconds(86'400'000));  // exactly one day
}

TEST(RetryAfterMsTest, InvalidValuesAreDropped) {
  for (std::string_view bad : {"", " ", "-5", "+5", "abc", "12abc", "NaN", "nan", "inf", "Infinity",
                               "1e3", "0x10", "1,5", "1.2.3", "."}) {
    EXPECT_EQ(ParseRetryAfterMs(bad), std::nullopt) << "'" << bad << "'";
  }
}

TEST(RetryAfterMsTest, AbsurdValuesSaturateAtOneDay) {
  EXPECT_EQ(ParseRetryAfterMs("86400001"), kMaxRetryHint);
  EXPECT_EQ(ParseRetryAfterMs("99999999999999999999999999999999"), kMaxRetryHint);
}

// ---- retry-after: delay-seconds ----

TEST(DelaySecondsTest, ValidValues) {
  EXPECT_EQ(ParseDelaySeconds("120"), milliseconds(120'000));
  EXPECT_EQ(ParseDelaySeconds("0"), milliseconds(0));
  EXPECT_EQ(ParseDelaySeconds("1.5"), milliseconds(1500));  // fractional, as the OpenAI SDK
  EXPECT_EQ(ParseDelaySeconds("0.0001"), milliseconds(1));
  EXPECT_EQ(ParseDelaySeconds("1.1"), milliseconds(1100));  // no rounding up of binary noise
  EXPECT_EQ(ParseDelaySeconds("0.3"), milliseconds(300));
  EXPECT_EQ(ParseDelaySeconds("2.675"), milliseconds(2675));
  EXPECT_EQ(ParseDelaySeconds("\t7 "), milliseconds(7000));
  EXPECT_EQ(ParseDelaySeconds("007"), milliseconds(7000));
  EXPECT_EQ(ParseDelaySeconds("86400"), milliseconds(86'400'000));
}

TEST(DelaySecondsTest, InvalidValuesAreDropped) {
  for (std::string_view bad : {"", "-1", "-0.5", "+3", "1e2", "NaN", "inf", "soon", "3 s",
                               "Fri, 29 Nov 2024 12:00:02 GMT"}) {
    EXPECT_EQ(ParseDelaySeconds(bad), std::nullopt) << "'" << bad << "'";
  }
}

// A 32-bit parser wraps 4294967297 to 1 and retries after a second; we saturate instead.
TEST(DelaySecondsTest, AbsurdValuesSaturateAtOneDay) {
  for (std::string_view huge : {"86401", "4294967297", "18446744073709551616",
                                "99999999999999999999999999999999999999999999999"}) {
    EXPECT_EQ(ParseDelaySeconds(huge), kMaxRetryHint) << "'" << huge << "'";
  }
}

// ---- HTTP-date ----

TEST(HttpDateTest, AllThreeFormsOfTheRfcExample) {
  const sys_seconds expected = sys_days(year(1994) / 11 / 6) + hours(8) + minutes(49) + seconds(37);
  EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT", kNow), expected);
  EXPECT_EQ(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT", kNow), expected);
  EXPECT_EQ(ParseHttpDate("Sun Nov  6 08:49:37 1994", kNow), expected);
  EXPECT_EQ(ParseHttpDate("Sun Nov 6 08:49:37 1994", kNow), expected);  // unpadded, tolerated
  EXPECT_EQ(expected.time_since_epoch().count(), 784111777);
}

TEST(HttpDateTest, LeapDayAndUtcZone) {
  const sys_seconds leap = sys_days(year(2024) / 2 / 29);
  EXPECT_EQ(ParseHttpDate("Thu, 29 Feb 2024 00:00:00 GMT", kNow), leap);
  EXPECT_EQ(ParseHttpDate("Thu, 29 Feb 2024 00:00:00 UTC", kNow), leap);
}

TEST(HttpDateTest, Rfc850TwoDigitYearFollowsRfc9110) {
  // Now is 2024: a year more than 50 years ahead is the most recent past one with those digits.
  auto year_of = [](std::string_view two_digits, system_clock::time_point now) {
    auto date = ParseHttpDate("Monday, 01-Jan-" + std::string(two_digits) + " 00:00:00 GMT", now);
    return date ? static_cast<int>(year_month_day(floor<days>(*date)).year()) : -1;
  };
  EXPECT_EQ(year_of("24", kNow), 2024);
  EXPECT_EQ(year_of("74", kNow), 2074);  // exactly 50 years ahead: still the future
  EXPECT_EQ(year_of("75", kNow), 1975);  // 51 years ahead: the past
  EXPECT_EQ(year_of("94", kNow), 1994);
  EXPECT_EQ(year_of("00", kNow), 2000);
  const auto in_2090 = sys_days(year(2090) / 6 / 1);
  EXPECT_EQ(year_of("10", in_2090), 2110);
  EXPECT_EQ(year_of("41", in_2090), 2141 - 100);  // 2141 is 51 years ahead
}

TEST(HttpDateTest, InvalidDatesAreRejected) {
  for (std::string_view bad : {
           "", "garbage",
           "Fri, 31 Feb 2024 12:00:00 GMT",  // no such day
           "Fri, 29 Nov 2024 24:00:00 GMT",  // hour out of range
           "Fri, 29 Nov 2024 12:60:00 GMT", "Fri, 29 Nov 2024 12:00:61 GMT",
           "Fri, 29 Nov 2024 12:00:00 PST",  // not GMT
           "Fri, 29 Nov 2024 12:00:00",      // no zone
           "Fri, 29 Foo 2024 12:00:00 GMT",  // no such month
           "Fri, 29 Nov 24 12:00:00 GMT",    // IMF needs four digits
           "Fri 29 Nov 2024 12:00:00 GMT",   // missing comma
           "Xyz, 29 Nov 2024 12:00:00 GMT",  // no such weekday
           "Fri, 29 Nov 2024 12:00 GMT",     // no seconds
           "Friday, 29-Nov-2024 12:00:00 GMT", "Fri Nov 29 12:00:00 24",
           "2024-11-29T12:00:02Z",  // RFC 3339 is not an HTTP-date
       }) {
    EXPECT_EQ(ParseHttpDate(bad, kNow), std::nullopt) << "'" << bad << "'";
  }
}

// ---- Go durations ----

TEST(GoDurationTest, Vectors) {
  EXPECT_EQ(ParseGoDuration("1s"), milliseconds(1000));
  EXPECT_EQ(ParseGoDuration("6m0s"), milliseconds(360'000));
  EXPECT_EQ(ParseGoDuration("59.6s"), milliseconds(59'600));
  EXPECT_EQ(ParseGoDuration("4.35s"), milliseconds(4'350));
  EXPECT_EQ(ParseGoDuration("0.1m"), milliseconds(6'000));
  EXPECT_EQ(ParseGoDuration("1h2m3.5s"), milliseconds(3'723'500));
  EXPECT_EQ(ParseGoDuration("250ms"), milliseconds(250));
  EXPECT_EQ(ParseGoDuration("1.5h"), milliseconds(5'400'000));
  EXPECT_EQ(ParseGoDuration("10us"), milliseconds(1));  // rounded up
  EXPECT_EQ(ParseGoDuration("10\xC2\xB5s"), milliseconds(1));
  EXPECT_EQ(ParseGoDuration("1500000ns"), milliseconds(2));
  EXPECT_EQ(ParseGoDuration("0"), milliseconds(0));
  EXPECT_EQ(ParseGoDuration("0s"), milliseconds(0));
  EXPECT_EQ(ParseGoDuration("1m1ms"), milliseconds(60'001));
}

TEST(GoDurationTest, InvalidValues) {
  for (std::string_view bad :
       {"", "s", "1", "1x", "-1s", "+1s", "1s2", "1d", "ms", "1 s", "1e3s", "abc"}) {
    EXPECT_EQ(ParseGoDuration(bad), std::nullopt) << "'" << bad << "'";
  }
  EXPECT_EQ(ParseGoDuration("25h"), kMaxRetryHint);  // valid, over a day: saturated
}

// ---- Body hints ----

TEST(BodyHintTest, OpenAiMessages) {
  auto body = [](std::string_view message) {
    return "{\"error\":{\"message\":\"" + std::string(message) +
           "\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}";
  };
  EXPECT_EQ(ParseBodyRetryHint(body("Limit 60, Used 60. Please try again in 1s. Visit ...")),
            milliseconds(1000));
  EXPECT_EQ(ParseBodyRetryHint(body("Please try again in 1.5s.")), milliseconds(1500));
  EXPECT_EQ(ParseBodyRetryHint(body("Please try again in 6m0s.")), milliseconds(360'000));
  EXPECT_EQ(ParseBodyRetryHint(body("Please try again in 20ms.")), milliseconds(20));
  EXPECT_EQ(ParseBodyRetryHint(body("Please Try Again In 2S.")), milliseconds(2000));
  EXPECT_EQ(ParseBodyRetryHint(body("Rate limit reached. Please try again later.")), std::nullopt);
  EXPECT_EQ(ParseBodyRetryHint(body("decrease input length and try again")), std::nullopt);
}

TEST(BodyHintTest, OtherProviders) {
  EXPECT_EQ(ParseBodyRetryHint("{\"error\":{\"code\":\"429\",\"message\":\"Rate limit is "
                               "exceeded. Please retry after 20 seconds.\"}}"),
            milliseconds(20'000));  // Azure OpenAI
  EXPECT_EQ(ParseBodyRetryHint(
                R"({"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[)"
                R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}})"),
            milliseconds(30'000));  // Google
  EXPECT_EQ(ParseBodyRetryHint("Too many requests, try again in 3 seconds"), milliseconds(3000));
  EXPECT_EQ(ParseBodyRetryHint("{\"message\":\"try again in 2 minutes\"}"), milliseconds(120'000));
  EXPECT_EQ(ParseBodyRetryHint("{\"error\":\"retry in 250ms\"}"), milliseconds(250));
  EXPECT_EQ(ParseBodyRetryHint(""), std::nullopt);
  EXPECT_EQ(ParseBodyRetryHint("{}"), std::nullopt);
  EXPECT_EQ(ParseBodyRetryHint("{\"error\":{\"details\":[{\"retryDelay\":\"soon\"}]}}"),
            std::nullopt);
  EXPECT_EQ(ParseBodyRetryHint("try again in 999999999s"), kMaxRetryHint);  // saturated
}

// Bodies without a hint's words are not parsed; words hidden behind JSON escapes still count.
TEST(BodyHintTest, EscapedWordsStillCount) {
  EXPECT_EQ(ParseBodyRetryHint(R"({"error":{"message":"Please try again in 2s."}})"),
            milliseconds(2000));
  EXPECT_EQ(ParseBodyRetryHint(R"({"message":"retry in 250ms"})"), milliseconds(250));
  EXPECT_EQ(ParseBodyRetryHint(R"({"error":{"details":[{"retryDelay":"3s"}]}})"),
            milliseconds(3000));
  EXPECT_EQ(ParseBodyRetryHint(R"({"error":{"message":"Overloaded","type":"overloaded_error"}})"),
            std::nullopt);
  EXPECT_EQ(ParseBodyRetryHint("upstream connect error"), std::nullopt);
}

// ---- FindRetryHint: precedence, duplicates, skew ----

TEST(FindRetryHintTest, EachSourceAlone) {
  EXPECT_EQ(Find({{"retry-after-ms", "1500"}}), Hint(1500, DelaySource::kRetryAfterMs));
  EXPECT_EQ(Find({{"Retry-After", "2"}}), Hint(2000, DelaySource::kRetryAfter));
  EXPECT_EQ(Find({{"retry-after", "Fri, 29 Nov 2024 12:00:02 GMT"}}),
            Hint(2000, DelaySource::kRetryAfterDate));
  EXPECT_EQ(Find({{"retry-after", "Friday, 29-Nov-24 12:00:03 GMT"}}),
            Hint(3000, DelaySource::kRetryAfterDate));
  EXPECT_EQ(Find({{"retry-after", "Fri Nov 29 12:00:04 2024"}}),
            Hint(4000, DelaySource::kRetryAfterDate));
  EXPECT_EQ(Find({}, "{\"error\":{\"message\":\"Please try again in 1.5s.\"}}"),
            Hint(1500, DelaySource::kBody));
  EXPECT_EQ(Find({{"x-ratelimit-reset-requests", "1s"}}), Hint(1000, DelaySource::kRatelimitReset));
  EXPECT_EQ(Find({}), std::nullopt);
}

// Issue 30: a 400-digit x-ratelimit-reset-requests was dropped while the same value in
// Retry-After saturated. A bare number is seconds in both, and saturates in both.
TEST(FindRetryHintTest, ABareRatelimitResetIsSecondsAndSaturatesAsRetryAfterDoes) {
  const std::string huge(400, '9');
  EXPECT_EQ(Find({{"retry-after", huge}}), Hint(kMaxRetryHint.count(), DelaySource::kRetryAfter));
  EXPECT_EQ(Find({{"x-ratelimit-reset-requests", huge}}),
            Hint(kMaxRetryHint.count(), DelaySource::kRatelimitReset));
  EXPECT_EQ(Find({{"x-ratelimit-reset-requests", "2"}}), Hint(2000, DelaySource::kRatelimitReset));
  EXPECT_EQ(Find({{"x-ratelimit-reset-tokens", "1.5"}}), Hint(1500, DelaySource::kRatelimitReset));
  EXPECT_EQ(Find({{"x-ratelimit-reset-tokens", "-2"}}), std::nullopt);
}

TEST(FindRetryHintTest, AsctimeIsUtcWhateverTheLocalZone) {
  // The same instant in all three forms gives the same delay.
  const auto imf = Find({{"retry-after", "Fri, 29 Nov 2024 13:30:00 GMT"}});
  const auto asctime = Find({{"retry-after", "Fri Nov 29 13:30:00 2024"}});
  ASSERT_TRUE(imf && asctime);
  EXPECT_EQ(imf->delay, asctime->delay);
  EXPECT_EQ(asctime->delay, milliseconds(90 * 60 * 1000));
}

TEST(FindRetryHintTest, ZeroAndPastDatesMeanNow) {
  EXPECT_EQ(Find({{"retry-after", "0"}}), Hint(0, DelaySource::kRetryAfter));
  EXPECT_EQ(Find({{"retry-after-ms", "0"}}), Hint(0, DelaySource::kRetryAfterMs));
  EXPECT_EQ(Find({{"retry-after", "Fri, 29 Nov 2024 11:59:00 GMT"}}),
            Hint(0, DelaySource::kRetryAfterDate));
  EXPECT_EQ(Find({{"retry-after", "Sun, 06 Nov 1994 08:49:37 GMT"}}),
            Hint(0, DelaySource::kRetryAfterDate));
}

TEST(FindRetryHintTest, FarFutureDateSaturates) {
  EXPECT_EQ(Find({{"retry-after", "Fri, 06 Dec 2024 12:00:00 GMT"}}),
            Hint(86'400'000, DelaySource::kRetryAfterDate));  // a week: as far as we look
  EXPECT_EQ(Find({{"retry-after", "Sat, 30 Nov 2024 12:00:00 GMT"}}),
            Hint(86'400'000, DelaySource::kRetryAfterDate));  // exactly a day is kept
}

TEST(FindRetryHintTest, SkewedDateHeaderCancelsOut) {
  // The server's clock is an hour behind ours: its Retry-After date is 5 s after ITS Date.
  EXPECT_EQ(Find({{"date", "Fri, 29 Nov 2024 11:00:00 GMT"},
                  {"retry-after", "Fri, 29 Nov 2024 11:00:05 GMT"}}),
            Hint(5000, DelaySource::kRetryAfterDate));
  // Ahead by ten minutes: measured from its Date, not from our now (which would say 10m5s).
  EXPECT_EQ(Find({{"Date", "Fri Nov 29 12:10:00 2024"},
                  {"retry-after", "Friday, 29-Nov-24 12:10:05 GMT"}}),
            Hint(5000, DelaySource::kRetryAfterDate));
  // A garbage Date header is ignored: the delay is measured from now.
  EXPECT_EQ(Find({{"date", "yesterday"}, {"retry-after", "Fri, 29 Nov 2024 12:00:05 GMT"}}),
            Hint(5000, DelaySource::kRetryAfterDate));
  // The Date header does not affect delay-seconds.
  EXPECT_EQ(Find({{"date", "Fri, 29 Nov 2024 11:00:00 GMT"}, {"retry-after", "3"}}),
            Hint(3000, DelaySource::kRetryAfter));
}

TEST(FindRetryHintTest, InvalidValuesFallThrough) {
  EXPECT_EQ(Find({{"retry-after", "garbage"}}), std::nullopt);
  EXPECT_EQ(Find({{"retry-after", "-1"}}), std::nullopt);
  EXPECT_EQ(Find({{"retry-after", "NaN"}}), std::nullopt);
  EXPECT_EQ(Find({{"retry-after", "99999999999999999999999999"}}),
            Hint(86'400'000, DelaySource::kRetryAfter));  // valid, absurd: saturated
  EXPECT_EQ(Find({{"retry-after-ms", "garbage"}, {"retry-after", "2"}}),
            Hint(2000, DelaySource::kRetryAfter));
  EXPECT_EQ(Find({{"retry-after", "garbage"}}, "{\"error\":{\"message\":\"try again in 4s\"}}"),
            Hint(4000, DelaySource::kBody));
}

TEST(FindRetryHintTest, DisagreeingHeadersRetryAfterMsWins) {
  EXPECT_EQ(Find({{"retry-after", "3"}, {"retry-after-ms", "500"}}),
            Hint(500, DelaySource::kRetryAfterMs));
  EXPECT_EQ(Find({{"retry-after-ms", "9000"}, {"retry-after", "1"}}),
            Hint(9000, DelaySource::kRetryAfterMs));
}

TEST(FindRetryHintTest, HeadersBeatBodyBeatsRatelimitReset) {
  const std::string body = "{\"error\":{\"message\":\"Please try again in 7s.\"}}";
  EXPECT_EQ(Find({{"retry-after", "2"}, {"x-ratelimit-reset-requests", "9s"}}, body),
            Hint(2000, DelaySource::kRetryAfter));
  EXPECT_EQ(Find({{"x-ratelimit-reset-requests", "9s"}}, body), Hint(7000, DelaySource::kBody));
}

TEST(FindRetryHintTest, DuplicatedFieldsTakeTheLongestValidValue) {
  EXPECT_EQ(Find({{"retry-after", "1"}, {"retry-after", "5"}}),
            Hint(5000, DelaySource::kRetryAfter));
  EXPECT_EQ(Find({{"retry-after", "5"}, {"retry-after", "1"}}),
            Hint(5000, DelaySource::kRetryAfter));
  EXPECT_EQ(Find({{"retry-after", "garbage"}, {"retry-after", "2"}}),
            Hint(2000, DelaySource::kRetryAfter));
  EXPECT_EQ(Find({{"retry-after", "1"}, {"retry-after", "Fri, 29 Nov 2024 12:00:03 GMT"}}),
            Hint(3000, DelaySource::kRetryAfterDate));
  EXPECT_EQ(Find({{"retry-after-ms", "100"}, {"retry-after-ms", "250.5"}}),
            Hint(251, DelaySource::kRetryAfterMs));
  EXPECT_EQ(Find({{"retry-after", "1, 2"}}), std::nullopt);  // a folded list is not a value
}

TEST(FindRetryHintTest, RatelimitResetOnlyOn429) {
  const Fields fields = {{"x-ratelimit-reset-requests", "1s"},
                         {"x-ratelimit-reset-tokens", "6m0s"},
                         {"x-ratelimit-remaining-requests", "0"},
                         {"x-ratelimit-remaining-tokens", "1000"}};
  // The exhausted resource decides.
  EXPECT_EQ(Find(fields), Hint(1000, DelaySource::kRatelimitReset));
  // Neither known to be exhausted: the later reset.
  EXPECT_EQ(Find({{"x-ratelimit-reset-requests", "1s"}, {"x-ratelimit-reset-tokens", "59.6s"}}),
            Hint(59'600, DelaySource::kRatelimitReset));
  // Not a 429: the windows describe limits we did not hit.
  EXPECT_EQ(Find(fields, "", 500), std::nullopt);
  EXPECT_EQ(Find({{"x-ratelimit-reset-tokens", "bogus"}}), std::nullopt);
}

// Anthropic's reset instants (RFC 3339), measured from the response's Date like an HTTP-date.
TEST(FindRetryHintTest, AnthropicRatelimitResetInstants) {
  const Fields fields = {{"date", "Fri, 29 Nov 2024 11:00:00 GMT"},  // its clock, an hour behind
                         {"anthropic-ratelimit-requests-remaining", "0"},
                         {"anthropic-ratelimit-requests-reset", "2024-11-29T11:00:02Z"},
                         {"anthropic-ratelimit-tokens-remaining", "9000"},
                         {"anthropic-ratelimit-tokens-reset", "2024-11-29T11:01:00Z"}};
  EXPECT_EQ(Find(fields), Hint(2000, DelaySource::kRatelimitReset));  // the exhausted one
  EXPECT_EQ(Find(fields, "", 503), std::nullopt);
  EXPECT_EQ(Find({{"anthropic-ratelimit-input-tokens-reset", "2024-11-29T13:00:01.5+01:00"}}),
            Hint(1500, DelaySource::kRatelimitReset));  // from now: no Date header
  EXPECT_EQ(Find({{"anthropic-ratelimit-requests-reset", "2024-11-29T11:00:00Z"}}),
            Hint(0, DelaySource::kRatelimitReset));  // already past
  EXPECT_EQ(Find({{"anthropic-ratelimit-requests-reset", "in a second"}}), std::nullopt);
}

TEST(Rfc3339Test, ValidAndInvalid) {
  const auto at = [](int h, int m, int s, int ms = 0) {
    return sys_days(year(2024) / 11 / 29) + hours(h) + minutes(m) + seconds(s) + milliseconds(ms);
  };
  EXPECT_EQ(ParseRfc3339("2024-11-29T12:00:02Z"), at(12, 0, 2));
  EXPECT_EQ(ParseRfc3339("2024-11-29t12:00:02z"), at(12, 0, 2));
  EXPECT_EQ(ParseRfc3339("2024-11-29T12:00:02.0001Z"), at(12, 0, 2, 1));  // rounded up
  EXPECT_EQ(ParseRfc3339("2024-11-29T14:30:02+02:30"), at(12, 0, 2));
  EXPECT_EQ(ParseRfc3339("2024-11-29T10:00:02-02:00"), at(12, 0, 2));
  for (std::string_view bad :
       {"", "2024-11-29", "2024-11-29 12:00:02Z", "2024-11-29T12:00:02", "2024-02-30T12:00:02Z",
        "2024-11-29T24:00:00Z", "2024-11-29T12:00:02.Z", "2024-11-29T12:00:02+0200",
        "Fri, 29 Nov 2024 12:00:02 GMT"}) {
    EXPECT_EQ(ParseRfc3339(bad), std::nullopt) << "'" << bad << "'";
  }
}

TEST(DelaySourceTest, NamesRoundTrip) {
  for (DelaySource source :
       {DelaySource::kRetryAfterMs, DelaySource::kRetryAfter, DelaySource::kRetryAfterDate,
        DelaySource::kBody, DelaySource::kRatelimitReset, DelaySource::kBackoff}) {
    EXPECT_EQ(ParseDelaySource(ToString(source)), source);
  }
  EXPECT_EQ(ToString(DelaySource::kRetryAfterDate), "retry-after-date");
  EXPECT_EQ(ParseDelaySource("nope"), std::nullopt);
}

// ---- Hostile values: every hint lies within [0, kMaxRetryHint]; huge valid values saturate ----

void ExpectWithinBounds(const std::optional<RetryHint>& hint) {
  if (!hint) return;
  EXPECT_GE(hint->delay, milliseconds(0));
  EXPECT_LE(hint->delay, kMaxRetryHint);
}

TEST(RetryHintHostileTest, HttpDatesOutsideTheNanosecondRangeSaturate) {
  // Years <= 1677 and >= 2263 overflowed the nanosecond conversion: year 9999 came out as a
  // small (or negative) delay and was retried at once instead of saturating.
  for (std::string_view date : {"Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 01 Jan 2263 00:00:00 GMT",
                                "Fri Dec 31 23:59:59 9999"}) {
    EXPECT_EQ(Find({{"retry-after", std::string(date)}}),
              Hint(kMaxRetryHint.count(), DelaySource::kRetryAfterDate))
        << date;
  }
  for (std::string_view date : {"Sat, 01 Jan 0000 00:00:00 GMT", "Wed, 01 Jan 1677 00:00:00 GMT"}) {
    EXPECT_EQ(Find({{"retry-after", std::string(date)}}), Hint(0, DelaySource::kRetryAfterDate))
        << date;
  }
}

TEST(RetryHintHostileTest, ExtremeDateHeaderDoesNotOverflow) {
  // A Date header in year 9999 makes any real Retry-After date lie in the past: retry at once.
  EXPECT_EQ(Find({{"date", "Fri, 31 Dec 9999 23:59:59 GMT"},
                  {"retry-after", "Fri, 29 Nov 2024 12:00:02 GMT"}}),
            Hint(0, DelaySource::kRetryAfterDate));
  // A Date header in year 0: the Retry-After date is ~2024 years later, which saturates.
  EXPECT_EQ(Find({{"date", "Sat, 01 Jan 0000 00:00:00 GMT"},
                  {"retry-after", "Fri, 29 Nov 2024 12:00:02 GMT"}}),
            Hint(kMaxRetryHint.count(), DelaySource::kRetryAfterDate));
}

TEST(RetryHintHostileTest, NumbersTooLongForADoubleSaturate) {
  const std::string digits(400, '9');
  // Delay-seconds of 309+ digits was dropped as garbage; the 400-digit "try again in" and
  // x-ratelimit-reset values dereferenced an empty optional.
  EXPECT_EQ(ParseDelaySeconds(digits), kMaxRetryHint);
  EXPECT_EQ(ParseRetryAfterMs(digits), kMaxRetryHint);
  EXPECT_EQ(ParseGoDuration(digits + "s"), kMaxRetryHint);
  EXPECT_EQ(ParseGoDuration("1h" + digits + "ms"), kMaxRetryHint);
  EXPECT_EQ(ParseBodyRetryHint("Please try again in " + digits + "s."), kMaxRetryHint);
  EXPECT_EQ(ParseBodyRetryHint("Please try again in " + digits + " seconds."), kMaxRetryHint);
  EXPECT_EQ(ParseBodyRetryHint(R"({"error":{"message":"try again in )" + digits + R"(ms"}})"),
            kMaxRetryHint);
  EXPECT_EQ(Find({{"x-ratelimit-reset-requests", digits + "s"}}),
            Hint(kMaxRetryHint.count(), DelaySource::kRatelimitReset));
  EXPECT_EQ(Find({{"retry-after", digits}}), Hint(kMaxRetryHint.count(), DelaySource::kRetryAfter));
  // A fraction with 400 digits after the point is tiny, not huge (below the rounding noise).
  EXPECT_EQ(ParseRetryAfterMs("0." + std::string(400, '0') + "1"), milliseconds(0));
  EXPECT_EQ(ParseDelaySeconds(std::string(400, '0') + "1"), milliseconds(1000));
}

TEST(RetryHintHostileTest, EveryHintIsWithinBounds) {
  const std::string digits(400, '9');
  const std::vector<std::string> values = {digits,
                                           "0",
                                           "." + digits,
                                           digits + "." + digits,
                                           "1e400",
                                           "-1",
                                           digits + "h",
                                           "1h" + digits + "m",
                                           "Fri, 31 Dec 9999 23:59:59 GMT",
                                           "Sat, 01 Jan 0000 00:00:00 GMT",
                                           "Thursday, 31-Dec-99 23:59:59 GMT",
                                           "Sun Jan  1 00:00:00 0001"};
  for (const std::string& value : values) {
    SCOPED_TRACE(value);
    for (std::string_view name : {"retry-after", "retry-after-ms", "x-ratelimit-reset-tokens"}) {
      ExpectWithinBounds(Find({{std::string(name), value}}));
      ExpectWithinBounds(Find({{"date", value}, {std::string(name), value}}));
    }
    ExpectWithinBounds(Find({}, "Please try again in " + value + "s"));
    ExpectWithinBounds(Find({}, R"({"error":{"details":[{"retryDelay":")" + value + R"("}]}})"));
  }
}

}  // namespace
}  // namespace faultline::ref
