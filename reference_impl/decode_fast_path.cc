// The allocation-free fast path for the event shapes that make up nearly all of a stream: chat
// chunks that carry content and/or a finish reason, Anthropic text/argument/thinking deltas, and
// Responses text/argument/reasoning/refusal deltas. Each function returns false — having appended
// nothing and changed no state — for anything it does not recognise exactly (other shapes,
// duplicate keys, invalid JSON, a broken sequence); the nlohmann-based decoder then takes the
// event and is the one that decodes it or reports the error. A differential test checks that the
// two paths agree on every event they both accept.
#include <algorithm>
#include <optional>

#include "reference_impl/dialect_decoder_internal.h"
#include "reference_impl/json_cursor.h"

namespace faultline::ref::internal {
namespace {

// Reads a string member exactly once.
bool ReadOnce(JsonCursor& cursor, std::optional<std::string>& slot) {
  if (slot) return false;
  slot.emplace();
  return cursor.ReadString(*slot);
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
  std::optional<std::string> text, partial_json, thinking;
  bool has_delta = false;
};

bool ReadAnthropicDelta(JsonCursor& cursor, AnthropicDelta& d) {
  return cursor.ForEachMember([&](std::string_view key) {
    if (key == "type") return ReadRawOnce(cursor, d.delta_type);
    if (key == "text") return ReadOnce(cursor, d.text);
    if (key == "partial_json") return ReadOnce(cursor, d.partial_json);
    if (key == "thinking") return ReadOnce(cursor, d.thinking);
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
  if (d.delta_type == "text_delta" && d.text) {
    out.push_back(TextDelta{std::move(*d.text)});
  } else if (d.delta_type == "input_json_delta" && d.partial_json) {
    if (block->tool_use) out.push_back(ToolCallDelta{index, {}, {}, std::move(*d.partial_json)});
  } else if (d.delta_type == "thinking_delta" && d.thinking) {
    out.push_back(ReasoningDelta{std::move(*d.thinking)});
  } else {
    return false;
  }
  return true;
}

// {"type":"response.output_text.delta","sequence_number":N,"output_index":N,"delta":"..."}
struct ResponsesDelta {
  std::optional<std::string_view> type;
  std::optional<std::int64_t> sequence_number, output_index;
  std::optional<std::string> delta;
};

bool FastOpenAiResponses(const SseEvent& event, DialectDecoder::State& state,
                         std::vector<Delta>& out) {
  JsonCursor cursor(event.data);
  ResponsesDelta d;
  const bool ok = cursor.ForEachMember([&](std::string_view key) {
    if (key == "type") return ReadRawOnce(cursor, d.type);
    if (key == "sequence_number") return ReadIntOnce(cursor, d.sequence_number);
    if (key == "output_index") return ReadIntOnce(cursor, d.output_index);
    if (key == "delta") return ReadOnce(cursor, d.delta);
    return cursor.SkipValue();
  });
  if (!ok || !cursor.AtEnd() || !d.type || !d.delta) return false;
  if (event.type != "message" && event.type != *d.type) return false;
  const auto last = state.last_sequence_number;
  if (d.sequence_number && last && *d.sequence_number != *last + 1) return false;
  if (*d.type == "response.output_text.delta") {
    out.push_back(TextDelta{std::move(*d.delta)});
  } else if (*d.type == "response.refusal.delta") {
    out.push_back(RefusalDelta{std::move(*d.delta)});
  } else if (*d.type == "response.reasoning_summary_text.delta" ||
             *d.type == "response.reasoning_text.delta") {
    out.push_back(ReasoningDelta{std::move(*d.delta)});
  } else if (*d.type == "response.function_call_arguments.delta" && d.output_index) {
    out.push_back(ToolCallDelta{static_cast<int>(*d.output_index), {}, {}, std::move(*d.delta)});
  } else {
    return false;
  }
  if (d.sequence_number) state.last_sequence_number = d.sequence_number;
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
