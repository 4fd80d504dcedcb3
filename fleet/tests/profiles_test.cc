#include "fleet/profiles.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "nlohmann/json.hpp"
#include "reference_impl/policy_json.h"

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

TEST(ProfilesTest, UnknownNameSuggestsTheNearest) {
  auto policy = ResolvePolicy("opanai-node");
  ASSERT_FALSE(policy.has_value());
  EXPECT_NE(policy.error().find("did you mean 'openai-node'?"), std::string::npos)
      << policy.error();
}

// The Node adapters' declarations are the one source of the four Node profiles: when Node is
// installed, the profiles must equal what harness/adapters/policies.mjs exports.
TEST(ProfilesTest, NodeProfilesEqualTheAdaptersDeclarations) {
  const std::string script =
      std::string("import('") + FAULTLINE_SOURCE_DIR +
      "/harness/adapters/policies.mjs').then(m => console.log(JSON.stringify("
      "{'openai-node': m.OPENAI_NODE_POLICY, 'anthropic-node': "
      "m.ANTHROPIC_NODE_POLICY, 'vercel-ai': m.VERCEL_AI_POLICY, "
      "'langchain-js': m.LANGCHAIN_POLICY})))";
  FILE* pipe = popen(("node -e \"" + script + "\" 2>/dev/null").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  if (pclose(pipe) != 0 || output.empty()) GTEST_SKIP() << "node is not installed";
  const nlohmann::json declared = nlohmann::json::parse(output);
  for (const auto& [name, json] : declared.items()) {
    auto expected = ref::PolicyFromJson(json);
    ASSERT_TRUE(expected.has_value()) << name;
    auto profile = ResolvePolicy(name);
    ASSERT_TRUE(profile.has_value()) << name;
    EXPECT_EQ(profile->policy, *expected) << name << " differs from policies.mjs";
  }
}

}  // namespace
}  // namespace faultline::fleet
