// A strict, allocation-free JSON reader for the decoders' hot path (internal).
//
// The dialect decoders parse most events with nlohmann::json, which is the authority on what is
// valid. The few event shapes that make up nearly all of a stream (text and argument deltas) are
// read with this cursor instead, without building a DOM. The cursor is at least as strict as
// nlohmann (RFC 8259 grammar, no control characters in strings, valid escapes and surrogate pairs,
// valid UTF-8): whenever it returns false the caller falls back to nlohmann, which then either
// decodes the event or reports the error. It never decides that something is malformed.
//
// Reads a string_view it does not own; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace faultline::ref::internal {

class JsonCursor {
 public:
  explicit JsonCursor(std::string_view text)
      : position_(text.data()), end_(text.data() + text.size()) {}

  // Calls on_member(key) for each member of the object at the cursor; on_member must consume the
  // value and return false to abort. Keys containing escapes abort (they never matter here).
  template <typename OnMember>
  bool ForEachMember(OnMember&& on_member) {
    if (!Consume('{')) return false;
    if (Consume('}')) return true;
    do {
      std::string_view key;
      if (!ReadRawString(key) || !Consume(':') || !on_member(key)) return false;
    } while (Consume(','));
    return Consume('}');
  }

  // Calls on_element() for each element of the array at the cursor.
  template <typename OnElement>
  bool ForEachElement(OnElement&& on_element) {
    if (!Consume('[')) return false;
    if (Consume(']')) return true;
    do {
      if (!on_element()) return false;
    } while (Consume(','));
    return Consume(']');
  }

  // A string without escapes, as it appears in the input (for keys and enum-like values).
  bool ReadRawString(std::string_view& out);
  // Any string, unescaped, appended to `out`.
  bool ReadString(std::string& out) { return ScanString(&out); }
  // A string or null (`is_null` tells which); a string is appended to `out`.
  bool ReadStringOrNull(std::string& out, bool& is_null);
  // An integer that fits in int64 (no fraction, no exponent).
  bool ReadInt(std::int64_t& out);
  bool ReadNull();
  // Any value, validated and skipped.
  bool SkipValue() { return SkipValue(0); }
  // Only whitespace is left.
  bool AtEnd();

 private:
  static constexpr int kMaxDepth = 64;

  void SkipWhitespace();
  bool Consume(char c);  // after whitespace
  bool SkipValue(int depth);
  bool SkipNumber();
  bool SkipLiteral(std::string_view literal);
  // A string; unescaped into *out unless out is null (then only validated).
  bool ScanString(std::string* out);
  bool ReadEscape(std::string* out);
  bool ReadUnicodeEscape(std::string* out);

  const char* position_;
  const char* end_;
};

}  // namespace faultline::ref::internal
