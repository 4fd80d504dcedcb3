// gemini: GenerateContentResponse chunks (streamGenerateContent?alt=sse) and bodies
// (generateContent).
//
//   data: {"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"},"index":0}],
//          "usageMetadata":{"promptTokenCount":9,"totalTokenCount":9},"modelVersion":"...",
//          "responseId":"..."}
//   data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather",
//          "args":{"city":"Paris"}}}],"role":"model"},"index":0}], ...}
//   data: {"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP",
//          "index":0}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":3,...}}
//
// There is no terminator event: the chunk that carries `finishReason` is the end of the answer
// (TerminalMarker::kFinishReason), and a stream that ends before one was cut. Thought parts
// (`"thought": true`) are reasoning. A function call comes whole in one part; its `args` object
// is the call's arguments, re-serialised, and its position among the parts is its index. A prompt
// blocked before any candidate (`promptFeedback.blockReason`) finishes with that reason. An error
// is a google.rpc.Status, {"error":{"code":429,"message":...,"status":"RESOURCE_EXHAUSTED"}}:
// its `status` is the error's type (unless it has a `type`) and its numeric `code` the code.
#include "reference_impl/dialect_decoder_internal.h"

namespace faultline::ref::internal {
namespace {

// A google.rpc.Status names its kind in `status`; an OpenAI-style envelope that a gateway in
// front of Gemini injects names it in `type` (ErrorFrom's shape), so `type` is read first.
ProviderErrorDelta GoogleErrorFrom(const Json& error) {
  ProviderErrorDelta delta = ErrorFrom(error);
  if (delta.type.empty()) delta.type = OptString(error, "status");
  return delta;
}

void AppendParts(const Json& content, int& call_index, std::vector<Delta>& out) {
  const Json* parts = Member(content, "parts");
  if (parts == nullptr) return;
  if (!parts->is_array()) throw ShapeError{"`parts` must be an array"};
  for (const Json& part : *parts) {
    if (!part.is_object()) throw ShapeError{"every part must be an object"};
    if (const Json* call = Member(part, "functionCall")) {
      if (!call->is_object()) throw ShapeError{"`functionCall` must be an object"};
      ToolCallDelta delta;
      delta.index = call_index++;
      delta.id = OptString(*call, "id");
      delta.name = RequireString(*call, "name");
      delta.arguments = WholeCallArguments(Member(*call, "args"));
      out.push_back(std::move(delta));
      continue;
    }
    const std::string_view text = OptString(part, "text");
    if (text.empty()) continue;
    const Json* thought = Member(part, "thought");
    if (thought != nullptr && !thought->is_boolean()) throw ShapeError{"`thought` must be a bool"};
    if (thought != nullptr && thought->get<bool>()) {
      out.push_back(ReasoningDelta{std::string(text)});
    } else {
      out.push_back(TextDelta{std::string(text)});
    }
  }
}

void AppendGeminiUsage(const Json& response, std::vector<Delta>& out) {
  const Json* usage = Member(response, "usageMetadata");
  if (usage == nullptr) return;
  if (!usage->is_object()) throw ShapeError{"`usageMetadata` must be an object"};
  out.push_back(
      UsageDelta{OptInt(*usage, "promptTokenCount"), OptInt(*usage, "candidatesTokenCount")});
}

// One GenerateContentResponse. `call_index` numbers function calls across the chunks of one
// attempt (a stream's calls arrive one chunk each). Returns whether it carried a finishReason.
bool AppendResponse(const Json& response, int& call_index, std::vector<Delta>& out) {
  std::string_view finish;
  if (const Json* candidates = Member(response, "candidates")) {
    if (!candidates->is_array()) throw ShapeError{"`candidates` must be an array"};
    for (const Json& candidate : *candidates) {
      if (!candidate.is_object()) throw ShapeError{"every candidate must be an object"};
      if (OptInt(candidate, "index").value_or(0) != 0) continue;  // the first candidate only
      if (const Json* content = Member(candidate, "content")) {
        if (!content->is_object()) throw ShapeError{"`content` must be an object"};
        AppendParts(*content, call_index, out);
      }
      finish = OptString(candidate, "finishReason");
    }
  } else if (const Json* feedback = Member(response, "promptFeedback")) {
    if (!feedback->is_object()) throw ShapeError{"`promptFeedback` must be an object"};
    finish = OptString(*feedback, "blockReason");
    if (finish.empty()) throw ShapeError{"a response needs `candidates` or a `blockReason`"};
  } else {
    throw ShapeError{"a response needs `candidates` (or `promptFeedback`)"};
  }
  AppendGeminiUsage(response, out);
  if (finish.empty()) return false;
  out.push_back(FinishDelta{std::string(finish)});
  return true;
}

}  // namespace

EventWeight DecodeGeminiEvent(const SseEventView& event, DialectDecoder::State& state,
                              std::vector<Delta>& out) {
  const Json chunk = ParseObject(event.data, "the chunk");
  if (const Json* error = Member(chunk, "error")) {
    out.push_back(GoogleErrorFrom(*error));
    return EventWeight::kMeaningful;
  }
  if (AppendResponse(chunk, state.whole_calls, out)) {
    out.push_back(TerminalDelta{TerminalMarker::kFinishReason});
  }
  return EventWeight::kMeaningful;
}

void DecodeGeminiBody(const Json& body, std::vector<Delta>& out) {
  if (const Json* error = Member(body, "error")) {
    out.push_back(GoogleErrorFrom(*error));
    return;
  }
  int call_index = 0;
  AppendResponse(body, call_index, out);
  out.push_back(TerminalDelta{TerminalMarker::kBody});
}

}  // namespace faultline::ref::internal
