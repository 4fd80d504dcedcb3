// A strict, allocation-free JSON reader for the decoders' hot path (internal).
//
// The dialect decoders parse most events with nlohmann::json, which is the authority on what is
// valid. The few event shapes that make up nearly all of a stream (text and argument deltas) are
// read with this cursor instead, without building a DOM. The cursor is at least as strict as
// nlohmann (RFC 8259 grammar, no control characters in strings, valid escapes and surrogate pairs,
// valid UTF-8): whenever it returns false the caller falls back to nlohmann, which then either
// decodes the event or reports the error. It never decides that something is malformed.
//
// JsonShape, at the end, lets the decoders recognise an event that repeats the previous one but
// for its values, without reading it again.
//
// JsonCursor reads a string_view it does not own; not thread-safe.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
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

inline std::size_t FirstFlaggedByte(std::uint64_t special) {
  const int bit = std::endian::native == std::endian::little ? std::countr_zero(special)
                                                             : std::countl_zero(special);
  return static_cast<std::size_t>(bit) / 8;
}

// Past the plain string bytes (printable ASCII other than '"' and '\\') at p, eight at a time.
// The last bytes before `end` are read as the word that ends there, whose bytes before p are
// masked out (`begin`: where the text starts; that word must not reach before it). A special
// byte masked out can raise a false alarm after it, which the callers step over like any other.
inline const char* SkipPlainStringBytes(const char* p, const char* begin, const char* end) {
  while (end - p >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, sizeof word);
    if (const std::uint64_t special = SpecialStringBytes(word); special != 0) {
      return p + FirstFlaggedByte(special);
    }
    p += 8;
  }
  if (p == end) return p;
  if (end - begin >= 8) {
    const auto before = static_cast<unsigned>(p - (end - 8));  // bytes of the word before p
    std::uint64_t word;
    std::memcpy(&word, end - 8, sizeof word);
    std::uint64_t special = SpecialStringBytes(word);
    if constexpr (std::endian::native == std::endian::little) {
      special &= ~std::uint64_t{0} << (8 * before);
    } else {
      special &= ~std::uint64_t{0} >> (8 * before);
    }
    return special == 0 ? end : end - 8 + FirstFlaggedByte(special);
  }
  while (p < end) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return p;
    ++p;
  }
  return p;
}

class JsonCursor {
 public:
  explicit JsonCursor(std::string_view text)
      : begin_(text.data()), position_(text.data()), end_(text.data() + text.size()) {}

  // Bytes consumed so far.
  std::size_t offset() const { return static_cast<std::size_t>(position_ - begin_); }

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
  bool ReadRawString(std::string_view& out) {
    return ReadPlainString(out) || ReadRawStringSlow(out);
  }
  // Any string, unescaped, appended to `out`.
  bool ReadString(std::string& out) {
    std::string_view plain;
    if (ReadPlainString(plain)) {
      out.append(plain);
      return true;
    }
    return ScanString(&out);
  }
  // A string or null (`is_null` tells which); a string is appended to `out`.
  bool ReadStringOrNull(std::string& out, bool& is_null);
  // An integer that fits in int64 (no fraction, no exponent).
  bool ReadInt(std::int64_t& out);
  bool ReadNull();
  bool ReadBool(bool& out);  // true or false
  // Any value, validated and skipped.
  bool SkipValue() { return SkipValue(0); }
  // Only whitespace is left.
  bool AtEnd();

 private:
  static constexpr int kMaxDepth = 64;

  // Inline, the common case of a key or a text token: a string of printable ASCII without
  // escapes. False, having consumed nothing but whitespace, for any other string (the caller then
  // reads it in full).
  bool ReadPlainString(std::string_view& out) {
    SkipWhitespace();
    if (position_ == end_ || *position_ != '"') return false;
    const char* close = SkipPlainStringBytes(position_ + 1, begin_, end_);
    if (close == end_ || *close != '"') return false;
    out = std::string_view(position_ + 1, static_cast<std::size_t>(close - position_ - 1));
    position_ = close + 1;
    return true;
  }
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

  const char* begin_;
  const char* position_;
  const char* end_;
};

// A JSON text the fast path has read in full, remembered with the places of the values it took
// from it: at most one integer and one string, the "holes". The next text can then be matched
// against it — the bytes outside the holes compared, only the hole values read — instead of being
// read again. Why that gives the same result as reading it is explained where it is used
// (decode_fast_path.cc). A plain value (copying it copies the text); not thread-safe.
class JsonShape {
 public:
  enum class HoleKind : std::uint8_t { kInt, kString };
  struct Hole {
    HoleKind kind = HoleKind::kString;
    std::size_t begin = 0;  // the cursor's offset() before the value was read
    std::size_t end = 0;    // and after
  };
  // What the recorder learned from the bytes outside the holes (its meaning is the recorder's).
  struct Note {
    int kind = 0;
    std::optional<std::int64_t> index{};
    // Token counts read outside the holes (Gemini repeats its usage in every chunk).
    bool has_usage = false;
    std::optional<std::int64_t> input_tokens{}, output_tokens{};
  };

  // Remembers `text`; `int_hole` and `string_hole` (either may be absent) lie in it and do not
  // overlap.
  void Record(std::string_view text, std::optional<Hole> int_hole, std::optional<Hole> string_hole,
              Note note);

  // True when `text` has the recorded bytes outside the holes, and at each hole a value that
  // JsonCursor::ReadInt (into `number`) or ReadString (appended to `string`) accepts, starting
  // where the recorded hole started and ending where the recorded bytes resume.
  bool Match(std::string_view text, std::int64_t& number, std::string& string) const;

  bool recorded() const { return hole_count_ > 0; }
  bool has_int_hole() const { return has_int_hole_; }
  const Note& note() const { return note_; }

 private:
  std::string text_;
  std::array<Hole, 2> holes_{};  // [0, hole_count_) in text order
  int hole_count_ = 0;
  bool has_int_hole_ = false;
  Note note_;
};

}  // namespace faultline::ref::internal
