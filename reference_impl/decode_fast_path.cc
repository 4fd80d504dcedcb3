// The allocation-free fast path for the event shapes that make up nearly all of a stream: chat
// chunks that carry content and/or a finish reason, Anthropic text/argument/thinking deltas, and
// Responses text/argument/reasoning/refusal deltas, the Responses events that only advance the
// sequence number (including the large .done ones) and response.completed. Each function returns
// false — having appended nothing and changed no state — for anything it does not recognise exactly
// (other shapes, duplicate keys, invalid JSON, a broken sequence); the nlohmann-based decoder then
// takes the event and is the one that decodes it or reports the error. A differential test checks
// that the two paths agree on every event they both accept.
#include <algorithm>
#include <optional>
#include <utility>

#include "reference_impl/dialect_decoder_internal.h"
#include "reference_impl/json_cursor.h"

namespace faultline::ref::internal {
namespace {

// Reads a string member exactly once. (Plain strings and flags rather than optional<string>:
// the event structs are then cheap to construct, which matters at a few hundred bytes an event.)
bool ReadOnce(JsonCursor& cursor, std::string& slot, bool& seen) {
  return !std::exchange(seen, true) && cursor.ReadString(slot);
}

bool ReadIntOnce(JsonCursor& cursor, std::optional<std::int64_t>& slot) {
  if (slot) return false;
  std::int64_t value = 0;
  if (!cursor.ReadInt(value)) return false;
  slot = value;
  return true;
}

bool ReadRawOnce(JsonCursor& cursor, std::optional<std::string_view>& slot) {
  if (slot) return false;
  std::string_view value;
  if (!cursor.ReadRawString(value)) return false;
  slot = value;
  return true;
}

// {"index":0,"delta":{"role"?,"content":...},"finish_reason":...,...}: content and finish only.
struct ChatChoice {
  std::string text;
  std::string finish;
  bool has_index = false, has_delta = false, has_content = false, has_finish = false;
};

bool ReadChatDelta(JsonCursor& cursor, ChatChoice& choice) {
  return cursor.ForEachMember([&](std::string_view key) {
    if (key == "content") {
      bool is_null = false;
      return !std::exchange(choice.has_content, true) &&
             cursor.ReadStringOrNull(choice.text, is_null);
    }
    if (key == "refusal" || key == "reasoning_content" || key == "reasoning" ||
        key == "tool_calls") {
      return cursor.ReadNull();  // present with a value: leave it to the full decoder
    }
    return cursor.SkipValue();
  });
}

bool ReadChatChoice(JsonCursor& cursor, ChatChoice& choice) {
  return cursor.ForEachMember([&](std::string_view key) {
    if (key == "index") {
      std::int64_t index = 0;
      return !std::exchange(choice.has_index, true) && cursor.ReadInt(index) && index == 0;
    }
    if (key == "delta")
      return !std::exchange(choice.has_delta, true) && ReadChatDelta(cursor, choice);
    if (key == "finish_reason") {
      bool is_null = false;
      return !std::exchange(choice.has_finish, true) &&
             cursor.ReadStringOrNull(choice.finish, is_null);
    }
    return cursor.SkipValue();
  });
}

bool FastOpenAiChat(const SseEvent& event, std::vector<Delta>& out) {
  if (event.data.empty() || event.data.front() != '{') return false;
  JsonCursor cursor(event.data);
  ChatChoice choice;
  int choices = -1;  // -1: no `choices` member
  bool has_usage = false;
  const bool ok = cursor.ForEachMember([&](std::string_view key) {
    if (key == "choices") {
      if (choices >= 0) return false;
      choices = 0;
      return cursor.ForEachElement(
          [&] { return ++choices == 1 && ReadChatChoice(cursor, choice); });
    }
    if (key == "usage") return !std::exchange(has_usage, true) && cursor.ReadNull();
    if (key == "error") return false;
    return cursor.SkipValue();
  });
  if (!ok || !cursor.AtEnd() || choices < 0) return false;
  if (!choice.text.empty()) out.push_back(TextDelta{std::move(choice.text)});
  if (!choice.finish.empty()) out.push_back(FinishDelta{std::move(choice.finish)});
  return true;
}

// {"type":"content_block_delta","index":N,"delta":{"type":...,"text"|"partial_json"|"thinking"}}
struct AnthropicDelta {
  std::optional<std::string_view> type, delta_type;
  std::optional<std::int64_t> index;
  std::string text, partial_json, thinking;
  bool has_text = false, has_partial_json = false, has_thinking = false, has_delta = false;
};

bool ReadAnthropicDelta(JsonCursor& cursor, AnthropicDelta& d) {
  return cursor.ForEachMember([&](std::string_view key) {
    if (key == "type") return ReadRawOnce(cursor, d.delta_type);
    if (key == "text") return ReadOnce(cursor, d.text, d.has_text);
    if (key == "partial_json") return ReadOnce(cursor, d.partial_json, d.has_partial_json);
    if (key == "thinking") return ReadOnce(cursor, d.thinking, d.has_thinking);
    return cursor.SkipValue();
  });
}

bool FastAnthropic(const SseEvent& event, DialectDecoder::State& state, std::vector<Delta>& out) {
  if (event.type != "content_block_delta" && event.type != "message") return false;
  JsonCursor cursor(event.data);
  AnthropicDelta d;
  const bool ok = cursor.ForEachMember([&](std::string_view key) {
    if (key == "type") return ReadRawOnce(cursor, d.type);
    if (key == "index") return ReadIntOnce(cursor, d.index);
    if (key == "delta") return !std::exchange(d.has_delta, true) && ReadAnthropicDelta(cursor, d);
    return cursor.SkipValue();
  });
  if (!ok || !cursor.AtEnd() || d.type != "content_block_delta" || !d.index || !d.delta_type) {
    return false;
  }
  const int index = static_cast<int>(*d.index);
  auto block = std::ranges::find(state.blocks, index, &DialectDecoder::State::Block::index);
  if (block == state.blocks.end()) return false;
  if (d.delta_type == "text_delta" && d.has_text) {
    out.push_back(TextDelta{std::move(d.text)});
  } else if (d.delta_type == "input_json_delta" && d.has_partial_json) {
    if (block->tool_use) out.push_back(ToolCallDelta{index, {}, {}, std::move(d.partial_json)});
  } else if (d.delta_type == "thinking_delta" && d.has_thinking) {
    out.push_back(ReasoningDelta{std::move(d.thinking)});
  } else {
    return false;
  }
  return true;
}

// {"type":"response.output_text.delta","sequence_number":N,"output_index":N,"delta":"..."}, the
// event types the decoder ignores apart from their sequence number (created, in_progress,
// content_part.*, output_text.done, output_item.done, ...: validated and skipped without building a
// tree), and response.completed, of which only `response.usage` matters.
struct ResponsesEvent {
  std::optional<std::string_view> type;
  std::optional<std::int64_t> sequence_number, output_index;
  std::string delta;
  bool has_delta = false;
  std::optional<std::int64_t> input_tokens, output_tokens;
  bool has_response = false;  // read as response.completed's (type came first)
  bool skipped_response = false;
  bool has_usage = false;  // a non-null usage object
};

// The types DecodeOpenAiResponsesEvent does more with than check the sequence number.
bool IsHandledResponsesType(std::string_view type) {
  return type == "response.output_text.delta" || type == "response.refusal.delta" ||
         type == "response.reasoning_summary_text.delta" ||
         type == "response.reasoning_text.delta" || type == "response.output_item.added" ||
         type == "response.function_call_arguments.delta" || type == "response.completed" ||
         type == "response.incomplete" || type == "response.failed" || type == "error";
}

// response.completed's `response` object: usage (an object with integer token counts) or absent.
bool ReadCompletedResponse(JsonCursor& cursor, ResponsesEvent& e) {
  return cursor.ForEachMember([&](std::string_view key) {
    if (key != "usage") return cursor.SkipValue();
    if (std::exchange(e.has_usage, true)) return false;
    return cursor.ForEachMember([&](std::string_view usage_key) {
      if (usage_key == "input_tokens") return ReadIntOnce(cursor, e.input_tokens);
      if (usage_key == "output_tokens") return ReadIntOnce(cursor, e.output_tokens);
      return cursor.SkipValue();
    });
  });
}

bool ReadResponsesEvent(JsonCursor& cursor, ResponsesEvent& e) {
  return cursor.ForEachMember([&](std::string_view key) {
    if (key == "type") return ReadRawOnce(cursor, e.type);
    if (key == "sequence_number") return ReadIntOnce(cursor, e.sequence_number);
    if (key == "output_index") return ReadIntOnce(cursor, e.output_index);
    if (key == "delta") return ReadOnce(cursor, e.delta, e.has_delta);
    if (key == "response") {
      if (e.has_response || e.skipped_response) return false;
      if (e.type == "response.completed") {
        e.has_response = true;
        return ReadCompletedResponse(cursor, e);
      }
      e.skipped_response = true;
      return cursor.SkipValue();
    }
    return cursor.SkipValue();
  });
}

// Appends the deltas of a recognised event; false for anything else.
bool AppendResponsesDeltas(ResponsesEvent& e, std::vector<Delta>& out) {
  const std::string_view type = *e.type;
  if (!IsHandledResponsesType(type)) return true;  // only the sequence number matters
  if (type == "response.completed") {
    if (!e.has_response) return false;
    if (e.has_usage) out.push_back(UsageDelta{e.input_tokens, e.output_tokens});
    out.push_back(FinishDelta{"completed"});
    out.push_back(TerminalDelta{TerminalMarker::kResponseCompleted});
    return true;
  }
  if (!e.has_delta) return false;
  if (type == "response.output_text.delta") {
    out.push_back(TextDelta{std::move(e.delta)});
  } else if (type == "response.refusal.delta") {
    out.push_back(RefusalDelta{std::move(e.delta)});
  } else if (type == "response.reasoning_summary_text.delta" ||
             type == "response.reasoning_text.delta") {
    out.push_back(ReasoningDelta{std::move(e.delta)});
  } else if (type == "response.function_call_arguments.delta" && e.output_index) {
    out.push_back(ToolCallDelta{static_cast<int>(*e.output_index), {}, {}, std::move(e.delta)});
  } else {
    return false;
  }
  return true;
}

bool FastOpenAiResponses(const SseEvent& event, DialectDecoder::State& state,
                         std::vector<Delta>& out) {
  JsonCursor cursor(event.data);
  ResponsesEvent e;
  if (!ReadResponsesEvent(cursor, e) || !cursor.AtEnd() || !e.type) return false;
  if (event.type != "message" && event.type != *e.type) return false;
  const auto last = state.last_sequence_number;
  if (e.sequence_number && last && *e.sequence_number != *last + 1) return false;
  const std::size_t before = out.size();
  if (!AppendResponsesDeltas(e, out)) {
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
    return false;
  }
  if (e.sequence_number) state.last_sequence_number = e.sequence_number;
  return true;
}

}  // namespace

bool TryDecodeFast(Dialect dialect, const SseEvent& event, DialectDecoder::State& state,
                   std::vector<Delta>& out) {
  switch (dialect) {
    case Dialect::kOpenAiChat:
      return FastOpenAiChat(event, out);
    case Dialect::kAnthropicMessages:
      return FastAnthropic(event, state, out);
    case Dialect::kOpenAiResponses:
      return FastOpenAiResponses(event, state, out);
  }
  return false;
}

}  // namespace faultline::ref::internal
