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

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace faultline::ref::internal {

// SWAR: the high bit of each byte of the result is set for bytes of `word` that may need a
// closer look in a string ('"', '\\', a control byte < 0x20, or a non-ASCII byte). Zero means
// none does; in little-endian order the lowest flagged byte is the first that does (borrows only
// run towards higher bytes), later flags may be false alarms.
inline std::uint64_t SpecialStringBytes(std::uint64_t word) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  auto has_zero = [](std::uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  const std::uint64_t quote = has_zero(word ^ (kOnes * '"'));
  const std::uint64_t backslash = has_zero(word ^ (kOnes * '\\'));
  const std::uint64_t control = (word - kOnes * 0x20) & ~word & kHigh;
  return quote | backslash | control | (word & kHigh);
}

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
  // Inline for the common case, a plain ASCII string of at most 15 bytes.
  bool ReadRawString(std::string_view& out) {
    SkipWhitespace();
    if constexpr (std::endian::native == std::endian::little) {
      if (end_ - position_ > 16 && *position_ == '"') {
        for (const char* p = position_ + 1; p < position_ + 17; p += 8) {
          std::uint64_t word;
          std::memcpy(&word, p, sizeof word);
          if (const std::uint64_t special = SpecialStringBytes(word); special != 0) {
            const char* at = p + std::countr_zero(special) / 8;  // the first byte flagged
            if (*at != '"') break;
            out = std::string_view(position_ + 1, static_cast<std::size_t>(at - position_ - 1));
            position_ = at + 1;
            return true;
          }
        }
      }
    }
    return ReadRawStringSlow(out);
  }
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

  bool ReadRawStringSlow(std::string_view& out);  // any string ReadRawString accepts
  // Inline: called between every two tokens.
  void SkipWhitespace() {
    while (position_ < end_ && static_cast<unsigned char>(*position_) <= ' ' &&
           (*position_ == ' ' || *position_ == '\n' || *position_ == '\r' || *position_ == '\t')) {
      ++position_;
    }
  }
  bool Consume(char c) {  // after whitespace
    SkipWhitespace();
    if (position_ == end_ || *position_ != c) return false;
    ++position_;
    return true;
  }
  bool SkipValue(int depth);
  bool SkipNumber();
  bool SkipNumberGrammar();
  bool SkipLiteral(std::string_view literal);
  // A string; unescaped into *out unless out is null (then only validated).
  bool ScanString(std::string* out);
  bool ReadEscape(std::string* out);
  bool ReadUnicodeEscape(std::string* out);

  const char* position_;
  const char* end_;
};

}  // namespace faultline::ref::internal
