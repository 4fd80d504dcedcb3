#include "scenarios/yaml_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "fmt/format.h"
#include "scenarios/duration.h"

namespace faultline::scenario::internal {
namespace {

constexpr std::string_view kDurationExample = "a duration such as \"500ms\", \"2s\" or \"1m30s\"";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool AllDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), IsDigit);
}

std::string_view WithoutSign(std::string_view text) {
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  return text;
}

// [0-9]+(\.[0-9]*)? or \.[0-9]+, then an optional exponent: the YAML 1.2 core float grammar.
bool IsDecimalFloat(std::string_view text) {
  const std::size_t exponent = text.find_first_of("eE");
  std::string_view mantissa = text.substr(0, exponent);
  if (exponent != std::string_view::npos && !AllDigits(WithoutSign(text.substr(exponent + 1)))) {
    return false;
  }
  const std::size_t dot = mantissa.find('.');
  if (dot == std::string_view::npos) return AllDigits(mantissa);
  std::string_view whole = mantissa.substr(0, dot);
  std::string_view fraction = mantissa.substr(dot + 1);
  if (!whole.empty() && !AllDigits(whole)) return false;
  if (!fraction.empty() && !AllDigits(fraction)) return false;
  return !whole.empty() || !fraction.empty();
}

bool IsSpecialFloat(std::string_view text) {
  constexpr std::string_view kSpecials[] = {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"};
  return std::find(std::begin(kSpecials), std::end(kSpecials), WithoutSign(text)) !=
         std::end(kSpecials);
}

// The text with control characters escaped and long values shortened, for messages.
std::string Quote(std::string_view text) {
  constexpr std::size_t kMaxShown = 60;
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    const char c = text[i];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  if (text.size() > kMaxShown) out += "...";
  return out + "\"";
}

// 'name' for an unknown key, shortened like Quote when long.
std::string QuoteKey(std::string_view name) {
  constexpr std::size_t kMaxShown = 60;
  if (name.size() <= kMaxShown) return fmt::format("'{}'", name);
  return fmt::format("'{}...' ({} characters)", name.substr(0, kMaxShown), name.size());
}

std::string RangeText(std::int64_t min, std::int64_t max) {
  if (max == std::numeric_limits<int>::max() || max == std::numeric_limits<std::int64_t>::max()) {
    return min == 0 ? "a non-negative integer" : fmt::format("an integer >= {}", min);
  }
  return fmt::format("an integer from {} to {}", min, max);
}

int OptimalAlignmentDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<int>> d(a.size() + 1, std::vector<int>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = static_cast<int>(i);
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

ScalarType Classify(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return ScalarType::kNull;
  const std::string& tag = node.Tag();
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return ScalarType::kString;
  const std::string& text = node.Scalar();
  constexpr std::string_view kBools[] = {"true", "True", "TRUE", "false", "False", "FALSE"};
  if (std::find(std::begin(kBools), std::end(kBools), text) != std::end(kBools)) {
    return ScalarType::kBool;
  }
  if (AllDigits(WithoutSign(text))) return ScalarType::kInt;
  if (IsDecimalFloat(WithoutSign(text)) || IsSpecialFloat(text)) return ScalarType::kFloat;
  return ScalarType::kString;
}

std::string Describe(const YAML::Node& node) {
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  switch (Classify(node)) {
    case ScalarType::kNull:
      return "nothing";
    case ScalarType::kBool:
      return fmt::format("the boolean {}", node.Scalar());
    case ScalarType::kInt:
    case ScalarType::kFloat:
      return fmt::format("the number {}", node.Scalar());
    case ScalarType::kString:
      break;
  }
  return fmt::format("the string {}", Quote(node.Scalar()));
}

std::string_view ClosestKey(std::string_view key, std::span<const std::string_view> known) {
  constexpr int kMaxDistance = 2;
  std::string_view best;
  int best_distance = kMaxDistance + 1;
  for (std::string_view candidate : known) {
    // The distance is at least the difference in length: skip the quadratic table for keys
    // that cannot be close (a hostile key may be megabytes long).
    const std::size_t longer = std::max(key.size(), candidate.size());
    if (longer - std::min(key.size(), candidate.size()) > std::size_t{kMaxDistance}) continue;
    const int distance = OptimalAlignmentDistance(key, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string ChildPath(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

std::string ItemPath(std::string_view parent, std::size_t index) {
  return fmt::format("{}[{}]", parent, index);
}

const Map::Entry* Map::Find(std::string_view key) const {
  for (const Entry& entry : entries_) {
    if (entry.name == key) return &entry;
  }
  return nullptr;
}

std::optional<Field> Map::Get(std::string_view key) const {
  const Entry* entry = Find(key);
  if (entry == nullptr) return std::nullopt;
  return entry->field;
}

std::optional<Field> Map::GetKey(std::string_view key) const {
  const Entry* entry = Find(key);
  if (entry == nullptr) return std::nullopt;
  return Field{entry->field.node, entry->field.path, entry->key_mark};
}

void Reader::Fail(const Field& at, std::string message) {
  if (error_) return;
  const bool known = !at.mark.is_null();
  LoadError error{.file = file_,
                  .line = known ? at.mark.line + 1 : 0,
                  .column = known ? at.mark.column + 1 : 0,
                  .path = at.path,
                  .message = std::move(message)};
  for (const LoadError& earlier : reported_) {
    if (earlier.line == error.line && earlier.column == error.column &&
        earlier.path == error.path) {
      return;
    }
  }
  if (std::ranges::find(read_past_, std::tuple(at.path, at.mark.line, at.mark.column)) !=
      read_past_.end()) {
    return;
  }
  error_ = std::move(error);
}

std::optional<Map> Reader::ReadMap(const Field& field, std::span<const std::string_view> known) {
  if (!ok()) return std::nullopt;
  if (!field.node.IsMap()) {
    Fail(field, fmt::format("expected a mapping, got {}", Describe(field.node)));
    return std::nullopt;
  }
  Map map;
  map.self_ = field;
  for (auto it = field.node.begin(); it != field.node.end(); ++it) {
    if (CheckKey(map, it->first, it->second, known)) continue;
    // An unknown key an earlier pass reported: read on past it, so an error beside it is found
    // too. Any other bad key (a new error, a key given twice, one that is not a name) ends it.
    if (!ok() || !it->first.IsScalar()) return std::nullopt;
    const std::string& name = it->first.Scalar();
    if (std::find(known.begin(), known.end(), name) != known.end()) return std::nullopt;
    read_past_.emplace_back(field.path, field.mark.line, field.mark.column);
  }
  return map;
}

// Adds one key/value pair to `map`; false (with an error) when the key is not a plain name, not
// one of `known`, or given twice. Only known keys are ever kept, so the duplicate check costs at
// most |known| comparisons and reading a mapping stays linear in its size. The entry's mark is
// the key's, so errors about the key point at the key.
bool Reader::CheckKey(Map& map, const YAML::Node& key, const YAML::Node& value,
                      std::span<const std::string_view> known) {
  Field key_field{key, map.self_.path, key.Mark()};
  if (!key.IsScalar()) {
    Fail(key_field, fmt::format("expected a key name, got {}", Describe(key)));
    return false;
  }
  const std::string& name = key.Scalar();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    key_field.path = ChildPath(map.self_.path, name);
    const std::string_view suggestion = ClosestKey(name, known);
    Fail(key_field, suggestion.empty() ? fmt::format("unknown key {}; expected one of: {}",
                                                     QuoteKey(name), fmt::join(known, ", "))
                                       : fmt::format("unknown key {}; did you mean '{}'?",
                                                     QuoteKey(name), suggestion));
    return false;
  }
  Field entry{value, ChildPath(map.self_.path, name), key.Mark()};
  if (const Map::Entry* first = map.Find(name)) {
    Fail(entry,
         fmt::format("key '{}' is given twice (first at line {})", name, first->key_mark.line + 1));
    return false;
  }
  // An empty value has no useful position of its own (yaml-cpp gives the next token's), so errors
  // about it point at the key.
  if (!value.IsNull()) entry.mark = value.Mark();
  map.entries_.push_back(Map::Entry{name, std::move(entry), key.Mark()});
  return true;
}

std::optional<std::vector<Field>> Reader::ReadList(const Field& field) {
  if (!ok()) return std::nullopt;
  if (!field.node.IsSequence()) {
    Fail(field, fmt::format("expected a list, got {}", Describe(field.node)));
    return std::nullopt;
  }
  std::vector<Field> items;
  std::size_t index = 0;
  for (auto it = field.node.begin(); it != field.node.end(); ++it, ++index) {
    const YAML::Node item = *it;
    // An empty item ("-" alone) has no position of its own: point at the list.
    items.push_back(
        Field{item, ItemPath(field.path, index), item.IsNull() ? field.mark : item.Mark()});
  }
  return items;
}

std::optional<Field> Reader::Require(const Map& map, std::string_view key) {
  if (!ok()) return std::nullopt;
  std::optional<Field> field = map.Get(key);
  if (!field) Fail(map.self(), fmt::format("missing required key '{}'", key));
  return field;
}

std::optional<Field> Reader::Present(const Map& map, std::string_view key) const {
  if (!ok()) return std::nullopt;
  return map.Get(key);
}

std::optional<std::string> Reader::ReadString(const Field& field) {
  if (!ok()) return std::nullopt;
  if (field.node.IsScalar() && Classify(field.node) == ScalarType::kString) {
    return field.node.Scalar();
  }
  std::string hint;
  if (field.node.IsScalar() && Classify(field.node) != ScalarType::kNull) {
    hint = " (quote it to use it as text)";
  }
  Fail(field, fmt::format("expected a string, got {}{}", Describe(field.node), hint));
  return std::nullopt;
}

std::optional<std::string> Reader::ReadText(const Field& field) {
  if (!ok()) return std::nullopt;
  const ScalarType type = Classify(field.node);
  if (field.node.IsScalar() &&
      (type == ScalarType::kString || type == ScalarType::kInt || type == ScalarType::kFloat)) {
    return field.node.Scalar();
  }
  Fail(field, fmt::format("expected a string or a number, got {}", Describe(field.node)));
  return std::nullopt;
}

std::optional<bool> Reader::ReadBool(const Field& field) {
  if (!ok()) return std::nullopt;
  if (field.node.IsScalar() && Classify(field.node) == ScalarType::kBool) {
    return field.node.Scalar().front() == 't' || field.node.Scalar().front() == 'T';
  }
  Fail(field, fmt::format("expected true or false, got {}", Describe(field.node)));
  return std::nullopt;
}

std::optional<std::int64_t> Reader::ReadInt(const Field& field, std::int64_t min,
                                            std::int64_t max) {
  if (!ok()) return std::nullopt;
  std::int64_t value = 0;
  bool parsed = false;
  if (field.node.IsScalar() && Classify(field.node) == ScalarType::kInt) {
    std::string_view text = field.node.Scalar();
    if (text.front() == '+') text.remove_prefix(1);
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    parsed = ec == std::errc() && end == text.data() + text.size();
  }
  if (parsed && value >= min && value <= max) return value;
  Fail(field, fmt::format("expected {}, got {}", RangeText(min, max), Describe(field.node)));
  return std::nullopt;
}

std::optional<std::uint64_t> Reader::ReadUint64(const Field& field) {
  if (!ok()) return std::nullopt;
  if (field.node.IsScalar() && Classify(field.node) == ScalarType::kInt) {
    std::string_view text = field.node.Scalar();
    if (text.front() == '+') text.remove_prefix(1);
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size()) return value;
  }
  Fail(field, fmt::format("expected an integer from 0 to {}, got {}",
                          std::numeric_limits<std::uint64_t>::max(), Describe(field.node)));
  return std::nullopt;
}

std::optional<double> Reader::ReadNumber(const Field& field, double min, double max) {
  if (!ok()) return std::nullopt;
  const ScalarType type = Classify(field.node);
  double value = std::nan("");
  if (field.node.IsScalar() && (type == ScalarType::kInt || type == ScalarType::kFloat)) {
    std::string_view text = field.node.Scalar();
    if (text.front() == '+') text.remove_prefix(1);
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) value = std::nan("");
  }
  if (value >= min && value <= max) return value;  // false for NaN
  Fail(field,
       fmt::format("expected a number from {} to {}, got {}", min, max, Describe(field.node)));
  return std::nullopt;
}

std::optional<Duration> Reader::ReadDuration(const Field& field, Sign sign) {
  if (!ok()) return std::nullopt;
  if (!field.node.IsScalar() || Classify(field.node) != ScalarType::kString) {
    std::string hint;
    if (Classify(field.node) == ScalarType::kInt || Classify(field.node) == ScalarType::kFloat) {
      hint = fmt::format(" (a duration needs a unit, e.g. \"{}s\")", field.node.Scalar());
    }
    Fail(field, fmt::format("expected {}, got {}{}", kDurationExample, Describe(field.node), hint));
    return std::nullopt;
  }
  auto duration = ParseDuration(field.node.Scalar());
  if (!duration) {
    Fail(field, fmt::format("expected {}, got {}: {}", kDurationExample, Describe(field.node),
                            duration.error()));
    return std::nullopt;
  }
  if (sign == Sign::kNonNegative && duration->count() < 0) {
    Fail(field,
         fmt::format("expected a duration that is not negative, got {}", Describe(field.node)));
    return std::nullopt;
  }
  return *duration;
}

std::optional<Wait> Reader::ReadWait(const Field& field) {
  if (!ok()) return std::nullopt;
  if (field.node.IsScalar() && field.node.Scalar() == "forever") return Wait{Duration{0}, true};
  if (!field.node.IsScalar() || Classify(field.node) != ScalarType::kString) {
    Fail(field,
         fmt::format("expected {} or \"forever\", got {}", kDurationExample, Describe(field.node)));
    return std::nullopt;
  }
  std::optional<Duration> duration = ReadDuration(field, Sign::kNonNegative);
  if (!duration) return std::nullopt;
  return Wait{*duration, false};
}

std::optional<std::size_t> Reader::ReadName(const Field& field,
                                            std::span<const std::string_view> names) {
  if (!ok()) return std::nullopt;
  if (field.node.IsScalar() && Classify(field.node) == ScalarType::kString) {
    auto it = std::find(names.begin(), names.end(), field.node.Scalar());
    if (it != names.end()) return static_cast<std::size_t>(it - names.begin());
  }
  Fail(field,
       fmt::format("expected one of {}, got {}", fmt::join(names, ", "), Describe(field.node)));
  return std::nullopt;
}

void Reader::Get(const Map& map, std::string_view key, bool* out) {
  std::optional<Field> field = Present(map, key);
  if (!field) return;
  if (std::optional<bool> value = ReadBool(*field)) *out = *value;
}

void Reader::Get(const Map& map, std::string_view key, std::optional<bool>* out) {
  bool value = false;
  if (!Present(map, key)) return;
  Get(map, key, &value);
  if (ok()) *out = value;
}

void Reader::Get(const Map& map, std::string_view key, std::string* out) {
  std::optional<Field> field = Present(map, key);
  if (!field) return;
  if (std::optional<std::string> value = ReadString(*field)) *out = std::move(*value);
}

void Reader::Get(const Map& map, std::string_view key, std::optional<std::string>* out) {
  std::optional<Field> field = Present(map, key);
  if (!field) return;
  if (std::optional<std::string> value = ReadString(*field)) *out = std::move(*value);
}

void Reader::Get(const Map& map, std::string_view key, int* out, int min, int max) {
  std::optional<Field> field = Present(map, key);
  if (!field) return;
  if (std::optional<std::int64_t> value = ReadInt(*field, min, max)) {
    *out = static_cast<int>(*value);
  }
}

void Reader::Get(const Map& map, std::string_view key, std::optional<int>* out, int min, int max) {
  int value = 0;
  if (!Present(map, key)) return;
  Get(map, key, &value, min, max);
  if (ok()) *out = value;
}

void Reader::Get(const Map& map, std::string_view key, Duration* out, Sign sign) {
  std::optional<Field> field = Present(map, key);
  if (!field) return;
  if (std::optional<Duration> value = ReadDuration(*field, sign)) *out = *value;
}

void Reader::Get(const Map& map, std::string_view key, std::optional<Duration>* out, Sign sign) {
  std::optional<Field> field = Present(map, key);
  if (!field) return;
  if (std::optional<Duration> value = ReadDuration(*field, sign)) *out = *value;
}

void Reader::Get(const Map& map, std::string_view key, Wait* out) {
  std::optional<Field> field = Present(map, key);
  if (!field) return;
  if (std::optional<Wait> value = ReadWait(*field)) *out = *value;
}

void Reader::Get(const Map& map, std::string_view key, std::optional<Wait>* out) {
  std::optional<Field> field = Present(map, key);
  if (!field) return;
  if (std::optional<Wait> value = ReadWait(*field)) *out = *value;
}

}  // namespace faultline::scenario::internal
