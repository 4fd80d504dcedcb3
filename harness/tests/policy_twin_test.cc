// The policy twin's view of a real run: listener outages counted from the subject's first attempt.
#include "harness/policy_twin.h"

#include <gtest/gtest.h>

#include "harness/tests/judge_test_support.h"

namespace faultline::harness {
namespace {

using namespace std::chrono_literals;
using testing::TraceBuilder;

scenario::Scenario WithOutage() {
  scenario::Scenario scenario;
  scenario.listener_outages = {{.from = 200ms, .length = 700ms}};
  return scenario;
}

// A trace whose subject said hello at 1,000 ms and made its first attempt `lead_ms` later.
Trace FirstAttemptAfter(double lead_ms) {
  TraceBuilder b;
  Trace trace = b.Start(1000 + lead_ms, 1).Build();
  trace.client.front().at = testing::Ms(1000);  // the hello: when the outages were anchored
  return trace;
}

TEST(PolicyTwinTest, OutagesCountFromTheFirstAttempt) {
  // Connection refused 200..900 ms after the hello; the first attempt came 50 ms after it.
  auto shifted = OutagesFromFirstAttempt(WithOutage(), FirstAttemptAfter(50));
  ASSERT_EQ(shifted.listener_outages.size(), 1u);
  EXPECT_EQ(shifted.listener_outages[0].from, 150ms);
  EXPECT_EQ(shifted.listener_outages[0].length, 700ms);
  // 300 ms later, the first attempt met the outage already 100 ms old.
  shifted = OutagesFromFirstAttempt(WithOutage(), FirstAttemptAfter(300));
  ASSERT_EQ(shifted.listener_outages.size(), 1u);
  EXPECT_EQ(shifted.listener_outages[0].from, 0ms);
  EXPECT_EQ(shifted.listener_outages[0].length, 600ms);
  // After 2 s the outage was over before the subject made any attempt.
  EXPECT_TRUE(
      OutagesFromFirstAttempt(WithOutage(), FirstAttemptAfter(2000)).listener_outages.empty());
}

TEST(PolicyTwinTest, WithoutAnAttemptTheOutagesStay) {
  TraceBuilder b;  // only the hello
  EXPECT_EQ(OutagesFromFirstAttempt(WithOutage(), b.Build()).listener_outages,
            WithOutage().listener_outages);
}

}  // namespace
}  // namespace faultline::harness
