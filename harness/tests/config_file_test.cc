// faultline.yaml (harness/cli/config_file.h): a file drives a run, flags override it, its
// mistakes are usage errors with file:line:column, and its schema agrees with the commands.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "harness/cli/cli.h"
#include "harness/tests/cli_in_process.h"
#include "harness/trace/embedded_schemas.h"
#include "harness/trace/json_schema.h"

namespace faultline::cli {
namespace {

namespace fs = std::filesystem;
using test_support::Faultline;

// Each test runs in a fresh temporary folder as the current directory, where faultline.yaml is
// looked for (restored afterwards: the working directory is the process's).
class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("faultline-config-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    previous_ = fs::current_path();
    fs::current_path(dir_);
  }
  void TearDown() override {
    fs::current_path(previous_);
    fs::remove_all(dir_);
  }
  static void Write(const std::string& name, std::string_view text) { std::ofstream(name) << text; }
  // The scenario names in a run's result.json.
  static std::set<std::string> ScenariosRun(const std::string& result_file) {
    std::ifstream file(result_file);
    std::set<std::string> names;
    if (!file) return names;
    const nlohmann::json result = nlohmann::json::parse(file);
    for (const auto& run : result.at("scenarios")) {
      names.insert(run.at("name").get<std::string>());
    }
    return names;
  }
  fs::path dir_, previous_;
};

constexpr std::string_view kOneScenario = "rate-limit/openai-chat-429-then-success";
constexpr std::string_view kOtherScenario = "rate-limit/anthropic-429-then-success";

TEST_F(ConfigFileTest, DrivesARunFromTheCurrentDirectory) {
  Write("faultline.yaml", R"(# yaml-language-server: $schema=config.schema.json
run:
  filter: rate-limit/openai-chat-429-then-success
  out: from-config
  format: [json]
  threshold:
    - attempts.max<=5
)");
  const auto ran = Faultline({"run"});
  ASSERT_EQ(ran.code, ExitCode::kSuccess) << ran.err;
  EXPECT_EQ(ScenariosRun("from-config/result.json"),
            std::set<std::string>{std::string(kOneScenario)});
  EXPECT_FALSE(fs::exists("from-config/summary.md"));  // format: [json] only
  EXPECT_NE(ran.err.find("faultline run: faultline.yaml sets filter, format, out, threshold"),
            std::string::npos)
      << ran.err;
}

TEST_F(ConfigFileTest, AFlagOverridesTheFileAndAListFlagReplacesItsList) {
  Write("faultline.yaml", R"(run:
  filter: rate-limit/openai-chat-429-then-success
  out: from-config
  threshold: [attempts.max<=0]
)");
  // The file's threshold would be crossed (exit 99); the command line's list replaces it.
  const auto ran = Faultline(
      {"run", "--filter", std::string(kOtherScenario), "--threshold", "attempts.max<=100"});
  ASSERT_EQ(ran.code, ExitCode::kSuccess) << ran.err;
  EXPECT_EQ(ScenariosRun("from-config/result.json"),
            std::set<std::string>{std::string(kOtherScenario)});
  EXPECT_NE(ran.err.find("sets out; flags override filter, threshold"), std::string::npos)
      << ran.err;
  // Without the flag, the file's threshold holds.
  EXPECT_EQ(Faultline({"run"}).code, ExitCode::kThresholdsCrossed);
}

TEST_F(ConfigFileTest, ConfigNamesAnotherFileAndNoConfigIgnoresTheLocalOne) {
  Write("faultline.yaml", "run:\n  filter: [not, a, string]\n");  // broken on purpose
  Write("team.yaml", "run:\n  filter: rate-limit/openai-chat-429-then-success\n  out: team\n");
  const auto ran = Faultline({"run", "--config", "team.yaml"});
  ASSERT_EQ(ran.code, ExitCode::kSuccess) << ran.err;
  EXPECT_EQ(ScenariosRun("team/result.json"), std::set<std::string>{std::string(kOneScenario)});

  const auto ignored = Faultline(
      {"run", "--no-config", "--filter", std::string(kOneScenario), "--out", "flags-only"});
  ASSERT_EQ(ignored.code, ExitCode::kSuccess) << ignored.err;
  EXPECT_EQ(ignored.err.find("faultline.yaml"), std::string::npos) << ignored.err;
  EXPECT_TRUE(fs::exists("flags-only/result.json"));
  EXPECT_EQ(Faultline({"run", "--no-config", "--config", "team.yaml"}).code, ExitCode::kUsageError);
}

TEST_F(ConfigFileTest, AMissingConfigFileIsAUsageError) {
  const auto ran = Faultline({"run", "--config", "missing.yaml"});
  EXPECT_EQ(ran.code, ExitCode::kUsageError);
  EXPECT_EQ(
      ran.err,
      "faultline run: missing.yaml: cannot read the config file: No such file or directory\n");
  // No faultline.yaml here and no --config: the defaults, silently.
  EXPECT_EQ(Faultline({"run", "--print-config"}).code, ExitCode::kSuccess);
}

TEST_F(ConfigFileTest, AnUnknownKeyIsAnErrorWithItsPlaceAndASuggestion) {
  Write("faultline.yaml", "run:\n  out: x\n  timout: 5\n");
  const auto ran = Faultline({"run"});
  EXPECT_EQ(ran.code, ExitCode::kUsageError);
  EXPECT_EQ(ran.err,
            "faultline run: faultline.yaml:3:3: at run.timout: unknown key 'timout' for faultline "
            "run; did you mean 'timeout'?\n");

  Write("faultline.yaml", "rnu:\n  out: x\n");
  EXPECT_EQ(Faultline({"run"}).err,
            "faultline run: faultline.yaml:1:1: at rnu: unknown section 'rnu'; did you mean "
            "'run'? (the sections: serve, call, run, simulate)\n");

  // An option of another command, an option kept out of files, another name of an option.
  Write("faultline.yaml", "run:\n  clients: 5\n");
  EXPECT_NE(Faultline({"run"}).err.find("unknown key 'clients' for faultline run (its keys are"),
            std::string::npos);
  Write("faultline.yaml", "run:\n  last-failed: true\n");
  EXPECT_NE(Faultline({"run"}).err.find("'last-failed' cannot be set in a config file"),
            std::string::npos);
  Write("faultline.yaml", "simulate:\n  policy: [aws]\n");
  EXPECT_NE(Faultline({"run"}).err.find("'policy' is written 'compare' in a config file"),
            std::string::npos);
}

TEST_F(ConfigFileTest, AWrongTypeIsAnErrorWithItsPlace) {
  Write("faultline.yaml", "run:\n  repeat: many\n");
  auto ran = Faultline({"run"});
  EXPECT_EQ(ran.code, ExitCode::kUsageError);
  EXPECT_TRUE(ran.err.starts_with("faultline run: faultline.yaml:2:11: at run.repeat: "))
      << ran.err;
  EXPECT_NE(ran.err.find("many"), std::string::npos) << ran.err;

  Write("faultline.yaml", "run:\n  verbose: 3\n");
  EXPECT_EQ(Faultline({"run"}).err,
            "faultline run: faultline.yaml:2:12: at run.verbose: expected true or false, got "
            "'3'\n");
  Write("faultline.yaml", "run:\n  out: [a, b]\n");
  EXPECT_EQ(Faultline({"run"}).err,
            "faultline run: faultline.yaml:2:8: at run.out: expected one value, got a list\n");
  Write("faultline.yaml", "run:\n  timeout: 0\n");  // the option's own range check
  ran = Faultline({"run"});
  EXPECT_TRUE(ran.err.starts_with("faultline run: faultline.yaml:2:12: at run.timeout: "))
      << ran.err;
  // A section of another command is checked too: a mistake shows wherever the file is used.
  Write("faultline.yaml", "simulate:\n  clients: lots\n");
  EXPECT_TRUE(Faultline({"run"}).err.starts_with(
      "faultline run: faultline.yaml:2:12: at simulate.clients"));
}

TEST_F(ConfigFileTest, BadYamlIsAnErrorWithItsPlace) {
  Write("faultline.yaml", "run:\n  out: [x\n");
  const auto ran = Faultline({"run"});
  EXPECT_EQ(ran.code, ExitCode::kUsageError);
  EXPECT_TRUE(ran.err.starts_with("faultline run: faultline.yaml:")) << ran.err;
  EXPECT_NE(ran.err.find("not valid YAML"), std::string::npos) << ran.err;

  Write("faultline.yaml", "run:\n  out: a\n  out: b\n");
  EXPECT_EQ(Faultline({"run"}).err,
            "faultline run: faultline.yaml:3:3: at run.out: 'out' given twice (first at line "
            "2)\n");
  // Commands without a section never read it.
  EXPECT_EQ(Faultline({"schema", "config"}).code, ExitCode::kSuccess);
}

TEST_F(ConfigFileTest, PrintConfigShowsEachValueAndWhereItCameFrom) {
  Write("faultline.yaml", "run:\n  timeout: 30\n  threshold: [ttft.p99<2s]\n  verbose: true\n");
  const auto ran = Faultline({"run", "--repeat", "3", "--print-config"});
  ASSERT_EQ(ran.code, ExitCode::kSuccess) << ran.err;
  EXPECT_NE(ran.out.find("\nrun:\n"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("\n  timeout: 30  # faultline.yaml:2\n"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("\n  threshold: [ttft.p99<2s]  # faultline.yaml:3\n"), std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("\n  verbose: true  # faultline.yaml:4\n"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("\n  repeat: 3  # command line\n"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("\n  # time: auto  # default\n"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("\n  # adapter: (not set)\n"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("\n  # no-reports: false  # default\n"), std::string::npos) << ran.out;
  EXPECT_FALSE(fs::exists("faultline-reports"));  // printed, not run

  // What it prints is a config file that gives the same options.
  Write("printed.yaml", ran.out);
  const auto again = Faultline({"run", "--config", "printed.yaml", "--print-config"});
  ASSERT_EQ(again.code, ExitCode::kSuccess) << again.err;
  EXPECT_NE(again.out.find("\n  repeat: 3  # printed.yaml:"), std::string::npos) << again.out;
}

TEST_F(ConfigFileTest, TheDocumentedExampleIsAccepted) {
  const std::string example = FAULTLINE_SOURCE_DIR "/docs/examples/faultline.yaml";
  for (const char* command : {"run", "simulate", "serve"}) {
    const auto ran = Faultline({command, "--config", example, "--print-config"});
    EXPECT_EQ(ran.code, ExitCode::kSuccess) << command << ": " << ran.err;
  }
}

TEST(ConfigDocsTest, DocsConfigMdNamesEveryKey) {
  std::ifstream file(FAULTLINE_SOURCE_DIR "/docs/config.md");
  std::stringstream text;
  text << file.rdbuf();
  for (const ConfigKey& key : ConfigFileKeys()) {
    EXPECT_NE(text.str().find("`" + key.name + "`"), std::string::npos)
        << key.section << "." << key.name << " is not in docs/config.md";
  }
}

// --- the schema and the commands agree ---

// The schema's type for a key of `kind` with CLI11 type `type`.
nlohmann::json ExpectedType(const ConfigKey& key) {
  switch (key.kind) {
    case ConfigKey::Kind::kFlag:
      return "boolean";
    case ConfigKey::Kind::kList:
      return nlohmann::json::array({"array", "string"});
    case ConfigKey::Kind::kValue:
      break;
  }
  if (key.type == "INT" || key.type == "UINT") return "integer";
  if (key.type == "FLOAT") return "number";
  return "string";
}

nlohmann::json ConfigSchema() { return nlohmann::json::parse(harness::EmbeddedSchema("config")); }

TEST(ConfigSchemaTest, EveryOptionAFileMaySetIsInTheSchemaWithItsType) {
  const nlohmann::json schema = ConfigSchema();
  const std::vector<ConfigKey> keys = ConfigFileKeys();
  ASSERT_GT(keys.size(), 40u);
  for (const ConfigKey& key : keys) {
    const std::string where = key.section + "." + key.name;
    const auto& sections = schema.at("properties");
    ASSERT_TRUE(sections.contains(key.section)) << where;
    const auto& properties = sections.at(key.section).at("properties");
    ASSERT_TRUE(properties.contains(key.name)) << where << " is missing from config.schema.json";
    EXPECT_EQ(properties.at(key.name).at("type"), ExpectedType(key)) << where;
    EXPECT_TRUE(properties.at(key.name).contains("description")) << where;
  }
}

TEST(ConfigSchemaTest, EveryKeyOfTheSchemaIsAnOptionAFileMaySet) {
  std::set<std::string> options, sections;
  for (const ConfigKey& key : ConfigFileKeys()) {
    options.insert(key.section + "." + key.name);
    sections.insert(key.section);
  }
  const nlohmann::json schema = ConfigSchema();
  EXPECT_EQ(schema.at("$id"), "urn:faultline:schema:config:1");
  EXPECT_EQ(schema.at("additionalProperties"), false);
  for (const auto& [section, body] : schema.at("properties").items()) {
    EXPECT_TRUE(sections.contains(section)) << section << " is not a command with a section";
    EXPECT_EQ(body.at("additionalProperties"), false) << section;
    for (const auto& [name, ignored] : body.at("properties").items()) {
      EXPECT_TRUE(options.contains(section + "." + name))
          << section << "." << name << " is not an option a config file may set";
    }
  }
}

TEST(ConfigSchemaTest, CompilesAndJudgesAFileAsTheCommandsDo) {
  auto schema = harness::JsonSchema::Compile(ConfigSchema());
  ASSERT_TRUE(schema) << schema.error();
  const auto good = nlohmann::json::parse(
      R"({"run": {"adapter": "openai-node", "timeout": 30, "threshold": ["ttft.p99<2s"],
          "verbose": true}, "simulate": null, "serve": {"scenario": "my/scenarios"}})");
  EXPECT_TRUE(schema->Validate(good).empty());
  EXPECT_FALSE(schema->Validate(nlohmann::json::parse(R"({"run": {"timout": 30}})")).empty());
  EXPECT_FALSE(schema->Validate(nlohmann::json::parse(R"({"run": {"verbose": 3}})")).empty());
  EXPECT_FALSE(schema->Validate(nlohmann::json::parse(R"({"rnu": {}})")).empty());
}

TEST(ConfigSchemaTest, FaultlineSchemaConfigPrintsIt) {
  const auto ran = Faultline({"schema", "config"});
  ASSERT_EQ(ran.code, ExitCode::kSuccess);
  EXPECT_EQ(nlohmann::json::parse(ran.out).at("$id"), "urn:faultline:schema:config:1");
}

}  // namespace
}  // namespace faultline::cli
