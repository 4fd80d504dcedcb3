#include "harness/trace/event.h"

#include <array>
#include <cmath>
#include <utility>

#include "harness/trace/json_out.h"
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
void Number(JsonOut& out, std::string_view key, double value) {
  constexpr double kExact = 9007199254740992.0;  // 2^53
  out.Key(key);
  if (std::trunc(value) == value && std::fabs(value) < kExact) {
    out.Int(static_cast<std::int64_t>(value));
  } else {
    out.Double(value);
  }
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

// Every writer below gives its keys in increasing byte order (json_out.h).
void WriteFailure(const ReportedFailure& failure, JsonOut& out) {
  out.BeginObject();
  out.Field("class", failure.failure_class);
  out.Field("code", failure.code);
  out.Field("message", failure.message);
  out.Field("partial_output", failure.partial_output);
  out.Field("phase", failure.phase);
  if (failure.request_id) out.Field("request_id", *failure.request_id);
  if (failure.retry_after_ms) Number(out, "retry_after_ms", *failure.retry_after_ms);
  out.Field("retryable", failure.retryable);
  if (!failure.route_id.empty()) out.Field("route_id", failure.route_id);
  if (failure.status) out.Field("status", *failure.status);
  out.EndObject();
}

ReportedToolCall ToolCallFromJson(const json& object) {
  return {Integer<int>(object, "index"), String(object, "id"), String(object, "name"),
          String(object, "arguments")};
}

void WriteToolCall(const ReportedToolCall& call, bool fragment, JsonOut& out) {
  out.BeginObject();
  out.Field("arguments", call.arguments);
  // A committed tool call always names its id and name; a fragment only when it has them.
  if (!fragment || !call.id.empty()) out.Field("id", call.id);
  if (call.index) out.Field("index", *call.index);
  if (!fragment || !call.name.empty()) out.Field("name", call.name);
  out.EndObject();
}

void WriteUsage(const ReportedUsage& usage, JsonOut& out) {
  const auto tokens = [&](std::string_view key, const std::optional<std::int64_t>& count) {
    out.Key(key);
    count ? out.Int(*count) : out.Null();
  };
  out.BeginObject();
  tokens("input_tokens", usage.input_tokens);
  tokens("output_tokens", usage.output_tokens);
  out.EndObject();
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

SharedJson::SharedJson(json value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  shared_ = std::make_shared<const Shared>(Shared{std::move(value), std::move(text)});
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

namespace {

void WriteHello(const ClientEvent& event, JsonOut& out) {
  out.BeginObject();
  if (event.at_ms) Number(out, "at_ms", *event.at_ms);
  if (event.session) out.Field("mode", "session");
  out.Field("name", event.name);
  if (event.policy) {
    out.Key("policy");
    out.Json(**event.policy, event.policy->text());
  }
  if (event.reset) out.Field("reset", true);
  if (!event.route_id.empty()) out.Field("route_id", event.route_id);
  out.Field("type", ToString(event.kind));
  if (!event.version.empty()) out.Field("version", event.version);
  out.EndObject();
}

void WriteToolCalls(const std::vector<ReportedToolCall>& calls, JsonOut& out) {
  out.Key("tool_calls");
  out.BeginArray();
  for (const ReportedToolCall& call : calls) WriteToolCall(call, false, out);
  out.EndArray();
}

void WriteRouteFailures(const std::vector<ReportedFailure>& failures, JsonOut& out) {
  out.Key("route_failures");
  out.BeginArray();
  for (const ReportedFailure& failure : failures) WriteFailure(failure, out);
  out.EndArray();
}

// The fields of a committed answer are read only from a response/committed.
void WriteFinishReason(const ClientEvent& event, JsonOut& out) {
  if (event.kind != EventKind::kCommitted || !event.has_finish_reason) return;
  out.Key("finish_reason");
  event.finish_reason ? out.String(*event.finish_reason) : out.Null();
}

}  // namespace

void WriteEvent(const ClientEvent& event, JsonOut& out) {
  if (event.kind == EventKind::kHello) return WriteHello(event, out);
  const bool committed = event.kind == EventKind::kCommitted;
  out.BeginObject();
  if (event.at_ms) Number(out, "at_ms", *event.at_ms);
  if (event.attempt) out.Field("attempt", *event.attempt);
  if (event.call) out.Field("call", *event.call);
  if (event.uncommitted) out.Field("commitment", "uncommitted");
  if (!event.delay_source.empty()) out.Field("delay_source", event.delay_source);
  if (event.failure) {
    out.Key("failure");
    WriteFailure(*event.failure, out);
  }
  WriteFinishReason(event, out);
  if (!event.give_up.empty()) out.Field("give_up", event.give_up);
  if (!event.next_route_id.empty()) out.Field("next_route_id", event.next_route_id);
  if (committed && event.reasoning) out.Field("reasoning", *event.reasoning);
  if (!event.response_id.empty()) out.Field("response_id", event.response_id);
  if (!event.route_failures.empty()) WriteRouteFailures(event.route_failures, out);
  if (!event.route_id.empty()) out.Field("route_id", event.route_id);
  if (event.scheduled_retry_ms) Number(out, "scheduled_retry_ms", *event.scheduled_retry_ms);
  if (event.text) out.Field("text", *event.text);
  if (event.tool_call) {
    out.Key("tool_call");
    WriteToolCall(*event.tool_call, true, out);
  }
  if (committed && event.tool_calls) WriteToolCalls(*event.tool_calls, out);
  out.Field("type", ToString(event.kind));
  if (committed && event.usage) {
    out.Key("usage");
    WriteUsage(*event.usage, out);
  }
  if (event.wasted) {
    out.Key("wasted");
    out.BeginObject();
    out.Field("approx_tokens", event.wasted->approx_tokens);
    out.Field("bytes", event.wasted->bytes);
    out.EndObject();
  }
  out.EndObject();
}

json EventToJson(const ClientEvent& event) {
  JsonTree tree;
  WriteEvent(event, tree);
  return tree.Take();
}

}  // namespace faultline::harness
