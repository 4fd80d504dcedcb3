#include "scenarios/duration.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace faultline::scenario {
namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

Duration Parsed(std::string_view text) {
  auto duration = ParseDuration(text);
  EXPECT_TRUE(duration.has_value()) << text << ": " << duration.error();
  return duration.value_or(Duration{-1});
}

std::string ErrorOf(std::string_view text) {
  auto duration = ParseDuration(text);
  EXPECT_FALSE(duration.has_value()) << text << " parsed as " << duration->count() << "us";
  return duration.has_value() ? "" : duration.error();
}

TEST(ParseDurationTest, SingleUnits) {
  EXPECT_EQ(Parsed("250us"), microseconds(250));
  EXPECT_EQ(Parsed("10ms"), milliseconds(10));
  EXPECT_EQ(Parsed("2s"), seconds(2));
  EXPECT_EQ(Parsed("10m"), minutes(10));
  EXPECT_EQ(Parsed("1h"), hours(1));
  EXPECT_EQ(Parsed("0s"), Duration{0});
}

TEST(ParseDurationTest, MicroSignSpellings) {
  EXPECT_EQ(Parsed("7\xC2\xB5s"), microseconds(7));  // U+00B5 micro sign
  EXPECT_EQ(Parsed("7\xCE\xBCs"), microseconds(7));  // U+03BC Greek mu
}

TEST(ParseDurationTest, Fractions) {
  EXPECT_EQ(Parsed("1.5s"), milliseconds(1500));
  EXPECT_EQ(Parsed(".5s"), milliseconds(500));
  EXPECT_EQ(Parsed("1.s"), seconds(1));
  EXPECT_EQ(Parsed("0.25ms"), microseconds(250));
  EXPECT_EQ(Parsed("1.000001s"), microseconds(1'000'001));
  EXPECT_EQ(Parsed("1.5h"), minutes(90));
}

TEST(ParseDurationTest, Signs) {
  EXPECT_EQ(Parsed("-30s"), seconds(-30));
  EXPECT_EQ(Parsed("+30s"), seconds(30));
  EXPECT_EQ(Parsed("-1m30s"), seconds(-90));
}

TEST(ParseDurationTest, CombinedGoStyle) {
  EXPECT_EQ(Parsed("1m30s"), seconds(90));
  EXPECT_EQ(Parsed("1h2m3s4ms5us"),
            hours(1) + minutes(2) + seconds(3) + milliseconds(4) + microseconds(5));
  EXPECT_EQ(Parsed("6m0s"), minutes(6));  // what OpenAI's x-ratelimit-reset-* headers carry
  EXPECT_EQ(Parsed("1s1s"), seconds(2));  // Go adds repeated units too
}

TEST(ParseDurationTest, MissingUnitIsAnError) {
  EXPECT_NE(ErrorOf("2").find("missing unit after \"2\""), std::string::npos);
  EXPECT_NE(ErrorOf("1m30").find("missing unit after \"30\""), std::string::npos);
  EXPECT_NE(ErrorOf("0").find("missing unit"), std::string::npos);
}

TEST(ParseDurationTest, GarbageIsAnError) {
  EXPECT_EQ(ErrorOf(""), "empty duration");
  EXPECT_EQ(ErrorOf("-"), "missing number");
  EXPECT_NE(ErrorOf("2x").find("unknown unit \"x\""), std::string::npos);
  EXPECT_NE(ErrorOf("2ns").find("unknown unit \"ns\""), std::string::npos);
  EXPECT_NE(ErrorOf("s").find("expected a number"), std::string::npos);
  EXPECT_NE(ErrorOf("2 s").find("unknown unit \" s\""), std::string::npos);
  EXPECT_NE(ErrorOf(" 2s").find("expected a number"), std::string::npos);
  EXPECT_NE(ErrorOf("1.2.3s").find("missing unit after \"1.2\""), std::string::npos);
  EXPECT_NE(ErrorOf("--2s").find("expected a number"), std::string::npos);
  EXPECT_NE(ErrorOf("forever").find("expected a number"), std::string::npos);
  EXPECT_NE(ErrorOf(".s").find("expected a number"), std::string::npos);
}

TEST(ParseDurationTest, SubMicrosecondPrecisionIsAnError) {
  EXPECT_NE(ErrorOf("1.5us").find("1us resolution"), std::string::npos);
  EXPECT_NE(ErrorOf("0.0000001s").find("1us resolution"), std::string::npos);
}

TEST(ParseDurationTest, OverflowIsAnError) {
  EXPECT_EQ(ErrorOf("9999999999999999999h"), "out of range");
  EXPECT_EQ(ErrorOf("99999999999999999999999999s"), "out of range");
  EXPECT_EQ(ErrorOf("2562047789h"), "out of range");  // just above the int64 microsecond range
  EXPECT_EQ(Parsed("2562047788h"), hours(2562047788));
  EXPECT_EQ(Parsed("-2562047788h"), hours(-2562047788));
  EXPECT_EQ(ErrorOf("2562047788h2562047788h"), "out of range");
  EXPECT_EQ(ErrorOf("1.000000000000000000001s"), "too many digits");
}

}  // namespace
}  // namespace faultline::scenario
