#include "fake_provider/wire/http_date.h"

#include <gtest/gtest.h>

#include <chrono>

#include "fake_provider/tests/plan_test_util.h"

namespace faultline::provider {
namespace {

using namespace std::chrono;
using testing::ParseHttpDate;

// RFC 9110's own example instant.
const WallTime kRfcExample{seconds(784111777)};

TEST(HttpDateTest, FormatsTheRfcExampleInAllThreeForms) {
  EXPECT_EQ(FormatImfFixdate(kRfcExample), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(FormatRfc850(kRfcExample), "Sunday, 06-Nov-94 08:49:37 GMT");
  EXPECT_EQ(FormatAsctime(kRfcExample), "Sun Nov  6 08:49:37 1994");
  EXPECT_EQ(FormatRfc3339(kRfcExample), "1994-11-06T08:49:37Z");
}

TEST(HttpDateTest, DropsSubSecondPartsInsteadOfRounding) {
  const WallTime almost_next = kRfcExample + milliseconds(999);
  EXPECT_EQ(FormatImfFixdate(almost_next), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(FormatRfc3339(almost_next), "1994-11-06T08:49:37Z");
}

TEST(HttpDateTest, AsctimePadsSingleDigitDaysWithASpaceAndRfc850UsesTwoDigitYears) {
  const WallTime leap_day{sys_days{2024y / February / 29} + hours(23) + minutes(59) + seconds(59)};
  EXPECT_EQ(FormatImfFixdate(leap_day), "Thu, 29 Feb 2024 23:59:59 GMT");
  EXPECT_EQ(FormatRfc850(leap_day), "Thursday, 29-Feb-24 23:59:59 GMT");
  EXPECT_EQ(FormatAsctime(leap_day), "Thu Feb 29 23:59:59 2024");
  const WallTime new_year{sys_days{2000y / January / 1}};
  EXPECT_EQ(FormatRfc850(new_year), "Saturday, 01-Jan-00 00:00:00 GMT");
  EXPECT_EQ(FormatAsctime(new_year), "Sat Jan  1 00:00:00 2000");
}

TEST(HttpDateTest, EveryFormParsesBackToTheSameSecond) {
  for (const WallTime instant :
       {kRfcExample, testing::TestNow(), WallTime{sys_days{2031y / July / 4} + hours(4)}}) {
    const auto expected = floor<seconds>(instant);
    EXPECT_EQ(ParseHttpDate(FormatImfFixdate(instant)), expected);
    EXPECT_EQ(ParseHttpDate(FormatRfc850(instant)), expected);
    EXPECT_EQ(ParseHttpDate(FormatAsctime(instant)), expected);
  }
}

}  // namespace
}  // namespace faultline::provider
