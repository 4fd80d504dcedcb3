// The bounds the timeline draws: the judge's own, and with several calls each call's, in its lane.
#include "harness/judge/timeline_bounds.h"

#include <gtest/gtest.h>

#include "harness/tests/judge_test_support.h"

namespace faultline::harness {
namespace {

using nlohmann::json;
using testing::TraceBuilder;

// Two calls rate-limited with "Retry-After: 2"; call 1 retries after `call1_retry_at` ms.
Trace TwoCallsLimited(double call1_retry_at, bool attributed) {
  TraceBuilder b;
  b.Calls(2);
  for (const auto& [at, call] : {std::pair{0.0, 0}, std::pair{5.0, 1}}) {
    provider::JournalEntry& entry = b.Error(at, at + 10, "rate-limit", true);
    testing::WithHint(entry, "retry-after", "2");
    entry.call = attributed ? call : -1;
  }
  b.Answer(call1_retry_at, call1_retry_at + 10, "Hi").call = attributed ? 1 : -1;
  b.Answer(2100, 2110, "Hi").call = attributed ? 0 : -1;
  for (const auto& [call, done] : {std::pair{0, 2110.0}, std::pair{1, call1_retry_at + 10}}) {
    b.Event(done, {{"type", "response/committed"}, {"attempt", 2}, {"text", "Hi"}}, call);
  }
  return b.Build();
}

const json* BandOf(const json& bands, std::string_view kind, int call) {
  for (const json& band : bands) {
    if (band["kind"] == kind && band.value("call", -1) == call) return &band;
  }
  return nullptr;
}

TEST(TimelineBoundsTest, EachCallOfSeveralGetsItsOwnBandsInItsLane) {
  const json bands = TimelineBounds({}, TwoCallsLimited(115, true), VirtualTolerance());
  const json* kept = BandOf(bands, "retry-after", 0);
  const json* broken = BandOf(bands, "retry-after", 1);
  ASSERT_NE(kept, nullptr) << bands.dump();
  ASSERT_NE(broken, nullptr) << bands.dump();
  EXPECT_TRUE((*kept)["inside"].get<bool>());
  EXPECT_FALSE((*broken)["inside"].get<bool>()) << "call 1 came back 105 ms after a 2 s hint";
  EXPECT_EQ((*broken)["mark_ms"], 115);
  EXPECT_EQ((*broken)["attempt"], 3) << "the journal's attempt: the session counts across calls";
}

TEST(TimelineBoundsTest, WithoutTheCallOfEachRequestThereAreNone) {
  EXPECT_TRUE(TimelineBounds({}, TwoCallsLimited(115, false), VirtualTolerance()).empty());
}

}  // namespace
}  // namespace faultline::harness
