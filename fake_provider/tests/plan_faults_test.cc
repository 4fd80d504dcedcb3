// The plan compiler's timing and fault schedule: delays, drips, split writes, stalls,
// heartbeats, injected events and every termination, asserted on exact bytes and offsets.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/plan/plan_internal.h"
#include "fake_provider/tests/plan_test_util.h"
#include "fake_provider/wire/sse_framing.h"

namespace faultline::provider {
namespace {

using namespace std::chrono_literals;
using scenario::EventFault;
using scenario::ResponseSpec;
using scenario::Termination;
using testing::Decode;
using testing::SentBytes;
using Kind = PlanStep::Kind;

class PlanFaultsTest : public ::testing::Test {
 protected:
  PlanFaultsTest() {
    spec_.content.text = "abcdefgh";  // 2 content events, usage, [DONE]
    spec_.content.chunk_size = 4;
    spec_.content.output_tokens = 2;
  }

  static PlanRequest Request(bool stream = true) {
    PlanRequest request;
    request.stream = stream;
    request.now = testing::TestNow();
    request.input_tokens = 10;
    return request;
  }

  ResponsePlan Plan(bool stream = true) {
    scenario::Scenario scenario;
    scenario.responses = {spec_};
    compiled_ = std::make_unique<CompiledScenario>(scenario, &writer_);
    return compiled_->Plan(compiled_->scenario().responses[0], Request(stream));
  }

  // The framed events of the plain stream, with the request's ids (default framing).
  std::vector<std::string> Events() const {
    const ResponseIds ids = writer_.MakeIds(0, 1, Request().now, "fake-model");
    SseFramer framer(spec_.content.framing);
    std::vector<std::string> out;
    for (const SseEvent& event : writer_.Stream(spec_.content, ids, {10, 2}).events) {
      out.push_back(framer.Event(event));
    }
    return out;
  }

  static std::vector<Duration> SendTimes(const ResponsePlan& plan) {
    std::vector<Duration> out;
    for (const PlanStep& step : plan.steps) {
      if (step.kind == Kind::kSend) out.push_back(step.at);
    }
    return out;
  }

  void AddFault(EventFault::Kind kind, int after_event, scenario::Wait wait = {}) {
    EventFault fault;
    fault.kind = kind;
    fault.after_event = after_event;
    fault.wait = wait;
    spec_.content.faults.push_back(fault);
  }

  testing::FakeWriter writer_;
  ResponseSpec spec_;
  std::unique_ptr<CompiledScenario> compiled_;
};

TEST_F(PlanFaultsTest, TwentyFiveEventStreamWithoutDelaysIsASingleWrite) {
  spec_.content.text = std::string(92, 'x');  // 23 content events + usage + [DONE]
  const ResponsePlan plan = Plan();
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(Decode(plan.steps[0].bytes).chunks.size(), 25u);
  EXPECT_EQ(plan.summary, "200 stream 25 events end=done");
}

TEST_F(PlanFaultsTest, ChunkDelaySpacesEventsAndTheFinalChunkRidesWithTheLast) {
  spec_.content.chunk_delay = 10ms;
  spec_.headers_delay = 1s;
  const ResponsePlan plan = Plan();
  EXPECT_EQ(SendTimes(plan), (std::vector<Duration>{1s, 1010ms, 1020ms, 1030ms}));
  const std::vector<std::string> events = Events();
  EXPECT_EQ(plan.steps[1].bytes, plan_internal::Chunk(events[1]));
  EXPECT_EQ(plan.steps[3].bytes, plan_internal::Chunk(events[3]) + "0\r\n\r\n");
  EXPECT_EQ(PlanEnd(plan), 1030ms);
  EXPECT_EQ(plan.summary, "200 headers-delay=1s stream 4 events every 10ms end=done");
}

TEST_F(PlanFaultsTest, DripSendsTheSameBytesInFixedPiecesAtFixedIntervals) {
  const std::string plain_body = Decode(SentBytes(Plan())).raw_body;
  spec_.content.drip_bytes = 7;
  spec_.content.drip_every = 25ms;
  spec_.content.chunk_delay = 1s;  // ignored while dripping
  const ResponsePlan plan = Plan();
  const auto response = Decode(SentBytes(plan));
  EXPECT_EQ(response.raw_body, plain_body);
  ASSERT_EQ(plan.steps.size(), (plain_body.size() + 6) / 7);
  EXPECT_TRUE(plan.steps[0].bytes.ends_with(plain_body.substr(0, 7))) << "first piece with head";
  for (std::size_t i = 1; i < plan.steps.size(); ++i) {
    EXPECT_EQ(plan.steps[i].at, Duration{25ms} * static_cast<int>(i));
    EXPECT_EQ(plan.steps[i].bytes, plain_body.substr(7 * i, 7));
  }
  EXPECT_TRUE(response.final_chunk);
}

TEST_F(PlanFaultsTest, SplitWritesCutEveryEventMidLineIntoTwoChunks) {
  spec_.content.framing.split_writes = true;
  spec_.content.framing.split_delay = 2ms;
  const ResponsePlan plan = Plan();
  const auto response = Decode(SentBytes(plan));
  const std::vector<std::string> events = Events();
  ASSERT_EQ(response.chunks.size(), 2 * events.size());
  std::string joined;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const std::string& head = response.chunks[2 * i];
    EXPECT_EQ(head + response.chunks[2 * i + 1], events[i]);
    EXPECT_TRUE(head.starts_with("data: ")) << head;
    EXPECT_EQ(head.find('\n'), std::string::npos) << "cut inside the data line";
    joined += events[i];
  }
  EXPECT_EQ(response.body, joined);
  EXPECT_EQ(SendTimes(plan), (std::vector<Duration>{0ms, 2ms, 4ms, 6ms, 8ms}));
}

TEST_F(PlanFaultsTest, SplitUtf8CutsInsideAMultiByteCharacter) {
  spec_.content.text = "ab\xC3\xA9z";  // "abéz" in one content event
  spec_.content.chunk_size = 100;
  spec_.content.framing.split_writes = true;
  spec_.content.framing.split_utf8 = true;
  const auto response = Decode(SentBytes(Plan()));
  ASSERT_GE(response.chunks.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(response.chunks[0].back()), 0xC3);
  EXPECT_EQ(static_cast<unsigned char>(response.chunks[1].front()), 0xA9);
}

TEST_F(PlanFaultsTest, FramingVariantsKeepTheEventsIntact) {
  spec_.content.framing.line_ending = scenario::Framing::LineEnding::kMixed;
  spec_.content.framing.bom = true;
  spec_.content.framing.comments = true;
  spec_.content.framing.multiline_data = true;
  const auto response = Decode(SentBytes(Plan()));
  EXPECT_TRUE(response.body.starts_with("\xEF\xBB\xBF"));
  int comments = 0;
  const auto parsed = testing::ParseSse(response.body, &comments);
  const auto plain = testing::ParseSse([&] {
    std::string all;
    for (const auto& e : Events()) all += e;
    return all;
  }());
  ASSERT_EQ(parsed.size(), 4u);
  EXPECT_EQ(comments, 4);
  for (std::size_t i = 0; i + 1 < parsed.size(); ++i) {
    EXPECT_EQ(nlohmann::json::parse(parsed[i].data), nlohmann::json::parse(plain[i].data));
  }
  EXPECT_EQ(parsed.back().data, "[DONE]");
}

TEST_F(PlanFaultsTest, DelayFaultPushesTheRestBack) {
  spec_.content.chunk_delay = 10ms;
  AddFault(EventFault::Kind::kDelay, 2, {1s, false});
  EXPECT_EQ(SendTimes(Plan()), (std::vector<Duration>{0ms, 10ms, 1020ms, 1030ms}));
}

TEST_F(PlanFaultsTest, FiniteSilentStallIsAStallStep) {
  AddFault(EventFault::Kind::kStall, 1, {5s, false});
  const ResponsePlan plan = Plan();
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[1].kind, Kind::kStall);
  EXPECT_EQ(plan.steps[1].at, 0s);
  EXPECT_EQ(plan.steps[1].length, Duration{5s});
  EXPECT_EQ(plan.steps[2].at, 5s);
  EXPECT_EQ(Decode(plan.steps[0].bytes).chunks.size(), 1u) << "head + first event before it";
  EXPECT_TRUE(plan.keep_alive);
}

TEST_F(PlanFaultsTest, HeartbeatStallsCarryCommentOrPingBytes) {
  AddFault(EventFault::Kind::kStall, 2, {12s, false});
  spec_.content.faults[0].heartbeat = {2s, scenario::Heartbeat::Style::kComment};
  ResponsePlan plan = Plan();
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[1].kind, Kind::kHeartbeat);
  EXPECT_EQ(plan.steps[1].every, 2s);
  EXPECT_EQ(plan.steps[1].length, Duration{12s});
  EXPECT_EQ(plan.steps[1].bytes, "e\r\n: keep-alive\n\n\r\n");

  spec_.content.faults[0].heartbeat.style = scenario::Heartbeat::Style::kPing;
  plan = Plan();
  EXPECT_EQ(plan.steps[1].bytes,
            plan_internal::Chunk("event: ping\ndata: {\"type\":\"ping\"}\n\n"));
}

TEST_F(PlanFaultsTest, StallForeverEndsThePlan) {
  AddFault(EventFault::Kind::kStall, 2, {0s, true});
  const ResponsePlan plan = Plan();
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(plan.steps.back().kind, Kind::kStall);
  EXPECT_FALSE(plan.steps.back().length);
  EXPECT_FALSE(plan.keep_alive);
  const auto response = Decode(SentBytes(plan));
  EXPECT_EQ(response.Header("connection"), "keep-alive");  // the failure is not announced
  EXPECT_EQ(response.chunks.size(), 2u);
  EXPECT_FALSE(response.final_chunk);
  EXPECT_EQ(plan.summary, "200 stream 4 events stall@2(forever) end=done");
}

TEST_F(PlanFaultsTest, InjectedEventsComeRightAfterEventN) {
  const std::vector<std::string> events = Events();
  const auto injected = [&](EventFault::Kind kind) {
    spec_.content.faults.clear();
    AddFault(kind, 1);
    spec_.content.faults.back().raw = "data: raw!\n\n";
    const auto response = Decode(SentBytes(Plan()));
    EXPECT_EQ(response.chunks.size(), events.size() + 1);
    EXPECT_EQ(response.chunks[0], events[0]);
    EXPECT_EQ(response.chunks[2], events[1]);
    return response.chunks[1];
  };
  const std::string invalid = injected(EventFault::Kind::kInvalidJson);
  const auto invalid_event = testing::ParseSse(invalid);
  ASSERT_EQ(invalid_event.size(), 1u);
  EXPECT_FALSE(nlohmann::json::accept(invalid_event[0].data));

  EXPECT_EQ(injected(EventFault::Kind::kWrongShape), "data: {\"unexpected\":true}\n\n");

  const std::string next_data = events[1].substr(6, events[1].size() - 8);
  EXPECT_EQ(injected(EventFault::Kind::kTwoObjects), "data: " + next_data + next_data + "\n\n");

  const ResponseIds ids = writer_.MakeIds(0, 1, Request().now, "fake-model");
  const std::string error = injected(EventFault::Kind::kProviderError);
  EXPECT_TRUE(error.starts_with("event: error\ndata: {\"error\"")) << error;
  EXPECT_NE(error.find(ids.response_id), std::string::npos);
  const std::string envelope = injected(EventFault::Kind::kErrorEnvelope);
  EXPECT_TRUE(envelope.starts_with("data: {\"error\":{")) << "OpenAI-style, no event name";

  EXPECT_EQ(injected(EventFault::Kind::kRaw), "data: raw!\n\n");
}

TEST_F(PlanFaultsTest, NoTerminatorEndsCleanlyWithoutTheTerminatorEvent) {
  spec_.content.end.kind = Termination::Kind::kNoTerminator;
  const ResponsePlan plan = Plan();
  const auto response = Decode(SentBytes(plan));
  const std::vector<std::string> events = Events();
  EXPECT_EQ(response.chunks, std::vector<std::string>(events.begin(), events.end() - 1));
  EXPECT_TRUE(response.final_chunk);
  EXPECT_TRUE(plan.keep_alive);
  EXPECT_EQ(response.Header("connection"), "keep-alive");
}

TEST_F(PlanFaultsTest, NoFinalChunkSendsEverythingElseThenCloses) {
  spec_.content.end.kind = Termination::Kind::kNoFinalChunk;
  const ResponsePlan plan = Plan();
  const auto response = Decode(SentBytes(plan));
  EXPECT_EQ(response.chunks, Events());
  EXPECT_FALSE(response.final_chunk);
  EXPECT_TRUE(response.complete_chunks);
  ASSERT_EQ(plan.steps.back().kind, Kind::kClose);
  EXPECT_FALSE(plan.keep_alive);
  EXPECT_EQ(response.Header("connection"), "keep-alive");  // the failure is not announced
}

TEST_F(PlanFaultsTest, CloseAfterEventNWithoutAtByte) {
  spec_.content.chunk_delay = 10ms;
  spec_.content.end.kind = Termination::Kind::kClose;
  spec_.content.end.after_event = 2;
  const ResponsePlan plan = Plan();
  const auto response = Decode(SentBytes(plan));
  const std::vector<std::string> events = Events();
  EXPECT_EQ(response.chunks, std::vector<std::string>(events.begin(), events.begin() + 2));
  ASSERT_EQ(plan.steps.back().kind, Kind::kClose);
  EXPECT_EQ(plan.steps.back().at, 20ms) << "when event 3 was due";
  EXPECT_EQ(plan.summary, "200 stream 4 events every 10ms end=close@2");
}

TEST_F(PlanFaultsTest, ResetAtByteCutsInsideTheNextEventsChunk) {
  spec_.content.end.kind = Termination::Kind::kReset;
  spec_.content.end.after_event = 1;
  spec_.content.end.at_byte = 10;
  const ResponsePlan plan = Plan();
  const auto response = Decode(SentBytes(plan));
  const std::vector<std::string> events = Events();
  EXPECT_EQ(response.chunks, std::vector<std::string>{events[0]});
  EXPECT_FALSE(response.complete_chunks);
  EXPECT_EQ(response.partial_announced, events[1].size());
  EXPECT_EQ(response.partial_received, 10u);
  EXPECT_EQ(response.body, events[0] + events[1].substr(0, 10));
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(plan.steps[1].kind, Kind::kReset);
  EXPECT_EQ(plan.summary, "200 stream 4 events end=reset@1+10B");
}

TEST_F(PlanFaultsTest, CloseDefaultsToTheTerminatorCut) {
  spec_.content.end.kind = Termination::Kind::kClose;
  const auto response = Decode(SentBytes(Plan()));
  const auto events = testing::ParseSse(response.body);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_NE(events.back().data, "[DONE]");
}

TEST_F(PlanFaultsTest, StallAtTheCutHeartBeatsThenCloses) {
  spec_.content.end.kind = Termination::Kind::kStall;
  spec_.content.end.after_event = 2;
  spec_.content.end.wait = {30s, false};
  spec_.content.end.heartbeat = {10s, scenario::Heartbeat::Style::kComment};
  ResponsePlan plan = Plan();
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[1].kind, Kind::kHeartbeat);
  EXPECT_EQ(plan.steps[1].length, Duration{30s});
  EXPECT_EQ(plan.steps[2].kind, Kind::kClose);
  EXPECT_EQ(plan.steps[2].at, 30s);
  EXPECT_FALSE(plan.keep_alive);

  spec_.content.end.wait = {0s, true};
  spec_.content.end.heartbeat = {};
  plan = Plan();
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(plan.steps[1].kind, Kind::kStall);
  EXPECT_FALSE(plan.steps[1].length);
  EXPECT_EQ(plan.summary, "200 stream 4 events end=stall@2(forever)");
}

TEST_F(PlanFaultsTest, NonStreamBodyCutGivesFewerBytesThanContentLength) {
  spec_.content.end.kind = Termination::Kind::kClose;
  spec_.content.end.after_event = 0;
  spec_.content.end.at_byte = 5;
  const ResponsePlan plan = Plan(/*stream=*/false);
  const auto response = Decode(SentBytes(plan));
  const ResponseIds ids = writer_.MakeIds(0, 1, Request().now, "fake-model");
  const std::string full = writer_.Json(spec_.content, ids, {10, 2}).bytes;
  EXPECT_EQ(response.Header("content-length"), std::to_string(full.size()));
  EXPECT_EQ(response.body, full.substr(0, 5));
  EXPECT_EQ(plan.steps.back().kind, Kind::kClose);
  EXPECT_EQ(plan.summary, "200 json end=close@0+5B");
}

TEST_F(PlanFaultsTest, NonStreamBodyHonoursAStallAfterTheHeaders) {
  AddFault(EventFault::Kind::kStall, 0, {3s, false});
  spec_.content.faults[0].heartbeat = {1s, scenario::Heartbeat::Style::kComment};
  const ResponsePlan plan = Plan(/*stream=*/false);
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[1].kind, Kind::kStall) << "no heartbeat bytes inside a JSON body";
  EXPECT_EQ(plan.steps[2].at, 3s);
  EXPECT_TRUE(plan.keep_alive);
}

}  // namespace
}  // namespace faultline::provider
