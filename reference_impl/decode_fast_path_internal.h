// Internal to the fast path (decode_fast_path.cc, decode_fast_path_gemini_ollama_bedrock.cc): the
// helpers its readers share, and the entry points of the dialects it reads in the second file.
// What the fast path promises, and why its JsonShape shortcut is sound, is explained at the top
// of decode_fast_path.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "reference_impl/dialect_decoder.h"
#include "reference_impl/json_cursor.h"

namespace faultline::ref::internal {

using Hole = JsonShape::Hole;
using HoleKind = JsonShape::HoleKind;

// Appends a T built from `args` in place (a temporary T would be moved twice on its way into the
// variant, which shows at a few hundred bytes an event).
template <typename T, typename... Args>
void Emit(std::vector<Delta>& out, Args&&... args) {
  out.emplace_back(std::in_place_type<T>, std::forward<Args>(args)...);
}

// Reads a value with `read` and notes where it was (for JsonShape::Record).
template <typename Read>
bool ReadNoting(JsonCursor& cursor, HoleKind kind, Hole& at, Read&& read) {
  at.kind = kind;
  at.begin = cursor.offset();
  if (!read()) return false;
  at.end = cursor.offset();
  return true;
}

// Reads a string member exactly once. (Plain strings and flags rather than optional<string>:
// the event structs are then cheap to construct, which matters at a few hundred bytes an event.)
inline bool ReadOnce(JsonCursor& cursor, std::string& slot, bool& seen, Hole& at) {
  return !std::exchange(seen, true) &&
         ReadNoting(cursor, HoleKind::kString, at, [&] { return cursor.ReadString(slot); });
}

inline bool ReadIntOnce(JsonCursor& cursor, std::optional<std::int64_t>& slot) {
  if (slot) return false;
  std::int64_t value = 0;
  if (!cursor.ReadInt(value)) return false;
  slot = value;
  return true;
}

inline bool ReadRawOnce(JsonCursor& cursor, std::optional<std::string_view>& slot) {
  if (slot) return false;
  std::string_view value;
  if (!cursor.ReadRawString(value)) return false;
  slot = value;
  return true;
}

inline bool ReadBoolOnce(JsonCursor& cursor, std::optional<bool>& slot) {
  if (slot) return false;
  bool value = false;
  if (!cursor.ReadBool(value)) return false;
  slot = value;
  return true;
}

// Matches `text` against `shape` with the string hole read straight into `field` of a new T at
// the end of `out`; returns that string, or nullptr, with `out` as it was, when `text` does not
// match. (A value read into a temporary and moved into the variant cost a tenth of the decode of
// a matched event.)
template <typename T>
std::string* MatchInto(const JsonShape& shape, std::string_view text, std::int64_t& number,
                       std::string T::*field, std::vector<Delta>& out) {
  if (!shape.recorded()) return nullptr;
  std::string& value = std::get<T>(out.emplace_back(std::in_place_type<T>)).*field;
  if (shape.Match(text, number, value)) return &value;
  out.pop_back();
  return nullptr;
}

// The dialects of decode_fast_path_gemini_ollama_bedrock.cc, with TryDecodeFast's contract.
bool FastGemini(const SseEventView& event, JsonShape& last_delta, std::vector<Delta>& out);
bool FastOllama(const SseEventView& event, JsonShape& last_delta, std::vector<Delta>& out);
bool FastBedrock(const SseEventView& event, JsonShape& last_delta, std::vector<Delta>& out);

}  // namespace faultline::ref::internal
