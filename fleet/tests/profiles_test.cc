#include "fleet/profiles.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace faultline::fleet
