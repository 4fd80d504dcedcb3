#include "reference_impl/json_cursor.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>
#include <utility>

namespace faultline::ref::internal {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(std::string& out, std::uint32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

// The length of the valid UTF-8 sequence at p (lead byte >= 0x80), or 0.
std::size_t Utf8SequenceLength(const unsigned char* p, std::size_t n) {
  const unsigned char lead = p[0];
  std::size_t length = 0;
  unsigned char lower = 0x80;
  unsigned char upper = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    lower = lead == 0xE0 ? 0xA0 : 0x80;
    upper = lead == 0xED ? 0x9F : 0xBF;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    lower = lead == 0xF0 ? 0x90 : 0x80;
    upper = lead == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  if (n < length) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if (p[k] < lower || p[k] > upper) return 0;
    lower = 0x80;
    upper = 0xBF;
  }
  return length;
}

// Whether a[0, n) == b[0, n). Inline for the few bytes after most holes (`"}}`,
// `,"logprobs":[]}`), where a call to memcmp costs more than the comparison.
bool SameBytes(const char* a, const char* b, std::size_t n) {
  if (n > 16) return std::memcmp(a, b, n) == 0;
  const auto word = [](const char* at) {
    std::uint64_t value;
    std::memcpy(&value, at, sizeof value);
    return value;
  };
  if (n >= 8) return word(a) == word(b) && word(a + n - 8) == word(b + n - 8);
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

bool JsonCursor::AtEnd() {
  SkipWhitespace();
  return position_ == end_;
}

bool JsonCursor::ReadRawStringSlow(std::string_view& out) {
  if (!Consume('"')) return false;
  const char* start = position_;
  while (position_ < end_) {
    position_ = SkipPlainStringBytes(position_, begin_, end_);
    if (position_ == end_) break;
    const auto c = static_cast<unsigned char>(*position_);
    if (c == '"') {
      out = std::string_view(start, static_cast<std::size_t>(position_ - start));
      ++position_;
      return true;
    }
    if (c == '\\' || c < 0x20) return false;
    if (c >= 0x80) {
      const std::size_t length =
          Utf8SequenceLength(reinterpret_cast<const unsigned char*>(position_),
                             static_cast<std::size_t>(end_ - position_));
      if (length == 0) return false;
      position_ += length;
    } else {
      ++position_;
    }
  }
  return false;
}

bool JsonCursor::ScanString(std::string* out) {
  if (!Consume('"')) return false;
  const char* run = position_;  // unescaped bytes not yet appended
  while (position_ < end_) {
    position_ = SkipPlainStringBytes(position_, begin_, end_);
    if (position_ == end_) break;
    const auto c = static_cast<unsigned char>(*position_);
    if (c == '"' || c == '\\') {
      if (out != nullptr) out->append(run, static_cast<std::size_t>(position_ - run));
      ++position_;
      if (c == '"') return true;
      if (!ReadEscape(out)) return false;
      run = position_;
    } else if (c < 0x20) {
      return false;
    } else if (c >= 0x80) {
      const std::size_t length =
          Utf8SequenceLength(reinterpret_cast<const unsigned char*>(position_),
                             static_cast<std::size_t>(end_ - position_));
      if (length == 0) return false;
      position_ += length;
    } else {
      ++position_;
    }
  }
  return false;
}

// After a backslash.
bool JsonCursor::ReadEscape(std::string* out) {
  if (position_ == end_) return false;
  char decoded = 0;
  switch (*position_++) {
    case '"':
      decoded = '"';
      break;
    case '\\':
      decoded = '\\';
      break;
    case '/':
      decoded = '/';
      break;
    case 'b':
      decoded = '\b';
      break;
    case 'f':
      decoded = '\f';
      break;
    case 'n':
      decoded = '\n';
      break;
    case 'r':
      decoded = '\r';
      break;
    case 't':
      decoded = '\t';
      break;
    case 'u':
      return ReadUnicodeEscape(out);
    default:
      return false;
  }
  if (out != nullptr) out->push_back(decoded);
  return true;
}

// After "\u": four hex digits, and for a high surrogate a "\uDC00".."\uDFFF" after it.
bool JsonCursor::ReadUnicodeEscape(std::string* out) {
  auto read_hex4 = [this](std::uint32_t& value) {
    if (end_ - position_ < 4) return false;
    value = 0;
    for (int i = 0; i < 4; ++i) {
      const int digit = HexValue(*position_++);
      if (digit < 0) return false;
      value = value * 16 + static_cast<std::uint32_t>(digit);
    }
    return true;
  };
  std::uint32_t code_point = 0;
  if (!read_hex4(code_point)) return false;
  if (code_point >= 0xDC00 && code_point <= 0xDFFF) return false;  // a lone low surrogate
  if (code_point >= 0xD800 && code_point <= 0xDBFF) {
    std::uint32_t low = 0;
    if (end_ - position_ < 2 || position_[0] != '\\' || position_[1] != 'u') return false;
    position_ += 2;
    if (!read_hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
    code_point = 0x10000 + ((code_point - 0xD800) << 10) + (low - 0xDC00);
  }
  if (out != nullptr) AppendUtf8(*out, code_point);
  return true;
}

bool JsonCursor::ReadStringOrNull(std::string& out, bool& is_null) {
  SkipWhitespace();
  is_null = position_ < end_ && *position_ == 'n';
  return is_null ? ReadNull() : ReadString(out);
}

bool JsonCursor::ReadInt(std::int64_t& out) {
  SkipWhitespace();
  const char* p = position_;
  const bool negative = p < end_ && *p == '-';
  if (negative) ++p;
  const char* const digits = p;
  std::uint64_t value = 0;
  for (; p < end_ && IsDigit(*p); ++p) {
    if (p - digits == 19) return false;  // more digits than any int64 has: 19 cannot overflow
    value = value * 10 + static_cast<unsigned>(*p - '0');
  }
  if (p == digits || (*digits == '0' && p - digits > 1)) return false;  // none, or a leading 0
  if (p < end_ && (*p == '.' || *p == 'e' || *p == 'E')) return false;  // a float: not ours
  if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
  out = negative ? -static_cast<std::int64_t>(value) : static_cast<std::int64_t>(value);
  position_ = p;
  return true;
}

bool JsonCursor::ReadNull() {
  SkipWhitespace();
  return SkipLiteral("null");
}

bool JsonCursor::ReadBool(bool& out) {
  SkipWhitespace();
  if (SkipLiteral("true")) {
    out = true;
    return true;
  }
  out = false;
  return SkipLiteral("false");
}

bool JsonCursor::SkipLiteral(std::string_view literal) {
  if (static_cast<std::size_t>(end_ - position_) < literal.size() ||
      std::string_view(position_, literal.size()) != literal) {
    return false;
  }
  position_ += literal.size();
  return true;
}

bool JsonCursor::SkipNumber() {
  const char* start = position_;
  if (!SkipNumberGrammar()) return false;
  // nlohmann refuses a number whose value overflows a double ("1e400", 400 digits); refuse every
  // number from_chars cannot read exactly in range (an underflow too: stricter is safe).
  constexpr std::ptrdiff_t kShortNumber = 16;
  const bool exponent =
      std::find_if(start, position_, [](char c) { return c == 'e' || c == 'E'; }) != position_;
  if (!exponent && position_ - start <= kShortNumber) return true;
  double value = 0;
  const auto [end, error] = std::from_chars(start, position_, value);
  return error == std::errc() && end == position_;
}

bool JsonCursor::SkipNumberGrammar() {
  if (position_ < end_ && *position_ == '-') ++position_;
  if (position_ == end_ || !IsDigit(*position_)) return false;
  if (*position_ == '0') {
    ++position_;
  } else {
    while (position_ < end_ && IsDigit(*position_)) ++position_;
  }
  auto digits = [this] {
    if (position_ == end_ || !IsDigit(*position_)) return false;
    while (position_ < end_ && IsDigit(*position_)) ++position_;
    return true;
  };
  if (position_ < end_ && *position_ == '.') {
    ++position_;
    if (!digits()) return false;
  }
  if (position_ < end_ && (*position_ == 'e' || *position_ == 'E')) {
    ++position_;
    if (position_ < end_ && (*position_ == '+' || *position_ == '-')) ++position_;
    if (!digits()) return false;
  }
  return true;
}

bool JsonCursor::SkipValue(int depth) {
  if (depth > kMaxDepth) return false;
  SkipWhitespace();
  if (position_ == end_) return false;
  switch (*position_) {
    case '{':
      return ForEachMember([&](std::string_view) { return SkipValue(depth + 1); });
    case '[':
      return ForEachElement([&] { return SkipValue(depth + 1); });
    case '"':
      return ScanString(nullptr);
    case 't':
      return SkipLiteral("true");
    case 'f':
      return SkipLiteral("false");
    case 'n':
      return SkipLiteral("null");
    default:
      return SkipNumber();
  }
}

void JsonShape::Record(std::string_view text, std::optional<Hole> int_hole,
                       std::optional<Hole> string_hole, Note note) {
  text_.assign(text);
  hole_count_ = 0;
  for (const std::optional<Hole>& hole : {int_hole, string_hole}) {
    if (hole) holes_[static_cast<std::size_t>(hole_count_++)] = *hole;
  }
  if (hole_count_ == 2 && holes_[0].begin > holes_[1].begin) std::swap(holes_[0], holes_[1]);
  has_int_hole_ = int_hole.has_value();
  note_ = note;
}

bool JsonShape::Match(std::string_view text, std::int64_t& number, std::string& string) const {
  if (!recorded()) return false;
  std::size_t from = 0;  // in text_: where the bytes to compare next start
  std::size_t at = 0;    // in `text`
  // Whether the next `length` bytes of `text` are those of text_.
  auto same = [&](std::size_t length) {
    return text.size() - at >= length && SameBytes(text.data() + at, text_.data() + from, length);
  };
  for (int i = 0; i < hole_count_; ++i) {
    const Hole& hole = holes_[static_cast<std::size_t>(i)];
    if (!same(hole.begin - from)) return false;
    at += hole.begin - from;
    JsonCursor cursor(std::string_view(text.data() + at, text.size() - at));
    const bool read =
        hole.kind == HoleKind::kInt ? cursor.ReadInt(number) : cursor.ReadString(string);
    if (!read) return false;
    at += cursor.offset();
    from = hole.end;
  }
  return text.size() - at == text_.size() - from && same(text_.size() - from);
}

}  // namespace faultline::ref::internal
