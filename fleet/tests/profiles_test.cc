#include "fleet/profiles.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fleet/policy_file.h"
#include "reference_impl/policy_json.h"
#include "reference_impl/presets.h"

namespace faultline::fleet {
namespace {

TEST(ProfilesTest, EveryProfileLoadsAndCitesItsSource) {
  for (const Profile& profile : BuiltinProfiles()) {
    auto policy = ResolvePolicy(profile.name);
    ASSERT_TRUE(policy.has_value()) << profile.name << ": " << policy.error();
    EXPECT_FALSE(profile.source.empty()) << profile.name;
    EXPECT_FALSE(DescribePolicy(*policy).empty());
  }
}

// The presets are the one home of every policy: each is a profile, and a profile with a fleet
// mechanism runs its preset's policy.
TEST(ProfilesTest, EveryPresetIsAProfileAndMechanismsRunTheirPreset) {
  for (const ref::Preset& preset : ref::Presets()) {
    EXPECT_TRUE(ResolvePolicy(preset.name).has_value()) << preset.name;
  }
  auto adaptive = ResolvePolicy("aws-adaptive");
  auto standard = ResolvePolicy("aws-standard");
  ASSERT_TRUE(adaptive && standard);
  EXPECT_TRUE(adaptive->client_rate_limiter);
  EXPECT_FALSE(standard->client_rate_limiter);
  EXPECT_EQ(adaptive->policy, standard->policy);
  auto sre = ResolvePolicy("sre-adaptive");
  ASSERT_TRUE(sre);
  EXPECT_EQ(sre->adaptive_k, 2.0);
  EXPECT_TRUE(ResolvePolicy("finagle-budget")->finagle_budget);
}

TEST(ProfilesTest, UnknownNameSuggestsTheNearest) {
  auto policy = ResolvePolicy("opanai-node");
  ASSERT_FALSE(policy.has_value());
  EXPECT_NE(policy.error().find("did you mean 'openai-node'?"), std::string::npos)
      << policy.error();
  auto mechanism = ResolvePolicy("aws-adaptiv");
  ASSERT_FALSE(mechanism.has_value());
  EXPECT_NE(mechanism.error().find("did you mean 'aws-adaptive'?"), std::string::npos)
      << mechanism.error();
}

class PolicyFileTest : public ::testing::Test {
 protected:
  std::filesystem::path Write(const std::string& name, const std::string& text) {
    const std::filesystem::path path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_ = [] {
    auto dir = std::filesystem::temp_directory_path() /
               ("faultline-policy-file-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir;
  }();
};

TEST_F(PolicyFileTest, YamlAndJsonSayTheSame) {
  const auto yaml = Write("slow.yaml",
                          "# openai-node, with a longer first backoff\n"
                          "extends: openai-node\n"
                          "backoff:\n"
                          "  base_ms: 1000\n"
                          "timeouts: {total_ms: null}\n");
  const auto json = Write("slow.json",
                          R"({"extends": "openai-node", "backoff": {"base_ms": 1000},
                              "timeouts": {"total_ms": null}})");
  auto from_yaml = LoadPolicyFile(yaml);
  auto from_json = LoadPolicyFile(json);
  ASSERT_TRUE(from_yaml.has_value()) << from_yaml.error();
  ASSERT_TRUE(from_json.has_value()) << from_json.error();
  EXPECT_EQ(*from_yaml, *from_json);
  EXPECT_EQ(from_yaml->backoff.base, std::chrono::milliseconds(1000));
  auto named = ResolvePolicy(yaml.string());
  ASSERT_TRUE(named.has_value()) << named.error();
  EXPECT_EQ(named->name, "slow");
  EXPECT_EQ(named->policy, *from_yaml);
}

TEST_F(PolicyFileTest, ErrorsNameTheLineAndTheKey) {
  const auto yaml = Write("bad.yaml",
                          "max_attempts: 3\n"
                          "backoff:\n"
                          "  base_ms: 500\n"
                          "  cap: 100\n");
  auto policy = LoadPolicyFile(yaml);
  ASSERT_FALSE(policy.has_value());
  EXPECT_NE(policy.error().find("bad.yaml:4:"), std::string::npos) << policy.error();
  EXPECT_NE(policy.error().find("at backoff.cap: unknown key 'cap'; did you mean 'cap_ms'?"),
            std::string::npos)
      << policy.error();
  const auto unknown = Write("unknown.json", R"({"extends": "no-retries"})");
  auto extends = LoadPolicyFile(unknown);
  ASSERT_FALSE(extends.has_value());
  EXPECT_NE(extends.error().find("unknown.json:1:"), std::string::npos) << extends.error();
  EXPECT_NE(extends.error().find("did you mean 'no-retry'?"), std::string::npos) << extends.error();
  const auto list = Write("list.yaml", "- max_attempts: 3\n");
  EXPECT_FALSE(LoadPolicyFile(list).has_value());
  EXPECT_FALSE(LoadPolicyFile(dir_ / "missing.yaml").has_value());
}

}  // namespace
}  // namespace faultline::fleet
