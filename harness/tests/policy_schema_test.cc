// The policy's JSON Schema (reference_impl/schema/policy.schema.json, for editors and docs) and
// the strict loader (reference_impl/policy_json.h) describe one format: every key the loader
// writes is in the schema at the same place, and every key of the schema loads.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "reference_impl/policy_json.h"
#include "reference_impl/presets.h"

namespace faultline::harness {
namespace {

using nlohmann::json;

json Schema() {
  std::ifstream file(std::filesystem::path(FAULTLINE_SOURCE_DIR) /
                     "reference_impl/schema/policy.schema.json");
  return json::parse(file, nullptr, false);
}

std::set<std::string> Keys(const json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

TEST(PolicySchemaTest, DescribesExactlyWhatTheLoaderWrites) {
  const json schema = Schema();
  ASSERT_TRUE(schema.is_object());
  json written = ref::PolicyToHelloJson(ref::RetryPolicy{});
  ref::RetryPolicy with_budget;
  with_budget.budget.emplace();
  with_budget.routing.sticky.emplace();  // written only when set, like a budget
  written["budget"] = ref::PolicyToJson(with_budget)["budget"];
  written["routing"] = ref::PolicyToJson(with_budget)["routing"];
  written["extends"] = "reference";  // read (presets.h), never written: a policy is whole
  EXPECT_EQ(Keys(written), Keys(schema["properties"]));
  for (const char* nested :
       {"statuses", "backoff", "retry_after", "timeouts", "budget", "routing"}) {
    EXPECT_EQ(Keys(written[nested]), Keys(schema["properties"][nested]["properties"])) << nested;
  }
}

TEST(PolicySchemaTest, EveryDocumentedDefaultLoads) {
  const json schema = Schema();
  json policy = json::object();
  for (const auto& [key, property] : schema["properties"].items()) {
    if (key == "budget") continue;  // none by default: its defaults apply once one is given
    if (property.contains("default")) policy[key] = property["default"];
    if (!property.contains("properties")) continue;
    for (const auto& [inner, value] : property["properties"].items()) {
      if (value.contains("default")) policy[key][inner] = value["default"];
    }
  }
  auto loaded = ref::PolicyFromJson(policy);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().ToString();
  EXPECT_EQ(*loaded, ref::RetryPolicy{}) << "the schema's defaults are the loader's";
}

// docs/policy.md lists every preset, with a declaration that uses it.
TEST(PolicySchemaTest, TheDocsListEveryPreset) {
  std::ifstream file(std::filesystem::path(FAULTLINE_SOURCE_DIR) / "docs/policy.md");
  std::stringstream text;
  text << file.rdbuf();
  const std::string docs = text.str();
  const std::size_t section = docs.find("## Presets");
  ASSERT_NE(section, std::string::npos);
  const std::string presets = docs.substr(section, docs.find("\n## ", section + 1) - section);
  for (const ref::Preset& preset : ref::Presets()) {
    EXPECT_NE(presets.find("`" + preset.name + "`"), std::string::npos) << preset.name;
  }
}

}  // namespace
}  // namespace faultline::harness
