// The JSON Schema and the loader describe the same format, and the embedded catalogue loads.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "scenarios/embedded_catalog.h"
#include "scenarios/loader.h"
#include "scenarios/loader_internal.h"
#include "scenarios/loader_keys.h"

namespace faultline::scenario {
namespace {

using nlohmann::json;

json LoadSchema() {
  std::ifstream in(FAULTLINE_SCHEMA_PATH);
  EXPECT_TRUE(in.good()) << "cannot open " << FAULTLINE_SCHEMA_PATH;
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

std::string EscapePointerToken(std::string token) {
  for (std::size_t at = 0; (at = token.find_first_of("~/", at)) != std::string::npos; at += 2) {
    token.replace(at, 1, token[at] == '~' ? "~0" : "~1");
  }
  return token;
}

// Every object schema (`"type": "object"` with `properties`) by JSON pointer, with its keys.
void CollectObjectSchemas(const json& node, const std::string& pointer,
                          std::map<std::string, std::set<std::string>>& out) {
  if (node.is_object()) {
    if (node.value("type", json()) == "object" && node.contains("properties")) {
      std::set<std::string>& keys = out[pointer];
      for (const auto& [key, value] : node["properties"].items()) keys.insert(key);
    }
    for (const auto& [key, value] : node.items()) {
      CollectObjectSchemas(value, pointer + "/" + EscapePointerToken(key), out);
    }
  } else if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      CollectObjectSchemas(node[i], pointer + "/" + std::to_string(i), out);
    }
  }
}

void CollectRefs(const json& node, std::vector<std::string>& out) {
  if (node.is_object()) {
    if (node.contains("$ref")) out.push_back(node["$ref"].get<std::string>());
    for (const auto& [key, value] : node.items()) CollectRefs(value, out);
  } else if (node.is_array()) {
    for (const json& item : node) CollectRefs(item, out);
  }
}

TEST(SchemaTest, IsADraft202012SchemaWithAnId) {
  const json schema = LoadSchema();
  ASSERT_FALSE(schema.is_discarded()) << "the schema is not valid JSON";
  EXPECT_EQ(schema.value("$schema", ""), "https://json-schema.org/draft/2020-12/schema");
  EXPECT_FALSE(schema.value("$id", "").empty());
  EXPECT_FALSE(schema.value("title", "").empty());
  EXPECT_FALSE(schema.value("description", "").empty());
  EXPECT_EQ(schema["properties"]["faultline"]["const"], kSchemaVersion);
}

// The heart of the drift check: the same object levels, with the same keys, on both sides.
TEST(SchemaTest, ObjectKeysMatchTheLoader) {
  std::map<std::string, std::set<std::string>> schema_objects;
  CollectObjectSchemas(LoadSchema(), "", schema_objects);
  std::map<std::string, std::set<std::string>> loader_objects;
  for (const keys::KeySet& set : keys::kObjectKeySets) {
    loader_objects[std::string(set.schema_pointer)] =
        std::set<std::string>(set.keys.begin(), set.keys.end());
  }
  EXPECT_EQ(schema_objects, loader_objects);
}

TEST(SchemaTest, EveryObjectRejectsUnknownKeys) {
  const json schema = LoadSchema();
  for (const keys::KeySet& set : keys::kObjectKeySets) {
    const json& object = schema.at(json::json_pointer(std::string(set.schema_pointer)));
    EXPECT_EQ(object.value("additionalProperties", json(true)), json(false)) << set.schema_pointer;
    EXPECT_FALSE(object.value("title", "").empty()) << set.schema_pointer;
    EXPECT_FALSE(object.value("description", "").empty()) << set.schema_pointer;
  }
}

std::vector<std::string> EnumOf(const json& schema, std::string_view pointer) {
  return schema.at(json::json_pointer(std::string(pointer)))
      .at("enum")
      .get<std::vector<std::string>>();
}

TEST(SchemaTest, EnumeratedValuesMatchTheLoader) {
  const json schema = LoadSchema();
  for (const keys::NameSet& set : keys::kEnumNameSets) {
    EXPECT_EQ(EnumOf(schema, set.schema_pointer),
              std::vector<std::string>(set.names.begin(), set.names.end()))
        << set.schema_pointer;
  }
  std::vector<std::string> dialects;
  for (Dialect dialect : AllDialects()) dialects.emplace_back(ToString(dialect));
  EXPECT_EQ(EnumOf(schema, "/$defs/dialect"), dialects);
  std::vector<std::string> error_kinds;
  for (int kind = 0; kind <= static_cast<int>(ErrorKind::kOverloaded); ++kind) {
    error_kinds.emplace_back(ToString(static_cast<ErrorKind>(kind)));
  }
  EXPECT_EQ(EnumOf(schema, "/$defs/errorKind"), error_kinds);
}

TEST(SchemaTest, EveryReferenceResolves) {
  const json schema = LoadSchema();
  std::vector<std::string> refs;
  CollectRefs(schema, refs);
  EXPECT_GT(refs.size(), 20u);
  for (const std::string& ref : refs) {
    ASSERT_EQ(ref.rfind("#/", 0), 0u) << ref;
    EXPECT_TRUE(schema.contains(json::json_pointer(ref.substr(1)))) << ref;
  }
}

// The defaults the schema documents are the model's defaults.
TEST(SchemaTest, DocumentedDefaultsMatchTheModel) {
  const json defs = LoadSchema()["$defs"];
  const RequestSpec request;
  EXPECT_EQ(defs["request"]["properties"]["stream"]["default"], request.stream);
  EXPECT_EQ(defs["request"]["properties"]["message"]["default"], request.message);
  EXPECT_EQ(defs["request"]["properties"]["max_tokens"]["default"], request.max_tokens);
  EXPECT_EQ(defs["request"]["properties"]["calls"]["default"], request.calls);
  const ResponseSpec response;
  EXPECT_EQ(defs["response"]["properties"]["status"]["default"], response.status);
  EXPECT_EQ(defs["response"]["properties"]["repeat"]["default"], response.repeat);
  EXPECT_EQ(defs["content"]["properties"]["text"]["default"], response.content.text);
  EXPECT_EQ(defs["content"]["properties"]["chunk_size"]["default"], response.content.chunk_size);
  const ToolCallSpec tool_call;
  EXPECT_EQ(defs["toolCallObject"]["properties"]["name"]["default"], tool_call.name);
  EXPECT_EQ(defs["toolCallObject"]["properties"]["arguments"]["default"], tool_call.arguments);
  EXPECT_EQ(defs["toolCallObject"]["properties"]["chunk_size"]["default"], tool_call.chunk_size);
  const RateLimitHeaders headers;
  const json& header_props = defs["rateLimitHeadersObject"]["properties"];
  EXPECT_EQ(header_props["requests_limit"]["default"], headers.requests_limit);
  EXPECT_EQ(header_props["tokens_limit"]["default"], headers.tokens_limit);
}

std::map<std::string, Scenario> BuiltinByName() {
  auto catalog = LoadBuiltinCatalog();
  EXPECT_TRUE(catalog.has_value()) << (catalog ? "" : catalog.error().front().ToString());
  std::map<std::string, Scenario> by_name;
  for (Scenario& scenario : catalog.value_or(std::vector<Scenario>{})) {
    by_name.emplace(scenario.name, std::move(scenario));
  }
  return by_name;
}

TEST(CatalogTest, EveryEmbeddedFileLoads) {
  auto catalog = LoadBuiltinCatalog();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().front().ToString();
  // A matrix file (`dialects:`) is one scenario per dialect; any other file is one.
  std::size_t expected = 0;
  for (const EmbeddedFile& file : EmbeddedCatalogFiles()) {
    expected += std::max<std::size_t>(1, internal::MatrixDialects(file.content).size());
  }
  EXPECT_EQ(catalog->size(), expected);
  EXPECT_GT(catalog->size(), EmbeddedCatalogFiles().size());  // the catalogue has matrix files
  for (const Scenario& scenario : *catalog) {
    EXPECT_EQ(scenario.source.rfind("<builtin>/", 0), 0u) << scenario.source;
    // A description must name the failure and what a correct client does: not a one-liner.
    EXPECT_GT(scenario.description.size(), 150u) << scenario.name;
  }
}

// Editors validate the shipped files out of the box: each starts with a yaml-language-server
// modeline whose path, taken from the file's folder, is the scenario schema.
void ExpectModelineToTheSchema(const EmbeddedFile& file, const std::filesystem::path& folder) {
  constexpr std::string_view kModeline = "# yaml-language-server: $schema=";
  const std::string_view first_line = file.content.substr(0, file.content.find('\n'));
  ASSERT_TRUE(first_line.starts_with(kModeline)) << file.path << ": " << first_line;
  const std::filesystem::path source = folder / std::string(file.path);
  const std::filesystem::path target =
      source.parent_path() / std::string(first_line.substr(kModeline.size()));
  EXPECT_TRUE(std::filesystem::equivalent(target, std::filesystem::path(FAULTLINE_SOURCE_DIR) /
                                                      "scenarios/schema/scenario.schema.json"))
      << file.path << ": " << target;
}

TEST(CatalogTest, EveryShippedFileNamesTheSchemaForEditors) {
  const std::filesystem::path scenarios = std::filesystem::path(FAULTLINE_SOURCE_DIR) / "scenarios";
  for (const EmbeddedFile& file : EmbeddedCatalogFiles()) {
    ExpectModelineToTheSchema(file, scenarios / "catalog");
  }
  for (const EmbeddedFile& file : EmbeddedFleetFiles())
    ExpectModelineToTheSchema(file, scenarios / "fleet");
  for (const EmbeddedFile& file : EmbeddedGatewayCatalogFiles()) {
    ExpectModelineToTheSchema(file, scenarios / "gateways");
  }
}

// The gateway catalogue (`faultline run --gateway`): every file loads, is named gateway/..., and
// has routes a gateway can stand in front of: two or more (one for the single-upstream ones),
// each speaking the scenario's dialect with its model, since a gateway passes requests unchanged.
TEST(CatalogTest, TheGatewayCatalogueLoadsAndEveryRouteSpeaksTheScenariosDialect) {
  auto catalog = LoadBuiltinGatewayCatalog();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().front().ToString();
  EXPECT_EQ(catalog->size(), EmbeddedGatewayCatalogFiles().size());
  EXPECT_GE(catalog->size(), 15u) << "issue 29: a gateway catalogue of at least 15 scenarios";
  std::set<Dialect> dialects;
  for (const Scenario& scenario : *catalog) {
    EXPECT_TRUE(scenario.name.starts_with("gateway/")) << scenario.name;
    EXPECT_EQ(scenario.source.rfind("<builtin>/gateways/", 0), 0u) << scenario.source;
    EXPECT_GT(scenario.description.size(), 100u) << scenario.name;
    ASSERT_FALSE(scenario.routes.empty()) << scenario.name;
    for (const Route& route : scenario.routes) {
      EXPECT_EQ(route.dialect, scenario.dialect) << scenario.name << " " << route.id;
      EXPECT_TRUE(route.model.empty()) << scenario.name << " " << route.id;
    }
    dialects.insert(scenario.dialect);
  }
  EXPECT_GE(dialects.size(), 3u) << "more than one wire format passes through gateways";
}

TEST(CatalogTest, BuiltinFleetExperimentsAnswerToTheReadmesNames) {
  EXPECT_EQ(BuiltinFleetNames(),
            (std::vector<std::string>{"fleet/gateway-retry-storm", "fleet/metastable-spike",
                                      "fleet/rate-limit-storm"}));
  for (std::string_view name :
       {"rate-limit-storm", "fleet/rate-limit-storm", "fleet/rate-limit-storm.yaml",
        "scenarios/fleet/rate-limit-storm.yaml", "./scenarios/fleet/rate-limit-storm.yaml"}) {
    auto loaded = LoadBuiltinFleet(name);
    ASSERT_TRUE(loaded.has_value()) << name;
    ASSERT_TRUE(loaded->has_value()) << loaded->error().ToString();
    EXPECT_EQ((*loaded)->name, "fleet/rate-limit-storm");
    EXPECT_TRUE((*loaded)->fleet.has_value());
  }
  // Only the printed names: a missing file of the user's own that merely ends alike stays missing.
  for (std::string_view name : {"/home/me/fleet/rate-limit-storm.yaml", "x/fleet/rate-limit-storm",
                                "fleet/nope", "storm"}) {
    EXPECT_FALSE(LoadBuiltinFleet(name).has_value()) << name;
  }
}

TEST(CatalogTest, DemoScenariosArePresentAndSayWhatTheyShould) {
  const std::map<std::string, Scenario> catalog = BuiltinByName();
  for (std::string_view name :
       {"demo/hello-openai-chat", "demo/hello-anthropic", "demo/hello-openai-responses",
        "demo/rate-limit-retry-after", "demo/stall-forever", "demo/truncated-no-done"}) {
    ASSERT_TRUE(catalog.contains(std::string(name))) << name;
  }
  EXPECT_EQ(catalog.at("demo/hello-openai-chat").source, "<builtin>/demo/hello-openai-chat.yaml");
  EXPECT_EQ(catalog.at("demo/hello-anthropic").dialect, Dialect::kAnthropicMessages);
  EXPECT_EQ(catalog.at("demo/hello-openai-responses").dialect, Dialect::kOpenAiResponses);

  const Scenario& rate_limit = catalog.at("demo/rate-limit-retry-after");
  ASSERT_EQ(rate_limit.responses.size(), 2u);
  EXPECT_EQ(rate_limit.responses[0].status, 429);
  EXPECT_EQ(rate_limit.responses[0].retry_after,
            (RetryAfter{RetryAfter::Form::kSeconds, "1", Duration{0}}));
  EXPECT_EQ(rate_limit.expect.attempts, 2);

  const Scenario& stall = catalog.at("demo/stall-forever");
  ASSERT_EQ(stall.responses[0].content.faults.size(), 1u);
  const EventFault& fault = stall.responses[0].content.faults[0];
  EXPECT_EQ(fault.kind, EventFault::Kind::kStall);
  EXPECT_EQ(fault.after_event, 3);
  EXPECT_TRUE(fault.wait.forever);

  const Scenario& truncated = catalog.at("demo/truncated-no-done");
  EXPECT_EQ(truncated.responses[0].content.end.kind, Termination::Kind::kNoTerminator);
  EXPECT_EQ(truncated.expect.outcome, "committed");
}

}  // namespace
}  // namespace faultline::scenario
