#include "reports/json_reader.h"

#include <limits>

#include "fmt/format.h"

namespace faultline::report::internal {

std::string JoinPath(std::string_view path, std::string_view key) {
  if (path.empty()) return std::string(key);
  return fmt::format("{}.{}", path, key);
}

std::string IndexPath(std::string_view path, std::size_t index) {
  return fmt::format("{}[{}]", path, index);
}

std::string ShowPath(std::string_view path) {
  return path.empty() ? std::string("(top level)") : std::string(path);
}

std::string_view TypeName(const nlohmann::json& json) {
  if (json.is_object()) return "object";
  if (json.is_array()) return "array";
  if (json.is_string()) return "string";
  if (json.is_boolean()) return "boolean";
  if (json.is_number()) return "number";
  if (json.is_null()) return "null";
  return "binary";
}

ObjectReader::ObjectReader(const nlohmann::json& json, std::string path, std::string& error)
    : json_(json), path_(std::move(path)), error_(error) {
  if (error_.empty() && !json_.is_object()) {
    error_ = fmt::format("{}: expected an object, got {}", ShowPath(path_), TypeName(json_));
  }
}

void ObjectReader::Fail(std::string_view key, std::string_view message) {
  if (error_.empty()) error_ = fmt::format("{}: {}", JoinPath(path_, key), message);
}

void ObjectReader::TypeError(std::string_view key, std::string_view expected,
                             const nlohmann::json& got) {
  Fail(key, fmt::format("expected {}, got {}", expected, TypeName(got)));
}

const nlohmann::json* ObjectReader::Find(std::string_view key, bool required) {
  if (!ok()) return nullptr;
  read_.emplace(key);
  auto it = json_.find(key);
  if (it == json_.end()) {
    if (required) Fail(key, "required field is missing");
    return nullptr;
  }
  return &*it;
}

const nlohmann::json* ObjectReader::Field(std::string_view key) { return Find(key, true); }

const nlohmann::json* ObjectReader::OptionalField(std::string_view key) { return Find(key, false); }

void ObjectReader::Read(std::string_view key, std::string& out) {
  const nlohmann::json* value = Find(key, true);
  if (value == nullptr) return;
  if (!value->is_string()) return TypeError(key, "a string", *value);
  out = value->get<std::string>();
}

void ObjectReader::ReadOptional(std::string_view key, std::string& out) {
  if (const nlohmann::json* value = Find(key, false); value != nullptr) Read(key, out);
}

void ObjectReader::Read(std::string_view key, int& out, int minimum) {
  const nlohmann::json* value = Find(key, true);
  if (value == nullptr) return;
  if (!value->is_number_integer()) return TypeError(key, "an integer", *value);
  const bool fits = value->is_number_unsigned()
                        ? value->get<std::uint64_t>() <=
                              static_cast<std::uint64_t>(std::numeric_limits<int>::max())
                        : value->get<std::int64_t>() >= minimum &&
                              value->get<std::int64_t>() <= std::numeric_limits<int>::max();
  if (!fits)
    return Fail(key, fmt::format("expected an integer >= {}, got {}", minimum, value->dump()));
  out = value->get<int>();
}

void ObjectReader::Read(std::string_view key, std::uint64_t& out) {
  const nlohmann::json* value = Find(key, true);
  if (value == nullptr) return;
  const bool unsigned_value = value->is_number_unsigned() ||
                              (value->is_number_integer() && value->get<std::int64_t>() >= 0);
  if (!unsigned_value) return TypeError(key, "an unsigned integer", *value);
  out = value->get<std::uint64_t>();
}

void ObjectReader::Read(std::string_view key, double& out) {
  const nlohmann::json* value = Find(key, true);
  if (value == nullptr) return;
  if (!value->is_number()) return TypeError(key, "a number", *value);
  out = value->get<double>();
}

void ObjectReader::ReadOptional(std::string_view key, std::optional<double>& out) {
  if (Find(key, false) == nullptr) return;
  double value = 0;
  Read(key, value);
  if (ok()) out = value;
}

void ObjectReader::Read(std::string_view key, bool& out) {
  const nlohmann::json* value = Find(key, true);
  if (value == nullptr) return;
  if (!value->is_boolean()) return TypeError(key, "a boolean", *value);
  out = value->get<bool>();
}

void ObjectReader::Read(std::string_view key, std::vector<std::string>& out) {
  const nlohmann::json* value = Find(key, true);
  if (value == nullptr) return;
  if (!value->is_array()) return TypeError(key, "an array of strings", *value);
  out.clear();
  for (std::size_t i = 0; i < value->size(); ++i) {
    const nlohmann::json& item = (*value)[i];
    if (!item.is_string()) {
      return Fail(IndexPath(key, i), fmt::format("expected a string, got {}", TypeName(item)));
    }
    out.push_back(item.get<std::string>());
  }
}

bool ObjectReader::Finish() {
  if (!ok()) return false;
  for (const auto& [key, value] : json_.items()) {
    if (!read_.contains(key)) {
      Fail(key, "unknown field");
      break;
    }
  }
  return ok();
}

}  // namespace faultline::report::internal
