#include "harness/trace/json_out.h"

#include <array>
#include <charconv>
#include <cmath>

namespace faultline::harness {

using nlohmann::json;

json& JsonTree::Slot() {
  if (open_.empty()) return root_;
  json& container = *open_.back();
  if (container.is_array()) return container.emplace_back();
  return container[key_];
}

void JsonTree::BeginObject() {
  json& slot = Slot();
  slot = json::object();
  open_.push_back(&slot);
}

void JsonTree::BeginArray() {
  json& slot = Slot();
  slot = json::array();
  open_.push_back(&slot);
}

void JsonText::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (empty_.empty()) return;
  if (empty_.back() != 0) {
    empty_.back() = 0;
  } else {
    Put(',');
  }
}

void JsonText::Open(char bracket) {
  Separate();
  Put(bracket);
  empty_.push_back(1);
}

void JsonText::Close(char bracket) {
  empty_.pop_back();
  Put(bracket);
}

void JsonText::Key(std::string_view key) {
  Separate();
  Escaped(key);
  Put(':');
  after_key_ = true;
}

void JsonText::String(std::string_view value) {
  Separate();
  Escaped(value);
}

void JsonText::Int(std::int64_t value) {
  std::array<char, 24> digits;
  const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), value).ptr;
  Value(std::string_view(digits.data(), static_cast<std::size_t>(end - digits.data())));
}

void JsonText::Uint(std::uint64_t value) {
  std::array<char, 24> digits;
  const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), value).ptr;
  Value(std::string_view(digits.data(), static_cast<std::size_t>(end - digits.data())));
}

void JsonText::Double(double value) {
  if (!std::isfinite(value)) return Value("null");
  // nlohmann's own formatter (serializer::dump_float), for its exact digits and exponent form.
  std::array<char, 64> digits;
  const char* end = nlohmann::detail::to_chars(digits.data(), digits.data() + digits.size(), value);
  Value(std::string_view(digits.data(), static_cast<std::size_t>(end - digits.data())));
}

namespace {

// The bytes a string can hold as they are: neither a control character, a quote, a backslash nor
// outside ASCII.
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> plain{};
  for (int byte = 0x20; byte < 0x80; ++byte) plain[byte] = byte != '"' && byte != '\\';
  return plain;
}();

// The escape of a byte below 0x80 that is not plain.
std::string_view EscapeOf(unsigned char byte, std::array<char, 6>& buffer) {
  switch (byte) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\b':
      return "\\b";
    case '\t':
      return "\\t";
    case '\n':
      return "\\n";
    case '\f':
      return "\\f";
    case '\r':
      return "\\r";
    default: {
      constexpr std::string_view kHex = "0123456789abcdef";
      buffer = {'\\', 'u', '0', '0', kHex[byte >> 4], kHex[byte & 0xf]};
      return {buffer.data(), buffer.size()};
    }
  }
}

}  // namespace

// Quoted and escaped as nlohmann's dump_escaped (ensure_ascii false): the two-character escapes,
// \u00xx for the other control characters, everything else as is. A string with a byte outside
// ASCII is written again by nlohmann itself, whose UTF-8 check and U+FFFD replacement it must
// match (one pass over the bytes in the common case).
void JsonText::Escaped(std::string_view value) {
  const std::uint64_t hash_before = hash_;
  const std::size_t size_before = text_ != nullptr ? text_->size() : 0;
  Put('"');
  std::size_t plain = 0;  // the start of the run of bytes written as they are
  std::array<char, 6> buffer;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto byte = static_cast<unsigned char>(value[i]);
    if (kPlain[byte]) continue;
    if (byte >= 0x80) {
      hash_ = hash_before;
      if (text_ != nullptr) text_->resize(size_before);
      Put(json(value).dump(-1, ' ', false, json::error_handler_t::replace));
      return;
    }
    Put(value.substr(plain, i - plain));
    plain = i + 1;
    Put(EscapeOf(byte, buffer));
  }
  Put(value.substr(plain));
  Put('"');
}

}  // namespace faultline::harness
