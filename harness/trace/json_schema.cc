#include "harness/trace/json_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

namespace faultline::harness {
namespace {

using nlohmann::json;

enum TypeBit : unsigned {
  kNull = 1,
  kBoolean = 2,
  kInteger = 4,
  kNumber = 8,  // integers included
  kString = 16,
  kArray = 32,
  kObject = 64,
};

constexpr std::array<std::pair<std::string_view, unsigned>, 7> kTypes{{
    {"null", kNull},
    {"boolean", kBoolean},
    {"integer", kInteger},
    {"number", kNumber},
    {"string", kString},
    {"array", kArray},
    {"object", kObject},
}};

constexpr std::array<std::string_view, 7> kAnnotations{
    "$schema", "$id", "$comment", "title", "description", "default", "examples"};

constexpr std::size_t kShownChars = 60;  // of a string or key quoted in a message
constexpr std::size_t kShownChoices = 20;

unsigned TypeOf(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return kNull;
    case json::value_t::boolean:
      return kBoolean;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return kInteger | kNumber;
    case json::value_t::number_float:
      return std::isfinite(value.get<double>()) ? unsigned{kNumber} : 0U;
    case json::value_t::string:
      return kString;
    case json::value_t::array:
      return kArray;
    case json::value_t::object:
      return kObject;
    default:
      return 0;
  }
}

// A string or key for a message: quoted, cut short, never invalid UTF-8.
std::string Quoted(std::string_view text) {
  std::string shown(text.substr(0, kShownChars));
  if (text.size() > kShownChars) shown += "...";
  return json(shown).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string Describe(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case json::value_t::string:
      return "the string " + Quoted(value.get_ref<const std::string&>());
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return TypeOf(value) == 0 ? "a number out of range" : "the number " + value.dump();
  }
}

// a < b for two JSON numbers, exact for integers over the whole int64 and uint64 ranges.
bool Less(const json& a, const json& b) {
  if (!a.is_number_integer() || !b.is_number_integer()) return a.get<double>() < b.get<double>();
  const bool a_negative = !a.is_number_unsigned() && a.get<std::int64_t>() < 0;
  const bool b_negative = !b.is_number_unsigned() && b.get<std::int64_t>() < 0;
  if (a_negative != b_negative) return a_negative;
  if (a_negative) return a.get<std::int64_t>() < b.get<std::int64_t>();
  return a.get<std::uint64_t>() < b.get<std::uint64_t>();
}

// "an integer", "a string or null", ...
std::string Expected(unsigned types) {
  std::vector<std::string_view> names;
  if (types & kBoolean) names.push_back("a boolean");
  if (types & kNumber) {
    names.push_back("a number");
  } else if (types & kInteger) {
    names.push_back("an integer");
  }
  if (types & kString) names.push_back("a string");
  if (types & kArray) names.push_back("an array");
  if (types & kObject) names.push_back("an object");
  if (types & kNull) names.push_back("null");
  return fmt::format("{}", fmt::join(names, " or "));
}

std::string Shown(const json& value) {
  return value.is_string() ? Quoted(value.get_ref<const std::string&>()) : value.dump();
}

std::string Choices(const std::vector<json>& choices) {
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < choices.size() && i < kShownChoices; ++i) {
    shown.push_back(Shown(choices[i]));
  }
  if (choices.size() > kShownChoices) shown.push_back("...");
  return fmt::format("{}", fmt::join(shown, ", "));
}

std::size_t CodePoints(std::string_view text) {
  return static_cast<std::size_t>(std::ranges::count_if(
      text, [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string PointerToken(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

bool IsPlainKey(std::string_view key) {
  return !key.empty() && key.size() <= kShownChars && std::ranges::all_of(key, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

}  // namespace

struct JsonSchema::Node {
  bool never = false;  // the schema `false`
  unsigned types = 0;  // 0: any type
  std::optional<json> constant;
  std::optional<std::vector<json>> choices;  // enum
  std::optional<json> minimum;               // numbers
  std::optional<json> maximum;
  std::optional<std::size_t> min_length;
  std::map<std::string, int, std::less<>> properties;
  std::vector<std::string> required;
  bool only_required = false;  // a schema that says nothing but `required` (oneOf's alternatives)
  bool closed = false;         // additionalProperties: false
  int additional = -1;         // additionalProperties as a schema
  std::vector<std::pair<std::string, std::vector<std::string>>> dependent_required;
  int items = -1;
  std::vector<int> all_of;
  std::vector<int> any_of;
  std::vector<int> one_of;
  int if_schema = -1;
  int then_schema = -1;
  int else_schema = -1;
  std::optional<std::string> ref;  // the JSON pointer, until resolved into ref_node
  int ref_node = -1;
};

std::string SchemaViolation::ToString() const {
  return path.empty() ? message : fmt::format("at {}: {}", path, message);
}

// ---- compiling ------------------------------------------------------------------------------

class JsonSchema::Compiler {
 public:
  explicit Compiler(JsonSchema& out) : out_(out) {}

  std::expected<int, std::string> Add(const json& schema, const std::string& pointer, int depth) {
    if (depth > kMaxDepth) return Fail(pointer, "nests too deep");
    const int index = static_cast<int>(out_.nodes_.size());
    out_.nodes_.emplace_back();
    out_.by_pointer_.emplace(pointer, index);
    if (schema.is_boolean()) {
      out_.nodes_[index].never = !schema.get<bool>();
      return index;
    }
    if (!schema.is_object()) return Fail(pointer, "a schema is an object or a boolean");
    bool only_required = !schema.empty();
    for (const auto& [key, value] : schema.items()) {
      if (std::ranges::find(kAnnotations, key) != kAnnotations.end()) continue;
      only_required = only_required && key == "required";
      if (auto bad = Keyword(index, key, value, pointer, depth)) return std::unexpected(*bad);
    }
    out_.nodes_[index].only_required = only_required;
    return index;
  }

  std::optional<std::string> ResolveRefs() {
    for (Node& node : out_.nodes_) {
      if (!node.ref) continue;
      const auto found = out_.by_pointer_.find(*node.ref);
      if (found == out_.by_pointer_.end()) {
        return fmt::format("$ref \"#{}\" names no schema of this document", *node.ref);
      }
      node.ref_node = found->second;
    }
    return std::nullopt;
  }

 private:
  static std::unexpected<std::string> Fail(const std::string& pointer, std::string_view what) {
    return std::unexpected(fmt::format("{}: {}", pointer.empty() ? "/" : pointer, what));
  }

  // The child schema `value` at `pointer`/`token`, or why it does not compile.
  std::expected<int, std::string> Child(const json& value, const std::string& pointer,
                                        std::string_view token, int depth) {
    return Add(value, pointer + "/" + PointerToken(token), depth + 1);
  }

  std::optional<std::string> Keyword(int index, const std::string& key, const json& value,
                                     const std::string& pointer, int depth) {
    const std::string at = pointer + "/" + PointerToken(key);
    if (key == "$defs" || key == "properties") return Map(index, key, value, at, depth);
    if (key == "allOf" || key == "anyOf" || key == "oneOf")
      return List(index, key, value, at, depth);
    if (key == "items" || key == "if" || key == "then" || key == "else" ||
        (key == "additionalProperties" && value.is_object())) {
      auto child = Add(value, at, depth + 1);
      if (!child) return child.error();
      Node& node = out_.nodes_[index];
      (key == "items"  ? node.items
       : key == "if"   ? node.if_schema
       : key == "then" ? node.then_schema
       : key == "else" ? node.else_schema
                       : node.additional) = *child;
      return std::nullopt;
    }
    return Assertion(out_.nodes_[index], key, value, at);
  }

  std::optional<std::string> Map(int index, const std::string& key, const json& value,
                                 const std::string& at, int depth) {
    if (!value.is_object()) return at + ": expected an object of schemas";
    for (const auto& [name, child_schema] : value.items()) {
      auto child = Child(child_schema, at, name, depth);
      if (!child) return child.error();
      if (key == "properties") out_.nodes_[index].properties.emplace(name, *child);
    }
    return std::nullopt;
  }

  std::optional<std::string> List(int index, const std::string& key, const json& value,
                                  const std::string& at, int depth) {
    if (!value.is_array() || value.empty()) return at + ": expected a non-empty array of schemas";
    for (std::size_t i = 0; i < value.size(); ++i) {
      auto child = Child(value[i], at, std::to_string(i), depth);
      if (!child) return child.error();
      Node& node = out_.nodes_[index];
      (key == "allOf" ? node.all_of : key == "anyOf" ? node.any_of : node.one_of).push_back(*child);
    }
    return std::nullopt;
  }

  static std::optional<std::vector<std::string>> Strings(const json& value) {
    if (!value.is_array()) return std::nullopt;
    std::vector<std::string> out;
    for (const json& item : value) {
      if (!item.is_string()) return std::nullopt;
      out.push_back(item.get<std::string>());
    }
    return out;
  }

  static std::optional<std::string> Types(Node& node, const json& value, const std::string& at) {
    const json names = value.is_array() ? value : json::array({value});
    for (const json& name : names) {
      const auto found = std::ranges::find_if(kTypes, [&](const auto& t) {
        return name.is_string() && t.first == name.get_ref<const std::string&>();
      });
      if (found == kTypes.end()) return at + ": not a JSON Schema type";
      node.types |= found->second;
    }
    return std::nullopt;
  }

  static std::optional<std::string> Assertion(Node& node, const std::string& key, const json& value,
                                              const std::string& at) {
    if (key == "type") return Types(node, value, at);
    if (key == "const") {
      node.constant = value;
    } else if (key == "enum" && value.is_array() && !value.empty()) {
      node.choices = value.get<std::vector<json>>();
    } else if ((key == "minimum" || key == "maximum") && value.is_number()) {
      (key == "minimum" ? node.minimum : node.maximum) = value;
    } else if (key == "minLength" && value.is_number_unsigned()) {
      node.min_length = value.get<std::size_t>();
    } else if (key == "additionalProperties" && value.is_boolean()) {
      node.closed = !value.get<bool>();
    } else if (key == "required" && Strings(value)) {
      node.required = *Strings(value);
    } else if (key == "dependentRequired" && value.is_object()) {
      for (const auto& [name, needs] : value.items()) {
        if (!Strings(needs)) return at + ": expected arrays of field names";
        node.dependent_required.emplace_back(name, *Strings(needs));
      }
    } else if (key == "$ref" && value.is_string() && value.get<std::string>().starts_with('#')) {
      node.ref = value.get<std::string>().substr(1);
    } else {
      return fmt::format("{}: keyword \"{}\" is not supported here (or its value is malformed)", at,
                         key);
    }
    return std::nullopt;
  }

  JsonSchema& out_;
};

JsonSchema::JsonSchema() = default;
JsonSchema::JsonSchema(JsonSchema&&) noexcept = default;
JsonSchema& JsonSchema::operator=(JsonSchema&&) noexcept = default;
JsonSchema::~JsonSchema() = default;

std::expected<JsonSchema, std::string> JsonSchema::Compile(const json& document) {
  JsonSchema schema;
  Compiler compiler(schema);
  if (auto root = compiler.Add(document, "", 0); !root) return std::unexpected(root.error());
  if (auto bad = compiler.ResolveRefs()) return std::unexpected(*bad);
  return schema;
}

std::string JsonSchema::DefinitionPointer(std::string_view name) {
  return "/$defs/" + PointerToken(name);
}

bool JsonSchema::Has(std::string_view pointer) const { return by_pointer_.contains(pointer); }

// ---- validating -----------------------------------------------------------------------------

class JsonSchema::Checker {
 public:
  Checker(const JsonSchema& schema, std::size_t max) : schema_(schema), max_(max) {}

  std::vector<SchemaViolation> violations;

  void Check(int index, const json& value, int depth) {
    if (Full()) return;
    if (depth > kMaxDepth) return Report(fmt::format("nests deeper than {} levels", kMaxDepth));
    const Node& node = schema_.nodes_[index];
    if (node.never) return Report("no value is allowed here");
    if (!CheckValue(node, value)) return;
    if (node.ref_node >= 0) Check(node.ref_node, value, depth + 1);
    if (value.is_object()) CheckObject(node, value, depth);
    if (value.is_array() && node.items >= 0) {
      for (std::size_t i = 0; i < value.size() && !Full(); ++i) {
        path_.push_back(fmt::format("[{}]", i));
        Check(node.items, value[i], depth + 1);
        path_.pop_back();
      }
    }
    CheckCombinations(node, value, depth);
  }

 private:
  bool Full() const { return violations.size() >= max_; }

  void Report(std::string message) {
    if (Full()) return;
    std::string path;
    for (const std::string& step : path_) path += step;
    if (path.starts_with('.')) path.erase(0, 1);
    violations.push_back({std::move(path), std::move(message)});
  }

  // Whether `value` passes `index`, reporting nothing.
  bool Passes(int index, const json& value, int depth) const {
    Checker quiet(schema_, 1);
    quiet.Check(index, value, depth + 1);
    return quiet.violations.empty();
  }

  // Its type, const, enum and bounds; false when the type is wrong (nothing else is checked).
  bool CheckValue(const Node& node, const json& value) {
    if (node.types != 0 && (TypeOf(value) & node.types) == 0) {
      Report(fmt::format("expected {}, got {}", Expected(node.types), Describe(value)));
      return false;
    }
    if (node.constant && value != *node.constant) {
      Report(fmt::format("expected {}, got {}", Shown(*node.constant), Describe(value)));
    }
    if (node.choices && std::ranges::find(*node.choices, value) == node.choices->end()) {
      Report(fmt::format("{} is not one of {}",
                         value.is_structured() ? Describe(value) : Shown(value),
                         Choices(*node.choices)));
    }
    if (value.is_number() && TypeOf(value) != 0) CheckBounds(node, value);
    if (value.is_string() && node.min_length &&
        CodePoints(value.get_ref<const std::string&>()) < *node.min_length) {
      Report(*node.min_length == 1
                 ? std::string("expected a non-empty string")
                 : fmt::format("expected at least {} characters", *node.min_length));
    }
    return true;
  }

  void CheckBounds(const Node& node, const json& value) {
    if (node.minimum && Less(value, *node.minimum)) {
      Report(fmt::format("expected at least {}, got {}", node.minimum->dump(), value.dump()));
    }
    if (node.maximum && Less(*node.maximum, value)) {
      Report(fmt::format("expected at most {}, got {}", node.maximum->dump(), value.dump()));
    }
  }

  void CheckObject(const Node& node, const json& value, int depth) {
    std::vector<std::string> missing;
    for (const std::string& field : node.required) {
      if (!value.contains(field)) missing.push_back(Quoted(field));
    }
    if (!missing.empty()) {
      Report(fmt::format("missing required field{} {}", missing.size() > 1 ? "s" : "",
                         fmt::join(missing, ", ")));
    }
    for (const auto& [key, item] : value.items()) {
      if (Full()) return;
      const auto property = node.properties.find(key);
      const int child = property != node.properties.end() ? property->second : node.additional;
      if (child < 0) {
        if (node.closed) Report(fmt::format("unknown field {}", Quoted(key)));
        continue;
      }
      path_.push_back(IsPlainKey(key) ? "." + key : fmt::format("[{}]", Quoted(key)));
      Check(child, item, depth + 1);
      path_.pop_back();
    }
    for (const auto& [field, needs] : node.dependent_required) {
      if (!value.contains(field)) continue;
      for (const std::string& need : needs) {
        if (!value.contains(need)) {
          Report(
              fmt::format("field {} goes with {}, which is missing", Quoted(field), Quoted(need)));
        }
      }
    }
  }

  void CheckCombinations(const Node& node, const json& value, int depth) {
    for (int each : node.all_of) Check(each, value, depth + 1);
    if (!node.any_of.empty() &&
        std::ranges::none_of(node.any_of, [&](int each) { return Passes(each, value, depth); })) {
      Report("matches none of: " + FirstViolations(node.any_of, value, depth));
    }
    if (!node.one_of.empty()) CheckOneOf(node.one_of, value, depth);
    if (node.if_schema >= 0) {
      const int branch = Passes(node.if_schema, value, depth) ? node.then_schema : node.else_schema;
      if (branch >= 0) Check(branch, value, depth + 1);
    }
  }

  void CheckOneOf(const std::vector<int>& alternatives, const json& value, int depth) {
    const auto passing =
        std::ranges::count_if(alternatives, [&](int each) { return Passes(each, value, depth); });
    if (passing == 1) return;
    // Alternatives that only require fields say "exactly one of these fields".
    std::vector<std::string> fields;
    for (int each : alternatives) {
      const Node& alternative = schema_.nodes_[each];
      if (!alternative.only_required || alternative.required.size() != 1) {
        fields.clear();
        break;
      }
      fields.push_back(Quoted(alternative.required.front()));
    }
    if (!fields.empty()) {
      return Report(
          passing == 0
              ? fmt::format("needs one of the fields {}", fmt::join(fields, " or "))
              : fmt::format("allows only one of the fields {}", fmt::join(fields, " and ")));
    }
    Report(passing == 0 ? "matches none of: " + FirstViolations(alternatives, value, depth)
                        : "matches more than one alternative; exactly one is allowed");
  }

  std::string FirstViolations(const std::vector<int>& alternatives, const json& value,
                              int depth) const {
    std::vector<std::string> each;
    for (int alternative : alternatives) {
      Checker quiet(schema_, 1);
      quiet.Check(alternative, value, depth + 1);
      if (!quiet.violations.empty()) each.push_back(quiet.violations.front().ToString());
    }
    return fmt::format("{}", fmt::join(each, " | "));
  }

  const JsonSchema& schema_;
  std::size_t max_;
  std::vector<std::string> path_;
};

std::vector<SchemaViolation> JsonSchema::Validate(const json& value, std::string_view pointer,
                                                  std::size_t max) const {
  const auto found = by_pointer_.find(pointer);
  if (found == by_pointer_.end()) {
    return {{"", fmt::format("the schema has nothing at \"{}\"", pointer)}};
  }
  Checker checker(*this, std::max<std::size_t>(max, 1));
  checker.Check(found->second, value, 0);
  return std::move(checker.violations);
}

}  // namespace faultline::harness
