// The allocation-free fast path for the event shapes that make up nearly all of a stream: chat
// chunks that carry content and/or a finish reason, Anthropic text/argument/thinking deltas (and
// the events around them: message_start, text and thinking block starts, block stops,
// message_delta, message_stop, whose few nlohmann trees cost as much as a thousand deltas), and
// Responses text/argument/reasoning/refusal deltas, the Responses events that only advance the
// sequence number (including the large .done ones) and response.completed; Gemini, Ollama and
// Bedrock are in decode_fast_path_gemini_ollama_bedrock.cc. Each function returns
// false — having appended nothing and changed no state — for anything it does not recognise exactly
// (other shapes, duplicate keys, invalid JSON, a broken sequence); the nlohmann-based decoder then
// takes the event and is the one that decodes it or reports the error. A differential test checks
// that the two paths agree on every event they both accept.
//
// The shortcut for delta events. Consecutive deltas differ only in their text (and, in Responses,
// the sequence number): `{"id":"chatcmpl-X","object":"chat.completion.chunk","created":N,...,
// "delta":{"content":"<text>"},...}`. Having read one in full, the fast path records it as a
// JsonShape whose holes are the values it took (the text; the sequence number) and, for the next
// event, first compares the bytes outside the holes and reads only the hole values. That is the
// same as reading the event in full, because the reader is deterministic and goes left to right:
// on the same bytes before a hole it passes through the same states, so it reaches the hole in the
// state it reached it before and reads the value with the same function (the one Match() uses, from
// the same offset); it only stores that value — nothing it decides while reading depends on the
// text or the number — so after the hole it is in the same state again, up to the stored value;
// the same bytes follow, up to the same end. The outcome is therefore the recorded event's with the
// new values, and each dialect computes it with the same code as after a full read (its state
// checks — content blocks, sequence numbers — included). Only events whose outcome depends on
// nothing else outside the holes are recorded (no finish reason, for instance).
#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "reference_impl/decode_fast_path_internal.h"
#include "reference_impl/dialect_decoder_internal.h"
#include "reference_impl/json_cursor.h"

namespace faultline::ref::internal {
namespace {

// --- openai-chat -------------------------------------------------------------------------------

// {"index":0,"delta":{"role"?,"content":...},"finish_reason":...,...}: content and finish only.
struct ChatChoice {
  std::string text;
  std::string finish;
  bool has_index = false, has_delta = false, has_content = false, has_finish = false;
  bool content_is_string = false;  // not null
  Hole content_at;
};

bool ReadChatContent(JsonCursor& cursor, ChatChoice& choice) {
  if (std::exchange(choice.has_content, true)) return false;
  bool is_null = false;
  const bool ok = ReadNoting(cursor, HoleKind::kString, choice.content_at,
                             [&] { return cursor.ReadStringOrNull(choice.text, is_null); });
  choice.content_is_string = !is_null;
  return ok;
}

bool ReadChatDelta(JsonCursor& cursor, ChatChoice& choice) {
  return cursor.ForEachMember([&](std::string_view key) {
    if (key == "content") return ReadChatContent(cursor, choice);
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

void AppendChatDeltas(ChatChoice& choice, std::vector<Delta>& out) {
  if (!choice.text.empty()) Emit<TextDelta>(out, std::move(choice.text));
  if (!choice.finish.empty()) Emit<FinishDelta>(out, std::move(choice.finish));
}

bool ReadChatChunk(const SseEventView& event, ChatChoice& choice) {
  if (event.data.empty() || event.data.front() != '{') return false;
  JsonCursor cursor(event.data);
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
  return ok && cursor.AtEnd() && choices >= 0;
}

bool FastOpenAiChat(const SseEventView& event, JsonShape& last_delta, std::vector<Delta>& out) {
  std::int64_t unused = 0;
  // Recorded only without a finish reason: the content is all a match can change, and empty
  // content says nothing (AppendChatDeltas).
  if (const std::string* text = MatchInto(last_delta, event.data, unused, &TextDelta::text, out)) {
    if (text->empty()) out.pop_back();
    return true;
  }
  ChatChoice choice;
  if (!ReadChatChunk(event, choice)) return false;
  if (choice.content_is_string && choice.finish.empty()) {
    last_delta.Record(event.data, std::nullopt, choice.content_at, {});
  }
  AppendChatDeltas(choice, out);
  return true;
}

// --- anthropic-messages ------------------------------------------------------------------------

// Token counts ({"input_tokens":N,"output_tokens":N,"cache_*_input_tokens":N}), each read once.
struct AnthropicUsage {
  std::optional<std::int64_t> input, output, cache_creation, cache_read;
  bool seen = false;
};

// content_block_delta {"type","index","delta":{"type","text"|"partial_json"|"thinking"}}, and the
// members of the events that come once a block or once a message: message_start {"message":
// {"usage"}}, content_block_start {"index","content_block":{"type","text"|"thinking"}},
// content_block_stop {"index"}, message_delta {"delta":{"stop_reason"},"usage"}, message_stop.
// Members are read whatever the event's type (which may come last) and only the ones its type
// needs are used, as the full decoder does.
struct AnthropicEvent {
  std::optional<std::string_view> type, delta_type, block_type;
  std::optional<std::int64_t> index;
  std::string text, partial_json, thinking, stop_reason, block_text, block_thinking;
  bool has_text = false, has_partial_json = false, has_thinking = false, has_delta = false;
  bool has_stop_reason = false, has_message = false, has_block = false;
  bool has_block_text = false, has_block_thinking = false;
  AnthropicUsage usage, message_usage;
  Hole text_at, partial_json_at, thinking_at;
  Hole block_value_at;  // not recorded: a block start has no shortcut
};

// What a content_block_delta carries, and so which member is its value (JsonShape::Note::kind).
enum AnthropicKind : int { kAnthropicText, kAnthropicArguments, kAnthropicThinking };

bool ReadAnthropicDelta(JsonCursor& cursor, AnthropicEvent& d) {
  return cursor.ForEachMember([&](std::string_view key) {
    if (key == "type") return ReadRawOnce(cursor, d.delta_type);
    if (key == "text") return ReadOnce(cursor, d.text, d.has_text, d.text_at);
    if (key == "partial_json") {
      return ReadOnce(cursor, d.partial_json, d.has_partial_json, d.partial_json_at);
    }
    if (key == "thinking") return ReadOnce(cursor, d.thinking, d.has_thinking, d.thinking_at);
    if (key == "stop_reason") {
      bool is_null = false;
      return !std::exchange(d.has_stop_reason, true) &&
             cursor.ReadStringOrNull(d.stop_reason, is_null);
    }
    return cursor.SkipValue();
  });
}

// A token count small enough that the full decoder's sum of them cannot overflow (it takes any
// other count itself).
bool ReadCountOnce(JsonCursor& cursor, std::optional<std::int64_t>& slot) {
  constexpr std::int64_t kMaxCount = std::int64_t{1} << 52;
  return ReadIntOnce(cursor, slot) && *slot >= 0 && *slot <= kMaxCount;
}

bool ReadAnthropicUsage(JsonCursor& cursor, AnthropicUsage& u) {
  return !std::exchange(u.seen, true) && cursor.ForEachMember([&](std::string_view key) {
    if (key == "input_tokens") return ReadCountOnce(cursor, u.input);
    if (key == "output_tokens") return ReadCountOnce(cursor, u.output);
    if (key == "cache_creation_input_tokens") return ReadCountOnce(cursor, u.cache_creation);
    if (key == "cache_read_input_tokens") return ReadCountOnce(cursor, u.cache_read);
    return cursor.SkipValue();
  });
}

bool ReadAnthropicMessage(JsonCursor& cursor, AnthropicEvent& d) {
  return !std::exchange(d.has_message, true) && cursor.ForEachMember([&](std::string_view key) {
    if (key == "usage") return ReadAnthropicUsage(cursor, d.message_usage);
    return cursor.SkipValue();
  });
}

bool ReadAnthropicBlock(JsonCursor& cursor, AnthropicEvent& d) {
  return !std::exchange(d.has_block, true) && cursor.ForEachMember([&](std::string_view key) {
    if (key == "type") return ReadRawOnce(cursor, d.block_type);
    if (key == "text") return ReadOnce(cursor, d.block_text, d.has_block_text, d.block_value_at);
    if (key == "thinking") {
      return ReadOnce(cursor, d.block_thinking, d.has_block_thinking, d.block_value_at);
    }
    return cursor.SkipValue();
  });
}

bool ReadAnthropicEvent(const SseEventView& event, AnthropicEvent& d) {
  JsonCursor cursor(event.data);
  const bool ok = cursor.ForEachMember([&](std::string_view key) {
    if (key == "type") return ReadRawOnce(cursor, d.type);
    if (key == "index") return ReadIntOnce(cursor, d.index);
    if (key == "delta") return !std::exchange(d.has_delta, true) && ReadAnthropicDelta(cursor, d);
    if (key == "usage") return ReadAnthropicUsage(cursor, d.usage);
    if (key == "message") return ReadAnthropicMessage(cursor, d);
    if (key == "content_block") return ReadAnthropicBlock(cursor, d);
    return cursor.SkipValue();
  });
  // A `type` rules out the OpenAI-style error envelope; the SSE name must agree with it.
  return ok && cursor.AtEnd() && d.type && (event.type == "message" || event.type == *d.type);
}

// UsageFrom's sum: the input includes the cached tokens.
void AppendAnthropicUsage(const AnthropicUsage& u, std::vector<Delta>& out) {
  if (!u.seen) return;
  std::optional<std::int64_t> input = u.input;
  if (input) *input += u.cache_creation.value_or(0) + u.cache_read.value_or(0);
  Emit<UsageDelta>(out, input, u.output);
}

// A text or thinking block (the others, tool_use with its arguments among them, are the full
// decoder's); false, having changed nothing, otherwise.
bool AppendAnthropicBlockStart(AnthropicEvent& d, DialectDecoder::State& state,
                               std::vector<Delta>& out) {
  if (!d.index || !d.has_block || !d.block_type) return false;
  if (*d.index < std::numeric_limits<int>::min() || *d.index > std::numeric_limits<int>::max()) {
    return false;
  }
  const bool text = d.block_type == "text";
  if (!text && d.block_type != "thinking") return false;
  state.blocks.push_back({static_cast<int>(*d.index), /*tool_use=*/false});
  std::string& words = text ? d.block_text : d.block_thinking;
  if (words.empty()) return true;
  if (text) {
    Emit<TextDelta>(out, std::move(words));
  } else {
    Emit<ReasoningDelta>(out, std::move(words));
  }
  return true;
}

// The events other than content_block_delta that the fast path takes; false for the others
// (ping is a heartbeat, error and unknown types are the full decoder's).
bool AppendAnthropicOther(AnthropicEvent& d, DialectDecoder::State& state,
                          std::vector<Delta>& out) {
  const std::string_view type = *d.type;
  if (type == "message_start") {
    if (!d.has_message) return false;
    AppendAnthropicUsage(d.message_usage, out);
    return true;
  }
  if (type == "content_block_start") return AppendAnthropicBlockStart(d, state, out);
  if (type == "content_block_stop") return d.index.has_value();
  if (type == "message_delta") {
    if (!d.has_delta) return false;
    if (!d.stop_reason.empty()) Emit<FinishDelta>(out, std::move(d.stop_reason));
    AppendAnthropicUsage(d.usage, out);
    return true;
  }
  if (type == "message_stop") {
    Emit<TerminalDelta>(out, TerminalMarker::kMessageStop);
    return true;
  }
  return false;
}

// The value a content_block_delta carries: what kind, the text read, and where it was.
struct AnthropicValue {
  AnthropicKind kind;
  std::string* text;
  Hole at;
};

std::optional<AnthropicValue> ValueOf(AnthropicEvent& d) {
  if (d.delta_type == "text_delta" && d.has_text) {
    return AnthropicValue{kAnthropicText, &d.text, d.text_at};
  }
  if (d.delta_type == "input_json_delta" && d.has_partial_json) {
    return AnthropicValue{kAnthropicArguments, &d.partial_json, d.partial_json_at};
  }
  if (d.delta_type == "thinking_delta" && d.has_thinking) {
    return AnthropicValue{kAnthropicThinking, &d.thinking, d.thinking_at};
  }
  return std::nullopt;  // signature_delta, citations_delta, ...: left to the full decoder
}

// The deltas of a content_block_delta, for a block that was started; false otherwise.
bool AppendAnthropicDelta(AnthropicKind kind, std::int64_t index64, std::string& value,
                          const DialectDecoder::State& state, std::vector<Delta>& out) {
  const int index = static_cast<int>(index64);
  auto block = std::ranges::find(state.blocks, index, &DialectDecoder::State::Block::index);
  if (block == state.blocks.end()) return false;
  switch (kind) {
    case kAnthropicText:
      Emit<TextDelta>(out, std::move(value));
      break;
    case kAnthropicArguments:
      if (block->tool_use)
        Emit<ToolCallDelta>(out, index, std::string(), std::string(), std::move(value));
      break;
    case kAnthropicThinking:
      Emit<ReasoningDelta>(out, std::move(value));
      break;
  }
  return true;
}

// A content_block_delta with the recorded shape, its value read straight into its delta (as
// AppendAnthropicDelta would emit it): nullopt when the event does not have that shape, else
// whether the fast path takes it.
std::optional<bool> MatchAnthropicDelta(const SseEventView& event,
                                        const DialectDecoder::State& state,
                                        std::vector<Delta>& out) {
  const JsonShape& shape = state.last_delta;
  const auto kind = static_cast<AnthropicKind>(shape.note().kind);
  std::int64_t unused = 0;
  const std::string* value =
      kind == kAnthropicText ? MatchInto(shape, event.data, unused, &TextDelta::text, out)
      : kind == kAnthropicThinking
          ? MatchInto(shape, event.data, unused, &ReasoningDelta::text, out)
          : MatchInto(shape, event.data, unused, &ToolCallDelta::arguments, out);
  if (value == nullptr) return std::nullopt;
  const int index = static_cast<int>(*shape.note().index);
  const auto block = std::ranges::find(state.blocks, index, &DialectDecoder::State::Block::index);
  const bool started = block != state.blocks.end();
  if (kind == kAnthropicArguments && started && block->tool_use) {
    std::get<ToolCallDelta>(out.back()).index = index;
  } else if (!started || kind == kAnthropicArguments) {
    out.pop_back();  // a block never started (the full decoder's error), or a server tool's input
  }
  return started;
}

// An event read in full (no recorded shape, or another one), recorded when it is a delta.
bool ReadAndDecodeAnthropic(const SseEventView& event, DialectDecoder::State& state,
                            std::vector<Delta>& out) {
  AnthropicEvent d;
  if (!ReadAnthropicEvent(event, d)) return false;
  if (d.type != "content_block_delta") return AppendAnthropicOther(d, state, out);
  if (!d.index || !d.delta_type) return false;
  const std::optional<AnthropicValue> read = ValueOf(d);
  if (!read || !AppendAnthropicDelta(read->kind, *d.index, *read->text, state, out)) return false;
  state.last_delta.Record(event.data, std::nullopt, read->at, {read->kind, d.index});
  return true;
}

// Small, so that the shortcut is inlined where it is called; the full read is a call away.
bool FastAnthropic(const SseEventView& event, DialectDecoder::State& state,
                   std::vector<Delta>& out) {
  if (event.type == "content_block_delta" || event.type == "message") {
    if (const std::optional<bool> taken = MatchAnthropicDelta(event, state, out)) return *taken;
  }
  return ReadAndDecodeAnthropic(event, state, out);
}

// --- openai-responses --------------------------------------------------------------------------

// What the fast path does with a Responses event, by its type.
enum class ResponsesKind : int {
  // The delta events, which a JsonShape is recorded for (JsonShape::Note::kind).
  kTextDelta,
  kRefusalDelta,
  kReasoningSummaryDelta,
  kReasoningDelta,
  kArgumentsDelta,
  kCompleted,     // only `response.usage` matters
  kFullOnly,      // output_item.added, incomplete, failed, error: left to the full decoder
  kSequenceOnly,  // created, in_progress, content_part.*, *.done, unknown types: validated, and
                  // only their sequence number matters (skipped without building a tree)
};

constexpr std::pair<std::string_view, ResponsesKind> kResponsesKinds[] = {
    {"response.output_text.delta", ResponsesKind::kTextDelta},
    {"response.refusal.delta", ResponsesKind::kRefusalDelta},
    {"response.reasoning_summary_text.delta", ResponsesKind::kReasoningSummaryDelta},
    {"response.reasoning_text.delta", ResponsesKind::kReasoningDelta},
    {"response.function_call_arguments.delta", ResponsesKind::kArgumentsDelta},
    {"response.completed", ResponsesKind::kCompleted},
    {"response.output_item.added", ResponsesKind::kFullOnly},
    {"response.incomplete", ResponsesKind::kFullOnly},
    {"response.failed", ResponsesKind::kFullOnly},
    {"error", ResponsesKind::kFullOnly},
};

ResponsesKind KindOf(std::string_view type) {
  for (const auto& [name, kind] : kResponsesKinds) {
    if (type == name) return kind;
  }
  return ResponsesKind::kSequenceOnly;
}

// TypeOf() relies on the delta kinds coming first in kResponsesKinds, in their enum order.
constexpr bool DeltaKindsComeFirst() {
  for (int i = 0; i <= static_cast<int>(ResponsesKind::kArgumentsDelta); ++i) {
    if (kResponsesKinds[i].second != static_cast<ResponsesKind>(i)) return false;
  }
  return true;
}
static_assert(DeltaKindsComeFirst());

std::string_view TypeOf(ResponsesKind delta_kind) {
  return kResponsesKinds[static_cast<std::size_t>(delta_kind)].first;
}

bool IsDelta(ResponsesKind kind) { return kind <= ResponsesKind::kArgumentsDelta; }

// {"type":"response.output_text.delta","sequence_number":N,"output_index":N,"delta":"..."},
// response.completed, and the events of kSequenceOnly.
struct ResponsesEvent {
  std::optional<std::string_view> type;
  ResponsesKind kind = ResponsesKind::kSequenceOnly;  // of `type`, once read
  std::optional<std::int64_t> sequence_number, output_index;
  std::string delta;
  bool has_delta = false;
  std::optional<std::int64_t> input_tokens, output_tokens;
  bool has_response = false;  // read as response.completed's (type came first)
  bool skipped_response = false;
  bool has_usage = false;  // a non-null usage object
  Hole sequence_number_at, delta_at;
};

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

bool ReadResponsesMembers(JsonCursor& cursor, ResponsesEvent& e) {
  return cursor.ForEachMember([&](std::string_view key) {
    if (key == "type") return ReadRawOnce(cursor, e.type);
    if (key == "sequence_number") {
      return ReadNoting(cursor, HoleKind::kInt, e.sequence_number_at,
                        [&] { return ReadIntOnce(cursor, e.sequence_number); });
    }
    if (key == "output_index") return ReadIntOnce(cursor, e.output_index);
    if (key == "delta") return ReadOnce(cursor, e.delta, e.has_delta, e.delta_at);
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

bool ReadResponsesEvent(const SseEventView& event, ResponsesEvent& e) {
  JsonCursor cursor(event.data);
  if (!ReadResponsesMembers(cursor, e) || !cursor.AtEnd() || !e.type) return false;
  e.kind = KindOf(*e.type);
  return true;
}

// Appends the deltas of a recognised event; false for anything else.
bool AppendResponsesDeltas(ResponsesEvent& e, std::vector<Delta>& out) {
  switch (e.kind) {
    case ResponsesKind::kSequenceOnly:
      return true;
    case ResponsesKind::kFullOnly:
      return false;
    case ResponsesKind::kCompleted:
      if (!e.has_response) return false;
      if (e.has_usage) out.push_back(UsageDelta{e.input_tokens, e.output_tokens});
      out.push_back(FinishDelta{"completed"});
      out.push_back(TerminalDelta{TerminalMarker::kResponseCompleted});
      return true;
    default:
      break;
  }
  if (!e.has_delta) return false;
  switch (e.kind) {
    case ResponsesKind::kTextDelta:
      Emit<TextDelta>(out, std::move(e.delta));
      return true;
    case ResponsesKind::kRefusalDelta:
      Emit<RefusalDelta>(out, std::move(e.delta));
      return true;
    case ResponsesKind::kReasoningSummaryDelta:
    case ResponsesKind::kReasoningDelta:
      Emit<ReasoningDelta>(out, std::move(e.delta));
      return true;
    case ResponsesKind::kArgumentsDelta:
      if (!e.output_index) return false;
      Emit<ToolCallDelta>(out, static_cast<int>(*e.output_index), std::string(), std::string(),
                          std::move(e.delta));
      return true;
    default:
      return false;
  }
}

// Whether an event of `type` numbered `sequence_number` may come now: its SSE name agrees and
// the number follows the last one (the full decoder's first checks).
bool ResponsesEventFits(const SseEventView& event, std::string_view type,
                        std::optional<std::int64_t> sequence_number,
                        const DialectDecoder::State& state) {
  if (event.type != "message" && event.type != type) return false;
  const auto last = state.last_sequence_number;
  return !sequence_number || !last || *sequence_number == *last + 1;
}

// After the event is read: the SSE type and sequence checks, then the deltas.
bool FinishResponsesEvent(const SseEventView& event, ResponsesEvent& e,
                          DialectDecoder::State& state, std::vector<Delta>& out) {
  if (!ResponsesEventFits(event, *e.type, e.sequence_number, state)) return false;
  const std::size_t before = out.size();
  if (!AppendResponsesDeltas(e, out)) {
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
    return false;
  }
  if (e.sequence_number) state.last_sequence_number = e.sequence_number;
  return true;
}

// The string a delta event's value goes into: that of a new delta of its kind, when `data` has
// the recorded shape (MatchInto); nullptr otherwise.
std::string* MatchResponsesValue(const JsonShape& shape, std::string_view data,
                                 std::int64_t& sequence_number, std::vector<Delta>& out) {
  switch (static_cast<ResponsesKind>(shape.note().kind)) {
    case ResponsesKind::kTextDelta:
      return MatchInto(shape, data, sequence_number, &TextDelta::text, out);
    case ResponsesKind::kRefusalDelta:
      return MatchInto(shape, data, sequence_number, &RefusalDelta::text, out);
    case ResponsesKind::kReasoningSummaryDelta:
    case ResponsesKind::kReasoningDelta:
      return MatchInto(shape, data, sequence_number, &ReasoningDelta::text, out);
    case ResponsesKind::kArgumentsDelta:
      return MatchInto(shape, data, sequence_number, &ToolCallDelta::arguments, out);
    default:
      return nullptr;  // only delta events are recorded
  }
}

// A delta event with the recorded shape, decoded as FinishResponsesEvent would decode it after a
// full read, its value read straight into its delta: nullopt when the event does not have that
// shape, else whether the fast path takes it.
std::optional<bool> MatchResponsesDelta(const SseEventView& event, DialectDecoder::State& state,
                                        std::vector<Delta>& out) {
  const JsonShape& shape = state.last_delta;
  std::int64_t number = 0;
  if (MatchResponsesValue(shape, event.data, number, out) == nullptr) return std::nullopt;
  const auto kind = static_cast<ResponsesKind>(shape.note().kind);
  const std::optional<std::int64_t> output_index = shape.note().index;
  std::optional<std::int64_t> sequence_number;
  if (shape.has_int_hole()) sequence_number = number;
  if (!ResponsesEventFits(event, TypeOf(kind), sequence_number, state) ||
      (kind == ResponsesKind::kArgumentsDelta && !output_index)) {
    out.pop_back();
    return false;
  }
  if (kind == ResponsesKind::kArgumentsDelta) {
    std::get<ToolCallDelta>(out.back()).index = static_cast<int>(*output_index);
  }
  if (sequence_number) state.last_sequence_number = sequence_number;
  return true;
}

// Records `e`, just read in full from `data`, when it is a delta event.
void RecordResponsesDelta(std::string_view data, const ResponsesEvent& e, JsonShape& shape) {
  if (!IsDelta(e.kind) || !e.has_delta) return;
  std::optional<Hole> sequence_number;
  if (e.sequence_number) sequence_number = e.sequence_number_at;
  shape.Record(data, sequence_number, e.delta_at, {static_cast<int>(e.kind), e.output_index});
}

bool FastOpenAiResponses(const SseEventView& event, DialectDecoder::State& state,
                         std::vector<Delta>& out) {
  if (const std::optional<bool> taken = MatchResponsesDelta(event, state, out)) return *taken;
  ResponsesEvent e;
  if (!ReadResponsesEvent(event, e) || !FinishResponsesEvent(event, e, state, out)) return false;
  RecordResponsesDelta(event.data, e, state.last_delta);
  return true;
}

}  // namespace

bool TryDecodeFast(Dialect dialect, const SseEventView& event, DialectDecoder::State& state,
                   std::vector<Delta>& out) {
  switch (dialect) {
    case Dialect::kOpenAiChat:
      return FastOpenAiChat(event, state.last_delta, out);
    case Dialect::kAnthropicMessages:
      return FastAnthropic(event, state, out);
    case Dialect::kOpenAiResponses:
      return FastOpenAiResponses(event, state, out);
    case Dialect::kGemini:
      return FastGemini(event, state.last_delta, out);
    case Dialect::kOllama:
      return FastOllama(event, state.last_delta, out);
    case Dialect::kBedrockConverse:
      return FastBedrock(event, state.last_delta, out);
  }
  return false;
}

}  // namespace faultline::ref::internal
