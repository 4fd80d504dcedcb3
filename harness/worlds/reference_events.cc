#include "harness/worlds/reference_events.h"

#include <utility>

#include "reference_impl/recent_memo.h"
#include "scenarios/redact.h"

namespace faultline::harness {
namespace {

EventKind KindOf(ref::EventType type) {
  switch (type) {
    case ref::EventType::kHello:
      return EventKind::kHello;
    case ref::EventType::kStart:
      return EventKind::kStart;
    case ref::EventType::kChunk:
      return EventKind::kChunk;
    case ref::EventType::kInterrupted:
      return EventKind::kInterrupted;
    case ref::EventType::kCommitted:
      return EventKind::kCommitted;
    case ref::EventType::kFailed:
      return EventKind::kFailed;
  }
  return EventKind::kStart;
}

// Free text redacted as EventFromJson redacts it. A scenario's runs fail with the same messages
// run after run, and redacting them was a fortieth of a virtual run: the last few are kept.
std::string Redacted(std::string_view text) {
  thread_local ref::RecentMemo<std::string> memo;
  return memo.Get(text, [](std::string_view each) { return scenario::RedactSecrets(each); });
}

ReportedFailure FailureOf(ref::Failure failure) {
  ReportedFailure out;
  out.code = ref::ToString(failure.code);
  out.failure_class = ref::ToString(failure.failure_class);
  out.phase = ref::ToString(failure.phase);
  out.retryable = failure.retryable;
  out.partial_output = ref::ToString(failure.partial_output);
  out.message = Redacted(failure.message);
  out.status = failure.status;
  if (failure.retry_after) out.retry_after_ms = static_cast<double>(failure.retry_after->count());
  out.request_id = std::move(failure.request_id);
  out.route_id = std::move(failure.route_id);
  return out;
}

ReportedWaste WasteOf(const ref::WastedWork& wasted) {
  return {static_cast<std::int64_t>(wasted.bytes), static_cast<std::int64_t>(wasted.approx_tokens)};
}

void ReadCommitted(ref::Completed completed, ClientEvent& out) {
  out.text = std::move(completed.text);
  out.tool_calls.emplace();
  for (ref::ToolCall& call : completed.tool_calls) {
    out.tool_calls->push_back(
        {std::nullopt, std::move(call.id), std::move(call.name), std::move(call.arguments)});
  }
  out.has_finish_reason = true;
  out.finish_reason = std::move(completed.finish_reason);
  out.usage = ReportedUsage{completed.usage.input_tokens, completed.usage.output_tokens};
  if (!completed.reasoning.empty()) out.reasoning = std::move(completed.reasoning);
}

// The fields of the kinds the line writes them for (call_event.h), as EventFromJson reads them.
void ReadKindFields(ref::LifecycleEvent& event, ClientEvent& out) {
  switch (event.type) {
    case ref::EventType::kChunk:
      out.text = std::move(event.text);
      if (event.tool_call) {
        ref::ToolCallDelta& delta = *event.tool_call;
        out.tool_call = ReportedToolCall{delta.index, std::move(delta.id), std::move(delta.name),
                                         std::move(delta.arguments)};
      }
      out.uncommitted = true;
      break;
    case ref::EventType::kInterrupted:
      if (event.failure) out.failure = FailureOf(std::move(*event.failure));
      out.scheduled_retry_ms = static_cast<double>(event.scheduled_retry.count());
      out.delay_source = ref::ToString(event.delay_source);
      out.wasted = WasteOf(event.wasted);
      out.next_route_id = std::move(event.next_route_id);
      break;
    case ref::EventType::kCommitted:
      if (event.committed) ReadCommitted(std::move(*event.committed), out);
      break;
    case ref::EventType::kFailed:
      if (event.failure) out.failure = FailureOf(std::move(*event.failure));
      out.wasted = WasteOf(event.wasted);
      out.give_up = Redacted(event.give_up);
      for (ref::Failure& failure : event.route_failures) {
        out.route_failures.push_back(FailureOf(std::move(failure)));
      }
      break;
    default:
      break;
  }
}

}  // namespace

ClientEvent EventFromReference(ref::LifecycleEvent event) {
  ClientEvent out;
  out.kind = KindOf(event.type);
  if (event.type == ref::EventType::kHello) {  // its line has no route
    out.name = std::move(event.name);
    out.version = std::move(event.version);
    out.policy = std::move(event.policy);
    return out;
  }
  out.route_id = std::move(event.route_id);
  out.response_id = std::move(event.response_id);
  if (event.attempt > 0) out.attempt = event.attempt;
  ReadKindFields(event, out);
  return out;
}

}  // namespace faultline::harness
