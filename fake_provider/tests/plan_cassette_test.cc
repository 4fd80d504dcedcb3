// A cassette as a plan, in virtual time: the recorded writes at their exact (scaled) offsets,
// the body as recorded, a cut at event N where the reference decoder counts it, and the ground
// truth read from the recorded bytes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_provider/plan/plan_compiler.h"

namespace faultline::provider {
namespace {

using std::chrono::milliseconds;

std::string Event(std::string_view text) {
  return "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
         "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" +
         std::string(text) + "\"},\"finish_reason\":null}]}\n\n";
}

// Four text events 100 ms apart, the finish and [DONE]; the second write holds two events.
scenario::Cassette Recording() {
  scenario::Cassette cassette;
  cassette.dialect = "openai-chat";
  cassette.method = "POST";
  cassette.target = "/v1/chat/completions";
  cassette.head_at = milliseconds(50);
  cassette.status = 200;
  cassette.reason = "OK";
  cassette.headers = {{"content-type", "text/event-stream"}, {"transfer-encoding", "chunked"}};
  cassette.writes = {
      {milliseconds(100), Event("Hel")},
      {milliseconds(200), Event("lo, ") + Event("wor")},
      {milliseconds(300), Event("ld")},
      {milliseconds(400),
       "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
       "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"}};
  cassette.end_at = milliseconds(400);
  return cassette;
}

ResponsePlan PlanOf(scenario::ResponseSpec spec) {
  scenario::Scenario scenario;
  scenario.name = "replay";
  scenario.dialect = scenario::Dialect::kOpenAiChat;
  scenario.responses = {spec};
  const CompiledScenario compiled(scenario);
  return compiled.Plan(compiled.scenario().responses.front(), {1, true, 0, WallTime{}, 10});
}

scenario::ResponseSpec Replay(double scale = 1.0) {
  scenario::ResponseSpec spec;
  spec.cassette = scenario::CassetteReplay{"rec.jsonl", Recording(), scale};
  return spec;
}

std::string Chunk(std::string_view data) {
  return fmt::format("{:x}\r\n{}\r\n", data.size(), data);
}

TEST(PlanCassetteTest, TheRecordedWritesGoOutAtTheirOffsets) {
  const ResponsePlan plan = PlanOf(Replay());
  ASSERT_EQ(plan.steps.size(), 5u);
  EXPECT_EQ(plan.steps[0].at, milliseconds(50));
  EXPECT_EQ(plan.steps[0].bytes,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: "
            "chunked\r\n\r\n");
  const scenario::Cassette cassette = Recording();
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(plan.steps[i + 1].at, cassette.writes[i].at);
    EXPECT_EQ(plan.steps[i + 1].bytes, Chunk(cassette.writes[i].bytes));
  }
  EXPECT_EQ(plan.steps[4].at, milliseconds(400));
  EXPECT_EQ(plan.steps[4].bytes, Chunk(cassette.writes[3].bytes) + "0\r\n\r\n");
  EXPECT_TRUE(plan.keep_alive);
  EXPECT_EQ(plan.truth.answer, "Hello, world");
  EXPECT_EQ(plan.truth.failure_class, "");
  EXPECT_TRUE(plan.truth.streamed);
  EXPECT_EQ(plan.truth.output_from, milliseconds(100));
}

TEST(PlanCassetteTest, TimeScaleAndHeadersDelayMoveEveryStep) {
  scenario::ResponseSpec spec = Replay(0.5);
  spec.headers_delay = milliseconds(10);
  const ResponsePlan plan = PlanOf(spec);
  ASSERT_EQ(plan.steps.size(), 5u);
  EXPECT_EQ(plan.steps[0].at, milliseconds(35));
  EXPECT_EQ(plan.steps[1].at, milliseconds(60));
  EXPECT_EQ(plan.steps[4].at, milliseconds(210));
}

TEST(PlanCassetteTest, ACutAtEventThreeSplitsTheWriteThatHoldsIt) {
  scenario::ResponseSpec spec = Replay();
  spec.content.end.kind = scenario::Termination::Kind::kNoTerminator;
  spec.content.end.after_event = 3;
  const ResponsePlan plan = PlanOf(spec);
  std::string body;
  for (const PlanStep& step : plan.steps) body += step.bytes;
  // Events 1..3 (the third is the first half of the second write), then the final chunk.
  EXPECT_NE(body.find("\"wor\""), std::string::npos);
  EXPECT_EQ(body.find("\"ld\""), std::string::npos);
  EXPECT_TRUE(body.ends_with("0\r\n\r\n"));
  EXPECT_EQ(plan.steps.back().at, milliseconds(200));
  EXPECT_FALSE(plan.truth.answer.has_value());
  EXPECT_EQ(plan.truth.failure_class, "truncated");
  EXPECT_TRUE(plan.truth.output_before_failure);
}

TEST(PlanCassetteTest, AResetCutIsATransportFailureAndAStallMovesTheRest) {
  scenario::ResponseSpec spec = Replay();
  spec.content.end.kind = scenario::Termination::Kind::kReset;
  spec.content.end.after_event = 2;
  ResponsePlan plan = PlanOf(spec);
  EXPECT_EQ(plan.steps.back().kind, PlanStep::Kind::kReset);
  EXPECT_EQ(plan.truth.failure_class, "transport");
  EXPECT_FALSE(plan.keep_alive);

  spec = Replay();
  scenario::EventFault stall;
  stall.kind = scenario::EventFault::Kind::kStall;
  stall.after_event = 1;
  stall.wait = {milliseconds(500), false};
  spec.content.faults = {stall};
  plan = PlanOf(spec);
  EXPECT_EQ(plan.steps.back().at, milliseconds(900));  // the end, 500 ms later
  EXPECT_EQ(plan.truth.answer, "Hello, world");        // a stall that ends spoils nothing
  const auto stalled =
      std::ranges::find(plan.truth.silences, Duration(milliseconds(100)), &Silence::from);
  ASSERT_NE(stalled, plan.truth.silences.end());
  EXPECT_EQ(stalled->to, milliseconds(600));
}

TEST(PlanCassetteTest, ARecordedErrorIsJudgedByItsStatusAndBody) {
  scenario::ResponseSpec spec = Replay();
  spec.cassette->cassette.status = 429;
  spec.cassette->cassette.headers = {
      {"content-type", "application/json"}, {"retry-after", "2"}, {"content-length", "60"}};
  spec.cassette->cassette.writes = {
      {milliseconds(60), R"({"error":{"message":"slow down","type":"rate_limit_error"}}  )"}};
  const ResponsePlan plan = PlanOf(spec);
  EXPECT_EQ(plan.status, 429);
  EXPECT_EQ(plan.truth.failure_class, "rate-limit");
  ASSERT_FALSE(plan.truth.hint_fields.empty());
  EXPECT_EQ(plan.truth.hint_fields.front().name, "retry-after");
}

}  // namespace
}  // namespace faultline::provider
