// The reference client's events recorded directly are the events their protocol lines give.
#include "harness/worlds/reference_events.h"

#include <gtest/gtest.h>

#include <vector>

#include "reference_impl/call.h"
#include "reference_impl/policy.h"

namespace faultline::harness {
namespace {

ref::Failure AFailure(std::string message) {
  ref::Failure failure;
  failure.code = ref::FailureCode::kServer;
  failure.failure_class = ref::FailureClass::kProviderUnavailable;
  failure.phase = ref::Phase::kStream;
  failure.retryable = true;
  failure.partial_output = ref::PartialOutput::kUncommitted;
  failure.status = 503;
  failure.retry_after = std::chrono::milliseconds(1500);
  failure.request_id = "req_1";
  failure.message = std::move(message);
  failure.route_id = "primary";
  return failure;
}

// One event of every type, with every field it carries set, and some left unset.
std::vector<ref::LifecycleEvent> EveryKind() {
  std::vector<ref::LifecycleEvent> events;
  events.push_back(ref::HelloEvent(ref::RetryPolicy{}));
  ref::LifecycleEvent start;
  start.type = ref::EventType::kStart;
  start.response_id = "resp_1";
  start.attempt = 1;
  events.push_back(start);
  start.attempt = 0;
  start.route_id = "primary";
  events.push_back(start);
  ref::LifecycleEvent chunk = start;
  chunk.type = ref::EventType::kChunk;
  chunk.text = "caf\xc3\xa9 \"x\"\n";
  events.push_back(chunk);
  chunk.text.reset();
  chunk.tool_call = ref::ToolCallDelta{2, "call_1", "get_weather", "{\"city\":"};
  events.push_back(chunk);
  chunk.tool_call = ref::ToolCallDelta{2, "", "", "\"Paris\"}"};
  events.push_back(chunk);
  ref::LifecycleEvent interrupted = start;
  interrupted.type = ref::EventType::kInterrupted;
  interrupted.failure = AFailure("upstream said Authorization: Bearer sk-ant-abcdefghijklmnop1234");
  interrupted.scheduled_retry = std::chrono::milliseconds(750);
  interrupted.delay_source = ref::DelaySource::kRetryAfter;
  interrupted.wasted = {1234, 56};
  interrupted.next_route_id = "fallback";
  events.push_back(interrupted);
  interrupted.failure.reset();
  interrupted.next_route_id.clear();
  events.push_back(interrupted);
  ref::LifecycleEvent committed = start;
  committed.type = ref::EventType::kCommitted;
  events.push_back(committed);  // no answer: nothing of one
  committed.committed = ref::Completed{.text = "hello",
                                       .reasoning = "",
                                       .tool_calls = {{"c1", "f", "{}"}, {"c2", "g", "[]"}},
                                       .finish_reason = "stop",
                                       .usage = {12, std::nullopt}};
  events.push_back(committed);
  committed.committed->reasoning = "thought";
  committed.committed->finish_reason = "";
  committed.committed->tool_calls.clear();
  events.push_back(committed);
  ref::LifecycleEvent failed;
  failed.type = ref::EventType::kFailed;
  events.push_back(failed);
  failed.failure = AFailure("x-api-key: sk-proj-0123456789abcdefghij");
  failed.failure->status.reset();
  failed.failure->retry_after.reset();
  failed.failure->request_id.reset();
  failed.give_up = "all-routes-down";
  failed.route_failures = {AFailure("a"), AFailure("b")};
  failed.wasted = {7, 1};
  events.push_back(failed);
  return events;
}

TEST(ReferenceEventsTest, EqualTheEventsOfTheirLines) {
  for (const ref::LifecycleEvent& event : EveryKind()) {
    EXPECT_EQ(EventFromReference(event), EventFromJson(event.ToJson())) << event.ToJsonLine();
  }
}

}  // namespace
}  // namespace faultline::harness
