// ollama: /api/chat lines (NDJSON, ndjson_decoder.h) and bodies.
//
//   {"model":"llama3.2","created_at":"…","message":{"role":"assistant","content":"Hel"},"done":false}
//   {"model":"llama3.2","created_at":"…","message":{"role":"assistant","content":"",
//    "tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},"done":false}
//   {"model":"llama3.2","created_at":"…","message":{"role":"assistant","content":""},"done":true,
//    "done_reason":"stop","prompt_eval_count":26,"eval_count":3,…}
//
// Thinking arrives in message.thinking. A tool call comes whole; its `arguments` object is the
// call's arguments, re-serialised, and calls are numbered in arrival order. The line with
// "done": true ends the answer (TerminalMarker::kDoneLine): a stream that ends before it was cut.
// An error is {"error":"text"}, a bare string that names no kind (an OpenAI-style object is
// read too, as a gateway may send one).
#include "reference_impl/dialect_decoder_internal.h"

namespace faultline::ref::internal {
namespace {

// Appends the error of a line that has one; false when it has none.
bool AppendError(const Json& line, std::vector<Delta>& out) {
  const Json* error = Member(line, "error");
  if (error == nullptr) return false;
  if (error->is_string()) {
    out.push_back(ProviderErrorDelta{"", "", error->get<std::string>()});
  } else {
    out.push_back(ErrorFrom(*error));
  }
  return true;
}

void AppendMessage(const Json& message, int& call_index, std::vector<Delta>& out) {
  if (!message.is_object()) throw ShapeError{"`message` must be an object"};
  if (auto thinking = OptString(message, "thinking"); !thinking.empty()) {
    out.push_back(ReasoningDelta{std::string(thinking)});
  }
  if (auto content = OptString(message, "content"); !content.empty()) {
    out.push_back(TextDelta{std::string(content)});
  }
  const Json* calls = Member(message, "tool_calls");
  if (calls == nullptr) return;
  if (!calls->is_array()) throw ShapeError{"`tool_calls` must be an array"};
  for (const Json& call : *calls) {
    if (!call.is_object()) throw ShapeError{"every tool call must be an object"};
    const Json& function = RequireObject(call, "function");
    ToolCallDelta delta;
    delta.index = call_index++;
    delta.id = OptString(call, "id");
    delta.name = RequireString(function, "name");
    delta.arguments = WholeCallArguments(Member(function, "arguments"));
    out.push_back(std::move(delta));
  }
}

// One chat object; returns whether it is the last ("done": true).
bool AppendLine(const Json& line, int& call_index, std::vector<Delta>& out) {
  const Json* done = Member(line, "done");
  if (done == nullptr || !done->is_boolean()) throw ShapeError{"`done` must be a boolean"};
  if (const Json* message = Member(line, "message")) AppendMessage(*message, call_index, out);
  if (!done->get<bool>()) return false;
  out.push_back(UsageDelta{OptInt(line, "prompt_eval_count"), OptInt(line, "eval_count")});
  const std::string_view reason = OptString(line, "done_reason");
  out.push_back(FinishDelta{std::string(reason.empty() ? "stop" : reason)});
  return true;
}

}  // namespace

EventWeight DecodeOllamaEvent(const SseEventView& event, DialectDecoder::State& state,
                              std::vector<Delta>& out) {
  const Json line = ParseObject(event.data, "the line");
  if (AppendError(line, out)) return EventWeight::kMeaningful;
  if (AppendLine(line, state.whole_calls, out)) {
    out.push_back(TerminalDelta{TerminalMarker::kDoneLine});
  }
  return EventWeight::kMeaningful;
}

void DecodeOllamaBody(const Json& body, std::vector<Delta>& out) {
  if (AppendError(body, out)) return;
  int call_index = 0;
  if (!AppendLine(body, call_index, out)) throw ShapeError{"a whole answer must be `done`"};
  out.push_back(TerminalDelta{TerminalMarker::kBody});
}

}  // namespace faultline::ref::internal
