#include "reference_impl/call_event.h"

namespace faultline::ref {
namespace {

using nlohmann::json;

json ToolCallFragmentJson(const ToolCallDelta& delta) {
  json out = {{"index", delta.index}, {"arguments", delta.arguments}};
  if (!delta.id.empty()) out["id"] = delta.id;
  if (!delta.name.empty()) out["name"] = delta.name;
  return out;
}

json WastedJson(const WastedWork& wasted) {
  return {{"bytes", wasted.bytes}, {"approx_tokens", wasted.approx_tokens}};
}

json UsageJson(const Usage& usage) {
  json out = json::object();
  out["input_tokens"] = usage.input_tokens ? json(*usage.input_tokens) : json(nullptr);
  out["output_tokens"] = usage.output_tokens ? json(*usage.output_tokens) : json(nullptr);
  return out;
}

json CommittedJson(const Completed& completed) {
  json calls = json::array();
  for (const ToolCall& call : completed.tool_calls) {
    calls.push_back({{"id", call.id}, {"name", call.name}, {"arguments", call.arguments}});
  }
  json out = {{"text", completed.text},
              {"tool_calls", std::move(calls)},
              {"finish_reason", completed.finish_reason},
              {"usage", UsageJson(completed.usage)}};
  if (!completed.reasoning.empty()) out["reasoning"] = completed.reasoning;
  return out;
}

}  // namespace

std::string_view ToString(EventType type) {
  switch (type) {
    case EventType::kHello:
      return "adapter/hello";
    case EventType::kStart:
      return "response/start";
    case EventType::kChunk:
      return "assistant/chunk";
    case EventType::kInterrupted:
      return "response/interrupted";
    case EventType::kCommitted:
      return "response/committed";
    case EventType::kFailed:
      return "response/failed";
  }
  return "unknown";
}

json FailureToJson(const Failure& failure) {
  json out = {{"code", ToString(failure.code)},
              {"class", ToString(failure.failure_class)},
              {"phase", ToString(failure.phase)},
              {"retryable", failure.retryable},
              {"partial_output", ToString(failure.partial_output)}};
  if (failure.status) out["status"] = *failure.status;
  if (failure.retry_after) out["retry_after_ms"] = failure.retry_after->count();
  if (failure.request_id) out["request_id"] = *failure.request_id;
  out["message"] = failure.message;
  if (!failure.route_id.empty()) out["route_id"] = failure.route_id;
  return out;
}

json LifecycleEvent::ToJson() const {
  json out = {{"type", ToString(type)}};
  if (type == EventType::kHello) {
    out["name"] = name;
    out["version"] = version;
    out["policy"] = policy;
    return out;
  }
  if (!response_id.empty()) out["response_id"] = response_id;
  if (attempt > 0) out["attempt"] = attempt;
  if (!route_id.empty()) out["route_id"] = route_id;
  switch (type) {
    case EventType::kChunk:
      if (text) out["text"] = *text;
      if (tool_call) out["tool_call"] = ToolCallFragmentJson(*tool_call);
      out["commitment"] = "uncommitted";
      break;
    case EventType::kInterrupted:
      if (failure) out["failure"] = FailureToJson(*failure);
      out["scheduled_retry_ms"] = scheduled_retry.count();
      out["delay_source"] = ToString(delay_source);
      out["wasted"] = WastedJson(wasted);
      if (!next_route_id.empty()) out["next_route_id"] = next_route_id;
      break;
    case EventType::kCommitted:
      if (committed) out.update(CommittedJson(*committed));
      break;
    case EventType::kFailed:
      if (failure) out["failure"] = FailureToJson(*failure);
      out["wasted"] = WastedJson(wasted);
      if (!give_up.empty()) out["give_up"] = give_up;
      if (!route_failures.empty()) {
        json all = json::array();
        for (const Failure& each : route_failures) all.push_back(FailureToJson(each));
        out["route_failures"] = std::move(all);
      }
      break;
    default:
      break;
  }
  return out;
}

std::string LifecycleEvent::ToJsonLine() const { return DumpJson(ToJson()); }

std::string DumpJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace faultline::ref
