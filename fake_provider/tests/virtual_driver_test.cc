#include "fake_provider/virtual_driver.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/plan/plan_internal.h"
#include "fake_provider/provider_core.h"
#include "fake_provider/tests/plan_test_util.h"

namespace faultline::provider {
namespace {

using namespace std::chrono_literals;
using Kind = PlanStep::Kind;
using plan_internal::StepAt;

PlanStep Send(Duration at, std::string bytes) {
  PlanStep step = StepAt(Kind::kSend, at);
  step.bytes = std::move(bytes);
  return step;
}

PlanStep Wait(Kind kind, Duration at, std::optional<Duration> length, Duration every = {},
              std::string bytes = {}) {
  PlanStep step = StepAt(kind, at);
  step.length = length;
  step.every = every;
  step.bytes = std::move(bytes);
  return step;
}

ResponsePlan MakePlan(std::vector<PlanStep> steps, bool keep_alive = true) {
  ResponsePlan plan;
  plan.attempt = 1;
  plan.status = 200;
  plan.steps = std::move(steps);
  plan.keep_alive = keep_alive;
  return plan;
}

std::vector<Duration> Times(const std::vector<PipeEvent>& events) {
  std::vector<Duration> out;
  for (const PipeEvent& event : events) out.push_back(event.at);
  return out;
}

JournalEntry Entry() {
  JournalEntry entry;
  entry.method = "POST";
  entry.target = "/v1/chat/completions";
  return entry;
}

TEST(VirtualExchangeTest, SendsAtArrivalPlusOffsetAndJournalsEveryWrite) {
  Journal journal;
  const std::uint64_t index = journal.Begin(Entry());
  VirtualExchange exchange(MakePlan({Send(0ms, "head"), Send(10ms, "a"), Send(25ms, "bc")}), 1s,
                           &journal, index);
  EXPECT_EQ(exchange.NextActionAt(), Duration{1s});
  auto events = exchange.AdvanceTo(1010ms);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0], (PipeEvent{PipeEvent::Kind::kBytes, 1s, "head"}));
  EXPECT_EQ(events[1].at, 1010ms);
  EXPECT_EQ(exchange.NextActionAt(), Duration{1025ms});
  EXPECT_FALSE(exchange.finished());
  events = exchange.AdvanceTo(2s);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(exchange.finished());
  EXPECT_TRUE(exchange.keep_alive());
  EXPECT_EQ(exchange.NextActionAt(), std::nullopt);

  const JournalEntry entry = journal.Snapshot().at(0);
  ASSERT_EQ(entry.writes.size(), 3u);
  for (const WriteRecord& write : entry.writes) EXPECT_EQ(write.at, write.planned);
  EXPECT_EQ(entry.writes[2].at, 1025ms);
  EXPECT_EQ(entry.bytes_sent, 7u);
  EXPECT_EQ(entry.end, EndKind::kCompleted);
  EXPECT_EQ(entry.ended, 1025ms);
}

TEST(VirtualExchangeTest, CloseResetAndImplicitClose) {
  Journal journal;
  std::uint64_t index = journal.Begin(Entry());
  auto events =
      RunVirtually(MakePlan({Send(0s, "x"), StepAt(Kind::kClose, 1s)}, false), std::nullopt, 1h);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1], (PipeEvent{PipeEvent::Kind::kClose, 1s, ""}));

  VirtualExchange reset(MakePlan({Send(0s, "x"), StepAt(Kind::kReset, 2s)}, false), 0s, &journal,
                        index);
  reset.AdvanceTo(1h);
  EXPECT_EQ(journal.Snapshot()[0].end, EndKind::kResetByServer);
  EXPECT_FALSE(reset.keep_alive());

  index = journal.Begin(Entry());
  VirtualExchange closing(MakePlan({Send(0s, "x"), StepAt(Kind::kClose, 2s)}, false), 0s, &journal,
                          index);
  closing.AdvanceTo(1h);
  EXPECT_EQ(journal.Snapshot()[1].end, EndKind::kClosedByServer);

  // keep_alive false without a close step: the driver closes after the last step.
  events = RunVirtually(MakePlan({Send(3s, "x")}, false), std::nullopt, 1h);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1], (PipeEvent{PipeEvent::Kind::kClose, 3s, ""}));
}

TEST(VirtualExchangeTest, FiniteHeartbeatBeatsInsideItsWindowThenTheNextStepRuns) {
  const auto events = RunVirtually(
      MakePlan({Send(0s, "h"), Wait(Kind::kHeartbeat, 1s, 10s, 3s, "hb"), Send(11s, "z")}),
      std::nullopt, 1h);
  EXPECT_EQ(Times(events), (std::vector<Duration>{0s, 4s, 7s, 10s, 11s}));
  EXPECT_EQ(events[1].bytes, "hb");
  EXPECT_EQ(events[4].bytes, "z");

  // A window that is an exact multiple of `every` beats at its end too, before the next step.
  const auto exact = RunVirtually(
      MakePlan({Wait(Kind::kHeartbeat, 0s, 10s, 5s, "hb"), StepAt(Kind::kClose, 10s)}, false),
      std::nullopt, 1h);
  EXPECT_EQ(Times(exact), (std::vector<Duration>{5s, 10s, 10s}));
  EXPECT_EQ(exact[1].bytes, "hb");
  EXPECT_EQ(exact[2].kind, PipeEvent::Kind::kClose);
}

TEST(VirtualExchangeTest, HeartbeatForeverBeatsUntilTheClientGivesUp) {
  Journal journal;
  const std::uint64_t index = journal.Begin(Entry());
  VirtualExchange exchange(
      MakePlan({Send(0s, "h"), Wait(Kind::kHeartbeat, 1s, std::nullopt, 15s, "hb")}, false), 0s,
      &journal, index);
  std::size_t beats = 0;
  while (exchange.NextActionAt() && *exchange.NextActionAt() <= 10min) {
    for (const PipeEvent& event : exchange.AdvanceTo(*exchange.NextActionAt())) {
      beats += event.bytes == "hb";
    }
  }
  EXPECT_EQ(beats, 39u);  // 16 s, 31 s, ..., 586 s
  EXPECT_EQ(exchange.NextActionAt(), Duration{601s});
  exchange.ClientClosed(10min);
  EXPECT_TRUE(exchange.finished());
  const JournalEntry entry = journal.Snapshot()[0];
  EXPECT_EQ(entry.end, EndKind::kStalledClientGaveUp);
  EXPECT_EQ(entry.ended, 10min);
  EXPECT_EQ(entry.writes.size(), 40u);
}

TEST(VirtualExchangeTest, StallForeverHasNoNextActionAndEndsWhenTheClientCloses) {
  Journal journal;
  const std::uint64_t index = journal.Begin(Entry());
  VirtualExchange exchange(MakePlan({Send(0s, "h"), Wait(Kind::kStall, 0s, std::nullopt)}, false),
                           5s, &journal, index);
  EXPECT_EQ(exchange.AdvanceTo(5s).size(), 1u);
  EXPECT_EQ(exchange.NextActionAt(), std::nullopt);
  EXPECT_FALSE(exchange.finished());
  EXPECT_TRUE(exchange.AdvanceTo(1000h).empty());
  exchange.ClientClosed(35s);
  EXPECT_EQ(journal.Snapshot()[0].end, EndKind::kStalledClientGaveUp);
  EXPECT_EQ(journal.Snapshot()[0].ended, 35s);
}

TEST(VirtualExchangeTest, FiniteStallsAreSkippedAndClassifyAClientClose) {
  const ResponsePlan plan =
      MakePlan({Send(0s, "h"), Wait(Kind::kStall, 0s, 5s), Send(5s, "a"), Send(6s, "b")});
  EXPECT_EQ(Times(RunVirtually(plan, std::nullopt, 1h)), (std::vector<Duration>{0s, 5s, 6s}));

  Journal journal;
  std::uint64_t index = journal.Begin(Entry());
  VirtualExchange stalled(plan, 0s, &journal, index);
  EXPECT_EQ(stalled.AdvanceTo(0s).size(), 1u);
  EXPECT_EQ(stalled.NextActionAt(), Duration{5s});
  stalled.AdvanceTo(3s);
  stalled.ClientClosed(3s);
  EXPECT_EQ(journal.Snapshot()[0].end, EndKind::kStalledClientGaveUp);

  index = journal.Begin(Entry());
  VirtualExchange streaming(plan, 0s, &journal, index);
  streaming.AdvanceTo(5500ms);
  streaming.ClientClosed(5500ms);
  EXPECT_EQ(journal.Snapshot()[1].end, EndKind::kClientClosed) << "between events, not stalled";
  EXPECT_EQ(journal.Snapshot()[1].writes.size(), 2u);
}

TEST(VirtualExchangeTest, RunVirtuallyStopsAtTheClientCloseOrTheHorizon) {
  const ResponsePlan plan = MakePlan({Send(0s, "a"), Send(10s, "b"), Send(20s, "c")});
  EXPECT_EQ(RunVirtually(plan, Duration{10s}, 1h).size(), 2u);
  EXPECT_EQ(RunVirtually(plan, std::nullopt, 15s).size(), 2u);
  EXPECT_EQ(RunVirtually(plan, std::nullopt, 1h).size(), 3u);
}

// The required end-to-end case: a 120 s Retry-After, then a stream that stalls for ten minutes
// (heart-beating every 15 s), driven through the session core and the virtual driver. Virtual
// time makes it cost milliseconds.
TEST(VirtualWorldTest, LongRetryAfterAndTenMinuteStallRunInMilliseconds) {
  const auto wall_start = std::chrono::steady_clock::now();

  scenario::Scenario scenario;
  scenario::ResponseSpec limited;
  limited.status = 429;
  limited.error = scenario::ErrorSpec{scenario::ErrorKind::kRateLimit, {}, {}, {}};
  limited.retry_after = scenario::RetryAfter{scenario::RetryAfter::Form::kSeconds, "120", {}};
  scenario::ResponseSpec stalling;
  stalling.content.text = "Hello, world";
  scenario::EventFault stall;
  stall.kind = scenario::EventFault::Kind::kStall;
  stall.after_event = 2;
  stall.wait = {10min, false};
  stall.heartbeat = {15s, scenario::Heartbeat::Style::kComment};
  stalling.content.faults = {stall};
  scenario.responses = {limited, stalling};

  testing::FakeWriter writer;
  const WallTime start = testing::TestNow();
  ProviderSession session(std::make_shared<const CompiledScenario>(scenario, &writer), 7, start);
  Journal journal;
  const std::string body = R"({"stream":true})";

  // Attempt 1 at t=0: the 429.
  const ResponsePlan first = session.Respond({"POST", "/v1/chat/completions", body}, start);
  std::uint64_t index = journal.Begin(Entry());
  VirtualExchange exchange_one(first, 0s, &journal, index);
  std::string received_one;
  while (auto at = exchange_one.NextActionAt()) {
    for (const PipeEvent& event : exchange_one.AdvanceTo(*at)) received_one += event.bytes;
  }
  const auto response_one = testing::Decode(received_one);
  ASSERT_EQ(response_one.status_line, "HTTP/1.1 429 Too Many Requests");
  const Duration retry_after = std::chrono::seconds(std::stoi(*response_one.Header("retry-after")));
  EXPECT_EQ(retry_after, 120s);

  // Attempt 2 after honouring Retry-After: the stalled stream, run to completion.
  const Duration arrived = retry_after;
  const ResponsePlan second =
      session.Respond({"POST", "/v1/chat/completions", body}, start + arrived);
  index = journal.Begin(Entry());
  VirtualExchange exchange_two(second, arrived, &journal, index);
  std::vector<PipeEvent> received;
  while (auto at = exchange_two.NextActionAt()) {
    for (PipeEvent& event : exchange_two.AdvanceTo(*at)) received.push_back(std::move(event));
  }
  EXPECT_TRUE(exchange_two.finished());
  EXPECT_TRUE(exchange_two.keep_alive());

  // Bytes: head + 2 events at 120 s, 40 heartbeats (135 s ... 720 s), the rest at 720 s.
  ASSERT_EQ(received.size(), 42u);
  EXPECT_EQ(received.front().at, 120s);
  EXPECT_EQ(received[1].at, 135s);
  EXPECT_EQ(received[40].at, 720s);
  EXPECT_EQ(received[40].bytes, "e\r\n: keep-alive\n\n\r\n");
  EXPECT_EQ(received.back().at, 720s);
  std::string wire;
  for (const PipeEvent& event : received) wire += event.bytes;
  const auto response = testing::Decode(wire);
  EXPECT_EQ(response.status_line, "HTTP/1.1 200 OK");
  EXPECT_TRUE(response.final_chunk);
  int comments = 0;
  const auto events = testing::ParseSse(response.body, &comments);
  EXPECT_EQ(comments, 40);
  ASSERT_EQ(events.size(), 5u);  // 3 content events, usage, [DONE]: nothing lost
  EXPECT_EQ(events.back().data, "[DONE]");

  // Journal: both exchanges, completed, writes at their planned instants.
  const std::vector<JournalEntry> entries = journal.Snapshot();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].end, EndKind::kCompleted);
  EXPECT_EQ(entries[0].ended, 0s);
  EXPECT_EQ(entries[1].end, EndKind::kCompleted);
  EXPECT_EQ(entries[1].ended, 720s);
  EXPECT_EQ(entries[1].writes.size(), 42u);
  EXPECT_EQ(entries[1].bytes_sent, wire.size());
  for (const WriteRecord& write : entries[1].writes) EXPECT_EQ(write.at, write.planned);

  const auto wall = std::chrono::steady_clock::now() - wall_start;
  EXPECT_LT(wall, 200ms) << "virtual time must not cost wall time";
}

}  // namespace
}  // namespace faultline::provider
