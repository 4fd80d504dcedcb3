// anthropic-messages: Messages API stream events and bodies.
//
//   event: message_start        {"type":"message_start","message":{...,"usage":{"input_tokens":N}}}
//   event: content_block_start  {"type":"content_block_start","index":0,
//                                "content_block":{"type":"text","text":""}}   (or tool_use,
//                                thinking)
//   event: ping                 {"type":"ping"}                                 (heartbeat)
//   event: content_block_delta  {"index":0,"delta":{"type":"text_delta","text":"Hi"}}
//                               (input_json_delta.partial_json, thinking_delta.thinking, ...)
//   event: content_block_stop   {"type":"content_block_stop","index":0}
//   event: message_delta        {"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":N}}
//   event: message_stop         {"type":"message_stop"}                          (terminal)
//   event: error                {"type":"error","error":{"type":"overloaded_error","message":...}}
//
// The data's `type` is authoritative; an explicit SSE event name that disagrees with it is a
// protocol error. Unknown event and delta types are ignored, as Anthropic's versioning policy
// allows new ones to appear.
#include <fmt/format.h>

#include <algorithm>

#include "reference_impl/dialect_decoder_internal.h"

namespace faultline::ref::internal {
namespace {

// Input tokens include the cached ones: input_tokens + cache_creation + cache_read.
UsageDelta UsageFrom(const Json& usage) {
  if (!usage.is_object()) throw ShapeError{"`usage` must be an object"};
  UsageDelta delta{OptInt(usage, "input_tokens"), OptInt(usage, "output_tokens")};
  if (delta.input_tokens) {
    *delta.input_tokens += OptInt(usage, "cache_creation_input_tokens").value_or(0) +
                           OptInt(usage, "cache_read_input_tokens").value_or(0);
  }
  return delta;
}

void AppendAnthropicUsage(const Json& holder, std::vector<Delta>& out) {
  if (const Json* usage = Member(holder, "usage")) out.push_back(UsageFrom(*usage));
}

// {"type":"rate_limit_error","message":...,"details":{"error_code":"enforced_spend_limit_reached"}}
ProviderErrorDelta AnthropicError(const Json& error) {
  ProviderErrorDelta delta = ErrorFrom(error);
  if (const Json* details = Member(error, "details"); details != nullptr && details->is_object()) {
    if (delta.code.empty()) delta.code = CodeText(*details, "error_code");
  }
  return delta;
}

std::string ArgumentsOf(const Json& block) {
  const Json* input = Member(block, "input");
  if (input == nullptr || (input->is_object() && input->empty())) return {};
  return input->dump();
}

void AppendBlockStart(const Json& data, DialectDecoder::State& state, std::vector<Delta>& out) {
  const int index = static_cast<int>(RequireInt(data, "index"));
  const Json& block = RequireObject(data, "content_block");
  const std::string_view type = RequireString(block, "type");
  state.blocks.push_back({index, type == "tool_use"});
  if (type == "tool_use") {
    out.push_back(ToolCallDelta{index, std::string(RequireString(block, "id")),
                                std::string(RequireString(block, "name")), ArgumentsOf(block)});
  } else if (type == "text") {
    if (auto text = OptString(block, "text"); !text.empty())
      out.push_back(TextDelta{std::string(text)});
  } else if (type == "thinking") {
    if (auto text = OptString(block, "thinking"); !text.empty()) {
      out.push_back(ReasoningDelta{std::string(text)});
    }
  }
}

void AppendBlockDelta(const Json& data, const DialectDecoder::State& state,
                      std::vector<Delta>& out) {
  const int index = static_cast<int>(RequireInt(data, "index"));
  auto block = std::ranges::find(state.blocks, index, &DialectDecoder::State::Block::index);
  if (block == state.blocks.end()) {
    throw ShapeError{fmt::format("delta for content block {} that was never started", index)};
  }
  const Json& delta = RequireObject(data, "delta");
  const std::string_view type = RequireString(delta, "type");
  if (type == "text_delta") {
    out.push_back(TextDelta{std::string(RequireString(delta, "text"))});
  } else if (type == "input_json_delta" && block->tool_use) {  // not a server tool's input
    out.push_back(ToolCallDelta{index, {}, {}, std::string(RequireString(delta, "partial_json"))});
  } else if (type == "thinking_delta") {
    out.push_back(ReasoningDelta{std::string(RequireString(delta, "thinking"))});
  }  // signature_delta, citations_delta and future types carry no text of the answer
}

void AppendMessageDelta(const Json& data, std::vector<Delta>& out) {
  const Json& delta = RequireObject(data, "delta");
  if (auto reason = OptString(delta, "stop_reason"); !reason.empty()) {
    out.push_back(FinishDelta{std::string(reason)});
  }
  AppendAnthropicUsage(data, out);
}

}  // namespace

EventWeight DecodeAnthropicEvent(const SseEventView& event, DialectDecoder::State& state,
                                 std::vector<Delta>& out) {
  const Json data = ParseObject(event.data, "the event data");
  if (const Json* envelope = OpenAiEnvelope(event, data)) {
    out.push_back(ErrorFrom(*envelope));
    return EventWeight::kMeaningful;
  }
  const std::string_view type = RequireString(data, "type");
  if (event.type != "message" && event.type != type) {
    throw ShapeError{fmt::format("the data's type is `{}`", type)};
  }
  if (type == "ping") return EventWeight::kHeartbeat;
  if (type == "message_start") {
    AppendAnthropicUsage(RequireObject(data, "message"), out);
  } else if (type == "content_block_start") {
    AppendBlockStart(data, state, out);
  } else if (type == "content_block_delta") {
    AppendBlockDelta(data, state, out);
  } else if (type == "content_block_stop") {
    RequireInt(data, "index");
  } else if (type == "message_delta") {
    AppendMessageDelta(data, out);
  } else if (type == "message_stop") {
    out.push_back(TerminalDelta{TerminalMarker::kMessageStop});
  } else if (type == "error") {
    out.push_back(AnthropicError(RequireObject(data, "error")));
  }
  return EventWeight::kMeaningful;
}

void DecodeAnthropicBody(const Json& body, std::vector<Delta>& out) {
  if (OptString(body, "type") == "error" || Member(body, "error") != nullptr) {
    out.push_back(AnthropicError(RequireObject(body, "error")));
    return;
  }
  int index = 0;
  for (const Json& block : RequireArray(body, "content")) {
    if (!block.is_object()) throw ShapeError{"every content block must be an object"};
    const std::string_view type = RequireString(block, "type");
    if (type == "text") {
      if (auto text = RequireString(block, "text"); !text.empty()) {
        out.push_back(TextDelta{std::string(text)});
      }
    } else if (type == "tool_use") {
      out.push_back(ToolCallDelta{index, std::string(RequireString(block, "id")),
                                  std::string(RequireString(block, "name")), ArgumentsOf(block)});
    } else if (type == "thinking") {
      if (auto text = OptString(block, "thinking"); !text.empty()) {
        out.push_back(ReasoningDelta{std::string(text)});
      }
    }
    ++index;
  }
  if (auto reason = OptString(body, "stop_reason"); !reason.empty()) {
    out.push_back(FinishDelta{std::string(reason)});
  }
  AppendAnthropicUsage(body, out);
  out.push_back(TerminalDelta{TerminalMarker::kBody});
}

}  // namespace faultline::ref::internal
