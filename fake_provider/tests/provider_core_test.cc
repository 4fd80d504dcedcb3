#include "fake_provider/provider_core.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/tests/plan_test_util.h"

namespace faultline::provider {
namespace {

using namespace std::chrono_literals;
using scenario::ResponseSpec;
using testing::Decode;
using testing::SentBytes;

constexpr std::string_view kPath = "/v1/chat/completions";
constexpr std::string_view kBody = R"({"model":"m","stream":true,"messages":[]})";

RequestInfo Post(std::string_view body = kBody) { return {"POST", kPath, body}; }

ResponseSpec Status(int status) {
  ResponseSpec spec;
  spec.status = status;
  if (status != 200)
    spec.error = scenario::ErrorSpec{scenario::DefaultErrorKind(status), {}, {}, {}};
  return spec;
}

class ProviderSessionTest : public ::testing::Test {
 protected:
  ProviderSession Session(scenario::Scenario scenario, std::uint64_t seed = 1) {
    auto compiled = std::make_shared<const CompiledScenario>(std::move(scenario), &writer_);
    return ProviderSession(std::move(compiled), seed, start_);
  }

  testing::FakeWriter writer_;
  const WallTime start_ = testing::TestNow();
};

TEST(StreamFlagTest, FindsTheTopLevelStreamKeyWithoutParsing) {
  EXPECT_EQ(StreamFlag(R"({"stream":true})"), true);
  EXPECT_EQ(StreamFlag("{ \"model\" : \"x\",\n \"stream\" \t:\r\n true }"), true);
  EXPECT_EQ(StreamFlag(R"({"stream_options":{"include_usage":true},"stream":true})"), true);
  EXPECT_EQ(StreamFlag(R"({"stream":false})"), false);
  EXPECT_EQ(StreamFlag(R"({"model":"x"})"), std::nullopt);
  EXPECT_EQ(StreamFlag(R"({"stream":"true"})"), std::nullopt);
  EXPECT_EQ(StreamFlag(R"({"stream":trueish})"), std::nullopt);
  EXPECT_EQ(StreamFlag(R"({"content":"\"stream\": true"})"), std::nullopt) << "inside a string";
  EXPECT_EQ(StreamFlag(R"({"metadata":{"stream":true}})"), std::nullopt) << "not top-level";
  EXPECT_EQ(StreamFlag(R"({"messages":[{"stream":true}]})"), std::nullopt);
  EXPECT_EQ(StreamFlag(R"({"a":"x\\","stream":false})"), false);
  EXPECT_EQ(StreamFlag(R"({"a":"x\\","stream":true})"), true)
      << "escaped backslash ends the string";
  EXPECT_EQ(StreamFlag(R"({"stream":true,"stream":false})"), false) << "the last key wins";
  EXPECT_EQ(StreamFlag(""), std::nullopt);
  EXPECT_EQ(StreamFlag(R"({"stream)"), std::nullopt);
}

TEST_F(ProviderSessionTest, ResponsesAnswerAttemptsInOrderAndTheLastRepeats) {
  scenario::Scenario scenario;
  scenario.responses = {Status(429), Status(503), Status(200)};
  ProviderSession session = Session(scenario);
  std::vector<int> statuses;
  for (int i = 0; i < 5; ++i) statuses.push_back(session.Respond(Post(), start_ + i * 1s).status);
  EXPECT_EQ(statuses, (std::vector<int>{429, 503, 200, 200, 200}));
  EXPECT_EQ(session.attempts(), 5);
}

TEST_F(ProviderSessionTest, StreamFlagAndAttemptReachThePlan) {
  scenario::Scenario scenario;
  scenario.responses = {Status(200)};
  ProviderSession session = Session(scenario, 99);
  ResponsePlan plan = session.Respond(Post(), start_);
  EXPECT_EQ(Decode(SentBytes(plan)).Header("transfer-encoding"), "chunked");
  EXPECT_EQ(plan.attempt, 1);
  plan = session.Respond(Post(R"({"stream":false})"), start_);
  EXPECT_TRUE(Decode(SentBytes(plan)).Header("content-length"));
  EXPECT_EQ(plan.attempt, 2);
  const ResponseIds ids = writer_.MakeIds(99, 2, start_, "fake-model");
  EXPECT_EQ(Decode(SentBytes(plan)).Header("x-request-id"), ids.request_id);
}

TEST_F(ProviderSessionTest, WrongPathOrMethodIsAnsweredButNotCounted) {
  scenario::Scenario scenario;
  scenario.responses = {Status(200)};
  ProviderSession session = Session(scenario);
  ResponsePlan plan = session.Respond({"POST", "/v1/messages", kBody}, start_);
  auto response = Decode(SentBytes(plan));
  EXPECT_EQ(plan.status, 404);
  EXPECT_NE(response.body.find("/v1/chat/completions"), std::string::npos) << response.body;
  EXPECT_EQ(plan.attempt, 0);

  plan = session.Respond({"GET", kPath, ""}, start_);
  EXPECT_EQ(plan.status, 405);
  EXPECT_EQ(Decode(SentBytes(plan)).Header("allow"), "POST");
  EXPECT_EQ(session.attempts(), 0);

  plan = session.Respond({"POST", "/v1/chat/completions?x=1", kBody}, start_);
  EXPECT_EQ(plan.status, 200);
  EXPECT_EQ(session.attempts(), 1);
}

scenario::Scenario ChaosScenario(std::uint64_t chaos_seed) {
  scenario::Scenario scenario;
  scenario::Chaos chaos;
  chaos.seed = chaos_seed;
  chaos.faults.push_back({0.3, Status(429)});
  chaos.faults.push_back({0.2, Status(503)});
  chaos.otherwise = Status(200);
  scenario.chaos = chaos;
  return scenario;
}

TEST_F(ProviderSessionTest, ChaosIsDeterministicPerSeedAndIndependentOfTiming) {
  const auto statuses = [&](std::uint64_t chaos_seed, std::uint64_t session_seed,
                            Duration spacing) {
    ProviderSession session = Session(ChaosScenario(chaos_seed), session_seed);
    std::vector<int> out;
    for (int i = 0; i < 200; ++i)
      out.push_back(session.Respond(Post(), start_ + i * spacing).status);
    return out;
  };
  const std::vector<int> first = statuses(5, 1, 1s);
  EXPECT_EQ(statuses(5, 1, 7ms), first);
  EXPECT_NE(statuses(5, 2, 1s), first);
  EXPECT_NE(statuses(6, 1, 1s), first);
  const auto count = [&](int status) { return std::count(first.begin(), first.end(), status); };
  EXPECT_NEAR(count(429), 60, 25);
  EXPECT_NEAR(count(503), 40, 20);
  EXPECT_NEAR(count(200), 100, 25);
}

TEST_F(ProviderSessionTest, RequestRateLimitRetryAfterIsExactlyWhenTheNextRequestFits) {
  scenario::Scenario scenario;
  scenario.responses = {Status(200)};
  scenario.rate_limit = scenario::RateLimit{2, 0, 10s};
  ProviderSession session = Session(scenario);
  EXPECT_EQ(session.Respond(Post(), start_).status, 200);
  EXPECT_EQ(session.Respond(Post(), start_ + 500ms).status, 200);
  const WallTime limited_at = start_ + 1200ms;
  const ResponsePlan limited = session.Respond(Post(), limited_at);
  ASSERT_EQ(limited.status, 429);
  const auto retry_after = Decode(SentBytes(limited)).Header("retry-after");
  ASSERT_TRUE(retry_after);
  EXPECT_EQ(*retry_after, "9") << "the first request leaves the window 8.8 s later";
  const Duration wait = std::chrono::seconds(std::stoi(*retry_after));
  EXPECT_EQ(session.Respond(Post(), limited_at + wait - 1s).status, 429);
  EXPECT_EQ(session.Respond(Post(), limited_at + wait).status, 200);
  EXPECT_EQ(session.attempts(), 5) << "rate-limited requests count as attempts";
}

TEST_F(ProviderSessionTest, TokenRateLimitChargesInputAndOutput) {
  scenario::Scenario scenario;
  ResponseSpec ok = Status(200);
  ok.content.output_tokens = 30;
  scenario.responses = {ok};
  // kBody is 41 bytes = 11 tokens; a request costs 11 + 30 = 41 tokens.
  scenario.rate_limit = scenario::RateLimit{0, 100, 60s};
  ProviderSession session = Session(scenario);
  EXPECT_EQ(session.Respond(Post(), start_).status, 200);
  EXPECT_EQ(session.Respond(Post(), start_ + 10s).status, 200);
  const ResponsePlan limited = session.Respond(Post(), start_ + 20s);
  ASSERT_EQ(limited.status, 429);
  EXPECT_EQ(Decode(SentBytes(limited)).Header("retry-after"), "40");
  EXPECT_EQ(session.Respond(Post(), start_ + 59s).status, 429);
  EXPECT_EQ(session.Respond(Post(), start_ + 60s).status, 200);
}

TEST_F(ProviderSessionTest, ListenerOutagesFollowTheSessionStart) {
  scenario::Scenario scenario;
  scenario.listener_outages = {{5s, 10s}, {12s, 8s}, {40s, 1s}};
  ProviderSession session = Session(scenario);
  EXPECT_TRUE(session.HasListenerOutages());
  EXPECT_FALSE(session.ListenerDown(start_ + 4999ms));
  EXPECT_TRUE(session.ListenerDown(start_ + 5s));
  EXPECT_TRUE(session.ListenerDown(start_ + 19s));
  EXPECT_FALSE(session.ListenerDown(start_ + 20s));
  EXPECT_EQ(session.NextListenerChange(start_), start_ + 5s);
  EXPECT_EQ(session.NextListenerChange(start_ + 6s), start_ + 20s) << "overlap: 15 s is no edge";
  EXPECT_EQ(session.NextListenerChange(start_ + 20s), start_ + 40s);
  EXPECT_EQ(session.NextListenerChange(start_ + 41s), std::nullopt);

  session.Reset(start_ + 100s);
  EXPECT_FALSE(session.ListenerDown(start_ + 5s));
  EXPECT_TRUE(session.ListenerDown(start_ + 105s));

  EXPECT_FALSE(Session(scenario::Scenario{}).HasListenerOutages());
}

// Issue 26: an adapter that loads for seconds after its hello never met a 0-100 ms outage. Armed,
// scripted time waits at its zero (down, for an outage at 0) until the first attempt anchors it.
TEST_F(ProviderSessionTest, ArmedScriptedTimeWaitsAtZeroUntilTheFirstAttempt) {
  scenario::Scenario scenario;
  scenario.listener_outages = {{0s, 100ms}, {5s, 1s}};
  ProviderSession session = Session(scenario);
  session.ArmOutages();
  EXPECT_TRUE(session.armed());
  EXPECT_EQ(session.scripted_start(), std::nullopt);
  EXPECT_TRUE(session.ListenerDown(start_ + 7s)) << "as at 0, however long the adapter loads";
  EXPECT_EQ(session.NextListenerChange(start_ + 7s), std::nullopt);
  session.AnchorOutages(start_ + 7s);
  EXPECT_EQ(session.scripted_start(), start_ + 7s);
  EXPECT_TRUE(session.ListenerDown(start_ + 7s + 50ms));
  EXPECT_FALSE(session.ListenerDown(start_ + 7s + 100ms));
  EXPECT_EQ(session.NextListenerChange(start_ + 7s), start_ + 7s + 100ms);
  EXPECT_TRUE(session.ListenerDown(start_ + 12s + 500ms));
}

TEST_F(ProviderSessionTest, ResetForgetsAttemptsAndTheRateWindow) {
  scenario::Scenario scenario;
  scenario.responses = {Status(500), Status(200)};
  scenario.rate_limit = scenario::RateLimit{1, 0, 60s};
  ProviderSession session = Session(scenario);
  EXPECT_EQ(session.Respond(Post(), start_).status, 500);
  EXPECT_EQ(session.Respond(Post(), start_ + 1s).status, 429);
  session.Reset(start_ + 2s);
  EXPECT_EQ(session.attempts(), 0);
  EXPECT_EQ(session.Respond(Post(), start_ + 2s).status, 500) << "attempt 1 again, window empty";
}

TEST_F(ProviderSessionTest, SameInputsGiveTheSamePlansByteForByte) {
  const auto run = [&] {
    ProviderSession session = Session(ChaosScenario(3), 11);
    std::vector<ResponsePlan> plans;
    for (int i = 0; i < 20; ++i) plans.push_back(session.Respond(Post(), start_ + i * 100ms));
    return plans;
  };
  EXPECT_EQ(run(), run());
}

}  // namespace
}  // namespace faultline::provider
