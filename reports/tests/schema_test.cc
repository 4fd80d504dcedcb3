// Keeps reports/schema/run-result.schema.json, ToJson and RunResultFromJson in step:
//  - what ToJson writes validates against the schema (a small validator for the keywords the
//    schema uses: type, const, enum, minimum, maximum, properties, required,
//    additionalProperties, items, $ref);
//  - every property the schema lists is written for a fully populated result, and nothing else;
//  - a property is in the schema's `required` exactly when RunResultFromJson rejects its absence.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "reports/run_result.h"
#include "reports/tests/test_results.h"

namespace faultline::report {
namespace {

using nlohmann::json;

const json& Schema() {
  static const json schema = json::parse(testing::ReadFile(FAULTLINE_RESULT_SCHEMA_PATH));
  return schema;
}

const json& Resolve(const json& node) {
  if (!node.contains("$ref")) return node;
  const std::string ref = node["$ref"];
  EXPECT_TRUE(ref.starts_with("#/")) << ref;
  return Resolve(Schema().at(json::json_pointer(ref.substr(1))));
}

bool HasType(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  ADD_FAILURE() << "unknown type " << type;
  return false;
}

void Validate(const json& value, const json& schema_node, const std::string& path,
              std::vector<std::string>& errors) {
  const json& schema = Resolve(schema_node);
  if (schema.contains("type")) {
    const json types = schema["type"].is_array() ? schema["type"] : json::array({schema["type"]});
    const bool any = std::any_of(types.begin(), types.end(), [&](const json& t) {
      return HasType(value, t.get<std::string>());
    });
    if (!any) errors.push_back(path + ": type " + std::string(value.type_name()));
  }
  if (schema.contains("const") && value != schema["const"]) errors.push_back(path + ": const");
  if (schema.contains("enum") &&
      std::find(schema["enum"].begin(), schema["enum"].end(), value) == schema["enum"].end()) {
    errors.push_back(path + ": not in enum: " + value.dump());
  }
  if (value.is_number() && schema.contains("minimum") &&
      value.get<double>() < schema["minimum"].get<double>()) {
    errors.push_back(path + ": below minimum");
  }
  if (value.is_number() && schema.contains("maximum") &&
      value.get<double>() > schema["maximum"].get<double>()) {
    errors.push_back(path + ": above maximum");
  }
  if (value.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      Validate(value[i], schema["items"], path + "[" + std::to_string(i) + "]", errors);
    }
  }
  if (!value.is_object() || !schema.contains("properties")) return;
  for (const std::string key : schema.value("required", json::array())) {
    if (!value.contains(key)) errors.push_back(path + "." + key + ": required but missing");
  }
  for (const auto& [key, item] : value.items()) {
    if (!schema["properties"].contains(key)) {
      if (schema.value("additionalProperties", true) == false) {
        errors.push_back(path + "." + key + ": not in the schema");
      }
      continue;
    }
    Validate(item, schema["properties"][key], path + "." + key, errors);
  }
}

TEST(ResultSchema, IsDraft202012WithClosedObjects) {
  EXPECT_EQ(Schema()["$schema"], "https://json-schema.org/draft/2020-12/schema");
  int closed = 0;
  for (const auto& [name, def] : Schema()["$defs"].items()) {
    EXPECT_EQ(def.value("additionalProperties", true), false) << name;
    ++closed;
  }
  EXPECT_EQ(closed, 10);
  EXPECT_EQ(Schema()["additionalProperties"], false);
}

TEST(ResultSchema, WhatToJsonWritesValidates) {
  for (const RunResult& result : {testing::FullResult(), testing::SampleResult(), RunResult{}}) {
    std::vector<std::string> errors;
    Validate(ToJson(result), Schema(), "", errors);
    EXPECT_THAT(errors, ::testing::IsEmpty());
  }
}

TEST(ResultSchema, ValidatorRejectsWhatTheSchemaForbids) {
  // The validator itself must be able to fail, or the test above proves nothing.
  json bad = ToJson(testing::FullResult());
  bad["scenarios"][0]["verdict"] = "maybe";
  bad["scenarios"][1]["checks"][0]["surprise"] = 1;
  bad["latency"][0].erase("runs");
  bad["seed"] = "42";
  std::vector<std::string> errors;
  Validate(bad, Schema(), "", errors);
  EXPECT_EQ(errors.size(), 4u) << ::testing::PrintToString(errors);
}

// Every object location in `value` that the schema describes with properties (the trace is
// free-form), paired with its schema node.
void ObjectLocations(const json& value, const json& schema_node, const json::json_pointer& at,
                     std::vector<std::pair<json::json_pointer, const json*>>& out) {
  const json& schema = Resolve(schema_node);
  if (value.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      ObjectLocations(value[i], schema["items"], at / i, out);
    }
  }
  if (!value.is_object() || !schema.contains("properties")) return;
  out.emplace_back(at, &schema);
  for (const auto& [key, item] : value.items()) {
    if (schema["properties"].contains(key)) {
      ObjectLocations(item, schema["properties"][key], at / key, out);
    }
  }
}

std::vector<std::pair<json::json_pointer, const json*>> Locations(const json& written) {
  std::vector<std::pair<json::json_pointer, const json*>> locations;
  ObjectLocations(written, Schema(), json::json_pointer(), locations);
  return locations;
}

TEST(ResultSchema, PropertiesAreExactlyWhatAFullResultWrites) {
  // Keys written at every location described by one schema object, over the whole result (one
  // scenario has an error text, another every metric).
  const json written = ToJson(testing::FullResult());
  std::map<const json*, std::set<std::string>> keys_by_schema;
  for (const auto& [at, schema] : Locations(written)) {
    auto& keys = keys_by_schema[schema];
    for (const auto& [key, item] : written[at].items()) keys.insert(key);
  }
  EXPECT_EQ(keys_by_schema.size(), 11u) << "the top level and its ten $defs";
  for (const auto& [schema, keys] : keys_by_schema) {
    std::set<std::string> properties;
    for (const auto& [key, item] : (*schema)["properties"].items()) properties.insert(key);
    EXPECT_EQ(keys, properties) << schema->value("description", "(top level)");
  }
}

TEST(ResultSchema, RequiredMatchesWhatTheParserRequires) {
  const json written = ToJson(testing::FullResult());
  int checked = 0;
  for (const auto& [at, schema] : Locations(written)) {
    const json required = schema->value("required", json::array());
    for (const auto& [key, item] : (*schema)["properties"].items()) {
      json copy = written;
      copy[at].erase(key);
      const bool is_required = std::find(required.begin(), required.end(), key) != required.end();
      auto parsed = RunResultFromJson(copy);
      EXPECT_EQ(parsed.has_value(), !is_required)
          << at.to_string() << "/" << key << (parsed ? "" : ": " + parsed.error());
      if (!parsed && is_required) {
        EXPECT_THAT(parsed.error(), ::testing::HasSubstr(key + ": required field is missing"));
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 60);
}

}  // namespace
}  // namespace faultline::report
