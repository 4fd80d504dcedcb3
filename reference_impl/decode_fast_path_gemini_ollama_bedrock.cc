// The fast path for the chunks that make up nearly all of a Gemini, Ollama or Bedrock stream,
// with the same contract and the same JsonShape shortcut as the other dialects' (both explained
// at the top of decode_fast_path.cc):
//   gemini   {"candidates":[{"content":{"parts":[{"text":"…"}],"role":"model"},"index":0}],
//            "usageMetadata":{…},…}: one candidate with one text (or thought) part, with or
//            without a finishReason;
//   ollama   {"model":…,"message":{"role":"assistant","content":"…"},"done":false}: content
//            and/or thinking, no tool calls, not the last line;
//   bedrock  contentBlockDelta {"contentBlockIndex":0,"delta":{"text":"…"},"p":"…"}, or a
//            reasoningContent text or toolUse input piece.
// Anything else — errors, function and tool calls, several candidates or parts, the last Ollama
// line, other Bedrock events, duplicate keys, nulls where the full decoder would take a default —
// is left to the full decoder (decode_gemini.cc, decode_ollama.cc, decode_bedrock.cc), which
// these readers follow member by member. The shortcut's hole is the one text value; everything
// a chunk says besides it (its kind, the block index, Gemini's usage) is in the bytes around it
// and so is recorded once, in the JsonShape's note.
#include <optional>
#include <string>
#include <utility>

#include "reference_impl/decode_fast_path_internal.h"
#include "reference_impl/dialect_decoder_internal.h"

namespace faultline::ref::internal {
namespace {

// What a chunk's text value is (JsonShape::Note::kind of a recorded chunk).
enum ChunkValueKind : int { kChunkText, kChunkReasoning, kChunkArguments };

// Text and reasoning: an empty value says nothing, as in the full decoders.
void AppendWords(ChunkValueKind kind, std::string& value, std::vector<Delta>& out) {
  if (value.empty()) return;
  if (kind == kChunkReasoning) {
    Emit<ReasoningDelta>(out, std::move(value));
  } else {
    Emit<TextDelta>(out, std::move(value));
  }
}

// A chunk with the recorded shape whose value is words (JsonShape::Note::kind text or reasoning),
// read straight into its delta, none when empty; false when the chunk does not have that shape.
bool MatchWords(const JsonShape& shape, std::string_view data, std::vector<Delta>& out) {
  std::int64_t unused = 0;
  const std::string* words = shape.note().kind == kChunkReasoning
                                 ? MatchInto(shape, data, unused, &ReasoningDelta::text, out)
                                 : MatchInto(shape, data, unused, &TextDelta::text, out);
  if (words == nullptr) return false;
  if (words->empty()) out.pop_back();
  return true;
}

// --- gemini ------------------------------------------------------------------------------------

struct GeminiChunk {
  std::string text;
  std::string finish;
  std::optional<bool> thought;
  std::optional<std::int64_t> index, input_tokens, output_tokens;
  int candidates = 0, parts = 0;
  bool has_text = false, has_content = false, has_parts = false, has_finish = false;
  bool has_usage = false;
  Hole text_at;
};

bool ReadGeminiPart(JsonCursor& cursor, GeminiChunk& c) {
  return cursor.ForEachMember([&](std::string_view key) {
    if (key == "text") return ReadOnce(cursor, c.text, c.has_text, c.text_at);
    if (key == "thought") return ReadBoolOnce(cursor, c.thought);
    if (key == "functionCall") return false;  // numbered across the attempt: the full decoder's
    return cursor.SkipValue();
  });
}

bool ReadGeminiContent(JsonCursor& cursor, GeminiChunk& c) {
  return !std::exchange(c.has_content, true) && cursor.ForEachMember([&](std::string_view key) {
    if (key != "parts") return cursor.SkipValue();
    return !std::exchange(c.has_parts, true) &&
           cursor.ForEachElement([&] { return ++c.parts == 1 && ReadGeminiPart(cursor, c); });
  });
}

bool ReadGeminiCandidate(JsonCursor& cursor, GeminiChunk& c) {
  return cursor.ForEachMember([&](std::string_view key) {
    // Another index is another candidate, which the full decoder skips.
    if (key == "index") return ReadIntOnce(cursor, c.index) && *c.index == 0;
    if (key == "content") return ReadGeminiContent(cursor, c);
    if (key == "finishReason") {
      bool is_null = false;
      return !std::exchange(c.has_finish, true) && cursor.ReadStringOrNull(c.finish, is_null);
    }
    return cursor.SkipValue();
  });
}

bool ReadGeminiUsage(JsonCursor& cursor, GeminiChunk& c) {
  return !std::exchange(c.has_usage, true) && cursor.ForEachMember([&](std::string_view key) {
    if (key == "promptTokenCount") return ReadIntOnce(cursor, c.input_tokens);
    if (key == "candidatesTokenCount") return ReadIntOnce(cursor, c.output_tokens);
    return cursor.SkipValue();
  });
}

bool ReadGeminiChunk(std::string_view data, GeminiChunk& c) {
  JsonCursor cursor(data);
  bool has_candidates = false;
  const bool ok = cursor.ForEachMember([&](std::string_view key) {
    if (key == "candidates") {
      return !std::exchange(has_candidates, true) && cursor.ForEachElement([&] {
        return ++c.candidates == 1 && ReadGeminiCandidate(cursor, c);
      });
    }
    if (key == "usageMetadata") return ReadGeminiUsage(cursor, c);
    if (key == "error") return false;
    return cursor.SkipValue();
  });
  return ok && cursor.AtEnd() && c.candidates == 1 && c.parts == 1 && c.has_text;
}

// The full decoder's order: the part, the usage, then the finish and the end of the answer.
void AppendGeminiDeltas(const JsonShape::Note& note, std::string& text, std::string& finish,
                        std::vector<Delta>& out) {
  AppendWords(static_cast<ChunkValueKind>(note.kind), text, out);
  if (note.has_usage) Emit<UsageDelta>(out, note.input_tokens, note.output_tokens);
  if (finish.empty()) return;
  Emit<FinishDelta>(out, std::move(finish));
  Emit<TerminalDelta>(out, TerminalMarker::kFinishReason);
}

}  // namespace

bool FastGemini(const SseEventView& event, JsonShape& last_delta, std::vector<Delta>& out) {
  // Recorded only without a finish reason: the part's words and the usage (AppendGeminiDeltas).
  if (MatchWords(last_delta, event.data, out)) {
    const JsonShape::Note& note = last_delta.note();
    if (note.has_usage) Emit<UsageDelta>(out, note.input_tokens, note.output_tokens);
    return true;
  }
  GeminiChunk c;
  if (!ReadGeminiChunk(event.data, c)) return false;
  const JsonShape::Note note{c.thought.value_or(false) ? kChunkReasoning : kChunkText, std::nullopt,
                             c.has_usage, c.input_tokens, c.output_tokens};
  if (c.finish.empty()) last_delta.Record(event.data, std::nullopt, c.text_at, note);
  AppendGeminiDeltas(note, c.text, c.finish, out);
  return true;
}

// --- ollama ------------------------------------------------------------------------------------

namespace {

struct OllamaLine {
  std::string content, thinking;
  std::optional<bool> done;
  bool has_content = false, has_thinking = false, has_message = false;
  Hole content_at, thinking_at;
};

bool ReadOllamaMessage(JsonCursor& cursor, OllamaLine& l) {
  return !std::exchange(l.has_message, true) && cursor.ForEachMember([&](std::string_view key) {
    if (key == "content") return ReadOnce(cursor, l.content, l.has_content, l.content_at);
    if (key == "thinking") return ReadOnce(cursor, l.thinking, l.has_thinking, l.thinking_at);
    if (key == "tool_calls") return cursor.ReadNull();  // calls: the full decoder numbers them
    return cursor.SkipValue();
  });
}

bool ReadOllamaLine(std::string_view data, OllamaLine& l) {
  JsonCursor cursor(data);
  const bool ok = cursor.ForEachMember([&](std::string_view key) {
    if (key == "message") return ReadOllamaMessage(cursor, l);
    if (key == "done") return ReadBoolOnce(cursor, l.done);
    if (key == "error") return false;
    return cursor.SkipValue();
  });
  // The last line ("done": true) carries the usage and the finish: the full decoder's.
  return ok && cursor.AtEnd() && l.done.has_value() && !*l.done && l.has_message;
}

// The member a match may change: the one with words, when the other is empty or absent (a line
// with both is read in full every time).
std::optional<std::pair<ChunkValueKind, Hole>> OllamaHole(const OllamaLine& l) {
  if (l.has_content && l.thinking.empty()) return std::pair{kChunkText, l.content_at};
  if (l.has_thinking && l.content.empty()) return std::pair{kChunkReasoning, l.thinking_at};
  return std::nullopt;
}

// The full decoder's order: thinking, then content.
void AppendOllamaDeltas(std::string& thinking, std::string& content, std::vector<Delta>& out) {
  AppendWords(kChunkReasoning, thinking, out);
  AppendWords(kChunkText, content, out);
}

}  // namespace

bool FastOllama(const SseEventView& event, JsonShape& last_delta, std::vector<Delta>& out) {
  // The other member was empty or absent in the recorded line: it says nothing.
  if (MatchWords(last_delta, event.data, out)) return true;
  OllamaLine l;
  if (!ReadOllamaLine(event.data, l)) return false;
  if (const auto hole = OllamaHole(l)) {
    last_delta.Record(event.data, std::nullopt, hole->second, {hole->first});
  }
  AppendOllamaDeltas(l.thinking, l.content, out);
  return true;
}

// --- bedrock-converse --------------------------------------------------------------------------

namespace {

struct BedrockDelta {
  std::optional<std::int64_t> index;
  std::string value;
  ChunkValueKind kind = kChunkText;
  int values = 0;  // of the members text, reasoningContent and toolUse
  bool has_delta = false, has_value = false;
  Hole value_at;
};

// reasoningContent's {"text"} or toolUse's {"input"}.
bool ReadBedrockValueIn(JsonCursor& cursor, std::string_view name, BedrockDelta& d) {
  return cursor.ForEachMember([&](std::string_view key) {
    if (key == name) return ReadOnce(cursor, d.value, d.has_value, d.value_at);
    return cursor.SkipValue();
  });
}

// The delta object with exactly one of its kinds (the full decoder prefers text to the others).
bool ReadBedrockDeltaObject(JsonCursor& cursor, BedrockDelta& d) {
  return !std::exchange(d.has_delta, true) && cursor.ForEachMember([&](std::string_view key) {
    if (key == "text") {
      d.kind = kChunkText;
      return ++d.values == 1 && ReadOnce(cursor, d.value, d.has_value, d.value_at);
    }
    if (key == "reasoningContent") {
      d.kind = kChunkReasoning;
      return ++d.values == 1 && ReadBedrockValueIn(cursor, "text", d);
    }
    if (key == "toolUse") {
      d.kind = kChunkArguments;
      return ++d.values == 1 && ReadBedrockValueIn(cursor, "input", d);
    }
    return cursor.SkipValue();
  });
}

bool ReadBedrockDelta(std::string_view data, BedrockDelta& d) {
  JsonCursor cursor(data);
  const bool ok = cursor.ForEachMember([&](std::string_view key) {
    if (key == "contentBlockIndex") return ReadIntOnce(cursor, d.index);
    if (key == "delta") return ReadBedrockDeltaObject(cursor, d);
    return cursor.SkipValue();  // the padding "p" among others
  });
  return ok && cursor.AtEnd() && d.index && *d.index >= 0 && *d.index <= kMaxBedrockBlockIndex &&
         d.has_value;
}

// A tool call's piece of arguments counts even when empty; words do not.
void AppendBedrockDelta(ChunkValueKind kind, std::int64_t index, std::string& value,
                        std::vector<Delta>& out) {
  if (kind == kChunkArguments) {
    Emit<ToolCallDelta>(out, static_cast<int>(index), std::string(), std::string(),
                        std::move(value));
  } else {
    AppendWords(kind, value, out);
  }
}

}  // namespace

bool FastBedrock(const SseEventView& event, JsonShape& last_delta, std::vector<Delta>& out) {
  if (event.type != "contentBlockDelta") return false;
  const JsonShape::Note& note = last_delta.note();
  if (note.kind != kChunkArguments) {
    if (MatchWords(last_delta, event.data, out)) return true;
  } else {
    std::int64_t unused = 0;  // arguments count even when empty (AppendBedrockDelta)
    if (MatchInto(last_delta, event.data, unused, &ToolCallDelta::arguments, out) != nullptr) {
      std::get<ToolCallDelta>(out.back()).index = static_cast<int>(*note.index);
      return true;
    }
  }
  BedrockDelta d;
  if (!ReadBedrockDelta(event.data, d)) return false;
  last_delta.Record(event.data, std::nullopt, d.value_at, {d.kind, d.index});
  AppendBedrockDelta(d.kind, *d.index, d.value, out);
  return true;
}

}  // namespace faultline::ref::internal
