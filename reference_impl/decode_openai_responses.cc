// openai-responses: Responses API stream events and bodies.
//
//   event: response.created                 {"type":...,"sequence_number":0,"response":{...}}
//   event: response.output_item.added       {"output_index":1,"item":{"type":"function_call",
//                                            "call_id":"call_1","name":"get_weather",...}}
//   event: response.output_text.delta       {"output_index":0,"content_index":0,"delta":"Hi"}
//   event: response.function_call_arguments.delta  {"output_index":1,"delta":"{\"ci"}
//   event: response.reasoning_summary_text.delta   {"delta":"..."}  (and response.reasoning_text.*)
//   event: response.completed               {"response":{"status":"completed","usage":{...}}}
//   event: response.incomplete              {"response":{"incomplete_details":{"reason":...}}}
//   event: response.failed                  {"response":{"error":{"code","message"}}}
//   event: error                            {"type":"error","code","message"}  (flat) or
//                                           {"type":"error","error":{"type","code","message"}}
//
// Every event carries `sequence_number`; each must be exactly one more than the previous one (a
// gap or a step back is a protocol error). Unknown event types are ignored.
#include <fmt/format.h>

#include "reference_impl/dialect_decoder_internal.h"

namespace faultline::ref::internal {
namespace {

void CheckSequence(const Json& data, DialectDecoder::State& state) {
  const std::optional<std::int64_t> number = OptInt(data, "sequence_number");
  if (!number) return;
  if (const auto last = state.last_sequence_number) {
    if (*number <= *last) {
      throw ShapeError{
          fmt::format("sequence_number {} after {} is not increasing", *number, *last)};
    }
    if (*number != *last + 1) {
      throw ShapeError{fmt::format("sequence_number gap: {} after {}", *number, *last)};
    }
  }
  state.last_sequence_number = number;
}

void AppendOpenaiResponsesUsage(const Json& response, std::vector<Delta>& out) {
  const Json* usage = Member(response, "usage");
  if (usage == nullptr) return;
  if (!usage->is_object()) throw ShapeError{"`usage` must be an object"};
  out.push_back(UsageDelta{OptInt(*usage, "input_tokens"), OptInt(*usage, "output_tokens")});
}

std::string IncompleteReason(const Json& response) {
  if (const Json* details = Member(response, "incomplete_details")) {
    if (!details->is_object()) throw ShapeError{"`incomplete_details` must be an object"};
    if (auto reason = OptString(*details, "reason"); !reason.empty()) return std::string(reason);
  }
  return "incomplete";
}

ToolCallDelta ToolCallFrom(const Json& item, int index) {
  std::string_view id = OptString(item, "call_id");
  if (id.empty()) id = OptString(item, "id");
  return ToolCallDelta{index, std::string(id), std::string(RequireString(item, "name")),
                       std::string(OptString(item, "arguments"))};
}

// A terminal `response.*` event: usage, finish reason, marker, or the error it reports.
void AppendTerminal(std::string_view type, const Json& data, std::vector<Delta>& out) {
  const Json& response = RequireObject(data, "response");
  if (type == "response.failed") {
    const Json* error = Member(response, "error");
    out.push_back(error != nullptr
                      ? ErrorFrom(*error)
                      : ProviderErrorDelta{{}, {}, "response.failed without an error"});
    return;
  }
  AppendOpenaiResponsesUsage(response, out);
  const bool completed = type == "response.completed";
  out.push_back(FinishDelta{completed ? std::string("completed") : IncompleteReason(response)});
  out.push_back(TerminalDelta{completed ? TerminalMarker::kResponseCompleted
                                        : TerminalMarker::kResponseIncomplete});
}

// `error` comes flat ({"type":"error","code","message"}) or nested ({"error":{...}}).
ProviderErrorDelta ErrorEvent(const Json& data) {
  if (const Json* nested = Member(data, "error")) return ErrorFrom(*nested);
  return ProviderErrorDelta{{}, CodeText(data, "code"), std::string(OptString(data, "message"))};
}

int OutputIndex(const Json& data) { return static_cast<int>(RequireInt(data, "output_index")); }

void AppendItemAdded(const Json& data, std::vector<Delta>& out) {
  const Json& item = RequireObject(data, "item");
  if (RequireString(item, "type") == "function_call") {
    out.push_back(ToolCallFrom(item, OutputIndex(data)));
  }
}

}  // namespace

EventWeight DecodeOpenAiResponsesEvent(const SseEventView& event, DialectDecoder::State& state,
                                       std::vector<Delta>& out) {
  const Json data = ParseObject(event.data, "the event data");
  if (const Json* envelope = OpenAiEnvelope(event, data)) {  // no sequence number: a gateway's
    out.push_back(ErrorFrom(*envelope));
    return EventWeight::kMeaningful;
  }
  const std::string_view type = RequireString(data, "type");
  if (event.type != "message" && event.type != type) {
    throw ShapeError{fmt::format("the data's type is `{}`", type)};
  }
  CheckSequence(data, state);
  if (type == "response.output_text.delta") {
    out.push_back(TextDelta{std::string(RequireString(data, "delta"))});
  } else if (type == "response.refusal.delta") {
    out.push_back(RefusalDelta{std::string(RequireString(data, "delta"))});
  } else if (type == "response.reasoning_summary_text.delta" ||
             type == "response.reasoning_text.delta") {
    out.push_back(ReasoningDelta{std::string(RequireString(data, "delta"))});
  } else if (type == "response.output_item.added") {
    AppendItemAdded(data, out);
  } else if (type == "response.function_call_arguments.delta") {
    out.push_back(
        ToolCallDelta{OutputIndex(data), {}, {}, std::string(RequireString(data, "delta"))});
  } else if (type == "response.completed" || type == "response.incomplete" ||
             type == "response.failed") {
    AppendTerminal(type, data, out);
  } else if (type == "error") {
    out.push_back(ErrorEvent(data));
  }
  return EventWeight::kMeaningful;
}

namespace {

void AppendMessageItem(const Json& item, std::vector<Delta>& out) {
  for (const Json& part : RequireArray(item, "content")) {
    if (!part.is_object()) throw ShapeError{"every content part must be an object"};
    const std::string_view type = RequireString(part, "type");
    if (type == "output_text") {
      if (auto text = RequireString(part, "text"); !text.empty()) {
        out.push_back(TextDelta{std::string(text)});
      }
    } else if (type == "refusal") {
      out.push_back(RefusalDelta{std::string(RequireString(part, "refusal"))});
    }
  }
}

void AppendReasoningItem(const Json& item, std::vector<Delta>& out) {
  for (std::string_view key : {"summary", "content"}) {
    const Json* parts = Member(item, key);
    if (parts == nullptr) continue;
    if (!parts->is_array()) throw ShapeError{fmt::format("`{}` must be an array", key)};
    for (const Json& part : *parts) {
      if (!part.is_object()) throw ShapeError{"every reasoning part must be an object"};
      if (auto text = OptString(part, "text"); !text.empty()) {
        out.push_back(ReasoningDelta{std::string(text)});
      }
    }
  }
}

}  // namespace

void DecodeOpenAiResponsesBody(const Json& body, std::vector<Delta>& out) {
  if (const Json* error = Member(body, "error")) {
    out.push_back(ErrorFrom(*error));
    return;
  }
  const std::string_view status = OptString(body, "status");
  if (status != "completed" && status != "incomplete") {
    throw ShapeError{fmt::format("unexpected response status `{}`", status)};
  }
  int index = 0;
  for (const Json& item : RequireArray(body, "output")) {
    if (!item.is_object()) throw ShapeError{"every output item must be an object"};
    const std::string_view type = RequireString(item, "type");
    if (type == "message") AppendMessageItem(item, out);
    if (type == "function_call") out.push_back(ToolCallFrom(item, index));
    if (type == "reasoning") AppendReasoningItem(item, out);
    ++index;
  }
  out.push_back(
      FinishDelta{status == "completed" ? std::string("completed") : IncompleteReason(body)});
  AppendOpenaiResponsesUsage(body, out);
  out.push_back(TerminalDelta{TerminalMarker::kBody});
}

}  // namespace faultline::ref::internal
