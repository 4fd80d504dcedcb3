// Unit tests of the server's socket-free parts: the lateness histogram, session ids, URLs.
#include "fake_provider/server/server_core.h"

#include <gtest/gtest.h>

#include "fake_provider/server/control_api.h"

namespace faultline::provider::internal {
namespace {

using std::chrono::microseconds;

TEST(LatenessHistogramTest, EmptySummaryIsZero) {
  LatenessHistogram histogram;
  const auto summary = histogram.Summarize();
  EXPECT_EQ(summary.count, 0u);
  EXPECT_EQ(summary.p50_us, 0);
  EXPECT_EQ(summary.p99_us, 0);
  EXPECT_EQ(summary.max_us, 0);
}

TEST(LatenessHistogramTest, SmallValuesAreExact) {
  LatenessHistogram histogram;
  for (int us = 1; us <= 50; ++us) histogram.Record(microseconds(us));
  const auto summary = histogram.Summarize();
  EXPECT_EQ(summary.count, 50u);
  EXPECT_EQ(summary.p50_us, 25);
  EXPECT_EQ(summary.p99_us, 50);
  EXPECT_EQ(summary.max_us, 50);
}

TEST(LatenessHistogramTest, LargeValuesWithinThreePercent) {
  LatenessHistogram histogram;
  for (int i = 0; i < 98; ++i) histogram.Record(microseconds(800));
  histogram.Record(microseconds(123456));
  histogram.Record(microseconds(5'000'000));
  const auto summary = histogram.Summarize();
  EXPECT_NEAR(summary.p50_us, 800, 800 * 0.03);
  EXPECT_NEAR(summary.p99_us, 123456, 123456 * 0.03);
  EXPECT_EQ(summary.max_us, 5'000'000);
}

TEST(LatenessHistogramTest, NegativeLatenessCountsAsZeroAndHugeIsClamped) {
  LatenessHistogram histogram;
  histogram.Record(microseconds(-40));
  histogram.Record(microseconds(std::int64_t{1} << 50));
  const auto summary = histogram.Summarize();
  EXPECT_EQ(summary.count, 2u);
  EXPECT_EQ(summary.p50_us, 0);
  EXPECT_EQ(summary.max_us, std::int64_t{1} << 50);
}

TEST(SessionIdTest, AcceptsCatalogueNames) {
  EXPECT_FALSE(InvalidSessionIdReason("demo/hello-openai-chat"));
  EXPECT_FALSE(InvalidSessionIdReason("rate-limit/retry-after_http.date"));
}

TEST(SessionIdTest, RejectsIdsThatBreakRouting) {
  EXPECT_TRUE(InvalidSessionIdReason(""));
  EXPECT_TRUE(InvalidSessionIdReason("/lead"));
  EXPECT_TRUE(InvalidSessionIdReason("trail/"));
  EXPECT_TRUE(InvalidSessionIdReason("a/v1/b"));
  EXPECT_TRUE(InvalidSessionIdReason("a/v1"));
  EXPECT_TRUE(InvalidSessionIdReason("run0/storm/call/3"));  // reads as call 3 of run0/storm
  EXPECT_FALSE(InvalidSessionIdReason("run0/call/x"));
  EXPECT_TRUE(InvalidSessionIdReason("with space"));
  EXPECT_TRUE(InvalidSessionIdReason("q?x"));
  EXPECT_TRUE(InvalidSessionIdReason("pct%2F"));
  EXPECT_TRUE(InvalidSessionIdReason(std::string(201, 'a')));
}

TEST(HttpBaseUrlTest, BracketsIpv6AndMapsWildcards) {
  EXPECT_EQ(HttpBaseUrl("127.0.0.1", 8080), "http://127.0.0.1:8080");
  EXPECT_EQ(HttpBaseUrl("::1", 80), "http://[::1]:80");
  EXPECT_EQ(HttpBaseUrl("0.0.0.0", 1), "http://127.0.0.1:1");
  EXPECT_EQ(HttpBaseUrl("::", 2), "http://[::1]:2");
}

TEST(PercentDecodeTest, DecodesEscapesAndKeepsBrokenOnes) {
  EXPECT_EQ(PercentDecode("demo%2Fhello"), "demo/hello");
  EXPECT_EQ(PercentDecode("a%2"), "a%2");
  EXPECT_EQ(PercentDecode("a%zzb"), "a%zzb");
  EXPECT_EQ(PercentDecode("plain"), "plain");
}

TEST(ServerClockTest, WallAndSteadyRoundTrip) {
  ServerClock clock;
  const auto steady = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  const WallTime wall = clock.ToWall(steady);
  EXPECT_LE(std::chrono::abs(clock.ToSteady(wall) - steady), std::chrono::microseconds(1));
  EXPECT_GE(clock.Now(), clock.ToWall(std::chrono::steady_clock::now() - std::chrono::seconds(1)));
}

}  // namespace
}  // namespace faultline::provider::internal
