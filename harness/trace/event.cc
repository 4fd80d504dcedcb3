#include "harness/trace/event.h"

#include <array>
#include <cmath>
#include <utility>

#include "scenarios/redact.h"

namespace faultline::harness {
namespace {

using nlohmann::json;

constexpr std::array<std::pair<EventKind, std::string_view>, 6> kNames{{
    {EventKind::kHello, "adapter/hello"},
    {EventKind::kStart, "response/start"},
    {EventKind::kChunk, "assistant/chunk"},
    {EventKind::kInterrupted, "response/interrupted"},
    {EventKind::kCommitted, "response/committed"},
    {EventKind::kFailed, "response/failed"},
}};

// Readers that take a field of the expected JSON type and read anything else as absent.
const json* Field(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto found = object.find(key);
  return found == object.end() ? nullptr : &*found;
}
std::string String(const json& object, std::string_view key) {
  const json* value = Field(object, key);
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}
std::optional<std::string> OptionalString(const json& object, std::string_view key) {
  const json* value = Field(object, key);
  if (value == nullptr || !value->is_string()) return std::nullopt;
  return value->get<std::string>();
}
std::optional<double> Number(const json& object, std::string_view key) {
  const json* value = Field(object, key);
  if (value == nullptr || !value->is_number()) return std::nullopt;
  return value->get<double>();
}
template <typename Int>
std::optional<Int> Integer(const json& object, std::string_view key) {
  const json* value = Field(object, key);
  if (value == nullptr || !value->is_number_integer()) return std::nullopt;
  return value->get<Int>();
}

// A number as the reference client writes it: whole milliseconds as integers.
json NumberJson(double value) {
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (std::trunc(value) == value && std::fabs(value) < kExact) {
    return static_cast<std::int64_t>(value);
  }
  return value;
}

ReportedFailure FailureFromJson(const json& object) {
  ReportedFailure failure;
  failure.code = String(object, "code");
  failure.failure_class = String(object, "class");
  failure.phase = String(object, "phase");
  const json* retryable = Field(object, "retryable");
  failure.retryable = retryable != nullptr && retryable->is_boolean() && retryable->get<bool>();
  failure.partial_output = String(object, "partial_output");
  // Free text from the subject, bound for the trace and the reports: without the keys it quotes.
  failure.message = scenario::RedactSecrets(String(object, "message"));
  failure.status = Integer<int>(object, "status");
  failure.retry_after_ms = Number(object, "retry_after_ms");
  failure.request_id = OptionalString(object, "request_id");
  failure.route_id = String(object, "route_id");
  return failure;
}

json FailureToJson(const ReportedFailure& failure) {
  json out = {{"code", failure.code},
              {"class", failure.failure_class},
              {"phase", failure.phase},
              {"retryable", failure.retryable},
              {"partial_output", failure.partial_output},
              {"message", failure.message}};
  if (failure.status) out["status"] = *failure.status;
  if (failure.retry_after_ms) out["retry_after_ms"] = NumberJson(*failure.retry_after_ms);
  if (failure.request_id) out["request_id"] = *failure.request_id;
  if (!failure.route_id.empty()) out["route_id"] = failure.route_id;
  return out;
}

ReportedToolCall ToolCallFromJson(const json& object) {
  return {Integer<int>(object, "index"), String(object, "id"), String(object, "name"),
          String(object, "arguments")};
}

json ToolCallToJson(const ReportedToolCall& call, bool fragment) {
  json out = {{"arguments", call.arguments}};
  if (call.index) out["index"] = *call.index;
  // A committed tool call always names its id and name; a fragment only when it has them.
  if (!fragment || !call.id.empty()) out["id"] = call.id;
  if (!fragment || !call.name.empty()) out["name"] = call.name;
  return out;
}

json UsageToJson(const ReportedUsage& usage) {
  const auto tokens = [](const std::optional<std::int64_t>& count) {
    return count ? json(*count) : json(nullptr);
  };
  return {{"input_tokens", tokens(usage.input_tokens)},
          {"output_tokens", tokens(usage.output_tokens)}};
}

void ReadCommitted(const json& line, ClientEvent& event) {
  if (const json* calls = Field(line, "tool_calls"); calls != nullptr && calls->is_array()) {
    event.tool_calls.emplace();
    for (const json& call : *calls) event.tool_calls->push_back(ToolCallFromJson(call));
  }
  if (const json* reason = Field(line, "finish_reason"); reason != nullptr) {
    event.has_finish_reason = true;
    if (reason->is_string()) event.finish_reason = reason->get<std::string>();
  }
  if (const json* usage = Field(line, "usage"); usage != nullptr && usage->is_object()) {
    event.usage = ReportedUsage{Integer<std::int64_t>(*usage, "input_tokens"),
                                Integer<std::int64_t>(*usage, "output_tokens")};
  }
  event.reasoning = OptionalString(line, "reasoning");
}

void ReadFailureFields(const json& line, ClientEvent& event) {
  if (const json* failure = Field(line, "failure"); failure != nullptr && failure->is_object()) {
    event.failure = FailureFromJson(*failure);
  }
  if (const json* wasted = Field(line, "wasted"); wasted != nullptr && wasted->is_object()) {
    event.wasted = ReportedWaste{Integer<std::int64_t>(*wasted, "bytes").value_or(0),
                                 Integer<std::int64_t>(*wasted, "approx_tokens").value_or(0)};
  }
  event.give_up = scenario::RedactSecrets(String(line, "give_up"));
  if (const json* all = Field(line, "route_failures"); all != nullptr && all->is_array()) {
    for (const json& failure : *all) event.route_failures.push_back(FailureFromJson(failure));
  }
}

void WriteFailureFields(const ClientEvent& event, json& out) {
  if (event.failure) out["failure"] = FailureToJson(*event.failure);
  if (event.wasted) {
    out["wasted"] = {{"bytes", event.wasted->bytes},
                     {"approx_tokens", event.wasted->approx_tokens}};
  }
  if (!event.give_up.empty()) out["give_up"] = event.give_up;
  if (!event.route_failures.empty()) {
    json all = json::array();
    for (const ReportedFailure& failure : event.route_failures)
      all.push_back(FailureToJson(failure));
    out["route_failures"] = std::move(all);
  }
}

void WriteCommitted(const ClientEvent& event, json& out) {
  if (event.tool_calls) {
    json calls = json::array();
    for (const ReportedToolCall& call : *event.tool_calls)
      calls.push_back(ToolCallToJson(call, false));
    out["tool_calls"] = std::move(calls);
  }
  if (event.has_finish_reason) {
    out["finish_reason"] = event.finish_reason ? json(*event.finish_reason) : json(nullptr);
  }
  if (event.usage) out["usage"] = UsageToJson(*event.usage);
  if (event.reasoning) out["reasoning"] = *event.reasoning;
}

}  // namespace

std::string_view ToString(EventKind kind) {
  for (const auto& [each, name] : kNames) {
    if (each == kind) return name;
  }
  return {};
}

std::optional<EventKind> ParseEventKind(std::string_view name) {
  for (const auto& [kind, each] : kNames) {
    if (each == name) return kind;
  }
  return std::nullopt;
}

std::string_view ClientEvent::route() const {
  if (!route_id.empty() || !failure) return route_id;
  return failure->route_id;
}

ClientEvent EventFromJson(const json& line) {
  ClientEvent event;
  event.kind = ParseEventKind(String(line, "type")).value_or(EventKind::kStart);
  event.at_ms = Number(line, "at_ms");
  event.route_id = String(line, "route_id");
  if (event.kind == EventKind::kHello) {
    event.name = String(line, "name");
    event.version = String(line, "version");
    if (const json* policy = Field(line, "policy"); policy != nullptr) event.policy = *policy;
    event.session = String(line, "mode") == "session";
    const json* reset = Field(line, "reset");
    event.reset = reset != nullptr && reset->is_boolean() && reset->get<bool>();
    return event;
  }
  event.call = Integer<int>(line, "call");
  event.response_id = String(line, "response_id");
  event.attempt = Integer<int>(line, "attempt");
  event.text = OptionalString(line, "text");
  if (const json* call = Field(line, "tool_call"); call != nullptr && call->is_object()) {
    event.tool_call = ToolCallFromJson(*call);
  }
  event.uncommitted = String(line, "commitment") == "uncommitted";
  ReadFailureFields(line, event);
  event.scheduled_retry_ms = Number(line, "scheduled_retry_ms");
  event.delay_source = String(line, "delay_source");
  event.next_route_id = String(line, "next_route_id");
  if (event.kind == EventKind::kCommitted) ReadCommitted(line, event);
  return event;
}

json EventToJson(const ClientEvent& event) {
  json out = {{"type", ToString(event.kind)}};
  if (event.at_ms) out["at_ms"] = NumberJson(*event.at_ms);
  if (!event.route_id.empty()) out["route_id"] = event.route_id;
  if (event.kind == EventKind::kHello) {
    out["name"] = event.name;
    if (!event.version.empty()) out["version"] = event.version;
    if (event.policy) out["policy"] = *event.policy;
    if (event.session) out["mode"] = "session";
    if (event.reset) out["reset"] = true;
    return out;
  }
  if (event.call) out["call"] = *event.call;
  if (!event.response_id.empty()) out["response_id"] = event.response_id;
  if (event.attempt) out["attempt"] = *event.attempt;
  if (event.text) out["text"] = *event.text;
  if (event.tool_call) out["tool_call"] = ToolCallToJson(*event.tool_call, true);
  if (event.uncommitted) out["commitment"] = "uncommitted";
  WriteFailureFields(event, out);
  if (event.scheduled_retry_ms) out["scheduled_retry_ms"] = NumberJson(*event.scheduled_retry_ms);
  if (!event.delay_source.empty()) out["delay_source"] = event.delay_source;
  if (!event.next_route_id.empty()) out["next_route_id"] = event.next_route_id;
  if (event.kind == EventKind::kCommitted) WriteCommitted(event, out);
  return out;
}

}  // namespace faultline::harness
