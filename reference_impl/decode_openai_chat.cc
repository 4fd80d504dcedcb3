// openai-chat: Chat Completions chunks (`chat.completion.chunk`) and bodies (`chat.completion`).
//
//   data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}
//   data: {"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}
//   data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function",
//          "function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}
//   data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}
//   data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3}}   (include_usage)
//   data: [DONE]
//
// Reasoning arrives as `delta.reasoning_content` (DeepSeek) or a string `delta.reasoning`
// (OpenAI-compatible gateways). An error inside the stream is the `{"error":{...}}` envelope.
#include "reference_impl/dialect_decoder_internal.h"

namespace faultline::ref::internal {
namespace {

bool IsFirstChoice(const Json& choice) {
  if (!choice.is_object()) throw ShapeError{"every choice must be an object"};
  return OptInt(choice, "index").value_or(0) == 0;
}

void AppendReasoning(const Json& holder, std::vector<Delta>& out) {
  for (std::string_view key : {"reasoning_content", "reasoning"}) {  // the first one present
    const Json* reasoning = Member(holder, key);
    if (reasoning == nullptr || !reasoning->is_string()) continue;
    const auto& text = reasoning->get_ref<const std::string&>();
    if (!text.empty()) out.push_back(ReasoningDelta{text});
    return;
  }
}

void AppendTextAndRefusal(const Json& holder, std::vector<Delta>& out) {
  if (auto text = OptString(holder, "content"); !text.empty()) {
    out.push_back(TextDelta{std::string(text)});
  }
  if (auto refusal = OptString(holder, "refusal"); !refusal.empty()) {
    out.push_back(RefusalDelta{std::string(refusal)});
  }
}

// `tool_calls` entries: {"index","id","type","function":{"name","arguments"}}. In a chunk every
// entry carries its own index; in a body the position is the index.
void AppendToolCalls(const Json& holder, bool indexed, std::vector<Delta>& out) {
  const Json* calls = Member(holder, "tool_calls");
  if (calls == nullptr) return;
  if (!calls->is_array()) throw ShapeError{"`tool_calls` must be an array"};
  int position = 0;
  for (const Json& call : *calls) {
    if (!call.is_object()) throw ShapeError{"every tool call must be an object"};
    ToolCallDelta delta;
    delta.index = indexed ? static_cast<int>(RequireInt(call, "index")) : position++;
    delta.id = OptString(call, "id");
    if (const Json* function = Member(call, "function")) {
      if (!function->is_object()) throw ShapeError{"`function` must be an object"};
      delta.name = OptString(*function, "name");
      delta.arguments = OptString(*function, "arguments");
    }
    out.push_back(std::move(delta));
  }
}

void AppendFinish(const Json& choice, std::vector<Delta>& out) {
  if (auto reason = OptString(choice, "finish_reason"); !reason.empty()) {
    out.push_back(FinishDelta{std::string(reason)});
  }
}

void AppendOpenaiChatUsage(const Json& object, std::vector<Delta>& out) {
  const Json* usage = Member(object, "usage");
  if (usage == nullptr) return;
  if (!usage->is_object()) throw ShapeError{"`usage` must be an object"};
  out.push_back(UsageDelta{OptInt(*usage, "prompt_tokens"), OptInt(*usage, "completion_tokens")});
}

}  // namespace

EventWeight DecodeOpenAiChatEvent(const SseEventView& event, std::vector<Delta>& out) {
  if (event.data == "[DONE]") {
    out.push_back(TerminalDelta{TerminalMarker::kDone});
    return EventWeight::kMeaningful;
  }
  const Json chunk = ParseObject(event.data, "the chunk");
  if (const Json* error = Member(chunk, "error")) {
    out.push_back(ErrorFrom(*error));
    return EventWeight::kMeaningful;
  }
  for (const Json& choice : RequireArray(chunk, "choices")) {
    if (!IsFirstChoice(choice)) continue;
    if (const Json* delta = Member(choice, "delta")) {
      if (!delta->is_object()) throw ShapeError{"`delta` must be an object"};
      AppendReasoning(*delta, out);
      AppendTextAndRefusal(*delta, out);
      AppendToolCalls(*delta, /*indexed=*/true, out);
    }
    AppendFinish(choice, out);
  }
  AppendOpenaiChatUsage(chunk, out);
  return EventWeight::kMeaningful;
}

void DecodeOpenAiChatBody(const Json& body, std::vector<Delta>& out) {
  if (const Json* error = Member(body, "error")) {
    out.push_back(ErrorFrom(*error));
    return;
  }
  for (const Json& choice : RequireArray(body, "choices")) {
    if (!IsFirstChoice(choice)) continue;
    const Json& message = RequireObject(choice, "message");
    AppendReasoning(message, out);
    AppendTextAndRefusal(message, out);
    AppendToolCalls(message, /*indexed=*/false, out);
    AppendFinish(choice, out);
  }
  AppendOpenaiChatUsage(body, out);
  out.push_back(TerminalDelta{TerminalMarker::kBody});
}

}  // namespace faultline::ref::internal
