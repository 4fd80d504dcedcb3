// Every JSON Schema the project ships names itself one way, urn:faultline:schema:<name>:<major>,
// where <name> is its file's (scenario.schema.json -> scenario): editors, validators and `$ref`s
// across schemas can rely on it, and a new schema that picks a fifth convention fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "harness/trace/embedded_schemas.h"

namespace faultline::harness {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> ShippedSchemaFiles() {
  std::vector<fs::path> files;
  for (const fs::directory_entry& folder : fs::directory_iterator(FAULTLINE_SOURCE_DIR)) {
    const fs::path schemas = folder.path() / "schema";
    if (folder.path().filename() == "build" || !fs::is_directory(schemas)) continue;
    for (const fs::directory_entry& file : fs::directory_iterator(schemas)) {
      if (file.path().string().ends_with(".schema.json")) files.push_back(file.path());
    }
  }
  return files;
}

TEST(SchemaIdsTest, EveryShippedSchemaFollowsTheOneConvention) {
  const std::vector<fs::path> files = ShippedSchemaFiles();
  ASSERT_GE(files.size(), 5u) << "the schema folders were not found under " FAULTLINE_SOURCE_DIR;
  const std::regex convention("urn:faultline:schema:([a-z][a-z-]*):([1-9][0-9]*)");
  std::set<std::string> ids;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    const nlohmann::json schema = nlohmann::json::parse(in, nullptr, false);
    ASSERT_FALSE(schema.is_discarded()) << file;
    const std::string id = schema.value("$id", "");
    std::smatch parts;
    ASSERT_TRUE(std::regex_match(id, parts, convention)) << file << ": $id " << id;
    std::string name = file.filename().string();
    name.resize(name.size() - std::string_view(".schema.json").size());
    EXPECT_EQ(parts[1].str(), name) << file;
    EXPECT_TRUE(ids.insert(id).second) << "two schemas with $id " << id;
  }
}

// What `faultline schema NAME` prints is the shipped file under the same convention.
TEST(SchemaIdsTest, EmbeddedSchemasCarryTheirIds) {
  for (const auto& [which, id] :
       {std::pair{"scenario", "urn:faultline:schema:scenario:1"},
        std::pair{"policy", "urn:faultline:schema:policy:1"},
        std::pair{"result", "urn:faultline:schema:run-result:1"},
        std::pair{"protocol", "urn:faultline:schema:adapter-protocol:1"}}) {
    const nlohmann::json schema = nlohmann::json::parse(EmbeddedSchema(which), nullptr, false);
    ASSERT_FALSE(schema.is_discarded()) << which;
    EXPECT_EQ(schema.value("$id", ""), id) << which;
  }
}

}  // namespace
}  // namespace faultline::harness
