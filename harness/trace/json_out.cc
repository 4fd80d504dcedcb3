#include "harness/trace/json_out.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <optional>
#include <utility>

#include "hashing/fnv1a.h"

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

void JsonText::Put(std::string_view text) {
  if (text_ != nullptr) {
    text_->append(text);
  } else {
    hash_ = hashing::Fnv1a64(text, hash_);
  }
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

// Whether `a` and `b` dump to the same text: json's own == holds 1 equal to 1.0, and 0.0 to -0.0.
bool SameText(const json& a, const json& b) {
  if (a.type() != b.type()) return false;
  if (a.is_number_float()) {
    return std::bit_cast<std::uint64_t>(a.get<double>()) ==
           std::bit_cast<std::uint64_t>(b.get<double>());
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto x = a.begin(), y = b.begin(); x != a.end(); ++x, ++y) {
      if (x.key() != y.key() || !SameText(*x, *y)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), SameText);
  }
  return a == b;
}

}  // namespace

void JsonText::Json(const json& value) {
  // The one JSON value of a trace is its subject's declared policy, the same run after run: the
  // text of the last one written on this thread is kept (comparing costs a tenth of dumping).
  thread_local std::optional<std::pair<json, std::string>> last;
  if (!last || !SameText(last->first, value)) {
    last.emplace(value, value.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  Value(last->second);
}

// Quoted and escaped as nlohmann's dump_escaped (ensure_ascii false): the two-character escapes,
// \u00xx for the other control characters, everything else as is. A string with a byte outside
// ASCII goes to nlohmann itself, whose UTF-8 check and U+FFFD replacement it must match.
void JsonText::Escaped(std::string_view value) {
  for (const char c : value) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      Put(json(value).dump(-1, ' ', false, json::error_handler_t::replace));
      return;
    }
  }
  Put('"');
  std::size_t plain = 0;  // the start of the run of bytes written as they are
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto byte = static_cast<unsigned char>(value[i]);
    if (byte >= 0x20 && byte != '"' && byte != '\\') continue;
    Put(value.substr(plain, i - plain));
    plain = i + 1;
    switch (byte) {
      case '"':
        Put("\\\"");
        break;
      case '\\':
        Put("\\\\");
        break;
      case '\b':
        Put("\\b");
        break;
      case '\t':
        Put("\\t");
        break;
      case '\n':
        Put("\\n");
        break;
      case '\f':
        Put("\\f");
        break;
      case '\r':
        Put("\\r");
        break;
      default: {
        constexpr std::string_view kHex = "0123456789abcdef";
        const std::array<char, 6> escape{'\\', 'u', '0', '0', kHex[byte >> 4], kHex[byte & 0xf]};
        Put(std::string_view(escape.data(), escape.size()));
      }
    }
  }
  Put(value.substr(plain));
  Put('"');
}

}  // namespace faultline::harness
